//! The legacy HTTP+SSE transport (MCP 2024-11-05, `transport: sse`): server
//! messages arrive as `message` events on one long GET; the first `endpoint`
//! event names the URL the client POSTs its messages to. rmcp 3 dropped it,
//! and servers in the wild still speak it.

use std::collections::BTreeMap;
use std::time::Duration;

use futures_util::StreamExt as _;
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

/// One parsed SSE event.
#[derive(Debug, Default, PartialEq)]
struct Event {
    kind: String,
    data: String,
}

/// Incremental SSE parser (lines may arrive split across chunks).
#[derive(Default)]
struct Parser {
    buffer: String,
    current: Event,
    has_data: bool,
}

impl Parser {
    fn push(&mut self, chunk: &str, out: &mut Vec<Event>) {
        self.buffer.push_str(chunk);
        while let Some(pos) = self.buffer.find('\n') {
            let line: String = self.buffer.drain(..=pos).collect();
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if self.has_data || !self.current.kind.is_empty() {
                    out.push(std::mem::take(&mut self.current));
                }
                self.has_data = false;
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = line.split_once(':').unwrap_or((line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "event" => self.current.kind = value.to_owned(),
                "data" => {
                    if self.has_data {
                        self.current.data.push('\n');
                    }
                    self.current.data.push_str(value);
                    self.has_data = true;
                }
                _ => {}
            }
        }
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
        let mut parser = Parser::default();
        let mut events = Vec::new();
        let endpoint = 'found: loop {
            let Some(chunk) = body.next().await else {
                return Err(format!(
                    "{url} closed the stream before sending its endpoint"
                ));
            };
            let chunk = chunk.map_err(|e| format!("reading {url}: {e}"))?;
            parser.push(&String::from_utf8_lossy(&chunk), &mut events);
            while !events.is_empty() {
                let event = events.remove(0);
                if event.kind == "endpoint" {
                    let joined = base
                        .join(event.data.trim())
                        .map_err(|e| format!("bad endpoint {:?}: {e}", event.data))?;
                    break 'found joined.to_string();
                }
            }
        };
        let (tx, incoming) = mpsc::channel(64);
        let pending: Vec<Event> = std::mem::take(&mut events);
        let reader = tokio::spawn(async move {
            let mut batch = pending;
            loop {
                for event in batch.drain(..) {
                    if !(event.kind.is_empty() || event.kind == "message") {
                        continue;
                    }
                    if let Ok(message) = serde_json::from_str(&event.data)
                        && tx.send(message).await.is_err()
                    {
                        return;
                    }
                }
                match body.next().await {
                    Some(Ok(chunk)) => parser.push(&String::from_utf8_lossy(&chunk), &mut batch),
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

    #[test]
    fn events_split_across_chunks_are_reassembled() {
        let mut parser = Parser::default();
        let mut out = Vec::new();
        parser.push("event: endpoint\r\ndata: /messages?session", &mut out);
        assert!(out.is_empty());
        parser.push(
            "Id=1\r\n\r\n: ping\n\nevent: message\ndata: {\"a\":\ndata: 1}\n\n",
            &mut out,
        );
        assert_eq!(
            out,
            vec![
                Event {
                    kind: "endpoint".into(),
                    data: "/messages?sessionId=1".into()
                },
                Event {
                    kind: "message".into(),
                    data: "{\"a\":\n1}".into()
                },
            ]
        );
    }
}
