//! MCP servers nobody here wrote, through the binary: a scripted model calls
//! their tools and the real result reaches the next request. Needs
//! `HERMES_MCP_NPM` (a node_modules with the reference servers) and
//! `HERMES_MCP_PYTHON` (a Python with the `mcp` SDK); `.ci/run` provides both,
//! and each test is skipped without its peer.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use hermes_mock::Reply;
use serde_json::{Value, json};
use support::*;

fn npm_server(package: &str) -> Option<PathBuf> {
    let root = PathBuf::from(std::env::var_os("HERMES_MCP_NPM")?);
    Some(
        root.join("@modelcontextprotocol")
            .join(package)
            .join("dist/index.js"),
    )
}

fn mcp_python() -> Option<PathBuf> {
    std::env::var_os("HERMES_MCP_PYTHON").map(PathBuf::from)
}

/// A server process stopped when the test ends.
struct Peer(Child);

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_http_peer(mut cmd: Command, port: u16) -> Peer {
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let peer = Peer(child);
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "peer never listened on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
    peer
}

/// A sandbox with `servers` under `mcp_servers:` (given as JSON, written as
/// YAML flow style) and a generous discovery wait for a loaded CI machine.
fn sandbox_with(servers: Value) -> Sandbox {
    let sb = Sandbox::start();
    sb.no_retries();
    sb.add_config(&format!(
        "mcp_discovery_timeout: 30\nmcp_servers: {servers}\n"
    ));
    sb
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Runs one turn in which the model calls `tool` with `args`, and returns the
/// tool result the second request carried.
fn call_through_model(sb: &Sandbox, tool: &str, args: Value) -> Value {
    sb.mock
        .push(Reply::tool_call("call_1", tool, &args.to_string()));
    sb.mock.push(Reply::text("done"));
    let before = sb.requests().len();
    let out = sb.chat("use the tool", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = sb.requests().split_off(before);
    assert_eq!(requests.len(), 2, "{}", stderr(&out));
    let tools = messages_with_role(&requests[1], "tool");
    assert_eq!(tools.len(), 1);
    tool_content(tools[0])
}

#[test]
fn everything_over_stdio_offers_and_runs_its_tools() {
    let Some(js) = npm_server("server-everything") else {
        return;
    };
    let sb = sandbox_with(json!({"everything": {"command": "node", "args": [js, "stdio"]}}));
    let result = call_through_model(&sb, "mcp__everything__get_sum", json!({"a": 2, "b": 3}));
    assert_eq!(result["result"], "The sum of 2 and 3 is 5.", "{result}");
    let names = tool_names(&sb.requests()[0]);
    for expected in [
        "mcp__everything__echo",
        "mcp__everything__get_sum",
        "mcp__everything__list_resources",
        "mcp__everything__read_resource",
        "mcp__everything__list_prompts",
        "mcp__everything__get_prompt",
        "terminal",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} missing: {names:?}"
        );
    }
    // The schema the model sees is the server's, repaired for providers.
    let tools = sb.requests()[0]["tools"].clone();
    let sum = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "mcp__everything__get_sum")
        .unwrap();
    assert_eq!(sum["function"]["parameters"]["type"], "object");
    assert!(sum["function"]["parameters"]["properties"]["a"].is_object());
}

#[test]
fn everything_over_streamable_http() {
    let Some(js) = npm_server("server-everything") else {
        return;
    };
    let port = free_port();
    let mut cmd = Command::new("node");
    cmd.arg(&js)
        .arg("streamableHttp")
        .env("PORT", port.to_string());
    let _peer = start_http_peer(cmd, port);
    let sb = sandbox_with(
        json!({"web": {"url": format!("http://127.0.0.1:{port}/mcp"), "headers": {"X-Test": "1"}}}),
    );
    let result = call_through_model(&sb, "mcp__web__echo", json!({"message": "over http"}));
    assert_eq!(result["result"], "Echo: over http", "{result}");
}

#[test]
fn everything_over_legacy_sse() {
    let Some(js) = npm_server("server-everything") else {
        return;
    };
    let port = free_port();
    let mut cmd = Command::new("node");
    cmd.arg(&js).arg("sse").env("PORT", port.to_string());
    let _peer = start_http_peer(cmd, port);
    let sb = sandbox_with(
        json!({"old": {"url": format!("http://127.0.0.1:{port}/sse"), "transport": "sse"}}),
    );
    let result = call_through_model(&sb, "mcp__old__get_sum", json!({"a": 40, "b": 2}));
    assert_eq!(result["result"], "The sum of 40 and 2 is 42.", "{result}");
}

