//! The loopback redirect listener of a login: waits for the browser to come
//! back to `http://<host>:<port>/callback?code=…&state=…` and answers it
//! with a page saying the window can be closed.

use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

/// A bound listener and the redirect URI that leads to it.
pub(crate) struct Callback {
    listener: TcpListener,
    /// The redirect URI registered with the authorization server.
    pub(crate) redirect_uri: String,
    path: String,
}

impl Callback {
    /// Binds `host:port` (port 0: any free one); `redirect_uri` overrides the
    /// URI built from them (its path is the one listened for).
    pub(crate) async fn bind(
        host: &str,
        port: u16,
        redirect_uri: Option<&str>,
    ) -> Result<Self, String> {
        let listener = TcpListener::bind((host, port))
            .await
            .map_err(|e| format!("cannot listen for the OAuth redirect on {host}:{port}: {e}"))?;
        let bound = listener.local_addr().map_err(|e| e.to_string())?.port();
        let redirect_uri = match redirect_uri {
            Some(uri) => uri.to_owned(),
            None => {
                let shown = if host.contains(':') {
                    format!("[{host}]")
                } else {
                    host.to_owned()
                };
                format!("http://{shown}:{bound}/callback")
            }
        };
        let path = url::Url::parse(&redirect_uri)
            .map(|u| u.path().to_owned())
            .unwrap_or_else(|_| "/callback".into());
        Ok(Self {
            listener,
            redirect_uri,
            path,
        })
    }

    /// The full redirect URL the browser was sent to, within `limit`.
    pub(crate) async fn wait(&self, limit: Duration) -> Result<String, String> {
        let wait = async {
            loop {
                let Ok((stream, _)) = self.listener.accept().await else {
                    continue;
                };
                if let Some(url) = self.answer(stream).await {
                    return url;
                }
            }
        };
        tokio::time::timeout(limit, wait).await.map_err(|_| {
            format!(
                "no answer from the browser within {}s (the authorization was not completed)",
                limit.as_secs()
            )
        })
    }

    /// Reads one request; the redirect URL when it is the callback.
    async fn answer(&self, mut stream: TcpStream) -> Option<String> {
        let mut head = Vec::with_capacity(1024);
        let mut buf = [0u8; 1024];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
            let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
                .await
                .ok()?
                .ok()?;
            if n == 0 {
                break;
            }
            head.extend_from_slice(&buf[..n]);
        }
        let text = String::from_utf8_lossy(&head);
        let target = text.lines().next()?.split_whitespace().nth(1)?.to_owned();
        let base = url::Url::parse(&self.redirect_uri).ok()?;
        let full = base.join(&target).ok()?;
        if full.path() != self.path {
            let _ = stream
                .write_all(
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                )
                .await;
            return None;
        }
        let failed = full.query_pairs().find(|(k, _)| k == "error");
        let page = match &failed {
            Some((_, why)) => format!(
                "<html><body><h2>Authorization failed</h2><p>{}</p><p>You can close this window.</p></body></html>",
                html_escape(why)
            ),
            None => "<html><body><h2>Hermes is authorized</h2><p>You can close this window and return to the terminal.</p></body></html>".to_owned(),
        };
        let reply = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
            page.len()
        );
        let _ = stream.write_all(reply.as_bytes()).await;
        let _ = stream.shutdown().await;
        Some(full.to_string())
    }
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[tokio::test]
    async fn the_callback_yields_the_redirect_url_and_ignores_other_paths() {
        let callback = Callback::bind("127.0.0.1", 0, None).await.unwrap();
        let uri = callback.redirect_uri.clone();
        assert!(uri.starts_with("http://127.0.0.1:") && uri.ends_with("/callback"));
        let base = uri.trim_end_matches("/callback").to_owned();
        let _ = rustls::crypto::ring::default_provider().install_default();
        let browser = tokio::spawn(async move {
            let client = reqwest::Client::new();
            let _ = client.get(format!("{base}/favicon.ico")).send().await;
            client
                .get(format!("{base}/callback?code=abc&state=xyz"))
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap()
        });
        let url = callback.wait(Duration::from_secs(10)).await.unwrap();
        assert!(url.ends_with("/callback?code=abc&state=xyz"), "{url}");
        assert!(browser.await.unwrap().contains("authorized"));
    }
}
