//! The OpenAI-compatible `POST /chat/completions` streaming transport.

use std::fmt;
use std::time::Duration;

use futures_util::future::BoxFuture;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use tokio_util::sync::CancellationToken;

#[cfg(test)]
pub(crate) use crate::open::install_crypto_provider;
use crate::open::{Http, SharedHttp, parse_base, post_sse};
use crate::pump::{WireEvents, data_json};
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
    /// Longest time one request may take, body included (`HERMES_API_TIMEOUT`).
    pub request_timeout: Duration,
    /// Anthropic-style `cache_control` breakpoints (`system_and_3`, envelope layout) for
    /// gateways that honour them on chat completions (Claude via OpenRouter).
    pub prompt_cache: Option<crate::CacheTtl>,
    /// A client to share with other providers; `None` builds one for this provider.
    pub http: Option<SharedHttp>,
}

impl Default for ChatCompletionsConfig {
    fn default() -> Self {
        Self {
            base_url: String::new(),
            api_key: None,
            extra_headers: Vec::new(),
            idle_timeout: crate::DEFAULT_READ_TIMEOUT,
            connect_timeout: Duration::from_secs(30),
            request_timeout: crate::DEFAULT_REQUEST_TIMEOUT,
            prompt_cache: None,
            http: None,
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

    /// The trimmed base URL, parsed, and a client sending the extra headers
    /// (shared with the Responses transport, which has the same settings).
    pub(crate) fn client(&self) -> Result<(&str, reqwest::Url, Http), LlmError> {
        let base = self.base_url.trim().trim_end_matches('/');
        let url = parse_base(base)?;
        let mut headers = HeaderMap::new();
        for (name, value) in &self.extra_headers {
            let header = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| LlmError::Config(format!("invalid header name {name:?}")))?;
            let value = HeaderValue::from_str(value)
                .map_err(|_| LlmError::Config(format!("invalid value for header {name}")))?;
            headers.append(header, value);
        }
        Ok((
            base,
            url,
            Http::new(self.http.as_ref(), headers, self.connect_timeout)?
                .with_request_timeout(self.request_timeout),
        ))
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
    prompt_cache: Option<crate::CacheTtl>,
    http: Http,
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
            .field("request_timeout", &self.request_timeout)
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

impl ChatCompletionsProvider {
    /// Validates `cfg` and builds the HTTP client.
    pub fn new(name: impl Into<String>, cfg: ChatCompletionsConfig) -> Result<Self, LlmError> {
        let (base, _, http) = cfg.client()?;
        Ok(Self {
            name: name.into(),
            endpoint: format!("{base}/chat/completions"),
            api_key: cfg.api_key.filter(|k| !k.is_empty()),
            idle_timeout: cfg.idle_timeout,
            prompt_cache: cfg.prompt_cache,
            http,
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
        let mut builder = self.http.get(format!("{base}/models"));
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
        let mut body = wire::request_body(request);
        if let Some(ttl) = self.prompt_cache {
            wire::apply_envelope_cache(&mut body.fields, ttl);
        }
        let key = self.api_key.as_deref();
        post_sse(
            &self.http,
            &self.endpoint,
            key,
            &body,
            cancel,
            self.idle_timeout,
        )
        .await?
        .sse("completion", wire::completion_deltas, ChatChunks::default())
        .await
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
        let chunk = data_json(data, "chunk")?;
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
