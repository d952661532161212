//! Turning OpenAI Responses stream events into [`StreamDelta`]s.

use std::collections::HashMap;

use hermes_protocol::{FinishReason, Usage};
use serde_json::{Value, json};

use crate::wire::embedded_error;
use crate::{LlmError, StreamDelta};

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn count(v: &Value, pointer: &str) -> u64 {
    v.pointer(pointer).and_then(Value::as_u64).unwrap_or(0)
}

/// The Responses `usage` object as [`Usage`]; `input_tokens` already
/// includes the cached ones.
pub(crate) fn usage_of(usage: &Value) -> Usage {
    Usage {
        input_tokens: count(usage, "/input_tokens"),
        output_tokens: count(usage, "/output_tokens"),
        cache_read_tokens: count(usage, "/input_tokens_details/cached_tokens"),
        cache_write_tokens: 0,
        reasoning_tokens: count(usage, "/output_tokens_details/reasoning_tokens"),
    }
}

/// An `error` event as an [`LlmError`]: the spec puts `code`/`message` at the
/// top level, the SDK and some proxies nest them under `error`.
fn error_event(event: &Value, request_id: Option<&str>) -> LlmError {
    let error = match event.get("error").filter(|e| e.is_object()) {
        Some(nested) => nested.clone(),
        None => {
            let mut e = json!({});
            for key in ["code", "message", "param"] {
                if let Some(v) = event.get(key).filter(|v| !v.is_null()) {
                    e[key] = v.clone();
                }
            }
            if e.get("message").is_none() {
                e["message"] = json!("stream emitted error event");
            }
            e
        }
    };
    embedded_error(&error, request_id)
}

/// A `response.failed` (or failed plain response) as an [`LlmError`].
fn failed(response: &Value, request_id: Option<&str>) -> LlmError {
    match response.get("error").filter(|e| !e.is_null()) {
        Some(error) => embedded_error(error, request_id),
        None => {
            let status = text(response, "status");
            let status = if status.is_empty() { "failed" } else { status };
            let message = format!("Responses API returned status '{status}'");
            embedded_error(&json!({ "message": message }), request_id)
        }
    }
}

/// One function call being streamed.
#[derive(Debug)]
struct Call {
    /// Position among the answer's tool calls.
    position: usize,
    /// Whether any argument text has been handed out.
    has_arguments: bool,
}

/// Decoder state for one Responses stream.
#[derive(Debug, Default)]
pub(crate) struct EventDecoder {
    /// Function calls by item id (or output index when the id is missing).
    calls: HashMap<String, Call>,
    /// Message and reasoning items whose text arrived as deltas.
    streamed: HashMap<String, bool>,
    /// The current message item is commentary, shown as reasoning.
    commentary: bool,
    /// A terminal event arrived.
    pub(crate) done: bool,
}

/// The key an item (or an event about it) is tracked under.
fn item_key(item_id: &str, output_index: Option<u64>) -> String {
    if item_id.is_empty() {
        format!("#{}", output_index.unwrap_or(0))
    } else {
        item_id.to_owned()
    }
}

fn event_key(event: &Value) -> String {
    item_key(
        text(event, "item_id"),
        event.get("output_index").and_then(Value::as_u64),
    )
}

impl EventDecoder {
    fn call_started(&mut self, key: String, item: &Value, out: &mut Vec<StreamDelta>) {
        if self.calls.contains_key(&key) {
            return;
        }
        let position = self.calls.len();
        let arguments = text(item, "arguments").to_owned();
        let non_empty = |k: &str| Some(text(item, k).to_owned()).filter(|s| !s.is_empty());
        let call_id = non_empty("call_id");
        self.calls.insert(
            key,
            Call {
                position,
                has_arguments: !arguments.is_empty(),
            },
        );
        out.push(StreamDelta::ToolCall {
            index: position,
            id: call_id,
            name: non_empty("name"),
            arguments,
        });
    }

