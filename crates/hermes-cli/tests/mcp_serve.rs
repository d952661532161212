//! `hermes mcp serve` driven by real MCP clients: the official Python SDK
//! client and the MCP Inspector CLI. Skipped without `HERMES_MCP_PYTHON` /
//! `HERMES_MCP_NPM` (`.ci/run` provides both).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use support::{fixture, free_port, step, steps};

/// A HERMES_HOME whose state.db (the reference's own file) holds one
/// Telegram conversation routed by the gateway.
fn home_with_a_gateway_conversation() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let db = home.path().join("state.db");
    std::fs::copy(fixture("reference_state.db"), &db).unwrap();
    let status = Command::new("python3")
        .arg("-c")
        .arg(
            "import sqlite3, sys\n\
             c = sqlite3.connect(sys.argv[1])\n\
             c.execute(\"UPDATE sessions SET session_key='agent:main:telegram:dm:42', chat_id='42', \
             chat_type='dm', display_name='Ann', origin_json='{\\\"platform\\\": \\\"telegram\\\", \\\"chat_id\\\": \\\"42\\\", \\\"chat_name\\\": \\\"Ann\\\", \\\"user_name\\\": \\\"ann\\\"}' \
             WHERE id='20250303_120000_0a0b0c'\")\n\
             c.commit()\n",
        )
        .arg(&db)
        .status()
        .unwrap();
    assert!(status.success());
    home
}

#[test]
fn python_sdk_client_reads_conversations_and_waits_for_events() {
    let Some(python) = std::env::var_os("HERMES_MCP_PYTHON") else {
        return;
    };
    let home = home_with_a_gateway_conversation();
    let out = Command::new(python)
        .arg(fixture("mcp_serve_client.py"))
        .arg(env!("CARGO_BIN_EXE_hermes"))
        .arg(home.path())
        .arg(home.path().join("state.db"))
        .output()
        .unwrap();
    check_python_client_run(&out);
}

/// `hermes mcp serve --http` on a free port of `host`, stopped at the end.
struct Served(std::process::Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve_http(home: &Path, host: &str, port: u16, token: Option<&str>) -> Served {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hermes"));
    cmd.args([
        "mcp",
        "serve",
        "--http",
        "--host",
        host,
        "--port",
        &port.to_string(),
    ])
    .env_clear()
    .env("PATH", std::env::var_os("PATH").unwrap_or_default())
    .env("HERMES_HOME", home)
    .env("HOME", home)
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null());
    if let Some(token) = token {
        cmd.env("HERMES_MCP_SERVE_TOKEN", token);
    }
    let served = Served(cmd.spawn().unwrap());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "mcp serve never listened"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    served
}

#[test]
fn python_sdk_client_reads_conversations_over_streamable_http() {
    let Some(python) = std::env::var_os("HERMES_MCP_PYTHON") else {
        return;
    };
    let home = home_with_a_gateway_conversation();
    let port = free_port();
    let _served = serve_http(home.path(), "127.0.0.1", port, None);
    let out = Command::new(python)
        .arg(fixture("mcp_serve_client.py"))
        .arg(env!("CARGO_BIN_EXE_hermes"))
        .arg(home.path())
        .arg(home.path().join("state.db"))
        .arg(format!("http://127.0.0.1:{port}/mcp"))
        .output()
        .unwrap();
    check_python_client_run(&out);
}

