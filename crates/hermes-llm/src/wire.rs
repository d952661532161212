//! The OpenAI chat-completions wire format: request bodies, stream chunks,
//! full completions and usage blocks.

use hermes_protocol::{FinishReason, Message, Role, ToolSchema, Usage};
use serde_json::{Map, Value, json};

use crate::error::{MAX_ERROR_BODY, truncate};
use crate::{ChatRequest, LlmError, StreamDelta, ToolChoice};

/// A message as sent; GPT-5 and Codex models take instructions as `developer`.
fn wire_message(m: &hermes_protocol::Message, model: &str) -> Value {
    let mut v = message_json(m);
    if m.role == hermes_protocol::Role::System && crate::api_mode::uses_developer_role(model) {
        v["role"] = Value::String("developer".into());
    }
    v
}

/// A chat-completions request body. The tools are serialized straight from
/// the shared schemas: copying them into the JSON tree would cost every request
/// of every session its own deep copy.
#[derive(serde::Serialize)]
pub(crate) struct RequestBody<'a> {
    /// Everything but the tools (an object).
    #[serde(flatten)]
    pub(crate) fields: Value,
    #[serde(skip_serializing_if = "WireTools::is_empty")]
    tools: WireTools<'a>,
}

/// Tool schemas in the `{"type": "function", "function": …}` wrapping.
struct WireTools<'a>(&'a [ToolSchema]);

impl WireTools<'_> {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl serde::Serialize for WireTools<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(serde::Serialize)]
        struct Wrapped<'a> {
            #[serde(rename = "type")]
            kind: &'static str,
            function: &'a ToolSchema,
        }
        serializer.collect_seq(self.0.iter().map(|function| Wrapped {
            kind: "function",
            function,
        }))
    }
}

/// The body of a streamed chat-completions request.
pub(crate) fn request_body(req: &ChatRequest) -> RequestBody<'_> {
    let mut body = Map::new();
    body.insert("model".into(), Value::String(req.model.clone()));
    body.insert(
        "messages".into(),
        req.messages
            .iter()
            .map(|m| wire_message(m, &req.model))
            .collect(),
    );
    if !req.tools.is_empty() {
        match &req.tool_choice {
            ToolChoice::Auto => {}
            ToolChoice::None => {
                body.insert("tool_choice".into(), json!("none"));
            }
            ToolChoice::Required => {
                body.insert("tool_choice".into(), json!("required"));
            }
            ToolChoice::Named(name) => {
                body.insert(
                    "tool_choice".into(),
                    json!({"type": "function", "function": {"name": name}}),
                );
            }
        }
    }
    body.insert("stream".into(), Value::Bool(true));
    body.insert("stream_options".into(), json!({"include_usage": true}));
    if let Some(max) = req.max_tokens {
        body.insert("max_tokens".into(), json!(max));
    }
    if let Some(t) = req.temperature {
        // Through f64's shortest text so 0.7f32 goes out as 0.7, not 0.699999988.
        let t = t.to_string().parse::<f64>().unwrap_or(f64::from(t));
        body.insert("temperature".into(), json!(t));
    }
    RequestBody {
        fields: Value::Object(body),
        tools: WireTools(&req.tools),
    }
}

/// Whether a marker inside this message's content would be honoured: only text
/// content (a string or parts) can carry one on the chat-completions envelope.
fn can_carry_marker(m: &Value) -> bool {
    match &m["content"] {
        Value::String(s) => !s.is_empty(),
        Value::Array(parts) => parts.last().is_some_and(Value::is_object),
        _ => false,
    }
}

fn mark(m: &mut Value, marker: &Value) {
    match &mut m["content"] {
        Value::String(s) => {
            let text = std::mem::take(s);
            m["content"] = json!([{"type": "text", "text": text, "cache_control": marker}]);
        }
        Value::Array(parts) => {
            if let Some(last) = parts.last_mut().filter(|p| p.is_object()) {
                last["cache_control"] = marker.clone();
            }
        }
        _ => {}
    }
}

