//! `hermes gateway run` driven by real clients nobody here wrote: the Python
//! `openai` SDK, the Node `openai` SDK and the `llm` CLI (skipped unless
//! `HERMES_CLIENTS_PYTHON` / `HERMES_OPENAI_NODE` point at them; `.ci/run`
//! installs them).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::PathBuf;
use std::process::Command;

use hermes_mock::Reply;
use serde_json::json;
use support::gateway::*;
use support::*;

fn clients_python() -> Option<PathBuf> {
    std::env::var_os("HERMES_CLIENTS_PYTHON").map(PathBuf::from)
}

#[test]
fn the_python_openai_sdk_chats_streams_and_uses_responses() {
    let Some(python) = clients_python() else {
        return;
    };
    let sb = Sandbox::start();
    let gw = gateway(&sb, "");
    sb.mock.push_all([
        Reply::text("answer one"),
        Reply::text("streamed answer"),
        Reply::text("remembered"),
        Reply::text("continued"),
        Reply::text("resp one"),
        Reply::text("resp two"),
        Reply::text("resp streamed"),
    ]);
    let out = Command::new(python)
        .arg(fixture("openai_client.py"))
        .arg(format!("http://127.0.0.1:{}/v1", gw.port))
        .arg(KEY)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let all = steps(&stdout);
    assert_eq!(step(&all, "models"), &json!(["hermes-agent"]));
    assert_eq!(step(&all, "chat")["content"], "answer one");
    assert_eq!(step(&all, "chat")["finish"], "stop");
    assert_eq!(step(&all, "chat_stream")["content"], "streamed answer");
    assert_eq!(step(&all, "chat_stream")["finish"], "stop");
    let session = step(&all, "session_headers");
    assert_eq!(session["key"], "agent:main:sdk:dm:7");
    assert!(session["id"].as_str().unwrap().starts_with("api-"));
    assert_eq!(step(&all, "session_continue"), "continued");
    // The continued request carried the stored conversation.
    let requests = sb.requests();
    let continued = requests
        .iter()
        .find(|r| r.to_string().contains("and now?"))
        .unwrap();
    assert!(continued.to_string().contains("remember me"), "{continued}");
    assert_eq!(step(&all, "responses")["text"], "resp one");
    assert_eq!(step(&all, "responses_chain")["text"], "resp two");
    let chained = requests
        .iter()
        .find(|r| r.to_string().contains("responses two"))
        .unwrap();
    assert!(chained.to_string().contains("responses one"), "{chained}");
    assert_eq!(step(&all, "responses_get")["text"], "resp one");
    let streamed = step(&all, "responses_stream");
    assert_eq!(streamed["text"], "resp streamed");
    let kinds: Vec<&str> = streamed["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    assert_eq!(kinds.first(), Some(&"response.created"));
    assert_eq!(kinds.last(), Some(&"response.completed"));
    assert!(kinds.contains(&"response.output_text.delta"));
    assert_eq!(step(&all, "responses_gone"), "NotFoundError");
    assert_eq!(step(&all, "bad_key")["status"], 401);
}

#[test]
fn the_node_openai_sdk_accumulates_the_stream_strictly() {
    let Some(modules) = std::env::var_os("HERMES_OPENAI_NODE").map(PathBuf::from) else {
        return;
    };
    let sb = Sandbox::start();
    let gw = gateway(&sb, "");
    sb.mock.push_all([
        Reply::text("node one"),
        Reply::text("node two"),
        Reply::text("node three"),
    ]);
    // ES modules resolve packages next to the script, so run it from a
    // directory whose node_modules is the installed one.
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(&modules, dir.path().join("node_modules")).unwrap();
    std::fs::copy(
        fixture("openai_node_client.mjs"),
        dir.path().join("client.mjs"),
    )
    .unwrap();
    let out = Command::new("node")
        .arg(dir.path().join("client.mjs"))
        .arg(format!("http://127.0.0.1:{}/v1", gw.port))
        .arg(KEY)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let all = steps(&stdout);
    assert_eq!(step(&all, "chat"), "node one");
    assert_eq!(step(&all, "chat_stream"), "node two");
    assert_eq!(
        step(&all, "chat_stream_helper"),
        &json!({"content": "node three", "finish": "stop"})
    );
}

#[test]
fn the_llm_cli_talks_to_it_over_chat_and_responses() {
    let Some(python) = clients_python() else {
        return;
    };
    let llm = python.with_file_name("llm");
    let sb = Sandbox::start();
    let gw = gateway(&sb, "");
    let user_path = tempfile::tempdir().unwrap();
    let models = |responses: bool| {
        format!(
            "- model_id: peer\n  model_name: hermes-agent\n  api_base: \"http://127.0.0.1:{}/v1\"\n  api_key_name: peer\n  can_stream: true\n{}",
            gw.port,
            if responses { "  responses: true\n" } else { "" }
        )
    };
    let run = |args: &[&str]| {
        Command::new(&llm)
            .args(args)
            .env("LLM_USER_PATH", user_path.path())
            .output()
            .unwrap()
    };
    std::fs::write(
        user_path.path().join("extra-openai-models.yaml"),
        models(false),
    )
    .unwrap();
    assert!(
        run(&["keys", "set", "peer", "--value", KEY])
            .status
            .success()
    );
    sb.mock
        .push_all([Reply::text("streamed by llm"), Reply::text("not streamed")]);
    let out = run(&["-m", "peer", "hi there"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "streamed by llm"
    );
    let out = run(&["-m", "peer", "--no-stream", "again"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "not streamed");
    std::fs::write(
        user_path.path().join("extra-openai-models.yaml"),
        models(true),
    )
    .unwrap();
    sb.mock.push(Reply::text("via responses"));
    let out = run(&["-m", "peer", "responses please"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "via responses");
}
