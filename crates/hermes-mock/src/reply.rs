//! Scripted replies and how they are turned into HTTP responses.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

/// One scripted answer to a `POST …/chat/completions` request.
///
/// Built with the constructors and refined with the `with_*` methods:
///
/// ```
/// use hermes_mock::Reply;
/// let reply = Reply::tool_call("call_1", "read_file", r#"{"path":"a.txt"}"#)
///     .with_text("Let me look.")
///     .with_usage(120, 30);
/// # let _ = reply;
/// ```
#[derive(Debug, Clone)]
pub struct Reply {
    pub(crate) kind: Kind,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) delay: Option<Duration>,
    pub(crate) chunk_delay: Option<Duration>,
    pub(crate) cut_after: Option<usize>,
    pub(crate) force_json: bool,
    /// When set, only a request whose raw body contains this text takes the reply.
    pub(crate) only_for: Option<String>,
}

#[derive(Debug, Clone)]
pub(crate) enum Kind {
    Completion(Answer),
    Error { status: u16, body: String },
    RawSse(Vec<String>),
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Answer {
    pub(crate) text: Option<String>,
    pub(crate) reasoning: Option<String>,
    pub(crate) calls: Vec<(String, String, String)>,
    pub(crate) usage: Option<(u64, u64)>,
    /// `(cached prompt tokens, reasoning tokens)` to report in the usage details.
    pub(crate) usage_details: Option<(u64, u64)>,
    pub(crate) finish: Option<String>,
    /// `(exception type, message)` that ends a Bedrock stream instead of `messageStop`.
    pub(crate) stream_exception: Option<(String, String)>,
}

/// What the server should write back for one request.
#[derive(Debug)]
pub(crate) enum Rendered {
    /// A complete body with its status and content type.
    Full {
        status: u16,
        content_type: &'static str,
        body: String,
    },
    /// SSE `data:` payloads, written one HTTP chunk each.
    Sse { payloads: Vec<String> },
    /// Named SSE events `(event, data)`, written one HTTP chunk each
    /// (the Anthropic Messages stream).
    NamedSse { events: Vec<(String, String)> },
    /// AWS event-stream messages, written one HTTP chunk each (Bedrock ConverseStream).
    EventStream { frames: Vec<Vec<u8>> },
}

/// Facts about the request that shape the reply.
#[derive(Debug, Default)]
pub(crate) struct RequestInfo {
    pub stream: bool,
    pub include_usage: bool,
    pub model: Option<String>,
    pub body_len: usize,
    /// Which wire format the request's route speaks.
    pub wire: Wire,
}

/// The wire format a model call is answered in, chosen by its route.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Wire {
    /// OpenAI chat completions (`…/chat/completions`).
    #[default]
    Chat,
    /// Anthropic Messages (`…/messages`).
    Anthropic,
    /// OpenAI Responses (`…/responses`).
    Responses,
    /// AWS Bedrock Converse (`…/model/{id}/converse-stream`, `…/converse`).
    Bedrock,
}

impl RequestInfo {
    pub(crate) fn from_body(body: &Value, body_len: usize) -> Self {
        Self {
            stream: body.get("stream").and_then(Value::as_bool).unwrap_or(false),
            include_usage: body
                .pointer("/stream_options/include_usage")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            model: body.get("model").and_then(Value::as_str).map(str::to_owned),
            body_len,
            wire: Wire::Chat,
        }
    }
}

impl Reply {
    fn new(kind: Kind) -> Self {
        Self {
            kind,
            headers: Vec::new(),
            delay: None,
            chunk_delay: None,
            cut_after: None,
            force_json: false,
            only_for: None,
        }
    }

    fn answer() -> Answer {
        Answer::default()
    }

    /// An assistant answer with text only.
    pub fn text(s: impl Into<String>) -> Reply {
        Self::new(Kind::Completion(Answer {
            text: Some(s.into()),
            ..Self::answer()
        }))
    }

    /// An assistant answer calling one tool.
    pub fn tool_call(id: &str, name: &str, arguments: &str) -> Reply {
        Self::tool_calls(&[(id, name, arguments)])
    }

    /// An assistant answer calling several tools in parallel; each entry is
    /// `(id, name, arguments)`.
    pub fn tool_calls(calls: &[(&str, &str, &str)]) -> Reply {
        let calls = calls
            .iter()
            .map(|(id, name, args)| ((*id).to_owned(), (*name).to_owned(), (*args).to_owned()))
            .collect();
        Self::new(Kind::Completion(Answer {
            calls,
            ..Self::answer()
        }))
    }

