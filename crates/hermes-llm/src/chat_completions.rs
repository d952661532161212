//! The OpenAI-compatible `POST /chat/completions` streaming transport.

use std::fmt;
use std::future::Future;
use std::sync::Once;
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use futures_util::stream::{self, BoxStream, StreamExt};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::{describe, request_id, truncate};
use crate::pump::{Pump, WireEvents};
use crate::sse::SseEvent;
use crate::{ChatRequest, DeltaStream, LlmError, Provider, StreamDelta, wire};

/// Where and how to reach an OpenAI-compatible endpoint. `Debug` hides the key.
#[derive(Clone)]
pub struct ChatCompletionsConfig {
    /// Base URL up to and including the version, e.g. `https://openrouter.ai/api/v1`.
    pub base_url: String,
    /// Sent as `Authorization: Bearer …` when set.
    pub api_key: Option<String>,
    /// Extra headers on every request (`HTTP-Referer`, `X-Title` …).
    pub extra_headers: Vec<(String, String)>,
    /// Longest wait for the response headers and between stream chunks.
    pub idle_timeout: Duration,
    /// Longest wait for the TCP/TLS connection.
    pub connect_timeout: Duration,
}

impl Default for ChatCompletionsConfig {
    fn default() -> Self {
        Self {
            base_url: String::new(),
            api_key: None,
            extra_headers: Vec::new(),
            idle_timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(30),
        }
    }
}

impl ChatCompletionsConfig {
    /// Defaults for `base_url`, with no key.
    pub fn new(base_url: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            ..Self::default()
        }
    }
}

/// A [`Provider`] speaking the OpenAI chat-completions protocol over SSE. `Debug`
/// hides the key.
#[derive(Clone)]
pub struct ChatCompletionsProvider {
    name: String,
    endpoint: String,
    api_key: Option<String>,
    idle_timeout: Duration,
    client: reqwest::Client,
}

fn redacted(key: Option<&String>) -> Option<&'static str> {
    key.map(|_| "<redacted>")
}

impl fmt::Debug for ChatCompletionsConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChatCompletionsConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &redacted(self.api_key.as_ref()))
            .field("extra_headers", &self.extra_headers)
            .field("idle_timeout", &self.idle_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .finish()
    }
}

impl fmt::Debug for ChatCompletionsProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChatCompletionsProvider")
            .field("name", &self.name)
            .field("endpoint", &self.endpoint)
            .field("api_key", &redacted(self.api_key.as_ref()))
            .field("idle_timeout", &self.idle_timeout)
            .finish_non_exhaustive()
    }
}

/// Installs the process-wide rustls crypto provider (ring) once.
pub(crate) fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Err means another provider is installed already, which is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// Largest error body read from a failed response.
pub(crate) const MAX_ERROR_READ: usize = 64 * 1024;
/// Largest non-streamed completion body read.
const MAX_JSON_READ: usize = 32 * 1024 * 1024;

