//! The OpenAI Responses transport (`POST {base}/responses`, streamed), the
//! `codex_responses` api mode.

mod events;
mod request;

use std::fmt;
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use futures_util::stream::{self, BoxStream, StreamExt};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use request::FALLBACK_INSTRUCTIONS;

use crate::api_mode::host_of;
use crate::chat_completions::{MAX_ERROR_READ, guarded, install_crypto_provider, read_all};
use crate::error::{describe, request_id, truncate};
use crate::pump::{Pump, WireEvents};
use crate::sse::SseEvent;
use crate::{ChatCompletionsConfig, ChatRequest, DeltaStream, LlmError, Provider, StreamDelta};
use events::EventDecoder;

/// Largest non-streamed response body read.
const MAX_JSON_READ: usize = 32 * 1024 * 1024;

/// Where and how to reach a Responses endpoint: the same settings as an
/// OpenAI-compatible chat endpoint (`base_url` up to and including `/v1`).
pub type ResponsesConfig = ChatCompletionsConfig;

/// A [`Provider`] speaking the OpenAI Responses protocol over SSE. `Debug`
/// hides the key.
#[derive(Clone)]
pub struct ResponsesProvider {
    name: String,
    endpoint: String,
    api_key: Option<String>,
    idle_timeout: Duration,
    flavor: request::Flavor,
    client: reqwest::Client,
}

impl fmt::Debug for ResponsesProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponsesProvider")
            .field("name", &self.name)
            .field("endpoint", &self.endpoint)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("idle_timeout", &self.idle_timeout)
            .finish_non_exhaustive()
    }
}

impl ResponsesProvider {
    /// Validates `cfg` and builds the HTTP client.
    pub fn new(name: impl Into<String>, cfg: ResponsesConfig) -> Result<Self, LlmError> {
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
        let codex_backend =
            host_of(base) == "chatgpt.com" && url.path().contains("/backend-api/codex");
        Ok(Self {
            name: name.into(),
            endpoint: format!("{base}/responses"),
            api_key: cfg.api_key.filter(|k| !k.is_empty()),
            idle_timeout: cfg.idle_timeout,
            flavor: request::Flavor {
                codex_backend,
                drop_reasoning: false,
            },
            client,
        })
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The JSON body this provider sends for `request`.
    pub fn request_body(&self, request: &ChatRequest) -> Value {
        request::request_body(request, self.flavor)
    }

    async fn start(
        &self,
        request: &ChatRequest,
        cancel: &CancellationToken,
    ) -> Result<DeltaStream, LlmError> {
        if cancel.is_cancelled() {
            return Err(LlmError::Cancelled);
        }
        let idle = self.idle_timeout;
        let mut sent = self.post(&self.request_body(request), cancel).await?;
        if !sent.0.is_success() {
            let error = failure(sent, cancel, idle).await?;
            // Encrypted reasoning is sealed to the endpoint that minted it; after a
            // provider or key change it is rejected, so the call is made once more
            // without it, as the reference does.
            if !(request::replays_reasoning(request) && is_invalid_encrypted(&error)) {
                return Err(error);
            }
            let flavor = request::Flavor {
                drop_reasoning: true,
                ..self.flavor
            };
            sent = self
                .post(&request::request_body(request, flavor), cancel)
                .await?;
            if !sent.0.is_success() {
                return Err(failure(sent, cancel, idle).await?);
            }
        }
        let (_, headers, mut body) = sent;
        let req_id = request_id(&headers);
        let content_type = headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        if content_type.contains("json") && !content_type.contains("event-stream") {
            let bytes = read_all(&mut body, cancel, idle, MAX_JSON_READ).await?;
            let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
                let text = String::from_utf8_lossy(&bytes);
                LlmError::Decode(format!("bad response JSON ({e}): {}", truncate(&text, 200)))
            })?;
            let deltas = events::response_deltas(&value, req_id.as_deref())?;
            return Ok(stream::iter(deltas.into_iter().map(Ok)).boxed());
        }
        Ok(Pump::stream(
            body,
            EventDecoder::default(),
            req_id,
            cancel.clone(),
            idle,
        ))
    }

    /// Sends one request body; the response's status, headers and body stream.
    async fn post(&self, body: &Value, cancel: &CancellationToken) -> Result<Sent, LlmError> {
        let mut builder = self
            .client
            .post(&self.endpoint)
            .header(ACCEPT, "text/event-stream")
            .json(body);
        if let Some(key) = &self.api_key {
            builder = builder.bearer_auth(key);
        }
        let response = guarded(cancel, self.idle_timeout, "no response", builder.send())
            .await?
            .map_err(LlmError::from_reqwest)?;
        let headers = response.headers().clone();
        Ok((response.status(), headers, response.bytes_stream().boxed()))
    }
}

/// A response as received: status, headers and the body still to read.
type Sent = (
    reqwest::StatusCode,
    HeaderMap,
    BoxStream<'static, reqwest::Result<Bytes>>,
);

/// The error a non-success response stands for; `Err` only when cancelled.
async fn failure(
    sent: Sent,
    cancel: &CancellationToken,
    idle: Duration,
) -> Result<LlmError, LlmError> {
    let (status, headers, mut body) = sent;
    // A body that cannot be read still leaves the status to report.
    let bytes = match read_all(&mut body, cancel, idle, MAX_ERROR_READ).await {
        Err(LlmError::Cancelled) => return Err(LlmError::Cancelled),
        Err(_) => Vec::new(),
        Ok(bytes) => bytes,
    };
    let text = String::from_utf8_lossy(&bytes);
    Ok(LlmError::from_response_parts(
        status.as_u16(),
        &headers,
        &text,
    ))
}

/// Whether the server refused replayed reasoning it cannot decrypt.
fn is_invalid_encrypted(error: &LlmError) -> bool {
    matches!(error, LlmError::Http { status: 400, body, .. } if body.contains("invalid_encrypted_content"))
}

impl Provider for ResponsesProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<DeltaStream, LlmError>> {
        Box::pin(self.start(request, cancel))
    }
}

/// Responses events: a terminal `response.completed` / `response.incomplete`
/// ends the stream; `response.failed` and `error` end it with an error.
impl WireEvents for EventDecoder {
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
            // Some proxies close with `[DONE]`; before a terminal event it is a cut.
            return self.on_eof().map(|()| true);
        }
        let value: Value = serde_json::from_str(data).map_err(|e| {
            LlmError::Decode(format!("bad stream event ({e}): {}", truncate(data, 200)))
        })?;
        self.event(&value, event.event.as_deref(), request_id, out)?;
        Ok(self.done)
    }

    fn on_eof(&self) -> Result<(), LlmError> {
        if self.done {
            Ok(())
        } else {
            Err(LlmError::StreamEnded(
                "connection closed before response.completed".into(),
            ))
        }
    }
}
