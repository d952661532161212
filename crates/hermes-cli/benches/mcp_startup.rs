//! MCP start-up and round-trip benchmark of the real binary.
//!
//! `HERMES_MCP_NPM=… cargo bench -p hermes-cli --bench mcp_startup` prints:
//! - time from launch to the first model request with three stdio `node`
//!   servers configured (server-everything twice, server-filesystem), next to
//!   the same with no server (the difference is what MCP costs at start-up);
//! - the extra time one MCP tool round trip adds to a turn: a one-shot run whose
//!   model calls `mcp__…__echo` once, minus the same run answering directly,
//!   minus the server's own answer time measured with raw JSON-RPC lines.
//!
//! Goals (issue 16): first request well under 1 s with three node servers;
//! a tool round trip within 5 ms of the server's own time.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hermes_mock::{MockServer, Reply};
use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_hermes");
const RUNS: usize = 15;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn write_config(home: &Path, mock: &MockServer, servers: Option<&serde_json::Value>) {
    let mut config = format!(
        "model:\n  provider: custom\n  base_url: {}\n  default: mock-model\nmcp_discovery_timeout: 10\n",
        mock.base_url()
    );
    if let Some(servers) = servers {
        config.push_str(&format!("mcp_servers: {servers}\n"));
    }
    std::fs::write(home.join("config.yaml"), config).unwrap();
}

fn hermes(home: &Path) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("HERMES_HOME", home)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

/// Launch → first model request, in a run answered with plain text.
fn first_request(home: &Path, mock: &MockServer) -> Duration {
    let before = mock.requests().len();
    mock.push(Reply::text("ok"));
    let started = Instant::now();
    let mut child = hermes(home)
        .args(["chat", "-q", "hi", "-Q"])
        .spawn()
        .unwrap();
    let elapsed = loop {
        if mock.requests().len() > before {
            break started.elapsed();
        }
        std::thread::sleep(Duration::from_micros(200));
        assert!(started.elapsed() < Duration::from_secs(60), "no request");
    };
    assert!(child.wait().unwrap().success());
    elapsed
}

/// In a one-shot run whose model calls `tool` once, the time from the first
/// model request to the second: answer handling, the tool call, storing
/// both messages, and building the next request.
fn tool_gap(home: &Path, mock: &MockServer, tool: &str, args: &str) -> Duration {
    let before = mock.requests().len();
    mock.push_all([Reply::tool_call("c1", tool, args), Reply::text("done")]);
    let mut child = hermes(home)
        .args(["chat", "-q", "go", "-Q"])
        .spawn()
        .unwrap();
    let started = Instant::now();
    let mut first = None;
    let gap = loop {
        let n = mock.requests().len() - before;
        if n >= 1 && first.is_none() {
            first = Some(Instant::now());
        }
        if n >= 2 {
            break first.map_or(Duration::ZERO, |f| f.elapsed());
        }
        std::thread::sleep(Duration::from_micros(100));
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no second request"
        );
    };
    assert!(child.wait().unwrap().success());
    gap
}

/// The server's own answer time for `tools/call echo`, over raw JSON-RPC lines.
fn raw_echo(js: &Path) -> Duration {
    let mut child = Command::new("node")
        .arg(js)
        .arg("stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = |v: serde_json::Value| writeln!(stdin, "{v}").unwrap();
    let mut answer = |id: u64| loop {
        let line = lines.next().unwrap().unwrap();
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        if v["id"] == id {
            return;
        }
    };
    send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}}),
    );
    answer(0);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let samples = (1..=200u64)
        .map(|id| {
            let t = Instant::now();
            send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"message": "x"}}}));
            answer(id);
            t.elapsed()
        })
        .collect();
    let _ = child.kill();
    let _ = child.wait();
    median(samples)
}

fn main() {
    let Some(npm) = std::env::var_os("HERMES_MCP_NPM").map(PathBuf::from) else {
        println!("mcp_startup: set HERMES_MCP_NPM to a node_modules with the reference servers");
        return;
    };
    let everything = npm.join("@modelcontextprotocol/server-everything/dist/index.js");
    let filesystem = npm.join("@modelcontextprotocol/server-filesystem/dist/index.js");
    let mock = MockServer::start();
    mock.forget_bodies();
    let home = tempfile::tempdir().unwrap();

    write_config(home.path(), &mock, None);
    let bare = median(
        (0..RUNS)
            .map(|_| first_request(home.path(), &mock))
            .collect(),
    );
    let servers = json!({
        "e1": {"command": "node", "args": [everything, "stdio"]},
        "e2": {"command": "node", "args": [everything, "stdio"]},
        "fs": {"command": "node", "args": [filesystem, home.path()]},
    });
    write_config(home.path(), &mock, Some(&servers));
    let with_mcp = median(
        (0..RUNS)
            .map(|_| first_request(home.path(), &mock))
            .collect(),
    );
    println!("mcp  launch → first model request, no MCP server        median {bare:>10.2?}");
    println!("mcp  launch → first model request, 3 node stdio servers  median {with_mcp:>10.2?}");

    // A built-in tool with no I/O is the baseline: what any tool call costs
    // (storing the messages, the next request); the rest is MCP's.
    let builtin = median(
        (0..RUNS)
            .map(|_| tool_gap(home.path(), &mock, "todo", r#"{"todos": []}"#))
            .collect(),
    );
    let mcp = median(
        (0..RUNS)
            .map(|_| tool_gap(home.path(), &mock, "mcp__e1__echo", r#"{"message": "x"}"#))
            .collect(),
    );
    let server_own = raw_echo(&everything);
    println!("mcp  request→request around a built-in `todo` call       median {builtin:>10.2?}");
    println!("mcp  request→request around an mcp__e1__echo call        median {mcp:>10.2?}");
    println!(
        "mcp  echo over raw JSON-RPC (the server's own time)       median {server_own:>10.2?}"
    );
    println!(
        "mcp  MCP round trip over the server's own time: {:.2?}",
        mcp.saturating_sub(builtin).saturating_sub(server_own)
    );
}