impl ChatCompletionsProvider {
    /// Validates `cfg` and builds the HTTP client.
    pub fn new(name: impl Into<String>, cfg: ChatCompletionsConfig) -> Result<Self, LlmError> {
        let base = cfg.base_url.trim().trim_end_matches('/');
        let url = reqwest::Url::parse(base)
            .map_err(|e| LlmError::Config(format!("invalid base URL: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(LlmError::Config(format!(
                "base URL must be http or https, not {}",
                url.scheme()
            )));
        }
        let mut headers = HeaderMap::new();
        for (name, value) in &cfg.extra_headers {
            let header = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| LlmError::Config(format!("invalid header name {name:?}")))?;
            let value = HeaderValue::from_str(value)
                .map_err(|_| LlmError::Config(format!("invalid value for header {name}")))?;
            headers.append(header, value);
        }
        install_crypto_provider();
        let client = reqwest::Client::builder()
            .user_agent(concat!("hermes-rs/", env!("CARGO_PKG_VERSION")))
            .default_headers(headers)
            .connect_timeout(cfg.connect_timeout)
            .build()
            .map_err(|e| LlmError::Config(format!("cannot build HTTP client: {}", describe(&e))))?;
        Ok(Self {
            name: name.into(),
            endpoint: format!("{base}/chat/completions"),
            api_key: cfg.api_key.filter(|k| !k.is_empty()),
            idle_timeout: cfg.idle_timeout,
            client,
        })
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Model ids the server lists at `GET …/models`, in its order (for custom
    /// servers configured without a model).
    pub async fn list_models(&self) -> Result<Vec<String>, LlmError> {
        let base = self.endpoint.trim_end_matches("/chat/completions");
        let mut builder = self.client.get(format!("{base}/models"));
        if let Some(key) = &self.api_key {
            builder = builder.bearer_auth(key);
        }
        let response = tokio::time::timeout(self.idle_timeout, builder.send())
            .await
            .map_err(|_| LlmError::Timeout("no response while listing models".into()))?
            .map_err(LlmError::from_reqwest)?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.map_err(LlmError::from_reqwest)?;
        if !(200..300).contains(&status) {
            return Err(LlmError::from_response_parts(status, &headers, &text));
        }
        let listing: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| LlmError::Decode(format!("model list is not JSON: {e}")))?;
        Ok(listing["data"]
            .as_array()
            .map(|models| {
                models
                    .iter()
                    .filter_map(|m| m["id"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default())
    }

    async fn start(
        &self,
        request: &ChatRequest,
        cancel: &CancellationToken,
    ) -> Result<DeltaStream, LlmError> {
        if cancel.is_cancelled() {
            return Err(LlmError::Cancelled);
        }
        let mut builder = self
            .client
            .post(&self.endpoint)
            .header(ACCEPT, "text/event-stream")
            .json(&wire::request_body(request));
        if let Some(key) = &self.api_key {
            builder = builder.bearer_auth(key);
        }
        let idle = self.idle_timeout;
        let response = guarded(cancel, idle, "no response", builder.send())
            .await?
            .map_err(LlmError::from_reqwest)?;
        let status = response.status();
        let headers = response.headers().clone();
        let req_id = request_id(&headers);
        let mut body = response.bytes_stream().boxed();
        if !status.is_success() {
            // A body that cannot be read still leaves the status to report.
            let bytes = match read_all(&mut body, cancel, idle, MAX_ERROR_READ).await {
                Err(LlmError::Cancelled) => return Err(LlmError::Cancelled),
                Err(_) => Vec::new(),
                Ok(bytes) => bytes,
            };
            let text = String::from_utf8_lossy(&bytes);
            return Err(LlmError::from_response_parts(
                status.as_u16(),
                &headers,
                &text,
            ));
        }
        let content_type = headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        if content_type.contains("json") && !content_type.contains("event-stream") {
            let bytes = read_all(&mut body, cancel, idle, MAX_JSON_READ).await?;
            let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
                let text = String::from_utf8_lossy(&bytes);
                LlmError::Decode(format!(
                    "bad completion JSON ({e}): {}",
                    truncate(&text, 200)
                ))
            })?;
            let deltas = wire::completion_deltas(&value, req_id.as_deref())?;
            return Ok(stream::iter(deltas.into_iter().map(Ok)).boxed());
        }
        Ok(Pump::stream(
            body,
            ChatChunks::default(),
            req_id,
            cancel.clone(),
            idle,
        ))
    }
}

impl Provider for ChatCompletionsProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, LlmError>> {
        Box::pin(ChatCompletionsProvider::list_models(self))
    }

    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<DeltaStream, LlmError>> {
        Box::pin(self.start(request, cancel))
    }
}

/// Runs `fut` unless `cancel` fires first or `idle` passes.
pub(crate) async fn guarded<T>(
    cancel: &CancellationToken,
    idle: Duration,
    what: &str,
    fut: impl Future<Output = T>,
) -> Result<T, LlmError> {
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(LlmError::Cancelled),
        r = tokio::time::timeout(idle, fut) => {
            r.map_err(|_| LlmError::Timeout(format!("{what} from the provider for {idle:?}")))
        }
    }
}

/// Reads a whole body, up to `max` bytes (the rest is dropped).
pub(crate) async fn read_all(
    body: &mut BoxStream<'static, reqwest::Result<Bytes>>,
    cancel: &CancellationToken,
    idle: Duration,
    max: usize,
) -> Result<Vec<u8>, LlmError> {
    let mut out = Vec::new();
    while let Some(chunk) = guarded(cancel, idle, "no data", body.next()).await? {
        let chunk = chunk.map_err(|e| {
            LlmError::Transport(format!(
                "reading the response failed: {}",
                describe(&e.without_url())
            ))
        })?;
        let room = max.saturating_sub(out.len());
        out.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if out.len() >= max {
            break;
        }
    }
    Ok(out)
}

/// OpenAI chat-completion chunks: `[DONE]` ends the stream; a close after a
/// `finish_reason` is a normal end too.
#[derive(Default)]
struct ChatChunks {
    saw_finish: bool,
}

impl WireEvents for ChatChunks {
    fn on_event(
        &mut self,
        event: &SseEvent,
        request_id: Option<&str>,
        out: &mut Vec<StreamDelta>,
    ) -> Result<bool, LlmError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(false);
        }
        if data == "[DONE]" {
            return Ok(true);
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| {
            LlmError::Decode(format!("bad stream chunk ({e}): {}", truncate(data, 200)))
        })?;
        if event.event.as_deref() == Some("error") {
            let error = chunk.get("error").unwrap_or(&chunk);
            return Err(wire::embedded_error(error, request_id));
        }
        wire::chunk_deltas(&chunk, request_id, out)?;
        self.saw_finish |= out.iter().any(|d| matches!(d, StreamDelta::Finish(_)));
        Ok(false)
    }

    fn on_eof(&self) -> Result<(), LlmError> {
        if self.saw_finish {
            Ok(())
        } else {
            Err(LlmError::StreamEnded(
                "connection closed before the end of the stream".into(),
            ))
        }
    }
}

#[cfg(test)]
#[path = "chat_completions_tests.rs"]
mod tests;
