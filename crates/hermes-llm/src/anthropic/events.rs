//! Turning Anthropic Messages stream events into [`StreamDelta`]s.

use std::collections::HashMap;

use hermes_protocol::{FinishReason, Usage};
use serde_json::{Value, json};

use crate::error::{MAX_ERROR_BODY, truncate};
use crate::{LlmError, StreamDelta};

/// The HTTP status matching an Anthropic error `type`.
pub(crate) fn error_status(kind: &str) -> u16 {
    match kind {
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "billing_error" => 402,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "rate_limit_error" => 429,
        "timeout_error" => 504,
        "overloaded_error" => 529,
        _ => 500,
    }
}

/// An in-stream `error` event as an [`LlmError::Http`].
fn stream_error(event: &Value, request_id: Option<&str>) -> LlmError {
    let error = event.get("error").unwrap_or(event);
    let kind = error.get("type").and_then(Value::as_str).unwrap_or("");
    let body = if event.get("error").is_some() {
        event.to_string()
    } else {
        json!({"type": "error", "error": event}).to_string()
    };
    LlmError::Http {
        status: error_status(kind),
        body: truncate(&body, MAX_ERROR_BODY),
        request_id: request_id.map(str::to_owned),
        retry_after: None,
    }
}

fn count(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

/// Decoder state for one Messages stream.
#[derive(Debug, Default)]
pub(crate) struct EventDecoder {
    /// Content-block index → (tool-call position, arguments seen), for
    /// `tool_use` blocks.
    tools: HashMap<u64, (usize, bool)>,
    next_tool: usize,
    /// `thinking` blocks started so far.
    thinking_blocks: usize,
    /// Raw counters as reported so far.
    input: u64,
    cache_read: u64,
    cache_write: u64,
    output: u64,
    /// `message_stop` arrived: the stream is complete.
    pub(crate) stopped: bool,
}

impl EventDecoder {
    fn absorb_usage(&mut self, usage: &Value) {
        if let Some(n) = count(usage, "input_tokens") {
            self.input = n;
        }
        if let Some(n) = count(usage, "cache_read_input_tokens") {
            self.cache_read = n;
        }
        if let Some(n) = count(usage, "cache_creation_input_tokens") {
            self.cache_write = n;
        }
        if let Some(n) = count(usage, "output_tokens") {
            self.output = n;
        }
    }

    fn usage(&self) -> Usage {
        Usage {
            input_tokens: self.input + self.cache_read + self.cache_write,
            output_tokens: self.output,
            cache_read_tokens: self.cache_read,
            cache_write_tokens: self.cache_write,
            reasoning_tokens: 0,
        }
    }

    /// Decodes one event's JSON `data`, appending its deltas to `out`.
    pub(crate) fn event(
        &mut self,
        data: &Value,
        request_id: Option<&str>,
        out: &mut Vec<StreamDelta>,
    ) -> Result<(), LlmError> {
        let kind = data.get("type").and_then(Value::as_str).unwrap_or("");
        let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
        match kind {
            "message_start" => {
                if let Some(usage) = data.pointer("/message/usage") {
                    self.absorb_usage(usage);
                }
            }
            "content_block_start" => {
                let block = data.get("content_block").unwrap_or(&Value::Null);
                match block.get("type").and_then(Value::as_str) {
                    Some("tool_use" | "server_tool_use") => {
                        let position = self.next_tool;
                        self.next_tool += 1;
                        // Some servers put the whole input on the start block.
                        let arguments = block
                            .get("input")
                            .filter(|i| i.as_object().is_some_and(|o| !o.is_empty()))
                            .map(Value::to_string)
                            .unwrap_or_default();
                        self.tools.insert(index, (position, !arguments.is_empty()));
                        let text = |k: &str| {
                            block
                                .get(k)
                                .and_then(Value::as_str)
                                .filter(|s| !s.is_empty())
                                .map(str::to_owned)
                        };
                        out.push(StreamDelta::ToolCall {
                            index: position,
                            id: text("id"),
                            name: text("name"),
                            arguments,
                        });
                    }
                    Some("text") => {
                        if let Some(t) = block.get("text").and_then(Value::as_str)
                            && !t.is_empty()
                        {
                            out.push(StreamDelta::Text(t.to_owned()));
                        }
                    }
                    Some("thinking") => {
                        self.thinking_blocks += 1;
                        if self.thinking_blocks == 2 {
                            // One signature cannot cover several blocks joined
                            // into one text: void it so it is not replayed.
                            out.push(StreamDelta::ReasoningSignature(String::new()));
                        }
                        if let Some(t) = block.get("thinking").and_then(Value::as_str)
                            && !t.is_empty()
                        {
                            out.push(StreamDelta::Reasoning(t.to_owned()));
                        }
                    }
                    _ => {}
                }
            }
            "content_block_delta" => {
                let delta = data.get("delta").unwrap_or(&Value::Null);
                let field = |k: &str| delta.get(k).and_then(Value::as_str).unwrap_or("");
                match delta.get("type").and_then(Value::as_str).unwrap_or("") {
                    "text_delta" if !field("text").is_empty() => {
                        out.push(StreamDelta::Text(field("text").to_owned()));
                    }
                    "thinking_delta" if !field("thinking").is_empty() => {
                        out.push(StreamDelta::Reasoning(field("thinking").to_owned()));
                    }
                    "signature_delta"
                        if !field("signature").is_empty() && self.thinking_blocks < 2 =>
                    {
                        out.push(StreamDelta::ReasoningSignature(
                            field("signature").to_owned(),
                        ));
                    }
                    "input_json_delta" if !field("partial_json").is_empty() => {
                        let Some((position, seen)) = self.tools.get_mut(&index) else {
                            return Err(LlmError::Decode(format!(
                                "input_json_delta for content block {index}, which is not a tool_use"
                            )));
                        };
                        *seen = true;
                        out.push(StreamDelta::ToolCall {
                            index: *position,
                            id: None,
                            name: None,
                            arguments: field("partial_json").to_owned(),
                        });
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(usage) = data.get("usage") {
                    self.absorb_usage(usage);
                }
                if let Some(reason) = data
                    .pointer("/delta/stop_reason")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                {
                    out.push(StreamDelta::Finish(FinishReason::from_wire(reason)));
                }
                out.push(StreamDelta::Usage(self.usage()));
            }
            "content_block_stop" => {
                if let Some((position, seen)) = self.tools.get_mut(&index)
                    && !*seen
                {
                    // A call without input: complete it as an empty object.
                    *seen = true;
                    out.push(StreamDelta::ToolCall {
                        index: *position,
                        id: None,
                        name: None,
                        arguments: "{}".to_owned(),
                    });
                }
            }
            "message_stop" => self.stopped = true,
            "error" => return Err(stream_error(data, request_id)),
            // `ping` and unknown events carry nothing.
            _ => {}
        }
        Ok(())
    }
}

/// The deltas equivalent to a complete (non-streamed) Messages response, for
/// servers that answer a stream request with plain JSON.
pub(crate) fn message_deltas(
    body: &Value,
    request_id: Option<&str>,
) -> Result<Vec<StreamDelta>, LlmError> {
    if body.get("type").and_then(Value::as_str) == Some("error") {
        return Err(stream_error(body, request_id));
    }
    let content = body
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| LlmError::Decode("message has no content array".to_owned()))?;
    let mut dec = EventDecoder::default();
    let mut out = Vec::new();
    let start = json!({"type": "message_start", "message": body});
    dec.event(&start, request_id, &mut out)?;
    for (index, block) in content.iter().enumerate() {
        let mut start = block.clone();
        // Text arrives whole on the start block; tool input below, as JSON text.
        if let Some(obj) = start.as_object_mut() {
            obj.remove("input");
            obj.remove("signature");
        }
        let events = [
            json!({"type": "content_block_start", "index": index, "content_block": start}),
            match block.get("type").and_then(Value::as_str) {
                Some("tool_use" | "server_tool_use") => json!({
                    "type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta",
                              "partial_json": block.get("input").unwrap_or(&json!({})).to_string()},
                }),
                Some("thinking") => json!({
                    "type": "content_block_delta", "index": index,
                    "delta": {"type": "signature_delta",
                              "signature": block.get("signature").cloned().unwrap_or(Value::Null)},
                }),
                _ => Value::Null,
            },
            json!({"type": "content_block_stop", "index": index}),
        ];
        for event in &events {
            dec.event(event, request_id, &mut out)?;
        }
    }
    let stop = json!({
        "type": "message_delta",
        "delta": {"stop_reason": body.get("stop_reason").cloned().unwrap_or(Value::Null)},
        "usage": body.get("usage").cloned().unwrap_or(Value::Null),
    });
    dec.event(&stop, request_id, &mut out)?;
    Ok(out)
}

#[cfg(test)]
#[path = "events_tests.rs"]
mod tests;