/// The `system_and_3` prompt-cache layout on a chat-completions body: breakpoints on
/// the system message and the last three messages that can carry one.
pub(crate) fn apply_envelope_cache(body: &mut Value, ttl: crate::CacheTtl) {
    let marker = ttl.marker();
    let Some(messages) = body.get_mut("messages").and_then(Value::as_array_mut) else {
        return;
    };
    let mut left = 4;
    if let Some(first) = messages.first_mut()
        && matches!(first["role"].as_str(), Some("system" | "developer"))
        && can_carry_marker(first)
    {
        mark(first, &marker);
        left -= 1;
    }
    let eligible: Vec<usize> = (0..messages.len())
        .filter(|&i| {
            !matches!(messages[i]["role"].as_str(), Some("system" | "developer"))
                && can_carry_marker(&messages[i])
        })
        .collect();
    for &i in eligible.iter().rev().take(left) {
        mark(&mut messages[i], &marker);
    }
}

/// One message on the wire. `reasoning` stays home: providers reject unknown
/// fields. Content is `null` only for an assistant message with tool calls.
pub(crate) fn message_json(m: &Message) -> Value {
    let mut out = Map::new();
    out.insert("role".into(), Value::String(m.role.as_str().to_owned()));
    let content = match &m.content {
        _ if !m.images.is_empty() => {
            let mut parts: Vec<Value> = Vec::new();
            if !m.text().is_empty() {
                parts.push(json!({"type": "text", "text": m.text()}));
            }
            for url in &m.images {
                parts.push(json!({"type": "image_url", "image_url": {"url": url}}));
            }
            Value::Array(parts)
        }
        Some(text) => Value::String(text.clone()),
        None if m.role == Role::Assistant && !m.tool_calls.is_empty() => Value::Null,
        None => Value::String(String::new()),
    };
    out.insert("content".into(), content);
    if !m.tool_calls.is_empty() {
        let calls = m
            .tool_calls
            .iter()
            .map(|c| {
                json!({
                    "id": c.id,
                    "type": c.kind,
                    "function": {"name": c.function.name, "arguments": c.function.arguments},
                })
            })
            .collect();
        out.insert("tool_calls".into(), calls);
    }
    if let Some(id) = &m.tool_call_id {
        out.insert("tool_call_id".into(), Value::String(id.clone()));
    }
    if let Some(name) = &m.name {
        out.insert("name".into(), Value::String(name.clone()));
    }
    Value::Object(out)
}

/// The media type and base64 data of a `data:<type>;base64,<data>` URL.
pub(crate) fn split_data_url(url: &str) -> Option<(&str, &str)> {
    let rest = url.strip_prefix("data:")?;
    let (header, data) = rest.split_once(',')?;
    let media = header.strip_suffix(";base64")?;
    Some((media, data))
}

fn non_empty_str(v: Option<&Value>) -> Option<&str> {
    v.and_then(Value::as_str).filter(|s| !s.is_empty())
}

fn count(v: &Value, pointer: &str) -> u64 {
    v.pointer(pointer).and_then(Value::as_u64).unwrap_or(0)
}

/// Normalises an OpenAI-style `usage` object. `input_tokens` is the full
/// prompt count (cached tokens included), as [`Usage`] documents.
pub(crate) fn parse_usage(v: &Value) -> Usage {
    let first = |pointers: &[&str]| {
        pointers
            .iter()
            .map(|p| count(v, p))
            .find(|n| *n > 0)
            .unwrap_or(0)
    };
    Usage {
        input_tokens: count(v, "/prompt_tokens"),
        output_tokens: count(v, "/completion_tokens"),
        cache_read_tokens: first(&[
            "/prompt_tokens_details/cached_tokens",
            "/cache_read_input_tokens",
            "/prompt_cache_hit_tokens",
        ]),
        cache_write_tokens: first(&[
            "/prompt_tokens_details/cache_write_tokens",
            "/cache_creation_input_tokens",
        ]),
        reasoning_tokens: first(&[
            "/completion_tokens_details/reasoning_tokens",
            "/output_tokens_details/reasoning_tokens",
        ]),
    }
}

/// An `error` object (or string) sent with a 2xx status, as an HTTP-like error.
pub(crate) fn embedded_error(error: &Value, request_id: Option<&str>) -> LlmError {
    let code = error.get("code").or_else(|| error.get("status"));
    let status = code
        .and_then(|c| {
            c.as_u64()
                .or_else(|| c.as_str().and_then(|s| s.parse().ok()))
        })
        .filter(|c| (100..=599).contains(c))
        .and_then(|c| u16::try_from(c).ok())
        .unwrap_or(0);
    let body = match error {
        Value::String(s) => s.clone(),
        other => json!({ "error": other }).to_string(),
    };
    LlmError::Http {
        status,
        body: truncate(&body, MAX_ERROR_BODY),
        request_id: request_id.map(str::to_owned),
        retry_after: None,
    }
}

