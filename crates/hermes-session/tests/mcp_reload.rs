//! MCP through the session runtime: `Op::ReloadMcp` picks up servers added to
//! config.yaml after the session started, and elicitation goes through the
//! same question channel as `clarify`. Needs `HERMES_MCP_PYTHON` (a Python
//! with the `mcp` SDK; `.ci/run` provides it), skipped otherwise.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::PathBuf;

use hermes_mock::Reply;
use hermes_protocol::{Event, Op};
use serde_json::json;
use support::{Sandbox, turn, wait_for};

fn server_entry() -> Option<String> {
    let python = std::env::var("HERMES_MCP_PYTHON").ok()?;
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../hermes-cli/tests/fixtures/mcp_server.py");
    Some(format!(
        "mcp_discovery_timeout: 30\nmcp_servers:\n  tiny:\n    command: {python}\n    args: [{}, stdio]\n",
        json!(fixture)
    ))
}

fn last_tool_content(sb: &Sandbox) -> serde_json::Value {
    serde_json::from_str(&support::last_tool_result(sb)).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_mcp_connects_servers_added_after_start() {
    let Some(entry) = server_entry() else { return };
    let sb = Sandbox::new();
    let mut conv = sb.manager().start(sb.spec()).await.unwrap();
    let config = sb.home().join("config.yaml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&entry);
    std::fs::write(&config, text).unwrap();
    conv.submit(Op::ReloadMcp).unwrap();
    let answer = wait_for(&mut conv, |e| {
        matches!(e, Event::Status { .. } | Event::Error { .. })
    })
    .await;
    let Event::Status { message } = answer.event else {
        panic!("{answer:?}")
    };
    assert!(message.contains("tiny"), "{message}");
    sb.mock.push_all([
        Reply::tool_call("c1", "mcp__tiny__add", r#"{"a": 2, "b": 5}"#),
        Reply::text("7"),
    ]);
    turn(&mut conv, "add").await;
    assert_eq!(last_tool_content(&sb)["result"], "7");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elicitation_is_a_clarify_question_answered_with_an_op() {
    let Some(entry) = server_entry() else { return };
    let sb = Sandbox::with_config(&entry);
    sb.mock.push_all([
        Reply::tool_call("c1", "mcp__tiny__ask", "{}"),
        Reply::text("greeted"),
    ]);
    let mut conv = sb
        .manager()
        .start(hermes_session::SessionSpec {
            interactive: true,
            ..sb.spec()
        })
        .await
        .unwrap();
    conv.submit(Op::UserInput {
        text: "ask me".into(),
    })
    .unwrap();
    let asked = wait_for(&mut conv, |e| matches!(e, Event::ClarifyRequested { .. })).await;
    let Event::ClarifyRequested {
        request_id,
        question,
        ..
    } = asked.event
    else {
        unreachable!()
    };
    assert!(question.contains("What is your name?"), "{question}");
    conv.submit(Op::ClarifyAnswer {
        request_id,
        answer: Some("Ada".into()),
    })
    .unwrap();
    wait_for(&mut conv, Event::is_terminal).await;
    assert_eq!(last_tool_content(&sb)["result"], "hello Ada");
}
