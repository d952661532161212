//! Errors from talking to a model provider.

use std::fmt::Write as _;
use std::time::Duration;

use reqwest::header::HeaderMap;

/// Longest body kept in [`LlmError::Http`].
pub(crate) const MAX_ERROR_BODY: usize = 2048;
/// Longest body excerpt shown by `Display`.
const DISPLAY_EXCERPT: usize = 300;

/// Why a model call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    /// The provider answered with a non-success status, or sent an error
    /// object inside the stream (status `0` when it carried no numeric code).
    #[error("{}", http_display(*status, body, request_id.as_deref()))]
    Http {
        /// HTTP status (or the in-stream error's numeric code, else 0).
        status: u16,
        /// The response body, truncated to about 2 KB.
        body: String,
        /// The provider's request id, when it sent one.
        request_id: Option<String>,
        /// How long the provider asked us to wait (`retry-after`).
        retry_after: Option<Duration>,
    },
    /// Connecting, TLS, or the connection failing before the response.
    #[error("transport error: {0}")]
    Transport(String),
    /// No response or no stream data within the allowed time.
    #[error("timed out: {0}")]
    Timeout(String),
    /// A response or stream chunk that is not the JSON we expect.
    #[error("cannot decode provider response: {0}")]
    Decode(String),
    /// The stream ended before its end marker.
    #[error("stream ended early: {0}")]
    StreamEnded(String),
    /// The caller cancelled the request.
    #[error("cancelled")]
    Cancelled,
    /// The provider is misconfigured (bad URL, header or client setup).
    #[error("provider configuration error: {0}")]
    Config(String),
}

/// Marks a connection this machine refused (see [`LlmError::is_refused_locally`]).
const NOTHING_LISTENS: &str = "nothing listens at";

