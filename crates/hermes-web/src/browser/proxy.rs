//! The proxy Chromium is started behind. Chromium resolves names itself, so
//! checking a URL before navigating would let a DNS server answer a public
//! address to our check and a private one to the browser (rebinding), and
//! would not see redirects or subresources at all. Every connection the
//! browser makes comes here instead (`CONNECT` tunnels and absolute-URI HTTP
//! requests): the host is resolved once by the fetch client's checked
//! resolver ([`CheckedDns`]), and the connection goes only to an address that
//! passed; anything else gets a 403 saying why, and the refusal is kept so
//! the navigate tool can tell the model.
//!
//! Hand-written on tokio rather than a proxy crate: two request forms, one
//! response rewrite, and the check are all it does.

use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hermes_tools::url_safety::{Resolver, Url, UrlBlock, UrlPolicy, check_parsed, parse_url};
use reqwest::dns::{Name, Resolve};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

use crate::extract::dns::{CheckedDns, refusal};

/// The longest request or response head read.
const MAX_HEAD: usize = 64 * 1024;
/// How long a client may take to send its request head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
/// How long connecting to one address may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The most refusals remembered between navigations.
const MAX_REFUSALS: usize = 64;

/// A connection the proxy refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// `host:port` the browser asked for.
    pub authority: String,
    /// Why.
    pub block: UrlBlock,
}

/// The checking proxy for one browser; stops (with every connection it
/// carries) when dropped.
#[derive(Debug)]
pub struct CheckingProxy {
    port: u16,
    refusals: Arc<Mutex<Vec<Refusal>>>,
    accept: tokio::task::JoinHandle<()>,
}

impl Drop for CheckingProxy {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

struct Checker {
    policy: UrlPolicy,
    resolver: Arc<dyn Resolver>,
    dns: CheckedDns,
    refusals: Arc<Mutex<Vec<Refusal>>>,
}

impl CheckingProxy {
    /// Listens on a free loopback port, permitting what `policy` permits,
    /// names resolved with `resolver`.
    pub async fn start(policy: UrlPolicy, resolver: Arc<dyn Resolver>) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let refusals: Arc<Mutex<Vec<Refusal>>> = Arc::default();
        let checker = Arc::new(Checker {
            policy,
            dns: CheckedDns::new(policy, resolver.clone(), Vec::new()),
            resolver,
            refusals: refusals.clone(),
        });
        let accept = tokio::spawn(async move {
            // Held here so that aborting this task drops, and so aborts,
            // every connection still open.
            let mut connections = JoinSet::new();
            loop {
                tokio::select! {
                    accepted = listener.accept() => {
                        if let Ok((client, _)) = accepted {
                            connections.spawn(serve(client, checker.clone()));
                        }
                    }
                    Some(_) = connections.join_next() => {}
                }
            }
        });
        Ok(Self {
            port,
            refusals,
            accept,
        })
    }

    /// The loopback port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Forgets the refusals seen so far (before a navigation).
    pub fn forget(&self) {
        if let Ok(mut seen) = self.refusals.lock() {
            seen.clear();
        }
    }