    /// Completes a call's arguments when no delta carried them.
    fn call_arguments(&mut self, key: &str, arguments: &str, out: &mut Vec<StreamDelta>) {
        if let Some(call) = self.calls.get_mut(key)
            && !call.has_arguments
        {
            call.has_arguments = true;
            let arguments = if arguments.trim().is_empty() {
                "{}"
            } else {
                arguments
            };
            out.push(StreamDelta::ToolCall {
                index: call.position,
                id: None,
                name: None,
                arguments: arguments.to_owned(),
            });
        }
    }

    fn item_added(&mut self, event: &Value, out: &mut Vec<StreamDelta>) {
        let item = event.get("item").unwrap_or(&Value::Null);
        let key = item_key(
            text(item, "id"),
            event.get("output_index").and_then(Value::as_u64),
        );
        match text(item, "type") {
            "function_call" => self.call_started(key, item, out),
            "message" => {
                // Commentary/analysis phases are narration, not the answer.
                self.commentary = matches!(
                    text(item, "phase").trim().to_ascii_lowercase().as_str(),
                    "commentary" | "analysis"
                );
            }
            _ => {}
        }
    }

    fn item_done(&mut self, event: &Value, out: &mut Vec<StreamDelta>) {
        let item = event.get("item").unwrap_or(&Value::Null);
        let key = item_key(
            text(item, "id"),
            event.get("output_index").and_then(Value::as_u64),
        );
        let streamed = self.streamed.get(&key).copied().unwrap_or(false);
        match text(item, "type") {
            "function_call" => {
                self.call_started(key.clone(), item, out);
                self.call_arguments(&key, text(item, "arguments"), out);
            }
            "message" if !streamed => {
                let parts = item.get("content").and_then(Value::as_array);
                let joined: String = parts
                    .into_iter()
                    .flatten()
                    .filter(|p| matches!(text(p, "type"), "output_text" | "text"))
                    .map(|p| text(p, "text"))
                    .collect();
                if !joined.is_empty() {
                    let commentary = matches!(
                        text(item, "phase").trim().to_ascii_lowercase().as_str(),
                        "commentary" | "analysis"
                    );
                    out.push(if commentary {
                        StreamDelta::Reasoning(joined)
                    } else {
                        StreamDelta::Text(joined)
                    });
                }
            }
            "reasoning" => self.reasoning_done(item, streamed, out),
            _ => {}
        }
    }