impl LlmError {
    /// The HTTP status of an [`LlmError::Http`].
    pub fn status(&self) -> Option<u16> {
        match self {
            LlmError::Http { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The server-requested wait of an [`LlmError::Http`].
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            LlmError::Http { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// A few words for a status line saying what kind of failure this is
    /// (`cannot connect`, `timed out` …); `None` for an HTTP error, which the
    /// classifier's reason describes better.
    pub fn kind_phrase(&self) -> Option<&'static str> {
        match self {
            LlmError::Http { .. } => None,
            LlmError::Transport(text) if text.starts_with("cannot connect") => {
                Some("cannot connect")
            }
            LlmError::Transport(_) => Some("network error"),
            LlmError::Timeout(_) => Some("timed out"),
            LlmError::Decode(_) => Some("unreadable reply"),
            LlmError::StreamEnded(_) => Some("reply cut off"),
            LlmError::Cancelled => Some("cancelled"),
            LlmError::Config(_) => Some("configuration error"),
        }
    }

    /// What went wrong in a few words then the details, without the
    /// variant's own prefix (`cannot connect: Connection refused …`); an HTTP
    /// error as it displays.
    pub fn summary(&self) -> String {
        let detail = match self {
            LlmError::Transport(t)
            | LlmError::Timeout(t)
            | LlmError::Decode(t)
            | LlmError::StreamEnded(t)
            | LlmError::Config(t) => t.clone(),
            other => return other.to_string(),
        };
        match self.kind_phrase() {
            Some(phrase) if detail.starts_with(phrase) => detail,
            Some(phrase) => format!("{phrase}: {detail}"),
            None => detail,
        }
    }

    /// Builds an [`LlmError::Http`] from a status, the response headers and body.
    pub fn from_response_parts(status: u16, headers: &HeaderMap, body: &str) -> Self {
        LlmError::Http {
            status,
            body: truncate(body, MAX_ERROR_BODY),
            request_id: request_id(headers),
            retry_after: retry_after(headers),
        }
    }

    /// A connection refused by this machine: nothing listens at the address,
    /// which waiting will not change (a local server that is not running).
    pub fn is_refused_locally(&self) -> bool {
        matches!(self, LlmError::Transport(text) if text.contains(NOTHING_LISTENS))
    }

    /// Classifies a reqwest error, keeping URLs (and so any query) out of the text.
    pub fn from_reqwest(error: reqwest::Error) -> Self {
        let timeout = error.is_timeout();
        let connect = error.is_connect();
        // Host and port only (never a path or query, which may hold a key).
        let loopback = error.url().and_then(|url| {
            let host = url.host_str()?;
            let local = host == "localhost"
                || host
                    .trim_matches(['[', ']'])
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback());
            local.then(|| format!("{host}:{}", url.port_or_known_default().unwrap_or(0)))
        });
        let error = error.without_url();
        let text = describe(&error);
        if timeout {
            LlmError::Timeout(text)
        } else if connect {
            // The innermost cause says it ("Connection refused", a DNS or TLS
            // failure); the layers above it only repeat "error sending request".
            let mut root: &dyn std::error::Error = &error;
            while let Some(source) = root.source() {
                root = source;
            }
            let root = root.to_string();
            let refused = root.to_ascii_lowercase().contains("connection refused");
            let cause = if root.is_empty() { text } else { root };
            match loopback.filter(|_| refused) {
                Some(address) => LlmError::Transport(format!(
                    "cannot connect: {cause} ({NOTHING_LISTENS} {address})"
                )),
                None => LlmError::Transport(format!("cannot connect: {cause}")),
            }
        } else if text.is_empty() {
            LlmError::Transport("request failed".to_owned())
        } else {
            LlmError::Transport(text)
        }
    }
}

impl From<reqwest::Error> for LlmError {
    fn from(error: reqwest::Error) -> Self {
        LlmError::from_reqwest(error)
    }
}

/// An error and its sources, joined with `: `, without repeats.
pub(crate) fn describe(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        let part = s.to_string();
        if !part.is_empty() && !text.contains(&part) {
            let _ = write!(text, ": {part}");
        }
        source = s.source();
    }
    text
}

/// `s` cut to at most `max` bytes on a character boundary, marked when cut.
pub(crate) fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

fn http_display(status: u16, body: &str, request_id: Option<&str>) -> String {
    let mut text = if status == 0 {
        "provider error".to_owned()
    } else {
        format!("HTTP {status}")
    };
    let excerpt = summarize_body(body);
    if !excerpt.is_empty() {
        let _ = write!(text, ": {excerpt}");
    }
    if let Some(id) = request_id {
        let _ = write!(text, " (request id {id})");
    }
    text
}

/// A response body said briefly: an HTML page by its title, anything else
/// with its whitespace collapsed, cut to a display excerpt.
pub(crate) fn summarize_body(body: &str) -> String {
    let excerpt = match html_summary(body) {
        Some(summary) => summary,
        None => body.split_whitespace().collect::<Vec<_>>().join(" "),
    };
    truncate(&excerpt, DISPLAY_EXCERPT)
}

/// An HTML error page (a proxy's or CDN's) said in a few words — its title or
/// first heading — instead of its markup.
fn html_summary(body: &str) -> Option<String> {
    let head = body.trim_start();
    let lower = head.get(..head.len().min(512))?.to_ascii_lowercase();
    if !(lower.starts_with("<!doctype html")
        || lower.starts_with("<html")
        || lower.contains("<body"))
    {
        return None;
    }
    let inner = |tag: &str| -> Option<String> {
        let lower = body.to_ascii_lowercase();
        let start = lower.find(&format!("<{tag}"))?;
        let open_end = start + lower[start..].find('>')? + 1;
        let end = open_end + lower[open_end..].find(&format!("</{tag}"))?;
        let text = strip_tags(&body[open_end..end]);
        (!text.is_empty()).then_some(text)
    };
    let what = inner("title").or_else(|| inner("h1"));
    Some(match what {
        Some(title) => format!("an HTML error page: {title}"),
        None => "an HTML error page".to_owned(),
    })
}

/// Text without markup, whitespace collapsed.
fn strip_tags(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                out.push(' ');
            }
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)?
        .to_str()
        .ok()
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

/// The request id from `x-request-id`, `request-id`, or `cf-ray`.
pub(crate) fn request_id(headers: &HeaderMap) -> Option<String> {
    ["x-request-id", "request-id", "cf-ray"]
        .into_iter()
        .find_map(|name| header(headers, name))
        .map(str::to_owned)
}

/// The wait a `retry-after` (or `retry-after-ms`) header asks for. Only the
/// numeric forms are understood; HTTP dates are ignored.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let ms = header(headers, "retry-after-ms").and_then(|v| v.parse::<f64>().ok());
    if let Some(ms) = ms.filter(|ms| ms.is_finite() && *ms >= 0.0) {
        return Some(Duration::from_secs_f64(ms.min(86_400_000.0) / 1000.0));
    }
    let secs = header(headers, "retry-after")?.parse::<f64>().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(86_400.0)))
}

#[cfg(test)]
#[path = "error_tests.rs"]
mod tests;
