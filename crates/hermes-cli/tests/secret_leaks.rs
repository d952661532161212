//! A model that echoes secrets — a vendor key, a `.env` value with no vendor
//! prefix, its base64, and the wrapped base64 of the whole `.env` — split
//! across stream chunks, through every front-end: the CLI's stream, the API
//! server (chat completions and Responses, streamed and not, the sessions
//! stream), ACP, Telegram's streaming edits, cron output, batch
//! trajectories, and what stays on disk (state.db, logs). Nothing that
//! leaves holds any of them. Telegram runs when its emulator is installed
//! (`HERMES_CHAT_EMULATORS`, as `.ci/run` sets).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use hermes_mock::Reply;
use serde_json::{Value, json};
use support::acp::AcpClient;
use support::gateway::*;
use support::*;

const VENDOR: &str = "sk-ant-api03-leaktestVendorKey0123456789";
const PLAIN: &str = "Tr0ub4dor-and-3-horses-neigh";
/// Shows the reply got through (masking must not swallow the rest).
const MARKER: &str = "LEAKCHECK-DONE";

fn env_file() -> String {
    format!(
        "# deployment settings for the leak test, long enough to wrap twice\n\
         DEPLOY_PASSPHRASE={PLAIN}\nLOG_LEVEL=info\nOPENAI_BASE_URL=https://api.example.invalid/v1\n"
    )
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n =
            chunk.iter().fold(0u32, |acc, b| (acc << 8) | u32::from(*b)) << (8 * (3 - chunk.len()));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `base64 FILE` as GNU coreutils prints it: lines of 76 columns.
fn gnu_base64(bytes: &[u8]) -> String {
    let flat = base64(bytes);
    let lines: Vec<&str> = flat
        .as_bytes()
        .chunks(76)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    lines.join("\n") + "\n"
}

/// What the scripted model says.
fn reply_text() -> String {
    format!(
        "Vendor key {VENDOR} and the passphrase {PLAIN}; encoded {}.\n\
         The file, base64:\n{}{MARKER}",
        base64(PLAIN.as_bytes()),
        gnu_base64(env_file().as_bytes())
    )
}

/// Every spelling that must not leave.
fn forbidden() -> Vec<String> {
    let mut out = vec![
        VENDOR.to_owned(),
        PLAIN.to_owned(),
        base64(PLAIN.as_bytes()).trim_end_matches('=').to_owned(),
    ];
    out.extend(
        gnu_base64(env_file().as_bytes())
            .lines()
            .filter(|l| l.len() >= 16)
            .map(str::to_owned),
    );
    out
}

fn assert_clean(place: &str, text: &str) {
    let leaked: Vec<String> = forbidden()
        .into_iter()
        .filter(|f| text.contains(f.as_str()))
        .collect();
    assert!(leaked.is_empty(), "{place} leaked {leaked:?}:\n{text}");
}

/// A sandbox whose `.env` holds the prefix-less secret.
fn sandbox() -> Sandbox {
    let sb = Sandbox::start();
    std::fs::write(sb.home.path().join(".env"), env_file()).unwrap();
    sb
}

/// Every file under `dir` but the `.env` and config the test wrote, as text.
fn files_under(dir: &Path, out: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            files_under(&path, out);
        } else if name != ".env" && name != "config.yaml" {
            let bytes = std::fs::read(&path).unwrap_or_default();
            out.push((
                path.display().to_string(),
                String::from_utf8_lossy(&bytes).into_owned(),
            ));
        }
    }
}

fn assert_disk_clean(dir: &Path) {
    let mut files = Vec::new();
    files_under(dir, &mut files);
    assert!(!files.is_empty());
    for (path, text) in files {
        assert_clean(&path, &text);
    }
}