    /// Hands out a finished reasoning item: its summary when none was
    /// streamed, and the item itself when it can be replayed.
    fn reasoning_done(&mut self, item: &Value, streamed: bool, out: &mut Vec<StreamDelta>) {
        let summary: Vec<&str> = item
            .get("summary")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|p| text(p, "text"))
            .filter(|t| !t.is_empty())
            .collect();
        if !streamed && !summary.is_empty() {
            out.push(StreamDelta::Reasoning(summary.join("\n\n")));
        }
        let encrypted = text(item, "encrypted_content");
        let id = text(item, "id");
        // Transient ids cannot be replayed; the server would reject them.
        if encrypted.is_empty() || id.starts_with("rs_tmp_") {
            return;
        }
        let mut kept = json!({"type": "reasoning", "encrypted_content": encrypted});
        if !id.is_empty() {
            kept["id"] = json!(id);
        }
        // The API requires the summary list when the item is replayed.
        kept["summary"] = summary
            .iter()
            .map(|t| json!({"type": "summary_text", "text": t}))
            .collect();
        out.push(StreamDelta::ReasoningItem(kept));
    }

    fn finish(&mut self, response: &Value, incomplete: bool, out: &mut Vec<StreamDelta>) {
        if let Some(usage) = response.get("usage").filter(|u| u.is_object()) {
            out.push(StreamDelta::Usage(usage_of(usage)));
        }
        let reason = if incomplete {
            match response
                .pointer("/incomplete_details/reason")
                .and_then(Value::as_str)
            {
                Some("content_filter") => FinishReason::ContentFilter,
                _ => FinishReason::Length,
            }
        } else if self.calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        };
        out.push(StreamDelta::Finish(reason));
        self.done = true;
    }

    /// Decodes one event's JSON, appending its deltas to `out`.
    pub(crate) fn event(
        &mut self,
        data: &Value,
        name: Option<&str>,
        request_id: Option<&str>,
        out: &mut Vec<StreamDelta>,
    ) -> Result<(), LlmError> {
        // The type is in the JSON; proxies that send `data:` lines only rely on it.
        let kind = match text(data, "type") {
            "" => name.unwrap_or(""),
            kind => kind,
        };
        match kind {
            "error" => return Err(error_event(data, request_id)),
            "response.output_item.added" => self.item_added(data, out),
            "response.output_item.done" => self.item_done(data, out),
            "response.output_text.delta" => {
                let delta = text(data, "delta");
                if !delta.is_empty() {
                    self.streamed.insert(event_key(data), true);
                    out.push(if self.commentary {
                        StreamDelta::Reasoning(delta.to_owned())
                    } else {
                        StreamDelta::Text(delta.to_owned())
                    });
                }
            }
            "response.reasoning_summary_part.added" => {
                let index = data.get("summary_index").and_then(Value::as_u64);
                if index.is_some_and(|i| i > 0) {
                    out.push(StreamDelta::Reasoning("\n\n".to_owned()));
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                let delta = text(data, "delta");
                if !delta.is_empty() {
                    self.streamed.insert(event_key(data), true);
                    out.push(StreamDelta::Reasoning(delta.to_owned()));
                }
            }
            "response.function_call_arguments.delta" => {
                let delta = text(data, "delta");
                let key = event_key(data);
                if !self.calls.contains_key(&key) {
                    // A delta before its item: start the call without a name yet.
                    self.call_started(key.clone(), &json!({"id": text(data, "item_id")}), out);
                }
                if let Some(call) = self.calls.get_mut(&key)
                    && !delta.is_empty()
                {
                    call.has_arguments = true;
                    out.push(StreamDelta::ToolCall {
                        index: call.position,
                        id: None,
                        name: None,
                        arguments: delta.to_owned(),
                    });
                }
            }
            "response.function_call_arguments.done" => {
                self.call_arguments(&event_key(data), text(data, "arguments"), out);
            }
            "response.completed" | "response.incomplete" => {
                let response = data.get("response").unwrap_or(&Value::Null);
                let incomplete =
                    kind == "response.incomplete" || text(response, "status") == "incomplete";
                self.finish(response, incomplete, out);
            }
            "response.failed" => {
                return Err(failed(data.get("response").unwrap_or(data), request_id));
            }
            // created / in_progress / content parts / keep-alives carry nothing.
            _ => {}
        }
        Ok(())
    }
}

/// The deltas equivalent to a complete (non-streamed) Responses answer.
pub(crate) fn response_deltas(
    body: &Value,
    request_id: Option<&str>,
) -> Result<Vec<StreamDelta>, LlmError> {
    let status = text(body, "status");
    if status == "failed" || (body.get("output").is_none() && body.get("error").is_some()) {
        return Err(failed(body, request_id));
    }
    let output = body
        .get("output")
        .and_then(Value::as_array)
        .ok_or_else(|| LlmError::Decode("response has no output array".to_owned()))?;
    let mut dec = EventDecoder::default();
    let mut out = Vec::new();
    for (index, item) in output.iter().enumerate() {
        for kind in ["response.output_item.added", "response.output_item.done"] {
            let event = json!({"type": kind, "output_index": index, "item": item});
            dec.event(&event, None, request_id, &mut out)?;
        }
    }
    dec.finish(body, status == "incomplete", &mut out);
    Ok(out)
}

#[cfg(test)]
#[path = "events_tests.rs"]
mod tests;
