//! The Anthropic Messages transport (`POST {base}/v1/messages`, streamed).

mod events;
mod request;
mod thinking;

use std::fmt;
use std::time::Duration;

use futures_util::future::BoxFuture;
use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use request::{FALLBACK_MAX_TOKENS, default_max_tokens};

use crate::open::{Http, SharedHttp, parse_base, post_sse};
use crate::pump::{WireEvents, data_json};
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
    /// Longest time one request may take, body included (`HERMES_API_TIMEOUT`).
    pub request_timeout: Duration,
    /// Lifetime of the `system_and_3` prompt-cache breakpoints.
    pub cache_ttl: CacheTtl,
    /// `agent.reasoning_effort` (`low` … `xhigh`, `none`); `None` asks for no thinking.
    pub reasoning_effort: Option<String>,
    /// A client to share with other providers; `None` builds one for this provider.
    pub http: Option<SharedHttp>,
}

impl CacheTtl {
    /// The `cache_control` marker for this lifetime.
    pub fn marker(self) -> serde_json::Value {
        match self {
            CacheTtl::FiveMinutes => serde_json::json!({"type": "ephemeral"}),
            CacheTtl::OneHour => serde_json::json!({"type": "ephemeral", "ttl": "1h"}),
        }
    }

    /// Parses `prompt_caching.cache_ttl` (`5m` or `1h`); anything else is `None`.
    pub fn parse(raw: &str) -> Option<Self> {
        match raw.trim() {
            "5m" => Some(CacheTtl::FiveMinutes),
            "1h" => Some(CacheTtl::OneHour),
            _ => None,
        }
    }
}

impl Default for AnthropicConfig {
    fn default() -> Self {
        Self {
            base_url: "https://api.anthropic.com".to_owned(),
            api_key: String::new(),
            extra_betas: Vec::new(),
            idle_timeout: crate::DEFAULT_READ_TIMEOUT,
            connect_timeout: Duration::from_secs(30),
            request_timeout: crate::DEFAULT_REQUEST_TIMEOUT,
            cache_ttl: CacheTtl::FiveMinutes,
            reasoning_effort: None,
            http: None,
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
            .field("request_timeout", &self.request_timeout)
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
    http: Http,
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
        parse_base(base)?;
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
        let http = Http::new(cfg.http.as_ref(), headers, cfg.connect_timeout)?
            .with_request_timeout(cfg.request_timeout);
        Ok(Self {
            name: name.into(),
            endpoint: format!("{root}/v1/messages"),
            idle_timeout: cfg.idle_timeout,
            cache_ttl: cfg.cache_ttl,
            reasoning_effort: cfg.reasoning_effort,
            http,
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
        let body = self.request_body(request);
        post_sse(
            &self.http,
            &self.endpoint,
            None,
            &body,
            cancel,
            self.idle_timeout,
        )
        .await?
        .sse("message", events::message_deltas, EventDecoder::default())
        .await
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
        self.event(&data_json(data, "event")?, request_id, out)?;
        Ok(self.stopped)
    }

    fn on_eof(&self) -> Result<(), LlmError> {
        Err(LlmError::StreamEnded(
            "connection closed before message_stop".into(),
        ))
    }
}
