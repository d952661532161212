use serde_json::{Value, json};

use super::check_conversation;

fn body(messages: Value) -> Value {
    json!({"model": "m", "messages": messages})
}

fn sys() -> Value {
    json!({"role": "system", "content": "be nice"})
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

fn assistant(text: &str) -> Value {
    json!({"role": "assistant", "content": text})
}

fn calls(ids: &[&str]) -> Value {
    let calls: Vec<Value> = ids
        .iter()
        .map(|id| json!({"id": id, "type": "function", "function": {"name": "t", "arguments": "{}"}}))
        .collect();
    json!({"role": "assistant", "content": null, "tool_calls": calls})
}

fn tool(id: &str) -> Value {
    json!({"role": "tool", "tool_call_id": id, "name": "t", "content": "ok"})
}

fn err_of(messages: Value) -> String {
    match check_conversation(&body(messages)) {
        Ok(()) => String::from("<ok>"),
        Err(e) => e,
    }
}

#[test]
fn accepts_plain_exchange() {
    let msgs = json!([
        sys(),
        user("hi"),
        assistant("hello"),
        user("bye"),
        assistant("ciao")
    ]);
    assert_eq!(check_conversation(&body(msgs)), Ok(()));
}

#[test]
fn accepts_tool_rounds_and_parallel_calls() {
    let msgs = json!([
        sys(),
        user("do it"),
        calls(&["a", "b"]),
        tool("b"),
        tool("a"),
        calls(&["c"]),
        tool("c"),
        assistant("done"),
        user("again"),
        calls(&["d"]),
        tool("d"),
        user("interrupting after a tool result is fine"),
    ]);
    assert_eq!(check_conversation(&body(msgs)), Ok(()));
}

#[test]
fn accepts_without_system_and_with_text_parts() {
    let parts = json!({"role": "user", "content": [{"type": "text", "text": "hi"}]});
    assert_eq!(check_conversation(&body(json!([parts]))), Ok(()));
}

#[test]
fn accepts_assistant_text_with_tool_calls() {
    let mut call = calls(&["a"]);
    call["content"] = json!("Let me check.");
    assert_eq!(
        check_conversation(&body(json!([user("x"), call, tool("a")]))),
        Ok(())
    );
}

#[test]
fn rejects_missing_or_empty_messages() {
    assert!(check_conversation(&json!({"model": "m"})).is_err());
    assert!(check_conversation(&body(json!([]))).is_err());
}

#[test]
fn rejects_unanswered_call_before_next_message() {
    let e = err_of(json!([user("x"), calls(&["a", "b"]), tool("a"), user("y")]));
    assert!(e.contains("messages[3]") && e.contains('b'), "{e}");
    let e = err_of(json!([user("x"), calls(&["a"]), assistant("no")]));
    assert!(e.contains("unanswered"), "{e}");
}

#[test]
fn rejects_unanswered_call_at_end() {
    let e = err_of(json!([user("x"), calls(&["a"])]));
    assert!(e.contains("never answered"), "{e}");
}

#[test]
fn rejects_orphan_and_duplicate_tool_messages() {
    let e = err_of(json!([user("x"), tool("zz")]));
    assert!(e.contains("zz"), "{e}");
    let e = err_of(json!([user("x"), calls(&["a"]), tool("a"), tool("a")]));
    assert!(e.contains("twice"), "{e}");
    let e = err_of(json!([
        user("x"),
        calls(&["a"]),
        tool("a"),
        assistant("ok"),
        tool("a")
    ]));
    assert!(e.contains("messages[4]"), "{e}");
}

#[test]
fn rejects_bad_ordering() {
    let e = err_of(json!([sys(), assistant("first")]));
    assert!(e.contains("first non-system"), "{e}");
    let e = err_of(json!([user("a"), user("b")]));
    assert!(e.contains("in a row"), "{e}");
}

#[test]
fn rejects_malformed_calls_and_messages() {
    let mut no_id = calls(&["a"]);
    no_id["tool_calls"][0]["id"] = json!("");
    assert!(err_of(json!([user("x"), no_id])).contains("no id"));

    let mut no_name = calls(&["a"]);
    no_name["tool_calls"][0]["function"]["name"] = json!("");
    assert!(err_of(json!([user("x"), no_name])).contains("name"));

    let mut obj_args = calls(&["a"]);
    obj_args["tool_calls"][0]["function"]["arguments"] = json!({});
    assert!(err_of(json!([user("x"), obj_args])).contains("arguments"));

    assert!(err_of(json!([user("x"), calls(&["a", "a"])])).contains("twice"));
    let empty = json!({"role": "assistant", "content": null});
    assert!(err_of(json!([user("x"), empty])).contains("neither"));
    assert!(err_of(json!([{"role": "robot", "content": "x"}])).contains("unknown role"));
    assert!(err_of(json!([{"content": "x"}])).contains("role"));
    let tool_no_content = json!({"role": "tool", "tool_call_id": "a"});
    assert!(err_of(json!([user("x"), calls(&["a"]), tool_no_content])).contains("content"));
}
