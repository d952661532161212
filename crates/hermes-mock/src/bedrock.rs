//! Rendering scripted replies as AWS Bedrock Converse responses:
//! `POST …/model/{id}/converse-stream` in the binary
//! `application/vnd.amazon.eventstream` framing (real CRCs), and
//! `POST …/model/{id}/converse` as one JSON document.

use serde_json::{Value, json};

use crate::anthropic::mock_signature;
use crate::reply::{Answer, Kind, Rendered, Reply, RequestInfo, pieces};

/// The content type of a ConverseStream response.
pub(crate) const EVENT_STREAM: &str = "application/vnd.amazon.eventstream";

/// CRC-32 (IEEE 802.3, the zlib one) of `data`, as event-stream framing uses.
pub(crate) fn crc32(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}

/// One event-stream message with string headers (value type 7).
pub(crate) fn frame(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut head = Vec::new();
    for (name, value) in headers {
        head.push(name.len() as u8);
        head.extend_from_slice(name.as_bytes());
        head.push(7);
        head.extend_from_slice(&(value.len() as u16).to_be_bytes());
        head.extend_from_slice(value.as_bytes());
    }
    let total = 16 + head.len() + payload.len();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&(total as u32).to_be_bytes());
    out.extend_from_slice(&(head.len() as u32).to_be_bytes());
    let prelude = crc32(&out);
    out.extend_from_slice(&prelude.to_be_bytes());
    out.extend_from_slice(&head);
    out.extend_from_slice(payload);
    let crc = crc32(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

fn event(kind: &str, mut payload: Value) -> Vec<u8> {
    // AWS pads every event with a `p` field so lengths leak nothing.
    payload["p"] = Value::String("abcdefghijklmnopqrstuvwxyzABCDEF".into());
    frame(
        &[
            (":event-type", kind),
            (":content-type", "application/json"),
            (":message-type", "event"),
        ],
        payload.to_string().as_bytes(),
    )
}

fn exception(kind: &str, message: &str) -> Vec<u8> {
    frame(
        &[
            (":exception-type", kind),
            (":content-type", "application/json"),
            (":message-type", "exception"),
        ],
        json!({ "message": message }).to_string().as_bytes(),
    )
}

/// The Bedrock exception name AWS sends for an HTTP status.
pub(crate) fn error_type(status: u16) -> &'static str {
    match status {
        400 => "ValidationException",
        403 => "AccessDeniedException",
        404 => "ResourceNotFoundException",
        408 => "ModelTimeoutException",
        424 => "ModelErrorException",
        429 => "ThrottlingException",
        503 => "ServiceUnavailableException",
        _ => "InternalServerException",
    }
}

/// The `x-amzn-ErrorType` header of an error response with `status`.
pub(crate) fn error_header(status: u16) -> (String, String) {
    (
        "x-amzn-errortype".to_owned(),
        format!(
            "{}:http://internal.amazon.com/coral/com.amazon.bedrock/",
            error_type(status)
        ),
    )
}

/// A Bedrock error body: `{"message": …}`.
pub(crate) fn error_body(message: &str) -> String {
    json!({ "message": message }).to_string()
}

/// The Converse `stopReason` for an OpenAI-style finish reason.
fn stop_reason(finish: &str) -> String {
    match finish {
        "stop" => "end_turn".to_owned(),
        "tool_calls" => "tool_use".to_owned(),
        "length" => "max_tokens".to_owned(),
        "content_filter" => "content_filtered".to_owned(),
        other => other.to_owned(),
    }
}

/// Converse `usage`: `inputTokens` excludes the cached part, as on AWS.
fn usage(answer: &Answer, info: &RequestInfo) -> Value {
    let (prompt, completion) = answer.token_counts(info);
    let cached = answer.usage_details.map_or(0, |(cached, _)| cached);
    let input = prompt.saturating_sub(cached);
    json!({
        "inputTokens": input,
        "outputTokens": completion,
        "totalTokens": input + completion + cached,
        "cacheReadInputTokens": cached,
        "cacheWriteInputTokens": 0,
    })
}

