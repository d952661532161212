use hermes_protocol::{FinishReason, Usage};
use serde_json::{Value, json};

use super::{EventDecoder, error_status};
use crate::{LlmError, StreamDelta};

fn run(events: &[Value]) -> (Vec<StreamDelta>, Option<LlmError>, bool) {
    let mut dec = EventDecoder::default();
    let mut out = Vec::new();
    for e in events {
        if let Err(err) = dec.event(e, Some("req_1"), &mut out) {
            return (out, Some(err), dec.stopped);
        }
    }
    (out, None, dec.stopped)
}

#[test]
fn tool_use_blocks_are_numbered_in_order() {
    let (out, err, stopped) = run(&[
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 10,
            "cache_read_input_tokens": 100, "cache_creation_input_tokens": 5, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1,
               "content_block": {"type": "tool_use", "id": "toolu_a", "name": "ls", "input": {}}}),
        json!({"type": "content_block_delta", "index": 1,
               "delta": {"type": "input_json_delta", "partial_json": "{\"a\":"}}),
        json!({"type": "content_block_start", "index": 2,
               "content_block": {"type": "tool_use", "id": "toolu_b", "name": "cat", "input": {}}}),
        json!({"type": "content_block_delta", "index": 1,
               "delta": {"type": "input_json_delta", "partial_json": "1}"}}),
        json!({"type": "ping"}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 42}}),
        json!({"type": "message_stop"}),
    ]);
    assert!(err.is_none());
    assert!(stopped);
    let call = |index, id: Option<&str>, name: Option<&str>, args: &str| StreamDelta::ToolCall {
        index,
        id: id.map(str::to_owned),
        name: name.map(str::to_owned),
        arguments: args.to_owned(),
    };
    assert_eq!(
        out,
        vec![
            StreamDelta::Text("Hi".into()),
            call(0, Some("toolu_a"), Some("ls"), ""),
            call(0, None, None, "{\"a\":"),
            call(1, Some("toolu_b"), Some("cat"), ""),
            call(0, None, None, "1}"),
            StreamDelta::Finish(FinishReason::ToolCalls),
            StreamDelta::Usage(Usage {
                input_tokens: 115,
                output_tokens: 42,
                cache_read_tokens: 100,
                cache_write_tokens: 5,
                reasoning_tokens: 0,
            }),
        ]
    );
}

#[test]
fn thinking_and_signature_deltas() {
    let (out, _, _) = run(&[
        json!({"type": "content_block_start", "index": 0,
               "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        json!({"type": "content_block_delta", "index": 0,
               "delta": {"type": "thinking_delta", "thinking": "hmm"}}),
        json!({"type": "content_block_delta", "index": 0,
               "delta": {"type": "signature_delta", "signature": "SIG"}}),
    ]);
    assert_eq!(
        out,
        vec![
            StreamDelta::Reasoning("hmm".into()),
            StreamDelta::ReasoningSignature("SIG".into())
        ]
    );
}

#[test]
fn error_events_map_to_http_statuses() {
    let (_, err, _) = run(&[json!({"type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"}})]);
    match err {
        Some(LlmError::Http {
            status,
            body,
            request_id,
            ..
        }) => {
            assert_eq!(status, 529);
            assert!(body.contains("Overloaded"));
            assert_eq!(request_id.as_deref(), Some("req_1"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(error_status("rate_limit_error"), 429);
    assert_eq!(error_status("invalid_request_error"), 400);
    assert_eq!(error_status("api_error"), 500);
    assert_eq!(error_status("something_new"), 500);
}

#[test]
fn json_delta_for_a_non_tool_block_is_a_decode_error() {
    let (_, err, _) = run(&[json!({"type": "content_block_delta", "index": 3,
        "delta": {"type": "input_json_delta", "partial_json": "{"}})]);
    assert!(matches!(err, Some(LlmError::Decode(_))), "{err:?}");
}

#[test]
fn tool_without_input_deltas_gets_an_empty_object() {
    let (out, _, _) = run(&[
        json!({"type": "content_block_start", "index": 0,
               "content_block": {"type": "tool_use", "id": "t", "name": "now", "input": {}}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1,
               "content_block": {"type": "tool_use", "id": "u", "name": "ls", "input": {"a": 1}}}),
        json!({"type": "content_block_stop", "index": 1}),
    ]);
    let args: Vec<&str> = out
        .iter()
        .filter_map(|d| match d {
            StreamDelta::ToolCall { arguments, .. } => Some(arguments.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(args, ["", "{}", r#"{"a":1}"#]);
}

#[test]
fn a_second_thinking_block_voids_the_signature() {
    let thinking = |i: u64| {
        json!({"type": "content_block_start", "index": i,
               "content_block": {"type": "thinking", "thinking": ""}})
    };
    let sig = |i: u64| {
        json!({"type": "content_block_delta", "index": i,
               "delta": {"type": "signature_delta", "signature": "S"}})
    };
    let (out, _, _) = run(&[thinking(0), sig(0), thinking(1), sig(1)]);
    assert_eq!(
        out,
        vec![
            StreamDelta::ReasoningSignature("S".into()),
            StreamDelta::ReasoningSignature(String::new()),
        ]
    );
}