fn error_of(v: &Value) -> Option<&Value> {
    v.get("error").filter(|e| !e.is_null())
}

fn reasoning_of(v: &Value) -> Option<&str> {
    non_empty_str(v.get("reasoning_content")).or_else(|| non_empty_str(v.get("reasoning")))
}

fn arguments_of(function: Option<&Value>) -> String {
    match function.and_then(|f| f.get("arguments")) {
        Some(Value::String(s)) => s.clone(),
        None | Some(Value::Null) => String::new(),
        Some(other) => other.to_string(),
    }
}

fn tool_call_delta(position: usize, call: &Value) -> Option<StreamDelta> {
    let index = call
        .get("index")
        .and_then(Value::as_u64)
        .and_then(|i| usize::try_from(i).ok())
        .unwrap_or(position);
    let function = call.get("function");
    let id = non_empty_str(call.get("id")).map(str::to_owned);
    let name = non_empty_str(function.and_then(|f| f.get("name"))).map(str::to_owned);
    let arguments = arguments_of(function);
    if id.is_none() && name.is_none() && arguments.is_empty() {
        return None;
    }
    Some(StreamDelta::ToolCall {
        index,
        id,
        name,
        arguments,
    })
}

/// The deltas in one decoded stream chunk, appended to `out`.
pub(crate) fn chunk_deltas(
    chunk: &Value,
    request_id: Option<&str>,
    out: &mut Vec<StreamDelta>,
) -> Result<(), LlmError> {
    if let Some(error) = error_of(chunk) {
        return Err(embedded_error(error, request_id));
    }
    if let Some(choice) = chunk
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
    {
        if let Some(delta) = choice.get("delta") {
            if let Some(r) = reasoning_of(delta) {
                out.push(StreamDelta::Reasoning(r.to_owned()));
            }
            if let Some(text) = non_empty_str(delta.get("content")) {
                out.push(StreamDelta::Text(text.to_owned()));
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                out.extend(
                    calls
                        .iter()
                        .enumerate()
                        .filter_map(|(i, c)| tool_call_delta(i, c)),
                );
            }
        }
        if let Some(reason) = non_empty_str(choice.get("finish_reason")) {
            out.push(StreamDelta::Finish(FinishReason::from_wire(reason)));
        }
    }
    if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
        out.push(StreamDelta::Usage(parse_usage(usage)));
    }
    Ok(())
}

/// The deltas equivalent to a complete (non-streamed) `chat.completion`.
pub(crate) fn completion_deltas(
    body: &Value,
    request_id: Option<&str>,
) -> Result<Vec<StreamDelta>, LlmError> {
    if let Some(error) = error_of(body) {
        return Err(embedded_error(error, request_id));
    }
    let choice = body
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or_else(|| LlmError::Decode("completion has no choices".to_owned()))?;
    let mut out = Vec::new();
    if let Some(message) = choice.get("message") {
        if let Some(r) = reasoning_of(message) {
            out.push(StreamDelta::Reasoning(r.to_owned()));
        }
        if let Some(text) = non_empty_str(message.get("content")) {
            out.push(StreamDelta::Text(text.to_owned()));
        }
        if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
            for (i, call) in calls.iter().enumerate() {
                // Position, not any `index` field: a full message lists calls in order.
                let mut call = call.clone();
                if let Some(obj) = call.as_object_mut() {
                    obj.remove("index");
                }
                out.extend(tool_call_delta(i, &call));
            }
        }
    }
    if let Some(reason) = non_empty_str(choice.get("finish_reason")) {
        out.push(StreamDelta::Finish(FinishReason::from_wire(reason)));
    }
    if let Some(usage) = body.get("usage").filter(|u| u.is_object()) {
        out.push(StreamDelta::Usage(parse_usage(usage)));
    }
    Ok(out)
}

/// A tool-call id restricted to `[a-zA-Z0-9_-]` (anything else becomes `_`),
/// at most `max` characters, and `fallback` when empty: the ids the Anthropic
/// and Bedrock APIs accept.
pub(crate) fn restricted_id(id: &str, max: usize, fallback: &str) -> String {
    let clean: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(max)
        .collect();
    if clean.is_empty() {
        fallback.to_owned()
    } else {
        clean
    }
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
