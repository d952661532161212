//! `web_extract`: the reference's schema, checks and result shape. Pages
//! are read through the configured extract backend, or — when there is
//! none, or it only searches — fetched here and converted to markdown.
//! Long pages come back as head and tail, the whole text kept on disk.

pub mod backends;
pub mod dns;
pub mod fetch;
pub mod page;
pub mod truncate;

use std::sync::Arc;

use futures_util::future::BoxFuture;
use hermes_protocol::ToolSchema;
use hermes_tools::{Tool, ToolContext, ToolError, ToolResult};
use serde_json::{Value, json};

use crate::search::pretty;
use crate::settings::{WebSettings, clamp_limit};

/// URLs read per call.
pub const MAX_URLS: usize = 5;

/// Query parameters whose values are credentials: never sent to a reader.
const CREDENTIAL_PARAMS: [&str; 20] = [
    "access_token",
    "api_key",
    "apikey",
    "auth_token",
    "authorization",
    "awsaccesskeyid",
    "client_secret",
    "credential",
    "credentials",
    "jwt",
    "password",
    "passwd",
    "secret",
    "session_id",
    "signature",
    "token",
    "x_amz_security_token",
    "x_amz_signature",
    "x-amz-security-token",
    "x-amz-signature",
];

/// One page's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The page's address.
    pub url: String,
    /// Its title.
    pub title: String,
    /// Its text (markdown).
    pub content: String,
    /// Why it could not be read.
    pub error: Option<String>,
}

impl Row {
    /// A page that was read.
    pub fn ok(url: &str, title: &str, content: &str) -> Self {
        Self {
            url: url.to_owned(),
            title: title.to_owned(),
            content: content.to_owned(),
            error: None,
        }
    }

    /// A page that was not.
    pub fn failed(url: &str, error: String) -> Self {
        Self {
            url: url.to_owned(),
            title: String::new(),
            content: String::new(),
            error: Some(error),
        }
    }

    fn json(&self) -> Value {
        json!({"url": self.url, "title": self.title, "content": self.content, "error": self.error})
    }
}

/// Whether `url` carries what looks like an API key (a vendor prefix such as
/// `sk-…` or `ghp_…`; a `KEY=value` pattern is an ordinary query string here).
pub fn has_key(url: &str) -> bool {
    let prefixes_only = hermes_llm::redact::RedactOptions {
        code_file: true,
        url_credentials: false,
        non_reusable: false,
    };
    hermes_llm::redact::redact_with(url, prefixes_only) != url
}

/// Why a URL must not go out at all: a key in it, or a credential parameter.
fn refuse(url: &str) -> Option<String> {
    if has_key(url) {
        return Some(
            "Blocked: URL contains what appears to be an API key or token. Secrets must not be sent in URLs."
                .into(),
        );
    }
    let query = url.split_once('?')?.1.split('#').next().unwrap_or("");
    for pair in query.split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let key = key.to_ascii_lowercase();
        if !value.is_empty() && CREDENTIAL_PARAMS.contains(&key.as_str()) {
            return Some(format!(
                "Blocked: URL contains a credential-like query parameter ({key}). Web extract backends are third-party readers; remove the sensitive query parameter or use a local browser session when this access is explicitly required."
            ));
        }
    }
    None
}

/// The `web_extract` tool.
pub struct WebExtractTool {
    settings: Arc<WebSettings>,
    /// For extract APIs.
    http: reqwest::Client,
    /// For pages fetched here (redirects checked hop by hop).
    fetcher: fetch::Fetcher,
}

impl std::fmt::Debug for WebExtractTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WebExtractTool")
    }
}

impl WebExtractTool {
    /// A tool reading pages with `settings`: extract APIs over `http`,
    /// pages over `fetcher`.
    pub fn new(settings: Arc<WebSettings>, http: reqwest::Client, fetcher: fetch::Fetcher) -> Self {
        Self {
            settings,
            http,
            fetcher,
        }
    }

    /// Reads one URL here: fetch, convert.
    async fn read_here(&self, url: &str) -> Row {
        let fetched = match fetch::fetch(&self.fetcher, url, self.settings.policy).await {
            Ok(f) => f,
            Err(e) => return Row::failed(url, e),
        };
        let scratch = self.settings.cache_dir.join("tmp");
        match page::read(&fetched, self.settings.pdftotext.as_deref(), &scratch).await {
            Ok(page) => Row::ok(url, &page.title, &page.markdown),
            Err(e) => Row::failed(url, e),
        }
    }

