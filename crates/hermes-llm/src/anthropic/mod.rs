//! The Anthropic Messages transport (`POST {base}/v1/messages`, streamed).

mod events;
mod request;
mod thinking;

use std::fmt;
use std::time::Duration;

use futures_util::future::BoxFuture;
use futures_util::stream::{self, StreamExt};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use request::{FALLBACK_MAX_TOKENS, default_max_tokens};

use crate::chat_completions::{MAX_ERROR_READ, guarded, install_crypto_provider, read_all};

/// Largest non-streamed message body read.
const MAX_JSON_READ: usize = 32 * 1024 * 1024;
use crate::error::{describe, request_id, truncate};
use crate::pump::{Pump, WireEvents};
use crate::sse::SseEvent;
use crate::{ChatRequest, DeltaStream, LlmError, Provider, StreamDelta};
use events::EventDecoder;

/// The `anthropic-version` header every request carries.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// How long prompt-cache breakpoints live.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CacheTtl {
    /// Five minutes (`{"type":"ephemeral"}`), the default.
    #[default]
    FiveMinutes,
    /// One hour (`{"type":"ephemeral","ttl":"1h"}`).
    OneHour,
}

/// Where and how to reach an Anthropic Messages endpoint. `Debug` hides the key.
#[derive(Clone)]
pub struct AnthropicConfig {
    /// Host root, e.g. `https://api.anthropic.com`; requests go to
    /// `{base_url}/v1/messages` (a trailing `/v1` is accepted too).
    pub base_url: String,
    /// Sent as `x-api-key`.
    pub api_key: String,
    /// Values for the `anthropic-beta` header (sent comma-joined when non-empty).
    pub extra_betas: Vec<String>,
    /// Longest wait for the response headers and between stream events.
    pub idle_timeout: Duration,
    /// Longest wait for the TCP/TLS connection.
    pub connect_timeout: Duration,
    /// Lifetime of the `system_and_3` prompt-cache breakpoints.
    pub cache_ttl: CacheTtl,
    /// `agent.reasoning_effort` (`low` … `xhigh`, `none`); `None` asks for no thinking.
    pub reasoning_effort: Option<String>,
}

impl Default for AnthropicConfig {
    fn default() -> Self {
        Self {
            base_url: "https://api.anthropic.com".to_owned(),
            api_key: String::new(),
            extra_betas: Vec::new(),
            idle_timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(30),
            cache_ttl: CacheTtl::FiveMinutes,
            reasoning_effort: None,
        }
    }
}

impl AnthropicConfig {
    /// Defaults for `base_url` with `api_key`.
    pub fn new(base_url: impl Into<String>, api_key: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            api_key: api_key.into(),
            ..Self::default()
        }
    }
}

impl fmt::Debug for AnthropicConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnthropicConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &"<redacted>")
            .field("extra_betas", &self.extra_betas)
            .field("idle_timeout", &self.idle_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("cache_ttl", &self.cache_ttl)
            .field("reasoning_effort", &self.reasoning_effort)
            .finish()
    }
}

/// A [`Provider`] speaking the Anthropic Messages protocol over SSE. `Debug`
/// hides the key.
#[derive(Clone)]
pub struct AnthropicProvider {
    name: String,
    endpoint: String,
    idle_timeout: Duration,
    cache_ttl: CacheTtl,
    reasoning_effort: Option<String>,
    client: reqwest::Client,
}

impl fmt::Debug for AnthropicProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnthropicProvider")
            .field("name", &self.name)
            .field("endpoint", &self.endpoint)
            .field("idle_timeout", &self.idle_timeout)
            .field("cache_ttl", &self.cache_ttl)
            .finish_non_exhaustive()
    }
}

fn header_value(name: &str, value: &str) -> Result<HeaderValue, LlmError> {
    let mut v = HeaderValue::from_str(value)
        .map_err(|_| LlmError::Config(format!("invalid value for header {name}")))?;
    if name == "x-api-key" {
        v.set_sensitive(true);
    }
    Ok(v)
}

impl AnthropicProvider {
    /// Validates `cfg` and builds the HTTP client.
    pub fn new(name: impl Into<String>, cfg: AnthropicConfig) -> Result<Self, LlmError> {
        let base = cfg.base_url.trim().trim_end_matches('/');
        let url = reqwest::Url::parse(base)
            .map_err(|e| LlmError::Config(format!("invalid base URL: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(LlmError::Config(format!(
                "base URL must be http or https, not {}",
                url.scheme()
            )));
        }
        let root = base.strip_suffix("/v1").unwrap_or(base);
        let mut headers = HeaderMap::new();
        if !cfg.api_key.is_empty() {
            headers.insert("x-api-key", header_value("x-api-key", &cfg.api_key)?);
        }
        headers.insert(
            "anthropic-version",
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        let betas: Vec<&str> = cfg
            .extra_betas
            .iter()
            .map(|b| b.trim())
            .filter(|b| !b.is_empty())
            .collect();
        if !betas.is_empty() {
            let joined = betas.join(",");
            headers.insert("anthropic-beta", header_value("anthropic-beta", &joined)?);
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
            endpoint: format!("{root}/v1/messages"),
            idle_timeout: cfg.idle_timeout,
            cache_ttl: cfg.cache_ttl,
            reasoning_effort: cfg.reasoning_effort,
            client,
        })
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The JSON body this provider sends for `request`.
    pub fn request_body(&self, request: &ChatRequest) -> Value {
        let mut body = request::request_body(request, self.cache_ttl);
        if let Value::Object(map) = &mut body {
            thinking::apply(map, &request.model, self.reasoning_effort.as_deref());
        }
        body
    }

    async fn start(
        &self,
        request: &ChatRequest,
        cancel: &CancellationToken,
    ) -> Result<DeltaStream, LlmError> {
        if cancel.is_cancelled() {
            return Err(LlmError::Cancelled);
        }
        let builder = self
            .client
            .post(&self.endpoint)
            .header(ACCEPT, "text/event-stream")
            .json(&self.request_body(request));
        let idle = self.idle_timeout;
        let response = guarded(cancel, idle, "no response", builder.send())
            .await?
            .map_err(LlmError::from_reqwest)?;
        let status = response.status();
        let headers = response.headers().clone();
        let mut body = response.bytes_stream().boxed();
        if !status.is_success() {
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
                LlmError::Decode(format!("bad message JSON ({e}): {}", truncate(&text, 200)))
            })?;
            let deltas = events::message_deltas(&value, req_id.as_deref())?;
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
}

impl Provider for AnthropicProvider {
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

/// Anthropic Messages events: `message_stop` ends the stream.
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
        let value: Value = serde_json::from_str(data).map_err(|e| {
            LlmError::Decode(format!("bad stream event ({e}): {}", truncate(data, 200)))
        })?;
        self.event(&value, request_id, out)?;
        Ok(self.stopped)
    }

    fn on_eof(&self) -> Result<(), LlmError> {
        Err(LlmError::StreamEnded(
            "connection closed before message_stop".into(),
        ))
    }
}
