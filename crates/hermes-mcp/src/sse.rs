//! The legacy HTTP+SSE transport (MCP 2024-11-05, `transport: sse`): server
//! messages arrive as `message` events on one long GET; the first `endpoint`
//! event names the URL the client POSTs its messages to. rmcp 3 dropped it,
//! and servers in the wild still speak it.

use std::collections::BTreeMap;
use std::time::Duration;

use futures_util::StreamExt as _;
use hermes_llm::sse::{SseDecoder, SseEvent};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::mpsc;

/// Why a message could not be sent.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SseError(String);

/// A connected legacy SSE session.
pub(crate) struct SseTransport {
    http: reqwest::Client,
    endpoint: String,
    headers: reqwest::header::HeaderMap,
    incoming: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    reader: tokio::task::JoinHandle<()>,
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl SseTransport {
    /// Opens the event stream and waits for the `endpoint` event.
    pub(crate) async fn open(
        http: &reqwest::Client,
        url: &str,
        headers: &BTreeMap<String, String>,
    ) -> Result<Self, String> {
        let mut header_map = reqwest::header::HeaderMap::new();
        for (k, v) in headers {
            let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
                .map_err(|_| format!("invalid header name {k:?}"))?;
            let value = reqwest::header::HeaderValue::from_str(v)
                .map_err(|_| format!("invalid value for header {k:?}"))?;
            header_map.insert(name, value);
        }
        let response = http
            .get(url)
            .headers(header_map.clone())
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .send()
            .await
            .map_err(|e| format!("cannot connect to {url}: {}", innermost(&e)))?;
        if !response.status().is_success() {
            return Err(format!("{url} answered HTTP {}", response.status()));
        }
        let base = response.url().clone();
        let mut body = response.bytes_stream();
        // The one SSE decoder: it keeps bytes until a line ends, so a UTF-8
        // character split across chunks arrives whole.
        let mut parser = SseDecoder::new();
        let mut events = Vec::new();
        let endpoint = 'found: loop {
            let Some(chunk) = body.next().await else {
                return Err(format!(
                    "{url} closed the stream before sending its endpoint"
                ));
            };
            let chunk = chunk.map_err(|e| format!("reading {url}: {e}"))?;
            events.extend(parser.push(&chunk));
            while !events.is_empty() {
                let event = events.remove(0);
                if event.event.as_deref() == Some("endpoint") {
                    let joined = base
                        .join(event.data.trim())
                        .map_err(|e| format!("bad endpoint {:?}: {e}", event.data))?;
                    break 'found joined.to_string();
                }
            }
        };
        let (tx, incoming) = mpsc::channel(64);
        let pending: Vec<SseEvent> = std::mem::take(&mut events);
        let reader = tokio::spawn(async move {
            let mut batch = pending;
            loop {
                for event in batch.drain(..) {
                    if let Some(message) = message_of(&event)
                        && tx.send(message).await.is_err()
                    {
                        return;
                    }
                }
                match body.next().await {
                    Some(Ok(chunk)) => batch = parser.push(&chunk),
                    _ => return,
                }
            }
        });
        Ok(Self {
            http: http.clone(),
            endpoint,
            headers: header_map,
            incoming,
            reader,
        })
    }
}

/// The JSON-RPC message a `message` event (or one with no name) carries.
fn message_of(event: &SseEvent) -> Option<RxJsonRpcMessage<RoleClient>> {
    match event.event.as_deref() {
        None | Some("" | "message") => serde_json::from_str(&event.data).ok(),
        Some(_) => None,
    }
}

fn innermost(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause: &dyn std::error::Error = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

impl Transport<RoleClient> for SseTransport {
    type Error = SseError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let request = self
            .http
            .post(&self.endpoint)
            .headers(self.headers.clone())
            .timeout(Duration::from_secs(60))
            .json(&item);
        async move {
            let response = request
                .send()
                .await
                .map_err(|e| SseError(format!("POST failed: {}", innermost(&e))))?;
            if !response.status().is_success() {
                return Err(SseError(format!(
                    "POST answered HTTP {}",
                    response.status()
                )));
            }
            Ok(())
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.reader.abort();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    /// An SSE server on loopback that sends `pieces` one by one, pausing
    /// between them so each arrives as its own chunk.
    fn sse_server(pieces: Vec<Vec<u8>>) -> String {
        use std::io::Write;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/sse", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            stream.set_nodelay(true).unwrap();
            let mut head = [0u8; 1024];
            let _ = std::io::Read::read(&mut stream, &mut head);
            stream
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
                .unwrap();
            for piece in pieces {
                stream.write_all(&piece).unwrap();
                stream.flush().unwrap();
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        url
    }

    #[tokio::test]
    async fn a_character_split_across_chunks_arrives_whole() {
        let frame = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"text\":\"h\u{e9}llo \u{1f600}\"}}\n\n";
        let bytes = frame.as_bytes();
        // Cut inside the é (2 bytes) and inside the emoji (4 bytes).
        let e_acute = frame.find('\u{e9}').unwrap() + 1;
        let emoji = frame.find('\u{1f600}').unwrap() + 2;
        let url = sse_server(vec![
            b"event: endpoint\ndata: /messages?id=1\n\n".to_vec(),
            bytes[..e_acute].to_vec(),
            bytes[e_acute..emoji].to_vec(),
            bytes[emoji..].to_vec(),
        ]);
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder().build().unwrap();
        let mut transport = SseTransport::open(&http, &url, &BTreeMap::new())
            .await
            .unwrap();
        assert!(transport.endpoint.ends_with("/messages?id=1"));
        let message = tokio::time::timeout(Duration::from_secs(10), transport.receive())
            .await
            .unwrap()
            .unwrap();
        let json = serde_json::to_value(&message).unwrap();
        assert_eq!(json["result"]["text"], "h\u{e9}llo \u{1f600}");
    }

    #[test]
    fn only_message_events_carry_messages() {
        let event = |name: Option<&str>| SseEvent {
            event: name.map(str::to_owned),
            data: r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_owned(),
            id: None,
        };
        assert!(message_of(&event(None)).is_some());
        assert!(message_of(&event(Some("message"))).is_some());
        assert!(message_of(&event(Some("endpoint"))).is_none());
    }
}
