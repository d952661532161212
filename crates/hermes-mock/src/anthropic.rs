//! Rendering scripted replies as Anthropic Messages responses (`POST …/messages`).

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use crate::reply::{Answer, Kind, Rendered, Reply, RequestInfo, pieces};

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn message_id() -> String {
    format!("msg_mock_{}", NEXT_ID.fetch_add(1, Ordering::Relaxed))
}

/// The signature the mock puts on a thinking block with this text.
pub(crate) fn mock_signature(thinking: &str) -> String {
    // FNV-1a: stable across runs, different for different texts.
    let hash = thinking.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("mock-sig-{hash:016x}")
}

/// The Anthropic error `type` for an HTTP status.
pub(crate) fn error_type(status: u16) -> &'static str {
    match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        504 => "timeout_error",
        _ => "api_error",
    }
}

/// An Anthropic error body: `{"type":"error","error":{"type":…,"message":…}}`.
pub(crate) fn error_body(status: u16, message: &str) -> String {
    json!({"type": "error", "error": {"type": error_type(status), "message": message}}).to_string()
}

/// The Anthropic `stop_reason` for an OpenAI-style finish reason.
fn stop_reason(finish: &str) -> String {
    match finish {
        "stop" => "end_turn".to_owned(),
        "tool_calls" => "tool_use".to_owned(),
        "length" => "max_tokens".to_owned(),
        other => other.to_owned(),
    }
}

pub(crate) fn render(reply: &Reply, info: &RequestInfo) -> Rendered {
    match &reply.kind {
        Kind::Error { status, body } => {
            // Bodies that are not JSON are wrapped in Anthropic's error shape.
            let body = if serde_json::from_str::<Value>(body).is_ok() {
                body.clone()
            } else {
                error_body(*status, body)
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
        Kind::Completion(answer) if info.stream && !reply.force_json => Rendered::NamedSse {
            events: events(answer, info),
        },
        Kind::Completion(answer) => Rendered::Full {
            status: 200,
            content_type: "application/json",
            body: full_body(answer, info).to_string(),
        },
    }
}

fn event(name: &str, data: Value) -> (String, String) {
    (name.to_owned(), data.to_string())
}

/// The event sequence of a streamed Messages response.
fn events(answer: &Answer, info: &RequestInfo) -> Vec<(String, String)> {
    let (prompt, completion) = answer.token_counts(info);
    let mut out = vec![event(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": message_id(),
            "type": "message",
            "role": "assistant",
            "model": Answer::model(info),
            "content": [],
            "stop_reason": null,
            "stop_sequence": null,
            "usage": {"input_tokens": prompt, "output_tokens": 1,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
        }}),
    )];
    out.push(event("ping", json!({"type": "ping"})));
    let mut index = 0;
    let mut block = |out: &mut Vec<(String, String)>, start: Value, deltas: Vec<Value>| {
        out.push(event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        for delta in deltas {
            out.push(event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
        }
        out.push(event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    };
    if let Some(reasoning) = &answer.reasoning {
        let mut deltas: Vec<Value> = pieces(reasoning, 8)
            .into_iter()
            .map(|p| json!({"type": "thinking_delta", "thinking": p}))
            .collect();
        deltas.push(json!({"type": "signature_delta", "signature": mock_signature(reasoning)}));
        block(
            &mut out,
            json!({"type": "thinking", "thinking": "", "signature": ""}),
            deltas,
        );
    }
    if let Some(text) = &answer.text {
        let deltas = pieces(text, 8)
            .into_iter()
            .map(|p| json!({"type": "text_delta", "text": p}))
            .collect();
        block(&mut out, json!({"type": "text", "text": ""}), deltas);
    }
    for (id, name, args) in &answer.calls {
        let deltas = pieces(args, 5)
            .into_iter()
            .map(|p| json!({"type": "input_json_delta", "partial_json": p}))
            .collect();
        block(
            &mut out,
            json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
            deltas,
        );
    }
    out.push(event(
        "message_delta",
        json!({"type": "message_delta",
               "delta": {"stop_reason": stop_reason(&answer.finish_reason()), "stop_sequence": null},
               "usage": {"output_tokens": completion}}),
    ));
    out.push(event("message_stop", json!({"type": "message_stop"})));
    out
}

/// A complete (non-streamed) Messages response.
fn full_body(answer: &Answer, info: &RequestInfo) -> Value {
    let (prompt, completion) = answer.token_counts(info);
    let mut content = Vec::new();
    if let Some(reasoning) = &answer.reasoning {
        content.push(json!({"type": "thinking", "thinking": reasoning,
                            "signature": mock_signature(reasoning)}));
    }
    if let Some(text) = &answer.text {
        content.push(json!({"type": "text", "text": text}));
    }
    for (id, name, args) in &answer.calls {
        let input = serde_json::from_str::<Value>(args).unwrap_or_else(|_| json!({}));
        content.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
    }
    json!({
        "id": message_id(),
        "type": "message",
        "role": "assistant",
        "model": Answer::model(info),
        "content": content,
        "stop_reason": stop_reason(&answer.finish_reason()),
        "stop_sequence": null,
        "usage": {"input_tokens": prompt, "output_tokens": completion},
    })
}

#[cfg(test)]
#[path = "anthropic_tests.rs"]
mod tests;
