//! Lifecycle hooks: user commands (shell hooks from `hooks:` in config.yaml)
//! and plugin executables that the agent calls at fixed points — before and
//! after a tool call, around model calls, at session boundaries — with a JSON
//! payload. A `pre_tool_call` hook may block the call, a `pre_llm_call` hook
//! may add context to the user's message, and a `transform_*` hook may
//! replace a result. Every hook fails open: an error, a timeout or output we
//! cannot read contributes nothing.

mod allowlist;
mod config;
mod event;
mod plugin;
mod shell;

use std::path::Path;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{Map, Value, json};

pub use allowlist::{
    Allowlist, Approval, Standing, expand_tilde as expand_tilde_path, script_mtime, script_path,
};
pub use config::{HookSpec, parse_hook_specs};
pub use event::HookEvent;
pub use plugin::{PLUGIN_PROTOCOL, PluginCommand, PluginHook, PluginTool};
pub use shell::{ShellHook, ShellRun, parse_shell_response};

/// Something the agent calls at a lifecycle point.
pub trait HookHandler: Send + Sync + std::fmt::Debug {
    /// Whether it wants `event` (for `tool`, on tool events).
    fn handles(&self, event: HookEvent, tool: Option<&str>) -> bool;
    /// Runs for `event` with `payload`; its answer in the wire shape
    /// (`{"action":"block",…}`, `{"context":…}`, `{"result":…}`), `None` for
    /// no answer, or a warning saying why it failed (it then counts as no answer).
    fn call<'a>(
        &'a self,
        event: HookEvent,
        payload: &'a Value,
    ) -> BoxFuture<'a, Result<Option<Value>, String>>;
}

/// What a tool call's hooks decided before it ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreToolDecision {
    /// Run the tool.
    Run,
    /// Do not run it; the model reads `message` as the tool's error.
    Block(String),
}

/// The hooks of one process, in the order they run (plugins before shell
/// hooks, so a plugin's decision wins a tie).
#[derive(Debug, Clone, Default)]
pub struct Hooks {
    handlers: Vec<Arc<dyn HookHandler>>,
}

/// The fields every payload carries besides the event-specific ones.
#[derive(Debug, Clone, Copy)]
pub struct HookSite<'a> {
    /// The session.
    pub session_id: &'a str,
    /// Its working directory.
    pub cwd: &'a Path,
    /// Where a failing hook's warning goes (as a status line).
    pub events: Option<&'a tokio::sync::mpsc::UnboundedSender<hermes_protocol::Event>>,
}

impl Hooks {
    /// Hooks that run `handlers` in order.
    pub fn new(handlers: Vec<Arc<dyn HookHandler>>) -> Self {
        Self { handlers }
    }

    /// These hooks with `first` run before them.
    pub fn prepended(&self, first: &[Arc<dyn HookHandler>]) -> Self {
        let mut handlers = first.to_vec();
        handlers.extend(self.handlers.iter().cloned());
        Self { handlers }
    }

    /// Whether no hook is registered at all (the common case: nothing to do).
    pub fn is_empty(&self) -> bool {
        self.handlers.is_empty()
    }

    /// Whether any hook wants `event` (for `tool`).
    pub fn wants(&self, event: HookEvent, tool: Option<&str>) -> bool {
        self.handlers.iter().any(|h| h.handles(event, tool))
    }

    /// Runs every hook for `event`, one after another, and returns their answers.
    pub async fn fire(
        &self,
        event: HookEvent,
        site: HookSite<'_>,
        tool: Option<(&str, &Value)>,
        extra: Map<String, Value>,
    ) -> Vec<Value> {
        let tool_name = tool.map(|(name, _)| name);
        let wanted: Vec<&Arc<dyn HookHandler>> = self
            .handlers
            .iter()
            .filter(|h| h.handles(event, tool_name))
            .collect();
        if wanted.is_empty() {
            return Vec::new();
        }
        let payload = payload(event, site, tool, extra);
        let mut answers = Vec::new();
        for handler in wanted {
            match handler.call(event, &payload).await {
                Ok(Some(answer)) => answers.push(answer),
                Ok(None) => {}
                Err(warning) => {
                    if let Some(events) = site.events {
                        let _ = events.send(hermes_protocol::Event::Status { message: warning });
                    }
                }
            }
        }
        answers
    }

    /// `pre_tool_call`: the first hook that blocks decides.
    pub async fn before_tool(
        &self,
        site: HookSite<'_>,
        tool: &str,
        args: &Value,
        call_id: &str,
    ) -> PreToolDecision {
        let extra = object([("tool_call_id", json!(call_id))]);
        let answers = self
            .fire(HookEvent::PreToolCall, site, Some((tool, args)), extra)
            .await;
        answers
            .iter()
            .find_map(block_message)
            .map_or(PreToolDecision::Run, PreToolDecision::Block)
    }