#[test]
fn off_loopback_mcp_serve_needs_a_token_and_checks_it() {
    let home = home_with_a_gateway_conversation();
    // No token: refuses to start, saying what to set.
    let out = Command::new(env!("CARGO_BIN_EXE_hermes"))
        .args([
            "mcp",
            "serve",
            "--http",
            "--host",
            "0.0.0.0",
            "--port",
            &free_port().to_string(),
        ])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HERMES_HOME", home.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("HERMES_MCP_SERVE_TOKEN"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let port = free_port();
    let _served = serve_http(home.path(), "0.0.0.0", port, Some("s3cret-token"));
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let post = |headers: &[(&str, &str)]| -> u16 {
        let mut request = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
            initialize.len()
        );
        for (k, v) in headers {
            request.push_str(&format!("{k}: {v}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(initialize);
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        use std::io::{Read, Write};
        stream.write_all(request.as_bytes()).unwrap();
        let mut head = [0u8; 12];
        stream.read_exact(&mut head).unwrap();
        String::from_utf8_lossy(&head[9..12]).parse().unwrap()
    };
    assert_eq!(post(&[]), 401);
    assert_eq!(post(&[("Authorization", "Bearer wrong")]), 401);
    assert_eq!(post(&[("Authorization", "Bearer s3cret-token")]), 200);
    // A web page elsewhere cannot drive it even with the token in hand.
    assert_eq!(
        post(&[
            ("Authorization", "Bearer s3cret-token"),
            ("Origin", "https://evil.example")
        ]),
        403
    );
    // The official client with the token reads the conversations.
    let Some(python) = std::env::var_os("HERMES_MCP_PYTHON") else {
        return;
    };
    let out = Command::new(python)
        .arg(fixture("mcp_serve_client.py"))
        .arg(env!("CARGO_BIN_EXE_hermes"))
        .arg(home.path())
        .arg(home.path().join("state.db"))
        .arg(format!("http://127.0.0.1:{port}/mcp"))
        .env("HERMES_MCP_SERVE_TOKEN", "s3cret-token")
        .output()
        .unwrap();
    check_python_client_run(&out);
}

/// What the Python SDK client's run must show, whichever transport.
fn check_python_client_run(out: &std::process::Output) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let all = steps(&stdout);
    assert_eq!(step(&all, "initialize")["name"], "hermes");
    let tools: Vec<&str> = step(&all, "tools")
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "attachments_fetch",
            "channels_list",
            "conversation_get",
            "conversations_list",
            "events_poll",
            "events_wait",
            "messages_read",
            "messages_send",
            "permissions_list_open",
            "permissions_respond"
        ]
    );
    let list = step(&all, "conversations_list");
    assert_eq!(list["count"], 1, "{list}");
    assert_eq!(list["conversations"][0]["platform"], "telegram");
    assert_eq!(list["conversations"][0]["display_name"], "Ann");
    assert_eq!(list["conversations"][0]["user_name"], "ann");
    let got = step(&all, "conversation_get");
    assert_eq!(got["chat_id"], "42", "{got}");
    let read = step(&all, "messages_read");
    assert!(read["count"].as_u64().unwrap() >= 1, "{read}");
    assert_eq!(
        step(&all, "channels_list")["channels"][0]["target"],
        "telegram:42"
    );
    let polled = step(&all, "events_poll");
    assert_eq!(polled["events"][0]["type"], "message", "{polled}");
    assert_eq!(
        polled["events"][0]["session_key"],
        "agent:main:telegram:dm:42"
    );
    assert_eq!(
        step(&all, "events_wait_timeout"),
        &serde_json::json!({"event": null, "reason": "timeout"})
    );
    let waited = step(&all, "events_wait");
    assert_eq!(
        waited["event"]["content"], "a brand new message",
        "{waited}"
    );
    assert!(step(&all, "messages_send")["error"].is_string());
    assert_eq!(
        step(&all, "permissions_respond")["error"],
        "Approval not found: nope"
    );
}

fn inspector(npm: &Path, home: &Path, extra: &[&str]) -> Value {
    let out = Command::new(npm.join(".bin/mcp-inspector"))
        .arg("--cli")
        .args(["-e", &format!("HERMES_HOME={}", home.display())])
        .args(["-e", &format!("HOME={}", home.display())])
        .arg(env!("CARGO_BIN_EXE_hermes"))
        .args(["mcp", "serve"])
        .args(extra)
        .env("MCP_CATALOG_PATH", home.join("catalog.json"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn mcp_inspector_cli_lists_and_calls_tools() {
    let Some(npm) = std::env::var_os("HERMES_MCP_NPM").map(PathBuf::from) else {
        return;
    };
    let home = home_with_a_gateway_conversation();
    let listed = inspector(&npm, home.path(), &["--method", "tools/list"]);
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 10, "{listed}");
    assert!(names.contains(&"events_wait"));
    let called = inspector(
        &npm,
        home.path(),
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "conversations_list",
            "--tool-arg",
            "platform=telegram",
        ],
    );
    let text = called["content"][0]["text"].as_str().unwrap();
    let body: Value = serde_json::from_str(text).unwrap();
    assert_eq!(body["count"], 1, "{body}");
}

/// Reads `hermes mcp serve`'s stdout lines on a thread, so a missing reply
/// fails the test instead of hanging it.
fn reply_lines(stdout: std::process::ChildStdout) -> std::sync::mpsc::Receiver<Value> {
    use std::io::BufRead;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(serde_json::from_str(&line).unwrap_or(Value::String(line)));
        }
    });
    rx
}

#[test]
fn a_line_that_is_not_json_gets_a_parse_error_and_the_server_keeps_serving() {
    use std::io::Write;
    use std::process::Stdio;
    use std::time::Duration;
    let sb = support::Sandbox::start();
    let mut child = sb
        .command()
        .args(["mcp", "serve"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let replies = reply_lines(child.stdout.take().unwrap());
    let next = || replies.recv_timeout(Duration::from_secs(20)).unwrap();
    stdin
        .write_all(b"{\"jsonrpc\": \"2.0\", \"method\": \n")
        .unwrap();
    let error = next();
    assert_eq!(error["id"], Value::Null, "{error}");
    assert_eq!(error["error"]["code"], -32700, "{error}");
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    stdin.write_all(format!("{init}\n").as_bytes()).unwrap();
    let ready = next();
    assert_eq!(ready["result"]["serverInfo"]["name"], "hermes", "{ready}");
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\nnot json either\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n")
        .unwrap();
    let mut got = [next(), next()];
    got.sort_by_key(|v| v["id"].is_null());
    assert_eq!(got[0]["id"], 2, "{}", got[0]);
    assert!(!got[0]["result"]["tools"].as_array().unwrap().is_empty());
    assert_eq!(got[1]["error"]["code"], -32700, "{}", got[1]);
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
}
