use serde_json::json;

use super::*;
use crate::classify::{ErrorContext, FailoverReason, classify_error};

fn frame(kind: &str, payload: Value) -> Frame {
    Frame {
        headers: vec![
            (":message-type".into(), "event".into()),
            (":event-type".into(), kind.into()),
        ],
        payload: payload.to_string().into_bytes(),
    }
}

fn exception(kind: &str, message: &str) -> Frame {
    Frame {
        headers: vec![
            (":message-type".into(), "exception".into()),
            (":exception-type".into(), kind.into()),
        ],
        payload: json!({ "message": message }).to_string().into_bytes(),
    }
}

fn run(frames: &[Frame]) -> (Vec<StreamDelta>, Result<bool, LlmError>) {
    let mut wire = ConverseEvents::default();
    let mut out = Vec::new();
    let mut last = Ok(false);
    for f in frames {
        last = wire.on_event(f, Some("req-1"), &mut out);
        if last.is_err() {
            break;
        }
    }
    (out, last)
}

#[test]
fn text_tool_reasoning_stop_and_usage() {
    let (deltas, done) = run(&[
        frame("messageStart", json!({"role": "assistant"})),
        frame(
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "think"}}}),
        ),
        frame(
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "sig"}}}),
        ),
        frame("contentBlockStop", json!({"contentBlockIndex": 0})),
        frame(
            "contentBlockDelta",
            json!({"contentBlockIndex": 1, "delta": {"text": "Hi"}}),
        ),
        frame(
            "contentBlockStart",
            json!({"contentBlockIndex": 2, "start": {"toolUse": {"toolUseId": "t1", "name": "read"}}}),
        ),
        frame(
            "contentBlockDelta",
            json!({"contentBlockIndex": 2, "delta": {"toolUse": {"input": "{\"a\":"}}}),
        ),
        frame(
            "contentBlockDelta",
            json!({"contentBlockIndex": 2, "delta": {"toolUse": {"input": "1}"}}}),
        ),
        frame("messageStop", json!({"stopReason": "tool_use"})),
        frame(
            "metadata",
            json!({"usage": {"inputTokens": 10, "outputTokens": 5, "cacheReadInputTokens": 100,
                              "cacheWriteInputTokens": 7}, "metrics": {"latencyMs": 1}}),
        ),
    ]);
    assert_eq!(done, Ok(true), "metadata after messageStop completes");
    assert_eq!(
        deltas,
        vec![
            StreamDelta::Reasoning("think".into()),
            StreamDelta::ReasoningSignature("sig".into()),
            StreamDelta::Text("Hi".into()),
            StreamDelta::ToolCall {
                index: 0,
                id: Some("t1".into()),
                name: Some("read".into()),
                arguments: String::new()
            },
            StreamDelta::ToolCall {
                index: 0,
                id: None,
                name: None,
                arguments: "{\"a\":".into()
            },
            StreamDelta::ToolCall {
                index: 0,
                id: None,
                name: None,
                arguments: "1}".into()
            },
            StreamDelta::Finish(FinishReason::ToolCalls),
            StreamDelta::Usage(Usage {
                input_tokens: 117,
                output_tokens: 5,
                cache_read_tokens: 100,
                cache_write_tokens: 7,
                reasoning_tokens: 0,
            }),
        ]
    );
}

#[test]
fn stop_reasons_map_like_the_reference() {
    assert_eq!(finish_reason("end_turn", false), FinishReason::Stop);
    assert_eq!(finish_reason("end_turn", true), FinishReason::ToolCalls);
    assert_eq!(finish_reason("max_tokens", false), FinishReason::Length);
    assert_eq!(
        finish_reason("guardrail_intervened", false),
        FinishReason::ContentFilter
    );
    assert_eq!(finish_reason("something_new", false), FinishReason::Stop);
}

#[test]
fn eof_before_message_stop_is_an_error() {
    let mut wire = ConverseEvents::default();
    assert!(matches!(wire.on_eof(), Err(LlmError::StreamEnded(_))));
    let mut out = Vec::new();
    let stop = frame("messageStop", json!({"stopReason": "end_turn"}));
    assert_eq!(wire.on_event(&stop, None, &mut out), Ok(false));
    assert_eq!(wire.on_eof(), Ok(()));
}

fn classify(err: &LlmError) -> FailoverReason {
    let ctx = ErrorContext {
        provider: "bedrock",
        model: "amazon.nova-pro-v1:0",
        ..ErrorContext::default()
    };
    classify_error(err, &ctx).reason
}

#[test]
fn exceptions_classify_like_their_http_twins() {
    let cases = [
        (
            "throttlingException",
            "Too many requests, please wait.",
            429,
            FailoverReason::RateLimit,
        ),
        (
            "validationException",
            "Input is too long for requested model.",
            400,
            FailoverReason::ContextOverflow,
        ),
        (
            "modelStreamErrorException",
            "Input is too long for requested model.",
            500,
            FailoverReason::ContextOverflow,
        ),
        (
            "serviceUnavailableException",
            "Bedrock is unable to process your request.",
            503,
            FailoverReason::Overloaded,
        ),
        (
            "internalServerException",
            "Internal error",
            500,
            FailoverReason::ServerError,
        ),
    ];
    for (kind, message, status, reason) in cases {
        let (_, result) = run(&[exception(kind, message)]);
        let err = result.expect_err(kind);
        assert_eq!(err.status(), Some(status), "{kind}");
        assert_eq!(classify(&err), reason, "{kind}: {err}");
        let LlmError::Http {
            body, request_id, ..
        } = &err
        else {
            panic!("not http: {err:?}");
        };
        assert!(body.contains(kind), "{body}");
        assert_eq!(request_id.as_deref(), Some("req-1"));
    }
}

#[test]
fn generic_error_messages_and_bad_json() {
    let f = Frame {
        headers: vec![
            (":message-type".into(), "error".into()),
            (":error-code".into(), "ThrottlingException".into()),
            (":error-message".into(), "slow down".into()),
        ],
        payload: Vec::new(),
    };
    let (_, result) = run(&[f]);
    assert_eq!(result.expect_err("error").status(), Some(429));
    let bad = Frame {
        headers: vec![(":event-type".into(), "contentBlockDelta".into())],
        payload: b"{not json".to_vec(),
    };
    let (_, result) = run(&[bad]);
    assert!(matches!(result, Err(LlmError::Decode(_))));
}

#[test]
fn non_streamed_response() {
    let body = json!({
        "output": {"message": {"role": "assistant", "content": [
            {"reasoningContent": {"reasoningText": {"text": "hmm", "signature": "s"}}},
            {"text": "Hello"},
            {"toolUse": {"toolUseId": "t9", "name": "grep", "input": {"q": "x"}}},
        ]}},
        "stopReason": "tool_use",
        "usage": {"inputTokens": 3, "outputTokens": 4},
    });
    let deltas = response_deltas(&body).expect("valid");
    assert_eq!(deltas[0], StreamDelta::Reasoning("hmm".into()));
    assert_eq!(deltas[1], StreamDelta::ReasoningSignature("s".into()));
    assert_eq!(deltas[2], StreamDelta::Text("Hello".into()));
    assert_eq!(
        deltas[3],
        StreamDelta::ToolCall {
            index: 0,
            id: Some("t9".into()),
            name: Some("grep".into()),
            arguments: r#"{"q":"x"}"#.into()
        }
    );
    assert_eq!(deltas[4], StreamDelta::Finish(FinishReason::ToolCalls));
    assert!(response_deltas(&json!({"message": "nope"})).is_err());
}