pub(crate) fn render(reply: &Reply, info: &RequestInfo) -> Rendered {
    match &reply.kind {
        Kind::Error { status, body } => {
            // Bodies that are not JSON are wrapped in Bedrock's error shape.
            let body = if serde_json::from_str::<Value>(body).is_ok() {
                body.clone()
            } else {
                error_body(body)
            };
            Rendered::Full {
                status: *status,
                content_type: "application/json",
                body,
            }
        }
        Kind::RawSse(events) => Rendered::Sse {
            payloads: events.clone(),
        },
        Kind::Completion(answer) if info.stream && !reply.force_json => Rendered::EventStream {
            frames: frames(answer, info),
        },
        Kind::Completion(answer) => Rendered::Full {
            status: 200,
            content_type: "application/json",
            body: full_body(answer, info).to_string(),
        },
    }
}

/// The messages of a streamed Converse response.
fn frames(answer: &Answer, info: &RequestInfo) -> Vec<Vec<u8>> {
    let mut out = vec![event("messageStart", json!({"role": "assistant"}))];
    let mut index = 0;
    let mut block = |out: &mut Vec<Vec<u8>>, start: Option<Value>, deltas: Vec<Value>| {
        if let Some(start) = start {
            out.push(event(
                "contentBlockStart",
                json!({"contentBlockIndex": index, "start": start}),
            ));
        }
        for delta in deltas {
            out.push(event(
                "contentBlockDelta",
                json!({"contentBlockIndex": index, "delta": delta}),
            ));
        }
        out.push(event(
            "contentBlockStop",
            json!({"contentBlockIndex": index}),
        ));
        index += 1;
    };
    if let Some(reasoning) = &answer.reasoning {
        let mut deltas: Vec<Value> = pieces(reasoning, 8)
            .into_iter()
            .map(|p| json!({"reasoningContent": {"text": p}}))
            .collect();
        deltas.push(json!({"reasoningContent": {"signature": mock_signature(reasoning)}}));
        block(&mut out, None, deltas);
    }
    if let Some(text) = &answer.text {
        let deltas = pieces(text, 8)
            .into_iter()
            .map(|p| json!({"text": p}))
            .collect();
        block(&mut out, None, deltas);
    }
    for (id, name, args) in &answer.calls {
        let deltas = pieces(args, 5)
            .into_iter()
            .map(|p| json!({"toolUse": {"input": p}}))
            .collect();
        let start = json!({"toolUse": {"toolUseId": id, "name": name}});
        block(&mut out, Some(start), deltas);
    }
    if let Some((kind, message)) = &answer.stream_exception {
        out.push(exception(kind, message));
        return out;
    }
    out.push(event(
        "messageStop",
        json!({"stopReason": stop_reason(&answer.finish_reason())}),
    ));
    out.push(event(
        "metadata",
        json!({"usage": usage(answer, info), "metrics": {"latencyMs": 42}}),
    ));
    out
}

/// A complete (non-streamed) Converse response.
fn full_body(answer: &Answer, info: &RequestInfo) -> Value {
    let mut content = Vec::new();
    if let Some(reasoning) = &answer.reasoning {
        content.push(json!({"reasoningContent": {"reasoningText": {
            "text": reasoning, "signature": mock_signature(reasoning),
        }}}));
    }
    if let Some(text) = &answer.text {
        content.push(json!({"text": text}));
    }
    for (id, name, args) in &answer.calls {
        let input = serde_json::from_str::<Value>(args).unwrap_or_else(|_| json!({}));
        content.push(json!({"toolUse": {"toolUseId": id, "name": name, "input": input}}));
    }
    json!({
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop_reason(&answer.finish_reason()),
        "usage": usage(answer, info),
        "metrics": {"latencyMs": 42},
    })
}

#[cfg(test)]
#[path = "bedrock_tests.rs"]
mod tests;
