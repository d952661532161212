//! The OpenAI Responses transport (`POST {base}/responses`, streamed), the
//! `codex_responses` api mode.

mod events;
mod request;

use std::fmt;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use request::FALLBACK_INSTRUCTIONS;

use crate::api_mode::host_of;
use crate::open::{Opened, post_sse};
use crate::pump::{WireEvents, data_json};
use crate::sse::SseEvent;
use crate::{ChatCompletionsConfig, ChatRequest, DeltaStream, LlmError, Provider, StreamDelta};
use events::EventDecoder;

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
    http: crate::open::Http,
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
        let (base, url, http) = cfg.client()?;
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
            http,
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
        let opened = match self.post(&self.request_body(request), cancel).await {
            // Encrypted reasoning is sealed to the endpoint that minted it; after a
            // provider or key change it is rejected, so the call is made once more
            // without it, as the reference does.
            Err(error) if request::replays_reasoning(request) && is_invalid_encrypted(&error) => {
                let flavor = request::Flavor {
                    drop_reasoning: true,
                    ..self.flavor
                };
                self.post(&request::request_body(request, flavor), cancel)
                    .await?
            }
            other => other?,
        };
        opened
            .sse("response", events::response_deltas, EventDecoder::default())
            .await
    }

    /// Opens a streamed request with one request body.
    async fn post(&self, body: &Value, cancel: &CancellationToken) -> Result<Opened, LlmError> {
        let key = self.api_key.as_deref();
        post_sse(
            &self.http,
            &self.endpoint,
            key,
            body,
            cancel,
            self.idle_timeout,
        )
        .await
    }
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
        let value = data_json(data, "event")?;
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