    /// `post_tool_call` (observers), then `transform_tool_result`: the first
    /// replacement wins. Returns the result the model reads.
    pub async fn after_tool(&self, site: HookSite<'_>, call: ToolCallReport<'_>) -> String {
        let mut extra = object([
            ("tool_call_id", json!(call.call_id)),
            ("result", json!(call.result)),
            (
                "duration_ms",
                call.duration_ms.map_or(Value::Null, |d| json!(d)),
            ),
            ("status", json!(call.status)),
        ]);
        let tool = Some((call.tool, call.args));
        self.fire(HookEvent::PostToolCall, site, tool, extra.clone())
            .await;
        extra.remove("status");
        let answers = self
            .fire(HookEvent::TransformToolResult, site, tool, extra)
            .await;
        answers
            .iter()
            .find_map(replacement)
            .unwrap_or_else(|| call.result.to_owned())
    }

    /// `pre_llm_call`: the context hooks add to this turn's user message,
    /// joined with blank lines; `None` when they add nothing.
    pub async fn turn_context(
        &self,
        site: HookSite<'_>,
        extra: Map<String, Value>,
    ) -> Option<String> {
        let answers = self.fire(HookEvent::PreLlmCall, site, None, extra).await;
        let pieces: Vec<String> = answers
            .iter()
            .filter_map(|a| match a.get("context") {
                Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
                _ => None,
            })
            .collect();
        (!pieces.is_empty()).then(|| pieces.join("\n\n"))
    }

    /// `transform_llm_output`: the first non-empty replacement of the final answer.
    pub async fn transform_answer(
        &self,
        site: HookSite<'_>,
        extra: Map<String, Value>,
    ) -> Option<String> {
        self.fire(HookEvent::TransformLlmOutput, site, None, extra)
            .await
            .iter()
            .find_map(replacement)
            .filter(|s| !s.is_empty())
    }
}

/// A finished (or blocked) tool call, as `post_tool_call` reports it.
#[derive(Debug, Clone, Copy)]
pub struct ToolCallReport<'a> {
    /// The tool.
    pub tool: &'a str,
    /// Its arguments.
    pub args: &'a Value,
    /// The call id.
    pub call_id: &'a str,
    /// The result text.
    pub result: &'a str,
    /// Wall time; `None` when it never ran.
    pub duration_ms: Option<u64>,
    /// `ok`, `error` or `blocked`.
    pub status: &'a str,
}

/// The JSON a hook reads on stdin (or a plugin in its request).
pub fn payload(
    event: HookEvent,
    site: HookSite<'_>,
    tool: Option<(&str, &Value)>,
    mut extra: Map<String, Value>,
) -> Value {
    extra.insert(
        "telemetry_schema_version".into(),
        json!("hermes.observer.v1"),
    );
    if let Some((name, args)) = tool {
        extra.insert("tool_name".into(), json!(name));
        extra.insert("args".into(), args.clone());
    }
    build_payload(event, site, extra)
}

/// Lays out `kwargs` the reference's way: the tool, its input and the session
/// at the top, everything else under `extra`.
pub fn build_payload(
    event: HookEvent,
    site: HookSite<'_>,
    mut kwargs: Map<String, Value>,
) -> Value {
    let tool_name = kwargs.remove("tool_name").unwrap_or(Value::Null);
    let tool_input = match kwargs.remove("args") {
        Some(v @ Value::Object(_)) => v,
        _ => Value::Null,
    };
    let session_id = match (
        kwargs.remove("session_id"),
        kwargs.remove("parent_session_id"),
    ) {
        (Some(Value::String(s)), _) if !s.is_empty() => s,
        (_, Some(Value::String(s))) if !s.is_empty() => s,
        _ => site.session_id.to_owned(),
    };
    json!({
        "hook_event_name": event.as_str(),
        "tool_name": tool_name,
        "tool_input": tool_input,
        "session_id": session_id,
        "cwd": site.cwd.display().to_string(),
        "extra": kwargs,
    })
}

/// A JSON object from pairs.
pub fn object<const N: usize>(pairs: [(&str, Value); N]) -> Map<String, Value> {
    pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

fn block_message(answer: &Value) -> Option<String> {
    (answer.get("action").and_then(Value::as_str) == Some("block")).then(|| {
        answer
            .get("message")
            .and_then(Value::as_str)
            .filter(|m| !m.trim().is_empty())
            .unwrap_or(shell::DEFAULT_BLOCK_MESSAGE)
            .to_owned()
    })
}

fn replacement(answer: &Value) -> Option<String> {
    answer
        .get("result")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

#[cfg(test)]
mod tests;
