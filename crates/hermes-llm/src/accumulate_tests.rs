use hermes_protocol::{FinishReason, Role, ToolCall, Usage};

use super::StreamAccumulator;
use crate::StreamDelta;

fn frag(index: usize, id: Option<&str>, name: Option<&str>, args: &str) -> StreamDelta {
    StreamDelta::ToolCall {
        index,
        id: id.map(str::to_owned),
        name: name.map(str::to_owned),
        arguments: args.to_owned(),
    }
}

#[test]
fn text_and_reasoning_concatenate() {
    let mut acc = StreamAccumulator::new();
    for d in [
        StreamDelta::Reasoning("think".into()),
        StreamDelta::Reasoning("ing".into()),
        StreamDelta::Text("Hel".into()),
        StreamDelta::Text("lo".into()),
        StreamDelta::Finish(FinishReason::Stop),
    ] {
        acc.push(&d);
    }
    assert_eq!(acc.text(), "Hello");
    assert!(!acc.has_tool_calls());
    let c = acc.finish();
    assert_eq!(c.message.role, Role::Assistant);
    assert_eq!(c.message.content.as_deref(), Some("Hello"));
    assert_eq!(c.message.reasoning.as_deref(), Some("thinking"));
    assert!(c.message.tool_calls.is_empty());
    assert_eq!(c.finish_reason, Some(FinishReason::Stop));
    assert_eq!(c.usage, None);
}

#[test]
fn empty_stream_gives_empty_message() {
    let c = StreamAccumulator::new().finish();
    assert_eq!(c.message.content, None);
    assert_eq!(c.message.reasoning, None);
    assert!(c.message.tool_calls.is_empty());
}

#[test]
fn tool_calls_assemble_by_index_in_order() {
    let mut acc = StreamAccumulator::new();
    for d in [
        frag(1, Some("b"), Some("ls"), ""),
        frag(0, Some("a"), Some("read"), "{\"pa"),
        frag(1, None, None, "{}"),
        frag(0, None, None, "th\":1}"),
        // A later id or name never overrides the first one.
        frag(0, Some("other"), Some("other"), ""),
        StreamDelta::Finish(FinishReason::ToolCalls),
    ] {
        acc.push(&d);
    }
    assert!(acc.has_tool_calls());
    let c = acc.finish();
    assert_eq!(
        c.message.tool_calls,
        vec![
            ToolCall::new("a", "read", "{\"path\":1}"),
            ToolCall::new("b", "ls", "{}")
        ]
    );
    assert_eq!(c.message.content, None);
}

#[test]
fn late_id_and_name_fill_in_and_missing_id_is_generated() {
    let mut acc = StreamAccumulator::new();
    acc.push(&frag(0, None, None, "{"));
    acc.push(&frag(0, Some("late"), Some("grep"), "}"));
    acc.push(&frag(2, None, Some("ls"), "{}"));
    let c = acc.finish();
    assert_eq!(c.message.tool_calls[0], ToolCall::new("late", "grep", "{}"));
    let generated = &c.message.tool_calls[1];
    assert!(generated.id.starts_with("call_2_"), "{}", generated.id);
    assert_eq!(generated.function.name, "ls");
}

#[test]
fn generated_ids_differ() {
    let id = || {
        let mut acc = StreamAccumulator::new();
        acc.push(&frag(0, None, Some("x"), ""));
        acc.finish().message.tool_calls[0].id.clone()
    };
    assert_ne!(id(), id());
}

#[test]
fn last_usage_wins() {
    let mut acc = StreamAccumulator::new();
    let first = Usage {
        input_tokens: 1,
        ..Usage::default()
    };
    let second = Usage {
        input_tokens: 5,
        output_tokens: 2,
        ..Usage::default()
    };
    acc.push(&StreamDelta::Usage(first));
    acc.push(&StreamDelta::Usage(second));
    assert_eq!(acc.finish().usage, Some(second));
}

#[test]
fn reasoning_signature_is_kept_only_with_reasoning() {
    let mut acc = StreamAccumulator::new();
    acc.push(&StreamDelta::Reasoning("hmm".into()));
    acc.push(&StreamDelta::ReasoningSignature("old".into()));
    acc.push(&StreamDelta::ReasoningSignature("sig".into()));
    assert_eq!(
        acc.finish().message.reasoning_signature.as_deref(),
        Some("sig")
    );

    let mut acc = StreamAccumulator::new();
    acc.push(&StreamDelta::Reasoning("hmm".into()));
    acc.push(&StreamDelta::ReasoningSignature("sig".into()));
    acc.push(&StreamDelta::ReasoningSignature(String::new()));
    assert_eq!(acc.finish().message.reasoning_signature, None);

    let mut acc = StreamAccumulator::new();
    acc.push(&StreamDelta::ReasoningSignature("sig".into()));
    acc.push(&StreamDelta::Text("hi".into()));
    assert_eq!(acc.finish().message.reasoning_signature, None);
}

#[test]
fn reasoning_items_are_kept_in_order() {
    let mut acc = StreamAccumulator::new();
    let first = serde_json::json!({"type": "reasoning", "encrypted_content": "a"});
    let second = serde_json::json!({"type": "reasoning", "encrypted_content": "b"});
    acc.push(&StreamDelta::ReasoningItem(first.clone()));
    acc.push(&StreamDelta::Text("hi".into()));
    acc.push(&StreamDelta::ReasoningItem(second.clone()));
    assert_eq!(
        acc.finish().message.codex_reasoning_items,
        vec![first, second]
    );
}
