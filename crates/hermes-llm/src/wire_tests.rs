use hermes_protocol::{FinishReason, Message, ToolCall, ToolSchema, Usage};
use serde_json::{Value, json};

use super::{
    apply_envelope_cache, chunk_deltas, completion_deltas, embedded_error, message_json,
    parse_usage,
};
use crate::{ChatRequest, LlmError, StreamDelta};

/// The request body as the provider receives it.
fn request_body(req: &ChatRequest) -> Value {
    serde_json::to_value(super::request_body(req)).unwrap()
}

fn deltas(chunk: Value) -> Vec<StreamDelta> {
    let mut out = Vec::new();
    chunk_deltas(&chunk, None, &mut out).unwrap();
    out
}

#[test]
fn request_body_shape() {
    let req = ChatRequest {
        model: "gpt-x".into(),
        messages: vec![Message::system("s"), Message::user("u")],
        tools: vec![ToolSchema {
            name: "read".into(),
            description: "Reads".into(),
            parameters: json!({"type": "object"}),
        }]
        .into(),
        max_tokens: Some(100),
        temperature: Some(0.7),
        ..Default::default()
    };
    let body = request_body(&req);
    assert_eq!(body["model"], "gpt-x");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["max_tokens"], 100);
    assert_eq!(body["temperature"], json!(0.7));
    assert_eq!(
        body["tools"],
        json!([{"type": "function", "function": {"name": "read", "description": "Reads", "parameters": {"type": "object"}}}])
    );
    assert_eq!(body["messages"][1], json!({"role": "user", "content": "u"}));

    let bare = request_body(&ChatRequest {
        model: "m".into(),
        ..ChatRequest::default()
    });
    assert!(bare.get("tools").is_none());
    assert!(bare.get("max_tokens").is_none());
    assert!(bare.get("temperature").is_none());
    assert_eq!(bare["messages"], json!([]));
}

#[test]
fn messages_drop_reasoning_and_keep_tool_fields() {
    let mut assistant = Message::assistant("x");
    assistant.content = None;
    assistant.reasoning = Some("secret thoughts".into());
    assistant.tool_calls = vec![ToolCall::new("c1", "read", "{}")];
    assert_eq!(
        message_json(&assistant),
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}
        ]})
    );
    assert_eq!(
        message_json(&Message::tool_result("c1", "read", "ok")),
        json!({"role": "tool", "content": "ok", "tool_call_id": "c1", "name": "read"})
    );
    let mut empty_user = Message::user("");
    empty_user.content = None;
    assert_eq!(message_json(&empty_user)["content"], "");
    let mut empty_assistant = Message::assistant("");
    empty_assistant.content = None;
    assert_eq!(message_json(&empty_assistant)["content"], "");
}

#[test]
fn usage_normalisation() {
    let u = parse_usage(&json!({
        "prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120,
        "prompt_tokens_details": {"cached_tokens": 60, "cache_write_tokens": 10},
        "completion_tokens_details": {"reasoning_tokens": 7},
    }));
    assert_eq!(
        u,
        Usage {
            input_tokens: 100,
            output_tokens: 20,
            cache_read_tokens: 60,
            cache_write_tokens: 10,
            reasoning_tokens: 7
        }
    );
    let fallback = parse_usage(&json!({
        "prompt_tokens": 9, "completion_tokens": 1,
        "prompt_tokens_details": null, "prompt_cache_hit_tokens": 4, "cache_creation_input_tokens": 2,
    }));
    assert_eq!(
        (fallback.cache_read_tokens, fallback.cache_write_tokens),
        (4, 2)
    );
    assert_eq!(parse_usage(&json!({})), Usage::default());
}

