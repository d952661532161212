//! Fetching a page ourselves: every hop of a redirect chain passes the URL
//! policy before it is requested, the connection is made only to addresses
//! the policy checked (see [`super::dns`]), the body is read up to a cap, and
//! what came back is told apart (HTML, PDF, text) by its type and first bytes.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use hermes_tools::url_safety::{RedirectGuard, Resolver, SystemResolver, UrlPolicy};

use super::dns::{CheckedDns, proxy_hosts, refusal};

/// The most of a body read.
pub const MAX_BODY: usize = 20 * 1024 * 1024;
/// How long one page may take.
const TIMEOUT: Duration = Duration::from_secs(30);
/// What browsers send, so sites serve their normal page.
const USER_AGENT: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36 hermes-rs";

/// What a fetched body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An HTML page.
    Html,
    /// A PDF document.
    Pdf,
    /// Plain text (markdown, JSON, XML, CSV …).
    Text,
}

/// A fetched page.
#[derive(Debug)]
pub struct Fetched {
    /// The address it came from after redirects.
    pub final_url: String,
    /// What it is.
    pub kind: Kind,
    /// The body.
    pub body: Vec<u8>,
}

/// The fetch clients, made on first use (building one loads TLS settings:
/// a session that never fetches should not pay for it), one per policy since
/// the policy lives in the client's resolver. Cheap to clone.
#[derive(Clone)]
pub struct Fetcher(Arc<Clients>);

struct Clients {
    resolver: Arc<dyn Resolver>,
    strict: OnceLock<Result<reqwest::Client, String>>,
    relaxed: OnceLock<Result<reqwest::Client, String>>,
}

impl std::fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Fetcher")
    }
}

impl Default for Fetcher {
    fn default() -> Self {
        Self::with_resolver(Arc::new(SystemResolver))
    }
}

impl Fetcher {
    /// Fetches resolving names with `resolver` (the system's by default).
    pub fn with_resolver(resolver: Arc<dyn Resolver>) -> Self {
        Self(Arc::new(Clients {
            resolver,
            strict: OnceLock::new(),
            relaxed: OnceLock::new(),
        }))
    }

    /// The client for `policy`, built the first time it is asked for.
    pub fn client(&self, policy: UrlPolicy) -> Result<&reqwest::Client, String> {
        let slot = if policy.allow_private {
            &self.0.relaxed
        } else {
            &self.0.strict
        };
        slot.get_or_init(|| {
            client(CheckedDns::new(
                policy,
                self.0.resolver.clone(),
                proxy_hosts(),
            ))
        })
        .as_ref()
        .map_err(Clone::clone)
    }

    /// The resolver the checks use.
    pub fn resolver(&self) -> Arc<dyn Resolver> {
        self.0.resolver.clone()
    }
}

/// A client that never follows redirects itself (each hop is checked here)
/// and connects only to addresses `dns` has checked.
pub fn client(dns: CheckedDns) -> Result<reqwest::Client, String> {
    let tls = hermes_llm::SharedHttp::websocket_tls().map_err(|e| e.to_string())?;
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .redirect(reqwest::redirect::Policy::none())
        .dns_resolver(Arc::new(dns))
        .user_agent(USER_AGENT)
        .connect_timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))
}

fn kind_of(content_type: &str, body: &[u8]) -> Result<Kind, String> {
    let mime = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if body.starts_with(b"%PDF") || mime == "application/pdf" {
        return Ok(Kind::Pdf);
    }
    let head = String::from_utf8_lossy(&body[..body.len().min(1024)]).to_ascii_lowercase();
    if mime.contains("html") || head.contains("<html") || head.contains("<!doctype html") {
        return Ok(Kind::Html);
    }
    if mime.starts_with("text/")
        || mime.contains("json")
        || mime.contains("xml")
        || mime.contains("javascript")
        || (mime.is_empty() && std::str::from_utf8(&body[..body.len().min(4096)]).is_ok())
    {
        return Ok(Kind::Text);
    }
    if mime.starts_with("image/") {
        return Err(format!(
            "Not a page: the URL serves an image ({mime}); use vision_analyze to look at images"
        ));
    }
    Err(format!(
        "Not a page this tool can read (content type {mime}); try browser_navigate"
    ))
}

