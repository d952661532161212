//! OAuth with a real protected MCP server: the official Python SDK's
//! authorization server and resource server (`fixtures/oauth_mcp_server.py`,
//! dynamic registration, PKCE, refresh-token rotation). `hermes mcp login`
//! runs the browser round trip through a headless `BROWSER`; the model then
//! calls the server's tool, and again once the access token has expired (a
//! silent refresh). No token may reach config.yaml, state.db or the logs.
//! Needs `HERMES_MCP_PYTHON` (`.ci/run` provides it); skipped without.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use hermes_mock::Reply;
use serde_json::{Value, json};
use support::*;

/// Seconds an access token of the fixture lives.
const ACCESS_TTL: u64 = 3;

struct Peer(Child);

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_server(python: &Path, port: u16, events: &Path) -> Peer {
    let child = Command::new(python)
        .arg(fixture("oauth_mcp_server.py"))
        .arg(port.to_string())
        .arg(events)
        .arg(ACCESS_TTL.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let peer = Peer(child);
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "the OAuth MCP server never listened"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    peer
}

fn sandbox(port: u16) -> Sandbox {
    let sb = Sandbox::start();
    sb.no_retries();
    sb.add_config(&format!(
        "mcp_discovery_timeout: 30\nmcp_servers:\n  notes:\n    url: http://127.0.0.1:{port}/mcp\n    auth: oauth\n"
    ));
    sb
}

fn grants(events: &Path) -> Vec<String> {
    std::fs::read_to_string(events)
        .unwrap_or_default()
        .lines()
        .map(|l| l.split_whitespace().next().unwrap_or("").to_owned())
        .collect()
}

/// One turn in which the model calls `note`; the tool result it got back.
fn note_through_model(sb: &Sandbox, text: &str) -> Value {
    let before = sb.mock.chat_requests().len();
    sb.mock.push_all([
        Reply::tool_call(
            "c1",
            "mcp__notes__note",
            &json!({ "text": text }).to_string(),
        ),
        Reply::text("Noted."),
    ]);
    let out = sb.chat("Note this.", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = sb.requests();
    let tool = requests[before + 1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .cloned()
        .unwrap();
    tool_content(&tool)
}

fn stored_tokens(home: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(home.join("mcp-tokens/notes.json")).unwrap();
    let tokens: Value = serde_json::from_str(&text).unwrap();
    ["access_token", "refresh_token"]
        .iter()
        .filter_map(|k| tokens[k].as_str().map(str::to_owned))
        .collect()
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "mcp-tokens") {
                continue;
            }
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

#[test]
fn login_then_tool_calls_before_and_after_the_token_expires() {
    let Some(python) = std::env::var_os("HERMES_MCP_PYTHON").map(PathBuf::from) else {
        eprintln!("skipped: HERMES_MCP_PYTHON is not set");
        return;
    };
    let port = free_port();
    let work = tempfile::tempdir().unwrap();
    let events = work.path().join("grants.log");
    let _server = start_server(&python, port, &events);
    let sb = sandbox(port);

    let login = sb
        .command()
        .args(["mcp", "login", "notes"])
        .env("BROWSER", fixture("conformance_browser.py"))
        .output()
        .unwrap();
    assert!(
        login.status.success(),
        "{}\n{}",
        stdout(&login),
        stderr(&login)
    );
    assert!(stdout(&login).contains("Starting OAuth flow for 'notes'..."));
    assert!(
        stdout(&login).contains("Authenticated — 1 tool(s) available"),
        "{}",
        stdout(&login)
    );
    assert!(stderr(&login).contains("/authorize?"), "{}", stderr(&login));
    assert_eq!(grants(&events), ["authorization_code"]);
    let mut seen = stored_tokens(sb.home.path());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(sb.home.path().join("mcp-tokens/notes.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    assert_eq!(note_through_model(&sb, "first")["result"], "noted: first");

    std::thread::sleep(Duration::from_secs(ACCESS_TTL + 1));
    assert_eq!(note_through_model(&sb, "second")["result"], "noted: second");
    assert_eq!(
        grants(&events),
        ["authorization_code", "refresh_token"],
        "the expired token was refreshed, without a new login"
    );
    seen.extend(stored_tokens(sb.home.path()));

    // No token outside mcp-tokens/: config.yaml, state.db, logs.
    let mut files = Vec::new();
    files_under(sb.home.path(), &mut files);
    assert!(files.iter().any(|f| f.ends_with("state.db")));
    for file in files {
        let bytes = std::fs::read(&file).unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes);
        for token in &seen {
            assert!(
                !text.contains(token.as_str()),
                "a token leaked into {}",
                file.display()
            );
        }
    }

    let logout = sb.run(&["mcp", "logout", "notes"]);
    assert!(logout.status.success());
    assert!(!sb.home.path().join("mcp-tokens/notes.json").exists());
}

#[test]
fn without_a_login_nobody_present_is_told_the_command() {
    let Some(python) = std::env::var_os("HERMES_MCP_PYTHON").map(PathBuf::from) else {
        eprintln!("skipped: HERMES_MCP_PYTHON is not set");
        return;
    };
    let port = free_port();
    let work = tempfile::tempdir().unwrap();
    let events = work.path().join("grants.log");
    let _server = start_server(&python, port, &events);
    let sb = sandbox(port);

    let test = sb.run(&["mcp", "test", "notes"]);
    assert!(!test.status.success());
    assert!(
        stdout(&test).contains("run `hermes mcp login notes`"),
        "{}\n{}",
        stdout(&test),
        stderr(&test)
    );
    // A one-shot run goes on without the server's tools.
    sb.mock.push(Reply::text("No notes today."));
    let out = sb.chat("Hello", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let first = &sb.requests()[0];
    assert!(
        !tool_names(first)
            .iter()
            .any(|t| t.starts_with("mcp__notes__")),
        "{:?}",
        tool_names(first)
    );
    assert!(grants(&events).is_empty(), "nothing was authorized");
}
