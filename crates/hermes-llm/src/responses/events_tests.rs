use hermes_protocol::{FinishReason, Usage};
use serde_json::{Value, json};

use super::{EventDecoder, response_deltas};
use crate::{LlmError, StreamDelta};

fn run(events: &[Value]) -> (Vec<StreamDelta>, Result<(), LlmError>, bool) {
    let mut dec = EventDecoder::default();
    let mut out = Vec::new();
    for e in events {
        if let Err(err) = dec.event(e, None, Some("req_1"), &mut out) {
            return (out, Err(err), dec.done);
        }
    }
    (out, Ok(()), dec.done)
}

#[test]
fn commentary_phase_is_reasoning_and_done_only_text_is_kept() {
    let (out, res, done) = run(&[
        json!({"type": "response.output_item.added", "output_index": 0,
               "item": {"id": "m1", "type": "message", "phase": "commentary"}}),
        json!({"type": "response.output_text.delta", "item_id": "m1", "delta": "thinking aloud"}),
        json!({"type": "response.output_item.done", "output_index": 1,
               "item": {"id": "m2", "type": "message",
                        "content": [{"type": "output_text", "text": "final"}]}}),
        json!({"type": "response.completed", "response": {"status": "completed"}}),
    ]);
    res.unwrap();
    assert!(done);
    assert_eq!(
        out,
        vec![
            StreamDelta::Reasoning("thinking aloud".into()),
            StreamDelta::Text("final".into()),
            StreamDelta::Finish(FinishReason::Stop),
        ]
    );
}

#[test]
fn error_events_top_level_and_nested() {
    let (_, res, _) = run(&[json!({"type": "error", "code": "rate_limit_exceeded",
                                    "message": "slow down", "param": null})]);
    let LlmError::Http { status, body, .. } = res.unwrap_err() else {
        panic!("not http")
    };
    assert_eq!(status, 0);
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["error"]["code"], "rate_limit_exceeded");
    let (_, res, _) = run(&[json!({"type": "error",
                                    "error": {"code": "context_length_exceeded", "message": "too long"}})]);
    assert!(
        res.unwrap_err()
            .to_string()
            .contains("context_length_exceeded")
    );
    let (_, res, _) = run(&[json!({"type": "response.failed",
        "response": {"status": "failed", "error": {"code": "server_error", "message": "boom"}}})]);
    assert!(res.unwrap_err().to_string().contains("boom"));
}

#[test]
fn plain_json_response() {
    let body = json!({
        "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"},
        "output": [
            {"type": "reasoning", "id": "rs_tmp_1", "summary": [{"type": "summary_text", "text": "hmm"}],
             "encrypted_content": "e"},
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f",
             "arguments": "{\"a\":1}"},
        ],
        "usage": {"input_tokens": 10, "output_tokens": 5,
                  "input_tokens_details": {"cached_tokens": 4},
                  "output_tokens_details": {"reasoning_tokens": 2}},
    });
    let out = response_deltas(&body, None).unwrap();
    assert_eq!(
        out,
        vec![
            // A transient reasoning id is shown but never replayed.
            StreamDelta::Reasoning("hmm".into()),
            StreamDelta::ToolCall {
                index: 0,
                id: Some("call_1".into()),
                name: Some("f".into()),
                arguments: "{\"a\":1}".into()
            },
            StreamDelta::Usage(Usage {
                input_tokens: 10,
                output_tokens: 5,
                cache_read_tokens: 4,
                cache_write_tokens: 0,
                reasoning_tokens: 2
            }),
            StreamDelta::Finish(FinishReason::Length),
        ]
    );
    let failed = json!({"status": "failed", "output": [], "error": {"code": "rate_limit_exceeded", "message": "x"}});
    assert!(response_deltas(&failed, None).is_err());
}
