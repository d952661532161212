use hermes_protocol::{Message, ToolCall, ToolSchema};
use serde_json::json;

use super::{FALLBACK_INSTRUCTIONS, Flavor, cache_key, request_body};
use crate::{ChatRequest, ToolChoice};

fn req(model: &str, messages: Vec<Message>) -> ChatRequest {
    ChatRequest {
        model: model.into(),
        messages,
        ..ChatRequest::default()
    }
}

#[test]
fn system_becomes_instructions_and_history_becomes_items() {
    let call = Message {
        tool_calls: vec![
            ToolCall::new("call_a", "read_file", r#"{"path":"a"}"#),
            ToolCall::new("call_b|fc_b", "list", ""),
        ],
        codex_reasoning_items: vec![
            json!({"type": "reasoning", "id": "rs_1", "encrypted_content": "enc",
                   "summary": [], "_issuer_kind": "openai"}),
            json!({"type": "reasoning", "id": "rs_2", "summary": []}),
        ],
        ..Message::assistant("")
    };
    let messages = vec![
        Message::system("  be brief "),
        Message::user("hi"),
        call,
        Message::tool_result("call_a", "read_file", "contents"),
        Message::tool_result("call_b|fc_b", "list", "x"),
        Message::system("late note"),
        Message::assistant("done"),
    ];
    let body = request_body(&req("gpt-5-mini", messages), Flavor::default());
    assert_eq!(body["instructions"], "be brief");
    assert_eq!(body["store"], false);
    assert_eq!(body["stream"], true);
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(body["reasoning"]["summary"], "auto");
    assert_eq!(
        body["input"],
        json!([
            {"role": "user", "content": "hi"},
            {"type": "reasoning", "encrypted_content": "enc", "summary": []},
            {"role": "assistant", "content": ""},
            {"type": "function_call", "call_id": "call_a", "name": "read_file",
             "arguments": "{\"path\":\"a\"}"},
            {"type": "function_call", "call_id": "call_b", "name": "list", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_a", "output": "contents"},
            {"type": "function_call_output", "call_id": "call_b", "output": "x"},
            {"role": "developer", "content": "late note"},
            {"role": "assistant", "content": "done"},
        ])
    );
    assert!(body.get("tools").is_none());
    assert!(body.get("max_output_tokens").is_none());
}

#[test]
fn tools_choice_and_caps() {
    let mut r = req("gpt-4.1", vec![Message::user("hi")]);
    r.tools = vec![ToolSchema {
        name: "read_file".into(),
        description: "Reads".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    }]
    .into();
    r.tool_choice = ToolChoice::Named("read_file".into());
    r.max_tokens = Some(500);
    let body = request_body(&r, Flavor::default());
    assert_eq!(body["instructions"], FALLBACK_INSTRUCTIONS);
    assert_eq!(
        body["tools"][0],
        json!({"type": "function", "name": "read_file", "description": "Reads", "strict": false,
               "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}})
    );
    assert_eq!(
        body["tool_choice"],
        json!({"type": "function", "name": "read_file"})
    );
    assert_eq!(body["parallel_tool_calls"], true);
    assert_eq!(body["max_output_tokens"], 500);
    // Not a reasoning family: no reasoning block, nothing encrypted asked for.
    assert!(body.get("reasoning").is_none());
    assert_eq!(body["include"], json!([]));
    let key = body["prompt_cache_key"].as_str().unwrap();
    assert!(key.starts_with("pck_") && key.len() == 28);
    // The Codex backend rejects max_output_tokens.
    let codex = request_body(
        &r,
        Flavor {
            codex_backend: true,
            ..Flavor::default()
        },
    );
    assert!(codex.get("max_output_tokens").is_none());
    assert_eq!(codex["prompt_cache_key"], body["prompt_cache_key"]);
}

#[test]
fn replayed_reasoning_is_deduplicated_by_id() {
    let item =
        json!({"type": "reasoning", "id": "rs_1", "encrypted_content": "enc", "summary": []});
    let turn = |text: &str| Message {
        codex_reasoning_items: vec![item.clone()],
        ..Message::assistant(text)
    };
    let messages = vec![
        Message::user("a"),
        turn("one"),
        Message::user("b"),
        turn("two"),
    ];
    let body = request_body(&req("gpt-5", messages), Flavor::default());
    let reasoning = body["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "reasoning")
        .count();
    assert_eq!(reasoning, 1);
    let dropped = request_body(
        &req("gpt-5", vec![Message::user("a"), turn("")]),
        Flavor {
            drop_reasoning: true,
            ..Flavor::default()
        },
    );
    assert_eq!(dropped["input"], json!([{"role": "user", "content": "a"}]));
}

#[test]
fn the_cache_key_does_not_depend_on_key_order() {
    let a: serde_json::Value = serde_json::from_str(
        r#"{"type":"function","name":"t","parameters":{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"integer"}}},"description":"d\u00e9","strict":false}"#,
    )
    .unwrap();
    let b: serde_json::Value = serde_json::from_str(
        r#"{"strict":false,"description":"d\u00e9","parameters":{"properties":{"a":{"type":"integer"},"z":{"type":"string"}},"type":"object"},"name":"t","type":"function"}"#,
    )
    .unwrap();
    assert_ne!(a.to_string(), b.to_string(), "maps keep their order");
    assert_eq!(
        cache_key("sys", std::slice::from_ref(&a)),
        cache_key("sys", &[b])
    );
    // The reference's key: json.dumps(sort_keys=True, ensure_ascii=False, separators=(",", ":")).
    assert_eq!(cache_key("sys", &[a]), "pck_a58f1baf6317bfcdfc1e0aeb");
}
