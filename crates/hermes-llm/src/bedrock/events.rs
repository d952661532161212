//! ConverseStream events and Converse responses turned into deltas, and
//! Bedrock exceptions turned into errors the classifier understands.

use std::collections::HashMap;

use hermes_protocol::{FinishReason, Usage};
use serde_json::{Value, json};

use super::eventstream::Frame;
use crate::error::{MAX_ERROR_BODY, truncate};
use crate::pump::WireEvents;
use crate::{LlmError, StreamDelta};

/// The HTTP status AWS documents for an exception type (`throttlingException`,
/// `ValidationException` …); 0 when unknown. A model stream error counts as a
/// server error (AWS says 424) so that it is retried unless its text says the
/// input was too long.
pub(crate) fn exception_status(kind: &str) -> u16 {
    let kind = kind.to_ascii_lowercase();
    let kind = kind.strip_suffix("exception").unwrap_or(&kind);
    match kind {
        "throttling" | "servicequotaexceeded" | "toomanyrequests" => 429,
        "validation" | "badrequest" => 400,
        "accessdenied" | "unrecognizedclient" | "forbidden" => 403,
        "expiredtoken" | "unauthorized" | "invalidsignature" => 401,
        "resourcenotfound" | "notfound" => 404,
        "serviceunavailable" | "modelnotready" => 503,
        "modeltimeout" => 408,
        "internalserver" | "modelstreamerror" | "modelerror" => 500,
        _ => 0,
    }
}

/// An AWS error as an [`LlmError::Http`]: the body keeps the JSON payload and
/// gains `__type`, so the exception name is visible to the classifier.
pub(crate) fn aws_error(
    status: u16,
    kind: Option<&str>,
    payload: &str,
    request_id: Option<&str>,
    retry_after: Option<std::time::Duration>,
) -> LlmError {
    let kind = kind.map(str::trim).filter(|k| !k.is_empty());
    let body = match (serde_json::from_str::<Value>(payload.trim()), kind) {
        (Ok(Value::Object(mut obj)), Some(kind)) => {
            obj.entry("__type")
                .or_insert_with(|| Value::String(kind.to_owned()));
            Value::Object(obj).to_string()
        }
        (Ok(Value::Object(obj)), None) => Value::Object(obj).to_string(),
        (_, kind) => {
            let mut obj = json!({"message": payload.trim()});
            if let Some(kind) = kind {
                obj["__type"] = Value::String(kind.to_owned());
            }
            obj.to_string()
        }
    };
    LlmError::Http {
        status,
        body: truncate(&body, MAX_ERROR_BODY),
        request_id: request_id.map(str::to_owned),
        retry_after,
    }
}

/// A Converse `stopReason` as a finish reason; unknown reasons end the turn,
/// as in the reference.
fn finish_reason(stop: &str, called_tools: bool) -> FinishReason {
    let reason = match stop {
        "tool_use" => FinishReason::ToolCalls,
        "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
        "content_filtered" | "guardrail_intervened" => FinishReason::ContentFilter,
        _ => FinishReason::Stop,
    };
    if reason == FinishReason::Stop && called_tools {
        FinishReason::ToolCalls
    } else {
        reason
    }
}