#[test]
fn filesystem_server_reads_a_real_file() {
    let Some(js) = npm_server("server-filesystem") else {
        return;
    };
    let sb = Sandbox::start();
    let root = sb.work.path().canonicalize().unwrap();
    std::fs::write(root.join("notes.txt"), "the real contents\n").unwrap();
    sb.no_retries();
    sb.add_config(&format!(
        "mcp_discovery_timeout: 30\nmcp_servers: {}\n",
        json!({"fs": {"command": "node", "args": [js, root]}})
    ));
    let path = root.join("notes.txt");
    let result = call_through_model(&sb, "mcp__fs__read_text_file", json!({"path": path}));
    assert_eq!(result["result"], "the real contents\n", "{result}");
    assert_eq!(
        result["structuredContent"]["content"], "the real contents\n",
        "{result}"
    );
}

fn python_server(sb_extra: Value) -> Option<Sandbox> {
    let python = mcp_python()?;
    let mut entry = json!({"command": python, "args": [fixture("mcp_server.py"), "stdio"]});
    if let (Some(e), Some(extra)) = (entry.as_object_mut(), sb_extra.as_object()) {
        e.extend(extra.clone());
    }
    Some(sandbox_with(json!({ "tiny": entry })))
}

#[test]
fn python_sdk_server_tools_resources_and_errors() {
    let Some(sb) = python_server(json!({})) else {
        return;
    };
    let result = call_through_model(&sb, "mcp__tiny__add", json!({"a": 20, "b": 22}));
    assert_eq!(result["result"], "42", "{result}");
    assert_eq!(
        result["structuredContent"],
        json!({"result": 42}),
        "{result}"
    );
    let failed = call_through_model(&sb, "mcp__tiny__fail", json!({"reason": "kaboom"}));
    // The SDK reports the failure as an isError result (its text hides the
    // exception); the model sees it as the tool's error.
    assert!(
        failed["error"].as_str().unwrap().contains("fail"),
        "{failed}"
    );
    assert!(failed.get("result").is_none(), "{failed}");
    let read = call_through_model(
        &sb,
        "mcp__tiny__read_resource",
        json!({"uri": "tiny://greeting"}),
    );
    assert_eq!(read, json!({"result": "hello from tiny"}));
    let prompt = call_through_model(
        &sb,
        "mcp__tiny__get_prompt",
        json!({"name": "review", "arguments": {"code": "x = 1"}}),
    );
    assert_eq!(prompt["messages"][0]["role"], "user", "{prompt}");
    assert!(
        prompt["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("x = 1")
    );
}

#[test]
fn a_server_killed_mid_call_ends_the_call_with_an_error_and_comes_back() {
    let Some(sb) = python_server(json!({})) else {
        return;
    };
    sb.mock.push_all([
        Reply::tool_call("call_1", "mcp__tiny__die", "{}"),
        Reply::tool_call("call_2", "mcp__tiny__add", r#"{"a": 1, "b": 2}"#),
        Reply::text("done"),
    ]);
    let started = Instant::now();
    let out = sb.chat("go", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(60));
    let requests = sb.requests();
    let died = tool_content(messages_with_role(&requests[1], "tool")[0]);
    let error = died["error"].as_str().unwrap_or_default();
    assert!(error.contains("MCP"), "{died}");
    // The server was restarted behind the scenes; the next call just works.
    let added = tool_content(messages_with_role(&requests[2], "tool")[1]);
    assert_eq!(added["result"], "3", "{added}");
}

#[test]
fn a_hung_call_ends_at_the_server_timeout() {
    let Some(sb) = python_server(json!({"timeout": 2})) else {
        return;
    };
    let started = Instant::now();
    let result = call_through_model(&sb, "mcp__tiny__hang", json!({}));
    assert_eq!(
        result["error"], "MCP call to 'hang' on server 'tiny' timed out after 2s",
        "{result}"
    );
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[test]
fn dead_and_mute_servers_do_not_stop_the_turn() {
    let sb = Sandbox::start();
    sb.no_retries();
    sb.add_config(
        "mcp_discovery_timeout: 1\nmcp_servers:\n  dead:\n    command: sh\n    args: ['-c', 'exit 3']\n  mute:\n    command: sleep\n    args: ['60']\n    connect_timeout: 2\n",
    );
    sb.mock
        .push(Reply::tool_call("call_1", "mcp__dead__anything", "{}"));
    sb.mock.push(Reply::text("finished anyway"));
    let started = Instant::now();
    let out = sb.chat("go", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("finished anyway"));
    // The first request waited at most the discovery bound, not connect_timeout.
    assert!(started.elapsed() < Duration::from_secs(20));
    let requests = sb.requests();
    let tools = messages_with_role(&requests[1], "tool");
    assert!(tool_content(tools[0])["error"].is_string());
    let names = tool_names(&requests[0]);
    assert!(!names.iter().any(|n| n.starts_with("mcp__")), "{names:?}");
}

#[test]
fn toolsets_choose_servers_and_no_mcp_turns_them_off() {
    let Some(python) = mcp_python() else { return };
    let sb = sandbox_with(
        json!({"tiny": {"command": python, "args": [fixture("mcp_server.py"), "stdio"]}}),
    );
    sb.mock.push(Reply::text("a"));
    let out = sb.chat("hi", &["-t", "file,no_mcp"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let names = tool_names(&sb.requests()[0]);
    assert!(!names.iter().any(|n| n.starts_with("mcp__")), "{names:?}");
    assert!(names.iter().any(|n| n == "read_file"), "{names:?}");
    sb.mock.push(Reply::text("b"));
    let out = sb.chat("hi", &["-t", "mcp-tiny"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let names = tool_names(&sb.requests()[1]);
    assert!(names.iter().any(|n| n == "mcp__tiny__add"), "{names:?}");
    assert!(!names.iter().any(|n| n == "read_file"), "{names:?}");
}

#[test]
fn list_changed_brings_new_tools_into_the_next_request() {
    let Some(sb) = python_server(json!({})) else {
        return;
    };
    sb.mock
        .push(Reply::tool_call("call_1", "mcp__tiny__grow", "{}"));
    sb.mock
        .push(Reply::tool_call("call_2", "mcp__tiny__grown", "{}"));
    sb.mock.push(Reply::text("done"));
    let out = sb.chat("grow", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = sb.requests();
    assert!(
        !tool_names(&requests[0])
            .iter()
            .any(|n| n == "mcp__tiny__grown")
    );
    assert!(
        tool_names(&requests[1])
            .iter()
            .any(|n| n == "mcp__tiny__grown")
    );
    let results = messages_with_role(&requests[2], "tool");
    assert_eq!(tool_content(results[1])["result"], "I am new");
}

#[test]
fn sampling_is_answered_by_the_session_model() {
    let Some(sb) = python_server(json!({})) else {
        return;
    };
    sb.mock.push(Reply::tool_call(
        "call_1",
        "mcp__tiny__summarize",
        &json!({"text": "a long story"}).to_string(),
    ));
    sb.mock.push(Reply::text("short story indeed"));
    sb.mock.push(Reply::text("done"));
    let out = sb.chat("summarize", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = sb.requests();
    // The server's request went to the same model, with its own system prompt.
    let sampling = &requests[1];
    assert_eq!(
        sampling["messages"][0]["content"],
        "Summarize in three words."
    );
    assert_eq!(sampling["messages"][1]["content"], "a long story");
    let results = messages_with_role(&requests[2], "tool");
    assert_eq!(
        tool_content(results[0])["result"],
        "model said: short story indeed"
    );
}

#[test]
fn elicitation_without_anyone_to_ask_is_declined() {
    let Some(sb) = python_server(json!({})) else {
        return;
    };
    let result = call_through_model(&sb, "mcp__tiny__ask", json!({}));
    assert_eq!(result["result"], "no name (decline)", "{result}");
}

#[test]
fn tool_search_replaces_many_mcp_tools_with_the_bridge() {
    let Some(python) = mcp_python() else { return };
    let sb = sandbox_with(
        json!({"tiny": {"command": python, "args": [fixture("mcp_server.py"), "stdio"]}}),
    );
    sb.add_config("tools:\n  tool_search:\n    enabled: on\n");
    sb.mock.push(Reply::tool_call(
        "call_1",
        "tool_search",
        &json!({"query": "add two integers"}).to_string(),
    ));
    sb.mock.push(Reply::tool_call(
        "call_2",
        "tool_call",
        &json!({"name": "mcp__tiny__add", "arguments": {"a": 1, "b": 2}}).to_string(),
    ));
    sb.mock.push(Reply::text("3"));
    let out = sb.chat("add", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = sb.requests();
    let names = tool_names(&requests[0]);
    assert!(names.iter().any(|n| n == "tool_search"), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("mcp__")), "{names:?}");
    let found = tool_content(messages_with_role(&requests[1], "tool")[0]);
    assert_eq!(found["matches"][0]["name"], "mcp__tiny__add", "{found}");
    let called = tool_content(messages_with_role(&requests[2], "tool")[1]);
    assert_eq!(called["result"], "3", "{called}");
}

#[test]
fn mcp_add_list_test_remove_edit_config_yaml_in_place() {
    let Some(js) = npm_server("server-everything") else {
        return;
    };
    let sb = Sandbox::start();
    sb.add_config("# keep this comment\n");
    let js = js.to_string_lossy().into_owned();
    let out = sb
        .command()
        .args([
            "mcp",
            "add",
            "every",
            "--command",
            "node",
            "--args",
            &js,
            "stdio",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("Connected! Found"),
        "{}",
        stdout(&out)
    );
    assert!(stdout(&out).contains("get-sum"));
    let config = std::fs::read_to_string(sb.home.path().join("config.yaml")).unwrap();
    assert!(config.contains("# keep this comment"), "{config}");
    assert!(config.contains("mcp_servers:\n  every:\n"), "{config}");

    let listed = sb.command().args(["mcp", "list"]).output().unwrap();
    let text = stdout(&listed);
    assert!(
        text.contains("every") && text.contains("✓ enabled"),
        "{text}"
    );

    let tested = sb
        .command()
        .args(["mcp", "test", "every"])
        .output()
        .unwrap();
    let text = stdout(&tested);
    assert!(tested.status.success(), "{text}");
    assert!(text.contains("✓ Connected ("), "{text}");
    assert!(text.contains("get-sum") && text.contains(" B "), "{text}");

    // The saved entry is what a session uses.
    sb.mock.push(Reply::tool_call(
        "c1",
        "mcp__every__get_sum",
        r#"{"a": 1, "b": 1}"#,
    ));
    sb.mock.push(Reply::text("2"));
    let out = sb.chat("add", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let result = tool_content(messages_with_role(&sb.requests()[1], "tool")[0]);
    assert_eq!(result["result"], "The sum of 1 and 1 is 2.");

    let removed = sb
        .command()
        .args(["mcp", "remove", "every"])
        .output()
        .unwrap();
    assert!(removed.status.success());
    let config = std::fs::read_to_string(sb.home.path().join("config.yaml")).unwrap();
    assert!(!config.contains("every"), "{config}");
    assert!(config.contains("# keep this comment"));
    let missing = sb
        .command()
        .args(["mcp", "test", "every"])
        .output()
        .unwrap();
    assert!(!missing.status.success());
    assert!(stdout(&missing).contains("Server 'every' not found in config."));
}

#[test]
fn mcp_add_refuses_a_server_that_cannot_start() {
    let sb = Sandbox::start();
    let out = sb
        .command()
        .args(["mcp", "add", "bad", "--command", "/nonexistent/server"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        stdout(&out).contains("command not found"),
        "{}",
        stdout(&out)
    );
    let config = std::fs::read_to_string(sb.home.path().join("config.yaml")).unwrap();
    assert!(!config.contains("mcp_servers"), "{config}");
    let out = sb.command().args(["mcp", "add", "none"]).output().unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("--url <endpoint> or --command <cmd>"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn mcp_add_lets_a_person_select_which_tools_to_enable() {
    let Some(js) = npm_server("server-everything") else {
        return;
    };
    if !support::pty::tmux_available() {
        return;
    }
    let sb = Sandbox::start();
    let pane = support::pty::Pane::start_reporting_exit(
        &sb,
        "mcpselect",
        &format!("mcp add every --command node --args {} stdio", js.display()),
    );
    pane.wait_for("[Y/n/select]");
    pane.send_line("select");
    let listing = pane.wait_for("Tools to enable");
    assert!(listing.contains(". get-sum"), "{listing}");
    pane.send_line("nonexistent-tool");
    pane.wait_for("is not one of");
    pane.send_line("get-sum echo");
    let screen = pane.wait_for("EXIT=");
    assert!(screen.contains("(2/"), "{screen}");
    assert!(screen.contains("EXIT=0"), "{screen}");
    let config = std::fs::read_to_string(sb.home.path().join("config.yaml")).unwrap();
    assert!(config.contains("include"), "{config}");

    // Only those two of the server's tools are offered (the prompt and
    // resource helpers follow tools.prompts / tools.resources).
    sb.mock.push(Reply::text("ok"));
    assert!(sb.chat("hi", &[]).status.success());
    let helpers = [
        "get_prompt",
        "list_prompts",
        "list_resources",
        "read_resource",
    ];
    let mut offered: Vec<String> = tool_names(&sb.requests()[0])
        .into_iter()
        .filter(|n| {
            n.strip_prefix("mcp__every__")
                .is_some_and(|t| !helpers.contains(&t))
        })
        .collect();
    offered.sort();
    assert_eq!(offered, ["mcp__every__echo", "mcp__every__get_sum"]);
}
