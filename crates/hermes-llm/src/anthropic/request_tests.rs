use hermes_protocol::{Message, ToolCall, ToolSchema};
use serde_json::{Value, json};

use super::{CacheTtl, default_max_tokens, request_body};
use crate::{ChatRequest, ToolChoice};

fn req(messages: Vec<Message>) -> ChatRequest {
    ChatRequest {
        model: "claude-sonnet-4-5-20250929".into(),
        messages,
        ..ChatRequest::default()
    }
}

fn calling(ids: &[&str]) -> Message {
    Message {
        tool_calls: ids
            .iter()
            .map(|id| ToolCall::new(*id, "read_file", r#"{"path":"a"}"#))
            .collect(),
        content: None,
        ..Message::assistant("")
    }
}

/// `(message index, block index)` of every block carrying `cache_control`.
fn marked(body: &Value) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (i, m) in body["messages"].as_array().unwrap().iter().enumerate() {
        for (j, b) in m["content"].as_array().unwrap().iter().enumerate() {
            if b.get("cache_control").is_some() {
                out.push((i, j));
            }
        }
    }
    out
}

#[test]
fn max_tokens_follow_the_model_family() {
    assert_eq!(default_max_tokens("claude-sonnet-4-5-20250929"), 64_000);
    assert_eq!(default_max_tokens("anthropic/claude-opus-4.6"), 128_000);
    assert_eq!(default_max_tokens("claude-opus-4-20250514"), 32_000);
    assert_eq!(default_max_tokens("claude-3-5-haiku-latest"), 8_192);
    assert_eq!(default_max_tokens("some-unknown-model"), 8_192);
    let mut r = req(vec![Message::user("hi")]);
    assert_eq!(request_body(&r, CacheTtl::default())["max_tokens"], 64_000);
    r.max_tokens = Some(0);
    assert_eq!(request_body(&r, CacheTtl::default())["max_tokens"], 64_000);
    r.max_tokens = Some(300);
    assert_eq!(request_body(&r, CacheTtl::default())["max_tokens"], 300);
}

#[test]
fn system_messages_become_blocks_and_tools_merge_into_one_user_turn() {
    let r = req(vec![
        Message::system("Be terse."),
        Message::system("Project rules."),
        Message::user("read a and b"),
        calling(&["call.1", "call_2"]),
        Message::tool_result("call.1", "read_file", "A"),
        Message::tool_result("call_2", "read_file", ""),
        Message::user("thanks"),
    ]);
    let body = request_body(&r, CacheTtl::default());
    let system = body["system"].as_array().unwrap();
    assert_eq!(system.len(), 2);
    assert_eq!(system[0], json!({"type": "text", "text": "Be terse."}));
    assert_eq!(system[1]["text"], "Project rules.");
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert_eq!(messages[1]["role"], "assistant");
    let uses = messages[1]["content"].as_array().unwrap();
    assert_eq!(uses[0]["type"], "tool_use");
    assert_eq!(uses[0]["id"], "call_1");
    assert_eq!(uses[0]["input"], json!({"path": "a"}));
    let results = messages[2]["content"].as_array().unwrap();
    assert_eq!(messages[2]["role"], "user");
    assert_eq!(results.len(), 3);
    assert_eq!(results[0]["type"], "tool_result");
    assert_eq!(results[0]["tool_use_id"], "call_1");
    assert_eq!(results[0]["content"], "A");
    assert_eq!(results[1]["content"], "(no output)");
    assert_eq!(results[2]["type"], "text");
    assert_eq!(body["stream"], true);
}

#[test]
fn cache_control_marks_system_and_the_last_three_messages() {
    let r = req(vec![
        Message::system("sys"),
        Message::user("one"),
        Message::assistant("two"),
        Message::user("three"),
        calling(&["c1"]),
        Message::tool_result("c1", "read_file", "out"),
    ]);
    let body = request_body(&r, CacheTtl::FiveMinutes);
    assert_eq!(
        body["system"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    // user "three", the tool_use, the tool_result.
    assert_eq!(marked(&body), vec![(2, 0), (3, 0), (4, 0)]);
    let body = request_body(&r, CacheTtl::OneHour);
    assert_eq!(
        body["messages"][4]["content"][0]["cache_control"],
        json!({"type": "ephemeral", "ttl": "1h"})
    );
}

#[test]
fn without_system_four_messages_are_marked() {
    let r = req(vec![
        Message::user("a"),
        Message::assistant("b"),
        Message::user("c"),
        Message::assistant("d"),
        Message::user("e"),
    ]);
    let body = request_body(&r, CacheTtl::default());
    assert!(body.get("system").is_none());
    assert_eq!(marked(&body), vec![(1, 0), (2, 0), (3, 0), (4, 0)]);
}

#[test]
fn signed_reasoning_is_replayed_only_on_the_latest_assistant_turn() {
    let signed = |text: &str| Message {
        reasoning: Some(format!("thinking about {text}")),
        reasoning_signature: Some(format!("sig-{text}")),
        ..Message::assistant(text)
    };
    let unsigned = Message {
        reasoning: Some("private".into()),
        ..calling(&["c9"])
    };
    let r = req(vec![
        Message::user("q1"),
        signed("old"),
        Message::user("q2"),
        signed("new"),
    ]);
    let body = request_body(&r, CacheTtl::default());
    let old = body["messages"][1]["content"].as_array().unwrap();
    assert_eq!(old.len(), 1);
    assert_eq!(old[0]["type"], "text");
    let new = body["messages"][3]["content"].as_array().unwrap();
    assert_eq!(
        new[0],
        json!({"type": "thinking", "thinking": "thinking about new", "signature": "sig-new"})
    );
    assert_eq!(new[1]["text"], "new");
    assert!(new[1].get("cache_control").is_some());
    let r = req(vec![Message::user("q"), unsigned]);
    let body = request_body(&r, CacheTtl::default());
    let blocks = body["messages"][1]["content"].as_array().unwrap();
    assert_eq!(blocks.len(), 1);
    assert_eq!(blocks[0]["type"], "tool_use");
}

#[test]
fn tools_and_tool_choice() {
    let mut r = req(vec![Message::user("hi")]);
    r.tools = vec![
        ToolSchema {
            name: "read_file".into(),
            description: "Read a file.".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        },
        ToolSchema {
            name: "odd".into(),
            description: "Union root.".into(),
            parameters: json!({"anyOf": [{"type": "object"}]}),
        },
    ]
    .into();
    let body = request_body(&r, CacheTtl::default());
    assert_eq!(body["tools"][0]["name"], "read_file");
    assert_eq!(
        body["tools"][0]["input_schema"]["properties"]["path"]["type"],
        "string"
    );
    assert_eq!(
        body["tools"][1]["input_schema"],
        json!({"type": "object", "properties": {}})
    );
    assert_eq!(body["tool_choice"], json!({"type": "auto"}));
    for (choice, wire) in [
        (ToolChoice::Required, json!({"type": "any"})),
        (ToolChoice::None, json!({"type": "none"})),
        (
            ToolChoice::Named("read_file".into()),
            json!({"type": "tool", "name": "read_file"}),
        ),
    ] {
        r.tool_choice = choice;
        assert_eq!(request_body(&r, CacheTtl::default())["tool_choice"], wire);
    }
}

#[test]
fn empty_messages_get_placeholders() {
    let r = req(vec![Message::user("  "), Message::assistant("")]);
    let body = request_body(&r, CacheTtl::default());
    assert_eq!(body["messages"][0]["content"][0]["text"], "(empty message)");
    assert_eq!(body["messages"][1]["content"][0]["text"], "(empty)");
}

#[test]
fn images_become_image_blocks_before_the_text() {
    let m = Message::user_with_images(
        "Describe",
        vec![
            "data:image/png;base64,iVBOR".into(),
            "https://x.test/cat.jpg".into(),
        ],
    );
    let body = request_body(&req(vec![m]), super::CacheTtl::FiveMinutes);
    let content = &body["messages"][0]["content"];
    assert_eq!(
        content[0],
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}})
    );
    assert_eq!(
        content[1],
        json!({"type": "image", "source": {"type": "url", "url": "https://x.test/cat.jpg"}})
    );
    assert_eq!(content[2]["text"], "Describe");
}