/// Fetches `url` under `policy` as a page to read.
pub async fn fetch(fetcher: &Fetcher, url: &str, policy: UrlPolicy) -> Result<Fetched, String> {
    let accept = "text/html,application/xhtml+xml,application/pdf,text/plain;q=0.9,*/*;q=0.5";
    let (final_url, content_type, body) = fetch_raw(fetcher, url, policy, accept).await?;
    let kind = kind_of(&content_type, &body)?;
    Ok(Fetched {
        final_url,
        kind,
        body,
    })
}

/// Fetches `url` under `policy`, every redirect hop checked: the final
/// address, the content type and the body.
pub async fn fetch_raw(
    fetcher: &Fetcher,
    url: &str,
    policy: UrlPolicy,
    accept: &str,
) -> Result<(String, String, Vec<u8>), String> {
    let http = fetcher.client(policy)?;
    let start = url.to_owned();
    let resolver = fetcher.resolver();
    let mut guard =
        tokio::task::spawn_blocking(move || RedirectGuard::start(&start, policy, resolver))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| block_message(&e.to_string()))?;
    loop {
        let current = guard.current().to_owned();
        let response = http
            .get(guard.current_url().clone())
            .header("Accept", accept)
            .timeout(TIMEOUT)
            .send()
            .await
            .map_err(|e| send_error(&e, &current))?;
        let status = response.status();
        if status.is_redirection() {
            let location = response
                .headers()
                .get("location")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
                .ok_or_else(|| format!("HTTP {} without a Location", status.as_u16()))?;
            let (moved, next) = tokio::task::spawn_blocking(move || {
                let next = guard.follow(&location);
                (guard, next)
            })
            .await
            .map_err(|e| e.to_string())?;
            guard = moved;
            next.map_err(|e| block_message(&e.to_string()))?;
            continue;
        }
        if !status.is_success() {
            return Err(format!("HTTP {} from {current}", status.as_u16()));
        }
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        if response
            .content_length()
            .is_some_and(|n| n > MAX_BODY as u64)
        {
            return Err(format!(
                "The page is too large ({} bytes, the limit is {MAX_BODY})",
                response.content_length().unwrap_or(0)
            ));
        }
        let body = read_capped(response).await?;
        return Ok((current, content_type, body));
    }
}

async fn read_capped(mut response: reqwest::Response) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|_| "The connection broke while reading the page".to_owned())?
    {
        if body.len() + chunk.len() > MAX_BODY {
            return Err(format!("The page is larger than {MAX_BODY} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// What a failed request is reported as: the policy's refusal when the
/// connection's own resolution was refused.
fn send_error(error: &reqwest::Error, url: &str) -> String {
    if let Some(block) = refusal(error) {
        block_message(&block.to_string())
    } else if error.is_timeout() {
        "Fetch timed out after 30s — the page may be too large or unresponsive. Try browser_navigate instead.".to_owned()
    } else {
        format!("Cannot fetch {url}: cannot connect")
    }
}

/// The reference's wording for a refused address, with our reason.
pub(crate) fn block_message(reason: &str) -> String {
    format!("Blocked: URL targets a private or internal network address ({reason})")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_told_apart() {
        assert_eq!(
            kind_of("application/octet-stream", b"%PDF-1.4"),
            Ok(Kind::Pdf)
        );
        assert_eq!(kind_of("text/html; charset=utf-8", b"<p>x"), Ok(Kind::Html));
        assert_eq!(kind_of("", b"<!DOCTYPE html><html>"), Ok(Kind::Html));
        assert_eq!(kind_of("application/json", b"{}"), Ok(Kind::Text));
        assert!(
            kind_of("image/png", b"\x89PNG")
                .unwrap_err()
                .contains("vision_analyze")
        );
        assert!(kind_of("application/zip", b"PK\x03\x04").is_err());
    }
}