    /// Reads the checked URLs, through the backend or here.
    async fn read_all(&self, urls: &[String]) -> Vec<Row> {
        match self.settings.extract_backend() {
            Some(backend) => {
                backends::extract(&self.http, &self.settings.keys, backend, urls).await
            }
            None => {
                let reads = urls.iter().map(|u| self.read_here(u));
                futures_util::future::join_all(reads).await
            }
        }
    }
}

impl Tool for WebExtractTool {
    fn name(&self) -> &str {
        "web_extract"
    }

    fn toolset(&self) -> &str {
        "web"
    }

    fn emoji(&self) -> &str {
        "📄"
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "web_extract".into(),
            description: "Extract content from web page URLs. Returns clean page content in \
                markdown/text (no LLM summarization — fast). Also works with PDF URLs (arxiv \
                papers, documents) — pass the PDF link directly. Pages within the char budget \
                (default 15000) return whole; larger pages return a head+tail window with a footer \
                telling you the full text's saved file path and the read_file call to page through \
                the omitted middle. Inline images appear as [IMAGE: alt] placeholders; real image \
                URLs are kept as links. If a URL fails or times out, use the browser tool instead."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "urls": {"type": "array", "items": {"type": "string"}, "description": "List of URLs to extract content from (max 5 URLs per call)", "maxItems": 5},
                    "char_limit": {"type": "integer", "description": "Optional per-page character budget sent back (default 15000). Pages larger than this are head+tail truncated with the full text stored to disk. Raise it when you need more of a long page inline.", "minimum": 2000}
                },
                "required": ["urls"]
            }),
        }
    }

    fn max_result_chars(&self) -> usize {
        100_000
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let items: Vec<Value> = args["urls"]
                .as_array()
                .map(|a| a.iter().take(MAX_URLS).cloned().collect())
                .unwrap_or_default();
            let limit = args["char_limit"]
                .as_u64()
                .map_or(self.settings.char_limit, |n| clamp_limit(n as usize));
            // Each slot: the URL to read, or its row already decided.
            let mut slots: Vec<Result<String, Row>> = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let url = item
                    .as_str()
                    .or_else(|| item["url"].as_str())
                    .or_else(|| item["href"].as_str())
                    .map(str::trim)
                    .filter(|u| !u.is_empty());
                let Some(url) = url else {
                    slots.push(Err(Row::failed("", format!("Invalid URL item at index {i}: expected a URL string or an object with a string 'url' or 'href' field"))));
                    continue;
                };
                if let Some(why) = refuse(url) {
                    return Ok(pretty(&json!({"success": false, "error": why})));
                }
                slots.push(Ok(url.to_owned()));
            }
            if slots.is_empty() {
                return Ok(pretty(
                    &json!({"error": "Content was inaccessible or not found"}),
                ));
            }
            let wanted: Vec<String> = slots
                .iter()
                .filter_map(|s| s.as_ref().ok().cloned())
                .collect();
            let rows = tokio::select! {
                _ = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
                rows = self.read_all(&wanted) => rows,
            };
            let mut by_url: Vec<Option<Row>> = rows.into_iter().map(Some).collect();
            let mut results = Vec::new();
            for slot in slots {
                let row = match slot {
                    Err(row) => row,
                    Ok(url) => by_url
                        .iter_mut()
                        .find(|r| r.as_ref().is_some_and(|r| r.url == url))
                        .and_then(Option::take)
                        .or_else(|| {
                            by_url
                                .iter_mut()
                                .find(|r| r.is_some())
                                .and_then(Option::take)
                        })
                        .unwrap_or_else(|| {
                            Row::failed(
                                &url,
                                "Extract backend returned no result for this URL".into(),
                            )
                        }),
                };
                results.push(row);
            }
            for row in &mut results {
                if row.error.is_none() && !row.content.is_empty() {
                    let clean = page::placeholders(&row.content);
                    row.content = truncate::fit(&clean, &row.url, limit, &self.settings.cache_dir);
                }
            }
            let rows: Vec<Value> = results.iter().map(Row::json).collect();
            Ok(page::placeholders(&pretty(&json!({"results": rows}))))
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_credentials_never_leave_in_a_url() {
        assert!(refuse("https://x.test/?q=rust").is_none());
        assert!(
            refuse("https://x.test/?token=").is_none(),
            "an empty value is no secret"
        );
        let param = refuse("https://x.test/a?page=2&API_KEY=abc").unwrap();
        assert!(param.contains("(api_key)"), "{param}");
        let key = refuse("https://x.test/?k=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789").unwrap();
        assert!(key.contains("API key or token"), "{key}");
    }
}