#[test]
fn chunk_with_everything() {
    let d = deltas(json!({
        "choices": [{"index": 0, "delta": {
            "reasoning_content": "r", "content": "t",
            "tool_calls": [{"index": 1, "id": "c", "type": "function", "function": {"name": "n", "arguments": ""}}]
        }, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 4}
    }));
    assert_eq!(
        d,
        vec![
            StreamDelta::Reasoning("r".into()),
            StreamDelta::Text("t".into()),
            StreamDelta::ToolCall {
                index: 1,
                id: Some("c".into()),
                name: Some("n".into()),
                arguments: String::new()
            },
            StreamDelta::Finish(FinishReason::ToolCalls),
            StreamDelta::Usage(Usage {
                input_tokens: 3,
                output_tokens: 4,
                ..Usage::default()
            }),
        ]
    );
}

#[test]
fn chunk_quirks() {
    // `reasoning` spelling, empty strings and nulls ignored.
    let d = deltas(
        json!({"choices": [{"delta": {"reasoning": "r", "content": "", "role": "assistant"}, "finish_reason": null}], "usage": null}),
    );
    assert_eq!(d, vec![StreamDelta::Reasoning("r".into())]);
    // Missing index falls back to the position; empty id/name become None; object arguments are serialised.
    let d = deltas(json!({"choices": [{"delta": {"tool_calls": [
        {"id": "", "function": {"name": "", "arguments": "{\"a\""}},
        {"function": {"arguments": {"b": 1}}},
        {"index": 5}
    ]}}]}));
    assert_eq!(
        d,
        vec![
            StreamDelta::ToolCall {
                index: 0,
                id: None,
                name: None,
                arguments: "{\"a\"".into()
            },
            StreamDelta::ToolCall {
                index: 1,
                id: None,
                name: None,
                arguments: "{\"b\":1}".into()
            },
        ]
    );
    assert!(deltas(json!({"choices": []})).is_empty());
    assert!(deltas(json!({"object": "chat.completion.chunk"})).is_empty());
}

#[test]
fn error_inside_stream() {
    let mut out = Vec::new();
    let err = chunk_deltas(
        &json!({"error": {"message": "overloaded", "code": 529}}),
        Some("rid"),
        &mut out,
    )
    .unwrap_err();
    let LlmError::Http {
        status,
        body,
        request_id,
        ..
    } = err
    else {
        panic!()
    };
    assert_eq!(status, 529);
    assert!(body.contains("overloaded"));
    assert_eq!(request_id.as_deref(), Some("rid"));
    assert_eq!(
        embedded_error(&json!({"code": "rate_limit"}), None).status(),
        Some(0)
    );
    assert_eq!(
        embedded_error(&json!({"code": "502"}), None).status(),
        Some(502)
    );
    assert_eq!(
        embedded_error(&json!("plain"), None).to_string(),
        "provider error: plain"
    );
}

#[test]
fn full_completion_to_deltas() {
    let body = json!({
        "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": "hi", "reasoning_content": "hmm",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]
        }}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 2}
    });
    assert_eq!(
        completion_deltas(&body, None).unwrap(),
        vec![
            StreamDelta::Reasoning("hmm".into()),
            StreamDelta::Text("hi".into()),
            StreamDelta::ToolCall {
                index: 0,
                id: Some("c1".into()),
                name: Some("ls".into()),
                arguments: "{}".into()
            },
            StreamDelta::Finish(FinishReason::Stop),
            StreamDelta::Usage(Usage {
                input_tokens: 1,
                output_tokens: 2,
                ..Usage::default()
            }),
        ]
    );
    assert!(matches!(
        completion_deltas(&json!({}), None),
        Err(LlmError::Decode(_))
    ));
    assert!(matches!(
        completion_deltas(&json!({"error": {"message": "x"}}), None),
        Err(LlmError::Http { .. })
    ));
}

#[test]
fn tool_choice_goes_on_the_wire_only_when_not_auto() {
    use crate::ToolChoice;
    let mut req = crate::ChatRequest {
        model: "m".into(),
        tools: vec![hermes_protocol::ToolSchema {
            name: "terminal".into(),
            description: "d".into(),
            parameters: serde_json::json!({"type": "object"}),
        }]
        .into(),
        ..Default::default()
    };
    assert!(request_body(&req).get("tool_choice").is_none());
    req.tool_choice = ToolChoice::Required;
    assert_eq!(request_body(&req)["tool_choice"], "required");
    req.tool_choice = ToolChoice::Named("terminal".into());
    assert_eq!(
        request_body(&req)["tool_choice"]["function"]["name"],
        "terminal"
    );
}

#[test]
fn gpt5_gets_the_developer_role_on_the_wire_only() {
    let mut req = ChatRequest {
        model: "gpt-5-mini".into(),
        messages: vec![Message::system("s"), Message::user("u")],
        ..Default::default()
    };
    assert_eq!(request_body(&req)["messages"][0]["role"], "developer");
    req.model = "gpt-4.1".into();
    assert_eq!(request_body(&req)["messages"][0]["role"], "system");
}

#[test]
fn envelope_cache_marks_system_and_the_last_three_text_messages() {
    let mut calls = Message::assistant("");
    calls.content = None;
    calls.tool_calls = vec![ToolCall::new("c1", "terminal", "{}")];
    let req = ChatRequest {
        model: "anthropic/claude-sonnet-4.5".into(),
        messages: vec![
            Message::system("sys"),
            Message::user("one"),
            Message::assistant("two"),
            Message::user("three"),
            calls,
            Message::tool_result("c1", "terminal", "out"),
            Message::user("four"),
        ],
        ..ChatRequest::default()
    };
    let mut body = request_body(&req);
    apply_envelope_cache(&mut body, crate::CacheTtl::OneHour);
    let msgs = body["messages"].as_array().unwrap();
    let marked: Vec<usize> = msgs
        .iter()
        .enumerate()
        .filter(|(_, m)| m["content"].is_array())
        .map(|(i, _)| i)
        .collect();
    // The tool-call-only assistant cannot carry a marker, so it is skipped.
    assert_eq!(marked, vec![0, 3, 5, 6]);
    assert_eq!(
        msgs[0]["content"][0],
        json!({"type": "text", "text": "sys", "cache_control": {"type": "ephemeral", "ttl": "1h"}})
    );
    assert_eq!(msgs[1]["content"], "one");
    assert!(msgs[4]["content"].is_null());
}

#[test]
fn images_ride_as_content_parts() {
    let m = Message::user_with_images("What is this?", vec!["data:image/png;base64,iVBOR".into()]);
    assert_eq!(
        message_json(&m)["content"],
        json!([{"type": "text", "text": "What is this?"},
               {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBOR"}}])
    );
    assert_eq!(
        super::split_data_url("data:image/jpeg;base64,/9j/"),
        Some(("image/jpeg", "/9j/"))
    );
    assert_eq!(super::split_data_url("https://x.test/a.png"), None);
}