    /// A non-2xx response with `body` (usually JSON text) as its body.
    pub fn error(status: u16, body: impl Into<String>) -> Reply {
        Self::new(Kind::Error {
            status,
            body: body.into(),
        })
    }

    /// Exact SSE `data:` payloads, sent verbatim in order. Add `"[DONE]"`
    /// yourself when the stream should end properly.
    pub fn raw_sse(events: Vec<String>) -> Reply {
        Self::new(Kind::RawSse(events))
    }

    fn map_answer(mut self, f: impl FnOnce(&mut Answer)) -> Reply {
        if let Kind::Completion(answer) = &mut self.kind {
            f(answer);
        }
        self
    }

    /// Text content alongside the tool calls (or replacing earlier text).
    pub fn with_text(self, s: impl Into<String>) -> Reply {
        let s = s.into();
        self.map_answer(|a| a.text = Some(s))
    }

    /// Reasoning, streamed as `reasoning_content` deltas before the text.
    pub fn with_reasoning(self, s: impl Into<String>) -> Reply {
        let s = s.into();
        self.map_answer(|a| a.reasoning = Some(s))
    }

    /// Token counts to report instead of the made-up default.
    pub fn with_usage(self, prompt: u64, completion: u64) -> Reply {
        self.map_answer(|a| a.usage = Some((prompt, completion)))
    }

    /// Cached prompt tokens and reasoning tokens to report in the usage
    /// details (`prompt_tokens_details` / `input_tokens_details` …).
    pub fn with_usage_details(self, cached: u64, reasoning: u64) -> Reply {
        self.map_answer(|a| a.usage_details = Some((cached, reasoning)))
    }

    /// Bedrock only: ends the stream with an event-stream exception message
    /// (e.g. `throttlingException`) after the content, instead of `messageStop`.
    pub fn with_stream_exception(
        self,
        kind: impl Into<String>,
        message: impl Into<String>,
    ) -> Reply {
        let exception = (kind.into(), message.into());
        self.map_answer(|a| a.stream_exception = Some(exception))
    }

    /// Overrides the `finish_reason` (default: `tool_calls` when the reply
    /// calls tools, else `stop`), e.g. `"length"`.
    pub fn with_finish_reason(self, reason: impl Into<String>) -> Reply {
        let reason = reason.into();
        self.map_answer(|a| a.finish = Some(reason))
    }

    /// An extra response header, e.g. `retry-after`.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Reply {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Waits this long before sending the response headers.
    pub fn with_delay(mut self, d: Duration) -> Reply {
        self.delay = Some(d);
        self
    }

    /// Waits this long between SSE chunks.
    pub fn with_chunk_delay(mut self, d: Duration) -> Reply {
        self.chunk_delay = Some(d);
        self
    }

    /// Closes the connection abruptly after `n_chunks` SSE `data:` events,
    /// without `[DONE]` and without ending the chunked body.
    pub fn cut_after(mut self, n_chunks: usize) -> Reply {
        self.cut_after = Some(n_chunks);
        self
    }

    /// Reserves the reply for a request whose body contains `marker` (e.g. a
    /// subagent's goal), so concurrent conversations each get their own script
    /// whatever order their requests arrive in. Unmarked replies still go to
    /// any request, first come first served.
    pub fn for_request_containing(mut self, marker: impl Into<String>) -> Reply {
        self.only_for = Some(marker.into());
        self
    }

    /// Answers with a plain `chat.completion` JSON object even when the
    /// request asked to stream, as some servers do.
    pub fn ignore_stream(mut self) -> Reply {
        self.force_json = true;
        self
    }

