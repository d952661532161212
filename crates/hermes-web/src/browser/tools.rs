//! The ten `browser_*` tools (toolset `browser`), with the reference's
//! schemas, over one session's [`BrowserSlot`].

use std::sync::Arc;

use futures_util::future::BoxFuture;
use hermes_protocol::ToolSchema;
use hermes_tools::{Tool, ToolContext, ToolError, ToolResult};
use serde_json::{Value, json};

use super::BrowserSlot;
use crate::search::pretty;
use crate::vision::VisionModel;

/// Which browser tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Navigate,
    Snapshot,
    Click,
    Type,
    Scroll,
    Back,
    Press,
    Images,
    Vision,
    Console,
}

const ALL: [Kind; 10] = [
    Kind::Navigate,
    Kind::Snapshot,
    Kind::Click,
    Kind::Type,
    Kind::Scroll,
    Kind::Back,
    Kind::Press,
    Kind::Images,
    Kind::Vision,
    Kind::Console,
];

/// One browser tool.
pub struct BrowserTool {
    kind: Kind,
    slot: Arc<BrowserSlot>,
    vision: Option<Arc<dyn VisionModel>>,
}

impl std::fmt::Debug for BrowserTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BrowserTool({:?})", self.kind)
    }
}

/// The browser tools over `slot`; `browser_vision` only with a `vision` model.
pub fn all(slot: &Arc<BrowserSlot>, vision: Option<Arc<dyn VisionModel>>) -> Vec<Arc<dyn Tool>> {
    ALL.iter()
        .filter(|k| **k != Kind::Vision || vision.is_some())
        .map(|kind| {
            Arc::new(BrowserTool {
                kind: *kind,
                slot: slot.clone(),
                vision: vision.clone(),
            }) as Arc<dyn Tool>
        })
        .collect()
}

const NEEDS_NAVIGATE: &str = " Requires browser_navigate to be called first.";

fn schema(kind: Kind) -> ToolSchema {
    let (name, description, parameters) = match kind {
        Kind::Navigate => (
            "browser_navigate",
            "Open a URL in the browser (starting it if needed). For simple information retrieval, prefer web_search or web_extract (faster, cheaper). For plain-text endpoints (.md, .txt, .json, .csv, raw files, APIs) prefer web_extract or curl. Use the browser to interact with a page: click, fill forms, dynamic content. Returns a compact snapshot with interactive elements and their ref IDs, so no separate browser_snapshot is needed after navigating.".to_owned(),
            json!({"type": "object", "properties": {"url": {"type": "string", "description": "The URL to navigate to (e.g., 'https://example.com')"}}, "required": ["url"]}),
        ),
        Kind::Snapshot => (
            "browser_snapshot",
            format!("A text snapshot of the current page's accessibility tree, with ref IDs (like @e1, @e2) for browser_click and browser_type. full=false (default): compact view with interactive elements; full=true: complete page content. Snapshots over 15000 characters are cut, and the whole one is saved to a file you can page through with read_file. Use it to refresh after interactions that change the page.{NEEDS_NAVIGATE}"),
            json!({"type": "object", "properties": {"full": {"type": "boolean", "description": "If true, returns complete page content. If false (default), returns compact view with interactive elements only.", "default": false}}, "required": []}),
        ),
        Kind::Click => (
            "browser_click",
            "Click the element with a ref ID from the snapshot (e.g., '@e5'); the ref IDs are shown in square brackets in the snapshot. Requires browser_navigate and browser_snapshot to be called first.".to_owned(),
            json!({"type": "object", "properties": {"ref": {"type": "string", "description": "The element reference from the snapshot (e.g., '@e5', '@e12')"}}, "required": ["ref"]}),
        ),
        Kind::Type => (
            "browser_type",
            "Type text into the input field with a ref ID: the field is cleared first, then the text typed. Requires browser_navigate and browser_snapshot to be called first.".to_owned(),
            json!({"type": "object", "properties": {"ref": {"type": "string", "description": "The element reference from the snapshot (e.g., '@e3')"}, "text": {"type": "string", "description": "The text to type into the field"}}, "required": ["ref", "text"]}),
        ),
        Kind::Scroll => (
            "browser_scroll",
            format!("Scroll the page up or down to reveal more content.{NEEDS_NAVIGATE}"),
            json!({"type": "object", "properties": {"direction": {"type": "string", "enum": ["up", "down"], "description": "Direction to scroll"}}, "required": ["direction"]}),
        ),
        Kind::Back => (
            "browser_back",
            format!("Go back to the previous page in the browser's history.{NEEDS_NAVIGATE}"),
            json!({"type": "object", "properties": {}, "required": []}),
        ),
        Kind::Press => (
            "browser_press",
            format!("Press a keyboard key: Enter to submit a form, Tab to move on, shortcuts such as Control+a.{NEEDS_NAVIGATE}"),
            json!({"type": "object", "properties": {"key": {"type": "string", "description": "Key to press (e.g., 'Enter', 'Tab', 'Escape', 'ArrowDown')"}}, "required": ["key"]}),
        ),
        Kind::Images => (
            "browser_get_images",
            format!("List the images on the current page with their URLs and alt text, for instance to look at one with vision_analyze.{NEEDS_NAVIGATE}"),
            json!({"type": "object", "properties": {}, "required": []}),
        ),
        Kind::Vision => (
            "browser_vision",
            format!("Take a screenshot of the current page and have a model that can see answer your question about it: for CAPTCHAs, visual checks, complex layouts, or whatever the text snapshot misses. The result includes a screenshot_path you can share with the user by writing MEDIA:<screenshot_path> in your answer.{NEEDS_NAVIGATE}"),
            json!({"type": "object", "properties": {
                "question": {"type": "string", "description": "What you want to know about the page visually. Be specific about what you're looking for."},
                "annotate": {"type": "boolean", "default": false, "description": "If true, overlay numbered [N] labels on interactive elements. Each [N] maps to ref @eN for subsequent browser commands. Useful for QA and spatial reasoning about page layout."}},
                "required": ["question"]}),
        ),
        Kind::Console => (
            "browser_console",
            format!("The page's console output (console.log/warn/error/info) and uncaught JavaScript errors, to find silent failures. With 'expression', evaluates JavaScript in the page instead and returns its value: for DOM inspection, reading page state, or extracting data.{NEEDS_NAVIGATE}"),
            json!({"type": "object", "properties": {
                "clear": {"type": "boolean", "default": false, "description": "If true, clear the message buffers after reading"},
                "expression": {"type": "string", "description": "JavaScript expression to evaluate in the page context. Runs in the browser like DevTools console — full access to DOM, window, document. Return values are serialized to JSON. Example: 'document.title' or 'document.querySelectorAll(\"a\").length'"}},
                "required": []}),
        ),
    };
    ToolSchema {
        name: name.into(),
        description,
        parameters,
    }
}

