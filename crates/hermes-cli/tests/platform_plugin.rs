//! A messaging platform served by a plugin: the example in
//! `examples/platform-plugin` (a Python executable speaking
//! `hermes-platform/1`) installed into a home and run by `hermes gateway
//! run`: a message answered, a dangerous command approved with a button,
//! files both ways, and a gateway killed mid-answer.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hermes_mock::Reply;
use serde_json::{Value, json};
use support::telegram::ChatGateway;
use support::{Sandbox, messages_with_role};

/// The example installed and enabled; chats through `dir`.
fn install(sb: &Sandbox, dir: &Path) {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/platform-plugin");
    let target = sb.home.path().join("plugins/filechat");
    std::fs::create_dir_all(&target).unwrap();
    for name in ["plugin.yaml", "filechat.py"] {
        std::fs::copy(example.join(name), target.join(name)).unwrap();
    }
    sb.no_retries();
    sb.add_config(&format!(
        "plugins:\n  enabled: [filechat]\nplatforms:\n  filechat:\n    extra:\n      dir: {}\n",
        dir.display()
    ));
}

fn gateway(sb: &Sandbox) -> ChatGateway {
    ChatGateway::start_with(
        sb,
        &[("FILECHAT_ALLOWED_USERS", "ann")],
        "filechat: connected as @filechat",
    )
}

fn say(dir: &Path, entry: Value) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("inbox.jsonl"))
        .unwrap();
    writeln!(f, "{entry}").unwrap();
}

fn outbox(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("outbox.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn wait_out(dir: &Path, what: &str, want: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(found) = outbox(dir).into_iter().find(|r| want(r)) {
            return found;
        }
        assert!(
            Instant::now() < deadline,
            "nothing {what}: {:#?}",
            outbox(dir)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn sent_text(r: &Value, needle: &str) -> bool {
    r["op"] == "send" && r["text"].as_str().is_some_and(|t| t.contains(needle))
}

fn setup() -> (Sandbox, tempfile::TempDir) {
    let sb = Sandbox::start();
    let dir = tempfile::tempdir().unwrap();
    install(&sb, dir.path());
    (sb, dir)
}

#[test]
fn a_plugin_platform_answers_approves_by_button_and_moves_files() {
    let (sb, dir) = setup();
    let _gw = gateway(&sb);
    let dir = dir.path();
    sb.mock.push(Reply::text("Hello Ann."));
    say(dir, json!({"from": "ann", "text": "hello"}));
    wait_out(dir, "answering hello", |r| sent_text(r, "Hello Ann."));
    // The message was marked as worked on, then done.
    wait_out(dir, "marking it done", |r| {
        r["op"] == "mark" && r["progress"] == "done"
    });
    // A stranger gets no answer (not on FILECHAT_ALLOWED_USERS).
    say(dir, json!({"from": "mallory", "text": "hi"}));

    std::fs::create_dir(sb.work_path("build")).unwrap();
    sb.mock.push(Reply::tool_call(
        "c1",
        "terminal",
        &json!({"command": "rm -rf ./build"}).to_string(),
    ));
    sb.mock.push(Reply::text("Build removed."));
    say(dir, json!({"from": "ann", "text": "clean the build"}));
    let ask = wait_out(dir, "asking with buttons", |r| {
        r["op"] == "send" && r["buttons"].as_array().is_some_and(|b| !b.is_empty())
    });
    assert!(ask["text"].as_str().unwrap().contains("rm -rf ./build"));
    assert!(sb.work_path("build").exists());
    let once = ask["buttons"][0]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["label"].as_str().unwrap().contains("Once"))
        .unwrap()["data"]
        .as_str()
        .unwrap()
        .to_owned();
    say(dir, json!({"from": "ann", "press": once}));
    wait_out(dir, "after the press", |r| sent_text(r, "Build removed."));
    assert!(!sb.work_path("build").exists());
    wait_out(dir, "acknowledging the press", |r| {
        r["op"] == "press_answered"
    });

    // Files both ways.
    let notes = dir.join("notes.txt");
    std::fs::write(&notes, "the code is 4217").unwrap();
    let report: PathBuf = sb.work_path("report.txt");
    std::fs::write(&report, "numbers").unwrap();
    sb.mock
        .push(Reply::text(format!("Read it.\nMEDIA:{}", report.display())));
    say(
        dir,
        json!({"from": "ann", "text": "keep this", "file": notes.display().to_string()}),
    );
    let file = wait_out(dir, "sending the report", |r| r["op"] == "file");
    assert_eq!(file["path"], report.display().to_string());
    let requests = sb.requests();
    let told = messages_with_role(requests.last().unwrap(), "user")
        .last()
        .unwrap()["content"]
        .to_string();
    assert!(told.contains(&notes.display().to_string()), "{told}");
    assert_eq!(requests.len(), 4, "mallory reached no model");
}

#[test]
fn a_gateway_killed_mid_answer_answers_a_plugin_message_once_after_a_restart() {
    let (sb, dir) = setup();
    let dir = dir.path();
    let mut gw = gateway(&sb);
    sb.mock
        .push(Reply::text("Lost in the crash.").with_delay(Duration::from_secs(5)));
    say(dir, json!({"from": "ann", "text": "what time is it?"}));
    // Generous: on a loaded CI machine the gateway and the plugin start slowly.
    let deadline = Instant::now() + Duration::from_secs(90);
    while sb.mock.chat_requests().is_empty() {
        assert!(
            Instant::now() < deadline,
            "the message never reached the model"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    gw.child.kill().unwrap();
    gw.child.wait().unwrap();
    sb.mock.push(Reply::text("Noon, after the restart."));
    let _gw2 = gateway(&sb);
    wait_out(dir, "after the restart", |r| {
        sent_text(r, "after the restart")
    });
    std::thread::sleep(Duration::from_secs(2));
    let answers: Vec<Value> = outbox(dir)
        .into_iter()
        .filter(|r| r["op"] == "send")
        .collect();
    assert_eq!(answers.len(), 1, "{answers:#?}");
    assert_eq!(sb.mock.chat_requests().len(), 2);
}