fn count(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// A Converse `usage` object. `inputTokens` excludes cached tokens, so they
/// are added back: [`Usage::input_tokens`] counts the whole prompt.
pub(crate) fn parse_usage(usage: &Value) -> Usage {
    let cache_read = count(usage, "cacheReadInputTokens");
    let cache_write = count(usage, "cacheWriteInputTokens");
    Usage {
        input_tokens: count(usage, "inputTokens") + cache_read + cache_write,
        output_tokens: count(usage, "outputTokens"),
        cache_read_tokens: cache_read,
        cache_write_tokens: cache_write,
        reasoning_tokens: 0,
    }
}

fn text_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// State of one ConverseStream response.
#[derive(Debug, Default)]
pub(crate) struct ConverseEvents {
    /// Content-block index → position of its tool call in the message.
    tools: HashMap<u64, usize>,
    /// The stop reason once `messageStop` arrived.
    stop: Option<String>,
}

impl ConverseEvents {
    fn tool_index(&mut self, block: u64) -> usize {
        let next = self.tools.len();
        *self.tools.entry(block).or_insert(next)
    }

    /// Handles one `:message-type: event` frame's payload.
    pub(crate) fn event(&mut self, kind: &str, payload: &Value, out: &mut Vec<StreamDelta>) {
        let block = payload
            .get("contentBlockIndex")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        match kind {
            "contentBlockStart" => {
                if let Some(tool) = payload.pointer("/start/toolUse") {
                    let index = self.tool_index(block);
                    out.push(StreamDelta::ToolCall {
                        index,
                        id: text_of(tool, "toolUseId").map(str::to_owned),
                        name: text_of(tool, "name").map(str::to_owned),
                        arguments: String::new(),
                    });
                }
            }
            "contentBlockDelta" => {
                let Some(delta) = payload.get("delta") else {
                    return;
                };
                if let Some(text) = text_of(delta, "text") {
                    out.push(StreamDelta::Text(text.to_owned()));
                }
                if let Some(tool) = delta.get("toolUse") {
                    let arguments = text_of(tool, "input").unwrap_or("").to_owned();
                    let index = self.tool_index(block);
                    out.push(StreamDelta::ToolCall {
                        index,
                        id: None,
                        name: None,
                        arguments,
                    });
                }
                if let Some(reasoning) = delta.get("reasoningContent") {
                    if let Some(text) = text_of(reasoning, "text") {
                        out.push(StreamDelta::Reasoning(text.to_owned()));
                    }
                    if let Some(sig) = text_of(reasoning, "signature") {
                        out.push(StreamDelta::ReasoningSignature(sig.to_owned()));
                    }
                }
            }
            "messageStop" => {
                let stop = text_of(payload, "stopReason").unwrap_or("end_turn");
                out.push(StreamDelta::Finish(finish_reason(
                    stop,
                    !self.tools.is_empty(),
                )));
                self.stop = Some(stop.to_owned());
            }
            "metadata" => {
                if let Some(usage) = payload.get("usage").filter(|u| u.is_object()) {
                    out.push(StreamDelta::Usage(parse_usage(usage)));
                }
            }
            // messageStart, contentBlockStop and anything newer carry nothing we use.
            _ => {}
        }
    }
}

impl WireEvents<Frame> for ConverseEvents {
    fn on_event(
        &mut self,
        frame: &Frame,
        request_id: Option<&str>,
        out: &mut Vec<StreamDelta>,
    ) -> Result<bool, LlmError> {
        let payload = String::from_utf8_lossy(&frame.payload);
        match frame.header(":message-type").unwrap_or("event") {
            "exception" => {
                let kind = frame.header(":exception-type");
                let status = kind.map_or(0, exception_status);
                Err(aws_error(status, kind, &payload, request_id, None))
            }
            "error" => {
                let code = frame.header(":error-code");
                let message = frame.header(":error-message").unwrap_or("");
                let status = code.map_or(0, exception_status);
                Err(aws_error(status, code, message, request_id, None))
            }
            "event" => {
                let kind = frame.header(":event-type").unwrap_or("");
                let value: Value = if payload.trim().is_empty() {
                    Value::Object(Default::default())
                } else {
                    serde_json::from_str(&payload).map_err(|e| {
                        LlmError::Decode(format!(
                            "bad {kind} event ({e}): {}",
                            truncate(&payload, 200)
                        ))
                    })?
                };
                self.event(kind, &value, out);
                // `metadata` follows `messageStop`; after both nothing else comes.
                Ok(kind == "metadata" && self.stop.is_some())
            }
            _ => Ok(false),
        }
    }

    fn on_eof(&self) -> Result<(), LlmError> {
        match self.stop {
            Some(_) => Ok(()),
            None => Err(LlmError::StreamEnded(
                "connection closed before messageStop".into(),
            )),
        }
    }
}

/// The deltas of a complete (non-streamed) Converse response.
pub(crate) fn response_deltas(body: &Value) -> Result<Vec<StreamDelta>, LlmError> {
    let content = body
        .pointer("/output/message/content")
        .and_then(Value::as_array)
        .ok_or_else(|| LlmError::Decode("Converse response has no output message".into()))?;
    let mut out = Vec::new();
    let mut calls = 0;
    for block in content {
        if let Some(reasoning) = block.pointer("/reasoningContent/reasoningText") {
            if let Some(text) = text_of(reasoning, "text") {
                out.push(StreamDelta::Reasoning(text.to_owned()));
            }
            if let Some(sig) = text_of(reasoning, "signature") {
                out.push(StreamDelta::ReasoningSignature(sig.to_owned()));
            }
        } else if let Some(text) = text_of(block, "text") {
            out.push(StreamDelta::Text(text.to_owned()));
        } else if let Some(tool) = block.get("toolUse") {
            let input = tool.get("input").cloned().unwrap_or_else(|| json!({}));
            out.push(StreamDelta::ToolCall {
                index: calls,
                id: text_of(tool, "toolUseId").map(str::to_owned),
                name: text_of(tool, "name").map(str::to_owned),
                arguments: input.to_string(),
            });
            calls += 1;
        }
    }
    let stop = text_of(body, "stopReason").unwrap_or("end_turn");
    out.push(StreamDelta::Finish(finish_reason(stop, calls > 0)));
    if let Some(usage) = body.get("usage").filter(|u| u.is_object()) {
        out.push(StreamDelta::Usage(parse_usage(usage)));
    }
    Ok(out)
}

#[cfg(test)]
#[path = "events_tests.rs"]
mod tests;