/// The reference's prompt for a screenshot.
fn vision_prompt(question: &str) -> String {
    format!(
        "You are analyzing a screenshot of a web browser.\n\nUser's question: {question}\n\nProvide a detailed and helpful answer based on what you see in the screenshot. If there are interactive elements, describe them. If there are verification challenges or CAPTCHAs, describe what type they are and what action might be needed. Focus on answering the user's specific question."
    )
}

impl BrowserTool {
    async fn vision(&self, args: &Value) -> Value {
        let Some(model) = &self.vision else {
            return json!({"success": false, "error": "No model that can see is configured (auxiliary.vision)"});
        };
        let question = args["question"].as_str().unwrap_or("");
        let (path, image) = match self.slot.screenshot().await {
            Ok(shot) => shot,
            Err(e) => {
                return json!({"success": false, "error": format!("Failed to take screenshot: {e}")});
            }
        };
        match model.look(&image, &vision_prompt(question)).await {
            Ok(text) => {
                let text = if text.trim().is_empty() {
                    "Vision analysis returned no content.".to_owned()
                } else {
                    text
                };
                json!({"success": true, "analysis": text, "screenshot_path": path.display().to_string()})
            }
            Err(e) => {
                json!({"success": false, "error": format!("Error during vision analysis: {e}"),
                "screenshot_path": path.display().to_string(),
                "note": format!("Screenshot was captured but vision analysis failed. You can still share it via MEDIA:{}.", path.display())})
            }
        }
    }
}

impl Tool for BrowserTool {
    fn name(&self) -> &str {
        match self.kind {
            Kind::Navigate => "browser_navigate",
            Kind::Snapshot => "browser_snapshot",
            Kind::Click => "browser_click",
            Kind::Type => "browser_type",
            Kind::Scroll => "browser_scroll",
            Kind::Back => "browser_back",
            Kind::Press => "browser_press",
            Kind::Images => "browser_get_images",
            Kind::Vision => "browser_vision",
            Kind::Console => "browser_console",
        }
    }

    fn toolset(&self) -> &str {
        "browser"
    }

    fn emoji(&self) -> &str {
        match self.kind {
            Kind::Navigate => "🌐",
            Kind::Snapshot => "📸",
            Kind::Click => "👆",
            Kind::Type | Kind::Press => "⌨️",
            Kind::Scroll => "📜",
            Kind::Back => "◀️",
            Kind::Images => "🖼️",
            Kind::Vision => "👁️",
            Kind::Console => "🖥️",
        }
    }

    fn schema(&self) -> ToolSchema {
        schema(self.kind)
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let text = |key: &str| args[key].as_str().unwrap_or("").to_owned();
            let work = async {
                match self.kind {
                    Kind::Navigate => self.slot.navigate(&text("url")).await,
                    Kind::Snapshot => {
                        self.slot
                            .snapshot(args["full"].as_bool().unwrap_or(false))
                            .await
                    }
                    Kind::Click => self.slot.click(&text("ref")).await,
                    Kind::Type => self.slot.type_text(&text("ref"), &text("text")).await,
                    Kind::Scroll => {
                        let direction = args["direction"].as_str().unwrap_or("down").to_owned();
                        self.slot.scroll(&direction).await
                    }
                    Kind::Back => self.slot.back().await,
                    Kind::Press => self.slot.press(&text("key")).await,
                    Kind::Images => self.slot.images().await,
                    Kind::Vision => self.vision(&args).await,
                    Kind::Console => {
                        let expression =
                            args["expression"].as_str().filter(|e| !e.trim().is_empty());
                        self.slot
                            .console(args["clear"].as_bool().unwrap_or(false), expression)
                            .await
                    }
                }
            };
            let value = tokio::select! {
                _ = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
                value = work => value,
            };
            Ok(pretty(&value))
        })
    }
}