    pub(crate) fn render(&self, info: &RequestInfo) -> Rendered {
        match info.wire {
            Wire::Chat => {}
            Wire::Anthropic => return crate::anthropic::render(self, info),
            Wire::Responses => return crate::responses::render(self, info),
            Wire::Bedrock => return crate::bedrock::render(self, info),
        }
        match &self.kind {
            Kind::Error { status, body } => Rendered::Full {
                status: *status,
                content_type: "application/json",
                body: body.clone(),
            },
            Kind::RawSse(events) => Rendered::Sse {
                payloads: events.clone(),
            },
            Kind::Completion(answer) if info.stream && !self.force_json => Rendered::Sse {
                payloads: answer.sse_payloads(info),
            },
            Kind::Completion(answer) => Rendered::Full {
                status: 200,
                content_type: "application/json",
                body: answer.full_body(info).to_string(),
            },
        }
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn completion_id() -> String {
    format!("chatcmpl-mock-{}", NEXT_ID.fetch_add(1, Ordering::Relaxed))
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Splits `s` into pieces of at most `max` characters, never inside a char.
pub(crate) fn pieces(s: &str, max: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for ch in s.chars() {
        cur.push(ch);
        if cur.chars().count() >= max || (ch == ' ' && cur.chars().count() >= 3) {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

impl Answer {
    pub(crate) fn finish_reason(&self) -> String {
        match &self.finish {
            Some(f) => f.clone(),
            None if self.calls.is_empty() => "stop".to_owned(),
            None => "tool_calls".to_owned(),
        }
    }

    /// The `(prompt, completion)` token counts to report.
    pub(crate) fn token_counts(&self, info: &RequestInfo) -> (u64, u64) {
        self.usage.unwrap_or_else(|| {
            let produced = self.text.as_deref().map_or(0, str::len)
                + self.reasoning.as_deref().map_or(0, str::len)
                + self
                    .calls
                    .iter()
                    .map(|(_, n, a)| n.len() + a.len())
                    .sum::<usize>();
            ((info.body_len / 4).max(1) as u64, (produced / 4 + 1) as u64)
        })
    }

    fn usage_json(&self, info: &RequestInfo) -> Value {
        let (prompt, completion) = self.token_counts(info);
        let mut usage = json!({
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        });
        if let Some((cached, reasoning)) = self.usage_details {
            usage["prompt_tokens_details"] = json!({"cached_tokens": cached});
            usage["completion_tokens_details"] = json!({"reasoning_tokens": reasoning});
        }
        usage
    }

    pub(crate) fn model(info: &RequestInfo) -> String {
        info.model
            .clone()
            .unwrap_or_else(|| "mock-model".to_owned())
    }

    fn sse_payloads(&self, info: &RequestInfo) -> Vec<String> {
        let id = completion_id();
        let created = now_secs();
        let model = Self::model(info);
        let chunk = |delta: Value, finish: Value| {
            json!({
                "id": id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            })
            .to_string()
        };
        let mut out = vec![chunk(
            json!({"role": "assistant", "content": ""}),
            Value::Null,
        )];
        if let Some(reasoning) = &self.reasoning {
            for piece in pieces(reasoning, 8) {
                out.push(chunk(json!({"reasoning_content": piece}), Value::Null));
            }
        }
        if let Some(text) = &self.text {
            for piece in pieces(text, 8) {
                out.push(chunk(json!({"content": piece}), Value::Null));
            }
        }
        for (index, (call_id, name, args)) in self.calls.iter().enumerate() {
            let first = json!({"tool_calls": [{
                "index": index,
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": ""},
            }]});
            out.push(chunk(first, Value::Null));
            for piece in pieces(args, 5) {
                let delta =
                    json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]});
                out.push(chunk(delta, Value::Null));
            }
        }
        out.push(chunk(json!({}), Value::String(self.finish_reason())));
        if info.include_usage {
            out.push(
                json!({
                    "id": id,
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": model,
                    "choices": [],
                    "usage": self.usage_json(info),
                })
                .to_string(),
            );
        }
        out.push("[DONE]".to_owned());
        out
    }

    fn full_body(&self, info: &RequestInfo) -> Value {
        let mut message = json!({
            "role": "assistant",
            "content": self.text.clone().map_or(Value::Null, Value::String),
        });
        if let Some(reasoning) = &self.reasoning {
            message["reasoning_content"] = Value::String(reasoning.clone());
        }
        if !self.calls.is_empty() {
            let calls: Vec<Value> = self
                .calls
                .iter()
                .map(|(id, name, args)| {
                    json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}})
                })
                .collect();
            message["tool_calls"] = Value::Array(calls);
        }
        json!({
            "id": completion_id(),
            "object": "chat.completion",
            "created": now_secs(),
            "model": Self::model(info),
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason()}],
            "usage": self.usage_json(info),
        })
    }
}

#[cfg(test)]
#[path = "reply_tests.rs"]
mod tests;