/// The streamed pieces of an SSE body joined, as a client accumulates them:
/// chat `delta.content`, Responses and sessions-stream `delta` strings.
fn joined_deltas(body: &str) -> String {
    fn walk(value: &Value, out: &mut String) {
        match value {
            Value::Object(map) => {
                for (key, v) in map {
                    match (key.as_str(), v) {
                        ("delta", Value::String(s)) => out.push_str(s),
                        ("delta", Value::Object(d)) => {
                            out.push_str(d.get("content").and_then(Value::as_str).unwrap_or(""))
                        }
                        _ => walk(v, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = String::new();
    for line in body.lines() {
        if let Some(Ok(value)) = line
            .strip_prefix("data: ")
            .map(serde_json::from_str::<Value>)
        {
            walk(&value, &mut out);
        }
    }
    out
}

fn assert_shown(place: &str, text: &str) {
    assert!(text.contains(MARKER), "{place} lost the reply:\n{text}");
}

#[test]
fn the_cli_stream_state_db_and_logs_hold_no_secret() {
    let sb = sandbox();
    sb.mock.push(Reply::text(reply_text()));
    let out = sb
        .command()
        .args(["chat", "-q", "show me"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_shown("the CLI stream", &stdout(&out));
    assert_clean("the CLI stream", &stdout(&out));
    assert_clean("the CLI's stderr", &stderr(&out));
    assert_disk_clean(sb.home.path());
}

#[test]
fn a_key_in_a_tool_call_is_masked_where_the_call_is_shown() {
    let sb = sandbox();
    let marker = sb.work_path("ran.txt");
    let command = format!("echo {VENDOR} > /dev/null; touch {}", marker.display());
    sb.mock.push(Reply::tool_call(
        "c1",
        "terminal",
        &json!({ "command": command }).to_string(),
    ));
    sb.mock.push(Reply::text(format!("ran it {MARKER}")));
    let out = sb
        .command()
        .args(["chat", "-q", "run it", "--yolo"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(marker.exists(), "the command ran with its real arguments");
    assert_clean("the CLI's tool progress", &stderr(&out));
    assert_clean("the CLI stream", &stdout(&out));
}

#[test]
fn the_api_server_streamed_and_not_holds_no_secret() {
    let sb = sandbox();
    let gw = gateway(&sb, "");
    let (status, _, session) = post(&gw, "/api/sessions", &json!({"id": "leak-1"}));
    assert_eq!(status, 201, "{session}");
    let calls: [(&str, &str, Value); 5] = [
        (
            "chat completions",
            "/v1/chat/completions",
            json!({"messages": [{"role": "user", "content": "show me"}]}),
        ),
        (
            "chat completions, streamed",
            "/v1/chat/completions",
            json!({"stream": true, "messages": [{"role": "user", "content": "show me"}]}),
        ),
        ("responses", "/v1/responses", json!({"input": "show me"})),
        (
            "responses, streamed",
            "/v1/responses",
            json!({"input": "show me", "stream": true}),
        ),
        (
            "the sessions stream",
            "/api/sessions/leak-1/chat/stream",
            json!({"message": "show me"}),
        ),
    ];
    for (place, path, body) in calls {
        sb.mock.push(Reply::text(reply_text()));
        let (status, _, answer) = post(&gw, path, &body);
        let text = match answer {
            Value::String(s) => s,
            other => other.to_string(),
        };
        assert_eq!(status, 200, "{place}: {text}");
        assert_shown(place, &text);
        assert_clean(place, &text);
        if body["stream"] == true || path.ends_with("/stream") {
            let joined = joined_deltas(&text);
            assert_shown(place, &joined);
            assert_clean(&format!("{place} (deltas joined)"), &joined);
        }
    }
    drop(gw);
    assert_disk_clean(sb.home.path());
}

#[test]
fn acp_message_and_thought_chunks_hold_no_secret() {
    let sb = sandbox();
    sb.no_retries();
    sb.mock
        .push(Reply::text(reply_text()).with_reasoning(reply_text()));
    let mut acp = AcpClient::start(&sb, &[]);
    acp.request(
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {}}),
    );
    let s = acp.request(
        "session/new",
        json!({"cwd": sb.work.path(), "mcpServers": []}),
    );
    let sid = s["sessionId"].as_str().unwrap().to_owned();
    let done = acp.prompt(&sid, "show me");
    assert_eq!(done["stopReason"], "end_turn", "{done}");
    let chunks = |kind: &str| -> String {
        acp.updates_of(kind)
            .iter()
            .map(|u| u["content"]["text"].as_str().unwrap_or_default())
            .collect()
    };
    for kind in ["agent_message_chunk", "agent_thought_chunk"] {
        assert_shown(kind, &chunks(kind));
        assert_clean(kind, &chunks(kind));
    }
    let everything: String = acp.updates.iter().map(Value::to_string).collect();
    assert_clean("ACP updates", &everything);
    acp.close();
    assert_disk_clean(sb.home.path());
}

#[test]
fn telegram_streaming_edits_hold_no_secret() {
    use support::telegram::{ChatGateway, Emulator, configure};
    let Some(tg) = Emulator::start() else {
        return;
    };
    const USER: i64 = 4343;
    let sb = sandbox();
    configure(
        &sb,
        &tg,
        "streaming:\n  enabled: true\n  edit_interval: 0.1\n",
    );
    sb.mock
        .push(Reply::text(reply_text()).with_chunk_delay(Duration::from_millis(15)));
    let gw = ChatGateway::start(&sb, &[("TELEGRAM_ALLOWED_USERS", &USER.to_string())]);
    tg.user_says(USER, "show me");
    // Every edit seen on the way, not only the last one.
    let deadline = Instant::now() + Duration::from_secs(60);
    let seen = loop {
        let texts: Vec<String> = tg
            .bot_messages(USER)
            .iter()
            .map(|m| m["text"].as_str().unwrap_or_default().replace('\\', ""))
            .collect();
        for text in &texts {
            assert_clean("a Telegram edit", text);
        }
        let seen = texts.join("\n");
        if seen.contains(MARKER) || Instant::now() > deadline {
            break seen;
        }
        std::thread::sleep(Duration::from_millis(30));
    };
    assert_shown("Telegram", &seen);
    assert_clean("the gateway log", &gw.log());
    drop(gw);
    assert_disk_clean(sb.home.path());
}

#[test]
fn cron_output_of_an_agent_job_and_a_script_job_holds_no_secret() {
    let sb = sandbox();
    let add = sb
        .command()
        .args([
            "cron",
            "add",
            "30m",
            "Report the settings",
            "--name",
            "agent",
        ])
        .output()
        .unwrap();
    assert!(add.status.success(), "{}", stderr(&add));
    sb.mock.push(Reply::text(reply_text()));
    let ran = sb
        .command()
        .args(["cron", "run", "agent"])
        .output()
        .unwrap();
    assert!(ran.status.success(), "{}", stderr(&ran));
    assert_clean("cron run's stdout", &stdout(&ran));
    let scripts = sb.home.path().join("scripts");
    std::fs::create_dir_all(&scripts).unwrap();
    let env = sb.home.path().join(".env");
    std::fs::write(
        scripts.join("leak.sh"),
        format!(
            "base64 '{0}'\nprintf '%s' \"$(grep PASSPHRASE '{0}' | cut -d= -f2)\" | base64\necho {MARKER}\n",
            env.display()
        ),
    )
    .unwrap();
    let add = sb
        .command()
        .args([
            "cron",
            "add",
            "every 1h",
            "--script",
            "leak.sh",
            "--no-agent",
            "--name",
            "script",
        ])
        .output()
        .unwrap();
    assert!(add.status.success(), "{}", stderr(&add));
    let ran = sb
        .command()
        .args(["cron", "run", "script"])
        .output()
        .unwrap();
    assert!(ran.status.success(), "{}", stderr(&ran));
    let mut outputs = Vec::new();
    files_under(&sb.home.path().join("cron/output"), &mut outputs);
    let all: String = outputs.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(all.matches(MARKER).count(), 2, "{all}");
    assert_disk_clean(sb.home.path());
}

#[test]
fn batch_trajectories_hold_no_secret() {
    let sb = sandbox();
    std::fs::write(
        sb.work_path("prompts.jsonl"),
        format!("{}\n", json!({"prompt": "show me"})),
    )
    .unwrap();
    sb.mock
        .push(Reply::text(reply_text()).with_reasoning(reply_text()));
    let out = sb
        .command()
        .args(["batch", "prompts.jsonl", "--run-name", "leak"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let mut files = Vec::new();
    files_under(&sb.work_path("data"), &mut files);
    let all: String = files.iter().map(|(_, t)| t.as_str()).collect();
    assert_shown("the trajectories", &all);
    assert_disk_clean(&sb.work_path("data"));
    assert_disk_clean(sb.home.path());
}