    /// The refusals since the last [`Self::forget`], oldest first.
    pub fn refusals(&self) -> Vec<Refusal> {
        self.refusals.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

/// `host:port` of an http(s) URL as the proxy records it.
pub fn authority(url: &Url) -> Option<String> {
    Some(format!(
        "{}:{}",
        url.host_str()?,
        url.port_or_known_default()?
    ))
}

/// What the browser asked for.
struct Request {
    /// The host and port to connect to.
    url: Url,
    /// Whether it is a `CONNECT` tunnel (else one plain HTTP request).
    tunnel: bool,
    /// For plain requests: the request line in origin form.
    line: Vec<u8>,
}

impl Request {
    fn parse(head: &[u8]) -> Result<Self, String> {
        let first = head.split(|&b| b == b'\n').next().unwrap_or_default();
        let first = String::from_utf8_lossy(first);
        let mut parts = first.split_whitespace();
        let (Some(method), Some(target), Some(version)) =
            (parts.next(), parts.next(), parts.next())
        else {
            return Err("malformed request line".into());
        };
        if method.eq_ignore_ascii_case("CONNECT") {
            let url = parse_url(&format!("https://{target}/")).map_err(|e| e.to_string())?;
            return Ok(Self {
                url,
                tunnel: true,
                line: Vec::new(),
            });
        }
        let Some(after) = target.strip_prefix("http://") else {
            return Err(format!(
                "only http:// requests and CONNECT are proxied, not {target}"
            ));
        };
        let url = parse_url(target).map_err(|e| e.to_string())?;
        let path = match after.find(['/', '?']) {
            Some(i) if after[i..].starts_with('?') => format!("/{}", &after[i..]),
            Some(i) => after[i..].to_owned(),
            None => "/".to_owned(),
        };
        let path = path.split('#').next().unwrap_or("/");
        Ok(Self {
            url,
            tunnel: false,
            line: format!("{method} {path} {version}").into_bytes(),
        })
    }
}

impl Checker {
    /// The addresses `url`'s host may be reached at, resolved once.
    async fn addresses(&self, url: &Url) -> Result<Vec<IpAddr>, UrlBlock> {
        let host = url.host_str().unwrap_or_default();
        if let Ok(ip) = host.trim_matches(['[', ']']).parse::<IpAddr>() {
            // A literal: nothing to resolve, only the address to judge.
            check_parsed(url, self.policy, self.resolver.as_ref())?;
            return Ok(vec![ip]);
        }
        let name = Name::from_str(host).map_err(|_| UrlBlock::Malformed(host.to_owned()))?;
        match self.dns.resolve(name).await {
            Ok(found) => Ok(found.map(|a| a.ip()).collect()),
            Err(e) => Err(refusal(e.as_ref())
                .cloned()
                .unwrap_or_else(|| UrlBlock::Dns(host.to_owned()))),
        }
    }

    fn record(&self, authority: String, block: UrlBlock) {
        if let Ok(mut seen) = self.refusals.lock()
            && seen.len() < MAX_REFUSALS
        {
            seen.push(Refusal { authority, block });
        }
    }
}

/// One client connection: its request checked, then tunnelled or forwarded.
async fn serve(mut client: TcpStream, checker: Arc<Checker>) {
    let Ok(Ok((head, rest))) = tokio::time::timeout(HEAD_TIMEOUT, read_head(&mut client)).await
    else {
        return;
    };
    let request = match Request::parse(&head) {
        Ok(request) => request,
        Err(why) => return reply(&mut client, "400 Bad Request", &why).await,
    };
    let Some(port) = request.url.port_or_known_default() else {
        return reply(&mut client, "400 Bad Request", "no port").await;
    };
    let addresses = match checker.addresses(&request.url).await {
        Ok(found) => found,
        Err(block) => {
            let body = crate::extract::fetch::block_message(&block.to_string());
            checker.record(authority(&request.url).unwrap_or_default(), block);
            return reply(&mut client, "403 Forbidden", &body).await;
        }
    };
    let Some(mut server) = connect(&addresses, port).await else {
        let why = format!(
            "cannot connect to {}",
            request.url.host_str().unwrap_or("?")
        );
        return reply(&mut client, "502 Bad Gateway", &why).await;
    };
    if request.tunnel {
        let opened = client
            .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            .await;
        if opened.is_ok() && server.write_all(&rest).await.is_ok() {
            let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
        }
        return;
    }
    let _ = forward(client, server, &request.line, &head, &rest).await;
}

/// One plain HTTP request sent on in origin form, both ways with
/// `Connection: close`: the browser must not reuse this connection for a
/// request to another host, which would skip the check.
async fn forward(
    client: TcpStream,
    server: TcpStream,
    line: &[u8],
    head: &[u8],
    rest: &[u8],
) -> std::io::Result<()> {
    let (mut from_client, mut to_client) = client.into_split();
    let (mut from_server, mut to_server) = server.into_split();
    to_server.write_all(&closing(head, Some(line))).await?;
    to_server.write_all(rest).await?;
    let upload = async {
        let _ = tokio::io::copy(&mut from_client, &mut to_server).await;
        std::future::pending::<()>().await;
    };
    let download = async {
        let (head, rest) = read_head(&mut from_server).await?;
        to_client.write_all(&closing(&head, None)).await?;
        to_client.write_all(&rest).await?;
        tokio::io::copy(&mut from_server, &mut to_client).await?;
        to_client.shutdown().await
    };
    tokio::select! {
        () = upload => Ok(()),
        done = download => done,
    }
}

/// `head` with its first line replaced by `line` (when given), hop-by-hop
/// connection headers dropped and `Connection: close` added.
fn closing(head: &[u8], line: Option<&[u8]>) -> Vec<u8> {
    let mut lines = head
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let first = lines.next().unwrap_or_default();
    let mut out = line.unwrap_or(first).to_vec();
    out.extend_from_slice(b"\r\n");
    for header in lines.filter(|l| !l.is_empty()) {
        let name = header.split(|&b| b == b':').next().unwrap_or_default();
        let name = String::from_utf8_lossy(name).trim().to_ascii_lowercase();
        if matches!(
            name.as_str(),
            "connection" | "proxy-connection" | "keep-alive" | "proxy-authorization"
        ) {
            continue;
        }
        out.extend_from_slice(header);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    out
}

/// Reads up to the blank line that ends a head: the head, and whatever
/// came after it in the same reads.
async fn read_head(stream: &mut (impl AsyncRead + Unpin)) -> std::io::Result<(Vec<u8>, Vec<u8>)> {
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let searched_from = buf.len().saturating_sub(3);
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf[searched_from..]
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
        {
            let end = searched_from + i + 4;
            let rest = buf.split_off(end);
            return Ok((buf, rest));
        }
        if buf.len() > MAX_HEAD {
            return Err(std::io::ErrorKind::InvalidData.into());
        }
    }
}

/// The first of `addresses` that accepts a connection on `port`.
async fn connect(addresses: &[IpAddr], port: u16) -> Option<TcpStream> {
    for &ip in addresses {
        let attempt = TcpStream::connect(SocketAddr::new(ip, port));
        if let Ok(Ok(stream)) = tokio::time::timeout(CONNECT_TIMEOUT, attempt).await {
            return Some(stream);
        }
    }
    None
}

/// A short plain-text answer, then the connection closes.
async fn reply(client: &mut TcpStream, status: &str, body: &str) {
    let answer = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = client.write_all(answer.as_bytes()).await;
    let _ = client.shutdown().await;
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn plain_requests_go_on_in_origin_form_and_close() {
        let head = b"GET http://example.com:8080/a/b?c=1#f HTTP/1.1\r\nHost: example.com:8080\r\nProxy-Connection: keep-alive\r\nAccept: */*\r\n\r\n";
        let request = Request::parse(head).unwrap();
        assert!(!request.tunnel);
        assert_eq!(request.line, b"GET /a/b?c=1 HTTP/1.1");
        assert_eq!(authority(&request.url).as_deref(), Some("example.com:8080"));
        let sent = String::from_utf8(closing(head, Some(&request.line))).unwrap();
        assert_eq!(
            sent,
            "GET /a/b?c=1 HTTP/1.1\r\nHost: example.com:8080\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        );
        let bare = Request::parse(b"GET http://example.com?x HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!(bare.line, b"GET /?x HTTP/1.1");
    }

    #[test]
    fn tunnels_name_their_port_and_other_forms_are_refused() {
        let request = Request::parse(b"CONNECT [::1]:443 HTTP/1.1\r\n\r\n").unwrap();
        assert!(request.tunnel);
        assert_eq!(authority(&request.url).as_deref(), Some("[::1]:443"));
        assert!(Request::parse(b"GET /relative HTTP/1.1\r\n\r\n").is_err());
        assert!(Request::parse(b"GET ftp://x/ HTTP/1.1\r\n\r\n").is_err());
    }
}
