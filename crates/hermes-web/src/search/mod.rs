//! `web_search`: the reference's schema and result shape over whichever
//! backend is set up (DuckDuckGo when none is).

pub mod backends;
pub mod ddg;

use std::sync::Arc;

use futures_util::future::BoxFuture;
use hermes_protocol::ToolSchema;
use hermes_tools::{Tool, ToolContext, ToolError, ToolResult};
use serde_json::{Value, json};

use crate::settings::WebSettings;

/// One search result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// The page's title.
    pub title: String,
    /// Its address.
    pub url: String,
    /// What the backend says about it.
    pub description: String,
}

impl Hit {
    /// A hit.
    pub fn new(title: String, url: String, description: String) -> Self {
        Self {
            title,
            url,
            description,
        }
    }
}

/// The `web_search` tool.
pub struct WebSearchTool {
    settings: Arc<WebSettings>,
    http: reqwest::Client,
}

impl std::fmt::Debug for WebSearchTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WebSearchTool")
    }
}

impl WebSearchTool {
    /// A tool searching with `settings` over `http`.
    pub fn new(settings: Arc<WebSettings>, http: reqwest::Client) -> Self {
        Self { settings, http }
    }
}

/// Pretty JSON, as the reference returns its results.
pub(crate) fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

impl Tool for WebSearchTool {
    fn name(&self) -> &str {
        "web_search"
    }

    fn toolset(&self) -> &str {
        "web"
    }

    fn emoji(&self) -> &str {
        "🔍"
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "web_search".into(),
            description: "Search the web for information. Returns up to 5 results by default with \
                titles, URLs, and descriptions. The query is passed through to the configured \
                backend, so operators such as site:domain, filetype:pdf, intitle:word, -term, and \
                \"exact phrase\" may work when the backend supports them."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "The search query to look up on the web. You may include backend-supported operators such as site:example.com, filetype:pdf, intitle:word, -term, or \"exact phrase\"."},
                    "limit": {"type": "integer", "description": "Maximum number of results to return. Defaults to 5.", "minimum": 1, "maximum": 100, "default": 5}
                },
                "required": ["query"]
            }),
        }
    }

    fn max_result_chars(&self) -> usize {
        100_000
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let query = args["query"].as_str().unwrap_or("").trim().to_owned();
            if query.is_empty() {
                return Ok(pretty(
                    &json!({"success": false, "error": "query is required"}),
                ));
            }
            let limit = match &args["limit"] {
                Value::Number(n) => n.as_f64().map_or(5, |f| f as i64),
                Value::String(s) => s.trim().parse().unwrap_or(5),
                _ => 5,
            }
            .clamp(1, 100) as usize;
            let backend = self.settings.search_backend();
            let searched = tokio::select! {
                _ = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
                r = backends::search(&self.http, &self.settings.keys, backend, &query, limit) => r,
            };
            Ok(pretty(&match searched {
                Ok(hits) => {
                    let web: Vec<Value> = hits
                        .into_iter()
                        .enumerate()
                        .map(|(i, h)| json!({"title": h.title, "url": h.url, "description": h.description, "position": i + 1}))
                        .collect();
                    json!({"success": true, "data": {"web": web}})
                }
                Err(e) => json!({"success": false, "error": e}),
            }))
        })
    }
}
