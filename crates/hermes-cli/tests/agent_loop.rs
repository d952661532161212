//! The agent loop driven through the real binary against the scripted mock.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_mock::Reply;
use serde_json::json;
use support::*;

#[test]
fn plain_answer_prints_only_the_answer_and_the_session_id() {
    let sb = Sandbox::start();
    sb.mock.push(Reply::text("Hello from the mock."));
    let out = sb.chat("hi there", &[]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(stdout(&out), "Hello from the mock.\n");
    let err = stderr(&out);
    let id_line = err
        .lines()
        .find(|l| l.starts_with("session_id: "))
        .unwrap_or_else(|| panic!("{err}"));
    assert_eq!(id_line.len(), "session_id: ".len() + 22);

    let reqs = sb.requests();
    assert_eq!(reqs.len(), 1);
    let body = &reqs[0];
    assert_eq!(body["model"], "mock-model");
    assert_eq!(body["stream"], true);
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(
        body["messages"][1],
        json!({"role": "user", "content": "hi there"})
    );
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    for t in [
        "terminal",
        "read_file",
        "write_file",
        "patch",
        "search_files",
        "todo",
    ] {
        assert!(tools.contains(&t), "{t} missing from {tools:?}");
    }
}

#[test]
fn streamed_answer_and_tool_progress_in_normal_mode() {
    let sb = Sandbox::start();
    sb.mock.push(Reply::tool_call(
        "call_1",
        "terminal",
        r#"{"command":"echo streamed"}"#,
    ));
    sb.mock
        .push(Reply::text("All done, the output was streamed."));
    let out = sb.command().args(["chat", "-q", "go"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "All done, the output was streamed.\n");
    assert!(
        stderr(&out).contains("💻 terminal  {\"command\":\"echo streamed\"}"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn terminal_round_trip_sends_the_call_and_its_result() {
    let sb = Sandbox::start();
    sb.mock.push(Reply::tool_call(
        "call_1",
        "terminal",
        r#"{"command": "echo hermes-roundtrip"}"#,
    ));
    sb.mock.push(Reply::text("It printed hermes-roundtrip."));
    let out = sb.chat("run echo", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "It printed hermes-roundtrip.\n");

    let reqs = sb.requests();
    assert_eq!(reqs.len(), 2);
    let second = &reqs[1];
    let assistant = messages_with_role(second, "assistant");
    assert_eq!(assistant.len(), 1);
    assert_eq!(assistant[0]["tool_calls"][0]["id"], "call_1");
    assert_eq!(assistant[0]["tool_calls"][0]["type"], "function");
    assert_eq!(
        assistant[0]["tool_calls"][0]["function"]["name"],
        "terminal"
    );
    let tool = messages_with_role(second, "tool");
    assert_eq!(tool.len(), 1);
    assert_eq!(tool[0]["tool_call_id"], "call_1");
    let result = tool_content(tool[0]);
    assert_eq!(
        result,
        json!({"output": "hermes-roundtrip", "exit_code": 0, "error": null})
    );
}

#[test]
fn parallel_reads_come_back_in_call_order() {
    let sb = Sandbox::start();
    write(sb.work.path(), "a.txt", "alpha content\n");
    write(sb.work.path(), "b.txt", "beta content\n");
    sb.mock.push(Reply::tool_calls(&[
        ("call_a", "read_file", r#"{"path": "a.txt"}"#),
        ("call_b", "read_file", r#"{"path": "b.txt"}"#),
    ]));
    sb.mock.push(Reply::text("Read both."));
    let out = sb.chat("read both files", &[]);
    assert!(out.status.success(), "{}", stderr(&out));

    let reqs = sb.requests();
    let tool = messages_with_role(&reqs[1], "tool");
    assert_eq!(tool.len(), 2);
    assert_eq!(tool[0]["tool_call_id"], "call_a");
    assert_eq!(tool[1]["tool_call_id"], "call_b");
    assert!(
        tool[0]["content"]
            .as_str()
            .unwrap()
            .contains("alpha content")
    );
    assert!(
        tool[1]["content"]
            .as_str()
            .unwrap()
            .contains("beta content")
    );
}

#[test]
fn malformed_arguments_are_repaired_and_executed() {
    let sb = Sandbox::start();
    write(sb.work.path(), "a.txt", "repaired read works\n");
    sb.mock.push(Reply::tool_call(
        "call_1",
        "read_file",
        r#"{"path": "a.txt",}"#,
    ));
    sb.mock.push(Reply::text("ok"));
    let out = sb.chat("read a.txt", &[]);
    assert!(out.status.success(), "{}", stderr(&out));

    let reqs = sb.requests();
    let assistant = messages_with_role(&reqs[1], "assistant");
    let args = assistant[0]["tool_calls"][0]["function"]["arguments"]
        .as_str()
        .unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(args).unwrap(),
        json!({"path": "a.txt"})
    );
    let tool = messages_with_role(&reqs[1], "tool");
    assert!(
        tool[0]["content"]
            .as_str()
            .unwrap()
            .contains("repaired read works"),
        "{}",
        tool[0]
    );
}

#[test]
fn spent_budget_gets_a_grace_call_then_a_forced_summary() {
    let sb = Sandbox::start();
    for i in 0..3 {
        sb.mock.push(Reply::tool_call(
            &format!("call_{i}"),
            "terminal",
            &format!(r#"{{"command": "echo step{i}"}}"#),
        ));
    }
    sb.mock.push(Reply::text("Summary: ran step0 and step1."));
    let out = sb.chat("keep going", &["--max-turns", "2"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Summary: ran step0 and step1.\n");

    let reqs = sb.requests();
    assert_eq!(
        reqs.len(),
        4,
        "two budgeted calls, one grace call, one summary call"
    );
    assert!(
        reqs[2]["tools"].is_array(),
        "the grace call still offers tools"
    );
    assert!(
        reqs[3].get("tools").is_none(),
        "the summary call offers no tools"
    );
    let users = messages_with_role(&reqs[3], "user");
    assert_eq!(
        users.last().unwrap()["content"],
        "You have reached your iteration limit. Please summarize what you have accomplished so far."
    );
    // The grace call's tool call was not executed: only two tool results exist.
    assert_eq!(messages_with_role(&reqs[3], "tool").len(), 2);
    assert!(!reqs[3].to_string().contains("call_2"));
}

#[test]
fn misspelled_tool_name_is_repaired() {
    let sb = Sandbox::start();
    write(sb.work.path(), "notes.txt", "fuzzy name repair\n");
    sb.mock.push(Reply::tool_call(
        "call_1",
        "read_fiel",
        r#"{"path": "notes.txt"}"#,
    ));
    sb.mock.push(Reply::text("done"));
    let out = sb.chat("read notes", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let reqs = sb.requests();
    let assistant = messages_with_role(&reqs[1], "assistant");
    assert_eq!(
        assistant[0]["tool_calls"][0]["function"]["name"],
        "read_file"
    );
    let tool = messages_with_role(&reqs[1], "tool");
    assert!(
        tool[0]["content"]
            .as_str()
            .unwrap()
            .contains("fuzzy name repair")
    );
}

#[test]
fn unknown_tool_gets_an_error_the_model_can_read() {
    let sb = Sandbox::start();
    sb.mock.push(Reply::tool_call(
        "call_1",
        "launch_rockets",
        r#"{"target": "moon"}"#,
    ));
    sb.mock
        .push(Reply::text("That tool does not exist, sorry."));
    let out = sb.chat("launch", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let reqs = sb.requests();
    let tool = messages_with_role(&reqs[1], "tool");
    let err = tool_content(tool[0])["error"].as_str().unwrap().to_owned();
    assert!(
        err.contains("Tool 'launch_rockets' does not exist"),
        "{err}"
    );
    assert!(
        err.contains("terminal") && err.contains("read_file"),
        "{err}"
    );
}

#[test]
fn toolsets_flag_limits_the_offered_tools() {
    let sb = Sandbox::start();
    sb.mock.push(Reply::text("ok"));
    let out = sb.chat("hi", &["-t", "file"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let reqs = sb.requests();
    let mut tools: Vec<&str> = reqs[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    tools.sort();
    assert_eq!(
        tools,
        vec!["patch", "read_file", "search_files", "write_file"]
    );
}
