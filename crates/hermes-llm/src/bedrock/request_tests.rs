use hermes_protocol::{Message, ToolCall, ToolSchema};
use serde_json::json;

use super::*;

fn tool(name: &str) -> ToolSchema {
    ToolSchema {
        name: name.into(),
        description: format!("{name} things"),
        parameters: json!({"type": "object", "properties": {}}),
    }
}

fn calling(calls: Vec<ToolCall>) -> Message {
    let mut m = Message::assistant("");
    m.content = None;
    m.tool_calls = calls;
    m
}

#[test]
fn conversation_with_tools_reasoning_and_merged_results() {
    let mut thinking = calling(vec![
        ToolCall::new("call_1", "read", r#"{"path":"a"}"#),
        ToolCall::new("call:2", "grep", "not json"),
    ]);
    thinking.reasoning = Some("let me look".into());
    thinking.reasoning_signature = Some("SIG".into());
    let req = ChatRequest {
        model: "amazon.nova-pro-v1:0".into(),
        messages: vec![
            Message::system("be brief"),
            Message::system("   "),
            Message::user("hi"),
            thinking,
            Message::tool_result("call_1", "read", "A"),
            Message::tool_result("call:2", "grep", ""),
            Message::assistant("done"),
        ],
        tools: vec![tool("read"), tool("grep")].into(),
        max_tokens: Some(100),
        temperature: Some(0.7),
        tool_choice: ToolChoice::Named("read".into()),
    };
    let body = request_body(&req);
    assert_eq!(body["system"], json!([{"text": "be brief"}]));
    assert_eq!(
        body["inferenceConfig"],
        json!({"maxTokens": 100, "temperature": 0.7})
    );
    assert_eq!(
        body["toolConfig"]["tools"][0],
        json!({"toolSpec": {"name": "read", "description": "read things",
               "inputSchema": {"json": {"type": "object", "properties": {}}}}})
    );
    assert_eq!(
        body["toolConfig"]["toolChoice"],
        json!({"tool": {"name": "read"}})
    );
    let messages = body["messages"].as_array().expect("array");
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant", "user"]);
    assert_eq!(
        messages[1]["content"],
        json!([
            {"reasoningContent": {"reasoningText": {"text": "let me look", "signature": "SIG"}}},
            {"toolUse": {"toolUseId": "call_1", "name": "read", "input": {"path": "a"}}},
            {"toolUse": {"toolUseId": "call_2", "name": "grep", "input": {}}},
        ])
    );
    // Both results in one user turn; an empty result gets the placeholder.
    assert_eq!(
        messages[2]["content"],
        json!([
            {"toolResult": {"toolUseId": "call_1", "content": [{"text": "A"}]}},
            {"toolResult": {"toolUseId": "call_2", "content": [{"text": "(empty)"}]}},
        ])
    );
    assert_eq!(messages[4]["content"], json!([{"text": "(empty)"}]));
}

#[test]
fn unsigned_reasoning_stays_home_and_same_roles_merge() {
    let mut answer = Message::assistant("first");
    answer.reasoning = Some("private".into());
    let req = ChatRequest {
        model: "m".into(),
        messages: vec![
            answer,
            Message::assistant("second"),
            Message::user("a"),
            Message::user(" "),
        ],
        ..ChatRequest::default()
    };
    let body = request_body(&req);
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [{"text": "(empty)"}]},
            {"role": "assistant", "content": [{"text": "first"}, {"text": "second"}]},
            {"role": "user", "content": [{"text": "a"}, {"text": "(empty)"}]},
        ])
    );
    assert!(body.get("system").is_none());
    assert!(body.get("toolConfig").is_none());
    assert_eq!(
        body["inferenceConfig"],
        json!({"maxTokens": DEFAULT_MAX_TOKENS})
    );
}

#[test]
fn tool_choice_and_tool_less_models() {
    let mut req = ChatRequest {
        model: "us.deepseek.r1-v1:0".into(),
        messages: vec![Message::user("x")],
        tools: vec![tool("read")].into(),
        tool_choice: ToolChoice::Required,
        ..ChatRequest::default()
    };
    assert!(request_body(&req).get("toolConfig").is_none());
    req.model = "meta.llama3-70b".into();
    assert_eq!(
        request_body(&req)["toolConfig"]["toolChoice"],
        json!({"any": {}})
    );
    req.tool_choice = ToolChoice::None;
    assert!(request_body(&req)["toolConfig"].get("toolChoice").is_none());
}
