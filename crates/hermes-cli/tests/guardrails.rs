//! Tool-loop guardrails and terminal-output redaction through the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_mock::Reply;
use support::*;

const FAILING: &str = r#"{"command": "ls /definitely-not-here-hermes"}"#;

fn last_tool_text(body: &serde_json::Value) -> String {
    let tools = messages_with_role(body, "tool");
    tools.last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn repeated_failing_terminal_call_is_warned_about_by_default() {
    let sb = Sandbox::start();
    for i in 0..3 {
        sb.mock
            .push(Reply::tool_call(&format!("c{i}"), "terminal", FAILING));
    }
    sb.mock.push(Reply::text("I will stop."));
    let out = sb.chat("list it", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "I will stop.\n");
    let reqs = sb.requests();
    assert_eq!(reqs.len(), 4);
    assert!(!last_tool_text(&reqs[1]).contains("Tool loop warning"));
    let second = last_tool_text(&reqs[2]);
    assert!(
        second.contains("[Tool loop warning: repeated_exact_failure_warning; count=2;"),
        "{second}"
    );
}

#[test]
fn hard_stop_from_config_blocks_and_ends_the_turn() {
    let sb = Sandbox::start();
    sb.add_config("tool_loop_guardrails:\n  hard_stop_enabled: true\n");
    for i in 0..6 {
        sb.mock
            .push(Reply::tool_call(&format!("c{i}"), "terminal", FAILING));
    }
    let out = sb.chat("list it", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("repeated_exact_failure_block"),
        "{}",
        stdout(&out)
    );
    assert_eq!(sb.requests().len(), 6, "no model call after the halt");
}

#[test]
fn terminal_output_is_redacted_before_the_model_sees_it() {
    let sb = Sandbox::start();
    sb.mock.push(Reply::tool_call(
        "c1",
        "terminal",
        r#"{"command": "export A=1; echo MY_SERVICE_TOKEN=abc123randomstringvalue42 ghp_abcdefghijklmnopqrstuvwxyz0123456789"}"#,
    ));
    sb.mock.push(Reply::text("done"));
    let out = sb.chat("show env", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = last_tool_text(&sb.requests()[1]);
    assert!(text.contains("MY_SERVICE_TOKEN=abc123...ue42"), "{text}");
    assert!(text.contains("ghp_ab...6789"), "{text}");
    assert!(
        !text.contains("randomstring") && !text.contains("klmnopqrst"),
        "{text}"
    );
}
