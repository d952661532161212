//! Reasoning carried across turns and across `--resume` by the binary: the
//! OpenAI Responses API (`model.api_mode: codex_responses`) and signed
//! Anthropic thinking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_mock::Reply;
use support::*;

/// A sandbox whose model is a named relay provider on the Responses API.
fn responses_sandbox() -> Sandbox {
    let sb = Sandbox::start();
    std::fs::write(
        sb.home.path().join("config.yaml"),
        format!(
            "model:\n  provider: relay\n  api_mode: codex_responses\n  default: gpt-5-mini\n\
             providers:\n  relay:\n    base_url: {}\n    api_key: sk-relay-key\n",
            sb.mock.base_url()
        ),
    )
    .unwrap();
    sb
}

#[test]
fn tool_round_trip_and_reasoning_replay_over_responses() {
    let sb = responses_sandbox();
    sb.mock.push(
        Reply::tool_call("call_r1", "terminal", r#"{"command":"echo via-responses"}"#)
            .with_reasoning("Run the command first."),
    );
    sb.mock.push(Reply::text("Responses wire works."));
    let out = sb.chat("hi", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Responses wire works.\n");

    let reqs: Vec<_> = sb
        .mock
        .requests()
        .into_iter()
        .filter(|r| r.is_responses())
        .collect();
    assert_eq!(reqs.len(), 2, "both model calls go to /responses");
    assert!(reqs[0].path.ends_with("/v1/responses"), "{}", reqs[0].path);
    assert_eq!(reqs[0].header("authorization"), Some("Bearer sk-relay-key"));
    let first = &reqs[0].body;
    assert!(first["instructions"].as_str().unwrap().len() > 20);
    assert!(
        first["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "terminal")
    );
    assert_eq!(first["store"], false);

    let input = reqs[1].body["input"].as_array().unwrap();
    let kinds: Vec<&str> = input
        .iter()
        .map(|i| i["type"].as_str().or(i["role"].as_str()).unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "user",
            "reasoning",
            "assistant",
            "function_call",
            "function_call_output"
        ]
    );
    assert!(
        input[1]["encrypted_content"]
            .as_str()
            .unwrap()
            .starts_with("gAAAA-mock-enc-")
    );
    assert_eq!(input[3]["call_id"], "call_r1");
    assert_eq!(input[4]["call_id"], "call_r1");
    assert!(
        input[4]["output"]
            .as_str()
            .unwrap()
            .contains("via-responses"),
        "{}",
        input[4]
    );

    // Resumed from state.db, the reasoning item is replayed again.
    let id = session_id_of(&out);
    sb.mock.push(Reply::text("Still here."));
    let again = sb.chat("and now?", &["--resume", &id]);
    assert!(again.status.success(), "{}", stderr(&again));
    let last = sb.mock.responses_requests().pop().unwrap();
    let replayed: Vec<_> = last["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "reasoning")
        .cloned()
        .collect();
    assert_eq!(replayed, vec![input[1].clone()]);
}

#[test]
fn anthropic_thinking_signature_survives_resume() {
    let sb = Sandbox::start();
    std::fs::write(
        sb.home.path().join("config.yaml"),
        format!(
            "model:\n  provider: custom\n  base_url: {}\n  api_mode: anthropic_messages\n  \
             default: claude-test\n  api_key: sk-ant-test-key\n",
            sb.mock.base_url()
        ),
    )
    .unwrap();
    sb.mock
        .push(Reply::text("First answer.").with_reasoning("A deep thought."));
    let out = sb.chat("hi", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let id = session_id_of(&out);
    sb.mock.push(Reply::text("Second answer."));
    let again = sb.chat("more", &["--resume", &id]);
    assert!(again.status.success(), "{}", stderr(&again));
    let last = sb.mock.messages_requests().pop().unwrap();
    let assistant = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .unwrap()
        .clone();
    let thinking = &assistant["content"][0];
    assert_eq!(thinking["type"], "thinking", "{assistant}");
    assert_eq!(thinking["thinking"], "A deep thought.");
    assert!(
        thinking["signature"]
            .as_str()
            .unwrap()
            .starts_with("mock-sig-"),
        "{thinking}"
    );
}
