//! `hermes acp` driven over stdio: streaming, tool calls, permission
//! requests for dangerous commands and edits, modes, cancel mid-tool,
//! load/list/fork, slash commands — first with a bare JSON-RPC client, then
//! with the official TypeScript, Python and Rust ACP SDKs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use hermes_mock::Reply;
use serde_json::{Value, json};
use support::acp::AcpClient;
use support::*;

fn select(option: &str) -> Value {
    json!({"outcome": {"outcome": "selected", "optionId": option}})
}

#[test]
fn a_prompt_streams_thoughts_text_and_tool_calls_and_is_stored() {
    let sb = Sandbox::start();
    sb.no_retries();
    std::fs::write(sb.work_path("notes.txt"), "alpha\nbeta\n").unwrap();
    sb.mock.push(
        Reply::tool_call("call_1", "read_file", r#"{"path":"notes.txt"}"#)
            .with_reasoning("look first"),
    );
    sb.mock
        .push(Reply::text("The file says alpha and beta.").with_usage(120, 12));
    let mut acp = AcpClient::start(&sb, &[]);
    let init = acp.request(
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {}}),
    );
    assert_eq!(init["agentCapabilities"]["loadSession"], true, "{init}");
    assert_eq!(
        init["agentCapabilities"]["mcpCapabilities"]["http"], true,
        "{init}"
    );
    assert_eq!(
        init["agentCapabilities"]["sessionCapabilities"]["fork"],
        json!({}),
        "{init}"
    );
    assert_eq!(init["agentInfo"]["name"], "hermes-agent");
    let s = acp.request(
        "session/new",
        json!({"cwd": sb.work.path(), "mcpServers": []}),
    );
    let sid = s["sessionId"].as_str().unwrap().to_owned();
    assert_eq!(s["modes"]["currentModeId"], "default", "{s}");
    let ids: Vec<&str> = s["modes"]["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["default", "accept_edits", "dont_ask"]);
    let done = acp.prompt(&sid, "what is in notes.txt?");
    assert_eq!(done["stopReason"], "end_turn", "{done}");
    assert!(
        done["usage"]["inputTokens"].as_u64().unwrap() >= 120,
        "{done}"
    );
    let thought: String = acp
        .updates_of("agent_thought_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(thought, "look first");
    let call = acp.updates_of("tool_call")[0].clone();
    assert_eq!(call["title"], "read: notes.txt");
    assert!(
        call["toolCallId"].as_str().unwrap().starts_with("tc-"),
        "{call}"
    );
    assert_eq!(call["kind"], "read");
    assert!(
        call["locations"][0]["path"]
            .as_str()
            .unwrap()
            .ends_with("notes.txt")
    );
    let finished = acp.updates_of("tool_call_update")[0].clone();
    assert_eq!(finished["toolCallId"], call["toolCallId"]);
    assert_eq!(finished["status"], "completed");
    let text: String = acp
        .updates_of("agent_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "The file says alpha and beta.");
    assert!(!acp.updates_of("available_commands_update").is_empty());
    // A slash command answers without the model.
    let before = sb.mock.chat_requests().len();
    let v = acp.prompt(&sid, "/version");
    assert_eq!(v["stopReason"], "end_turn");
    assert_eq!(sb.mock.chat_requests().len(), before);
    assert!(acp.updates.iter().any(|u| {
        u["content"]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("Hermes Agent v"))
    }));
    assert!(acp.close().success());

    // A new process lists, loads (replaying the history) and forks it.
    let mut acp = AcpClient::start(&sb, &[]);
    acp.request("initialize", json!({"protocolVersion": 1}));
    let list = acp.request("session/list", json!({}));
    assert_eq!(list["sessions"][0]["sessionId"], sid.as_str(), "{list}");
    assert_eq!(list["sessions"][0]["title"], "what is in notes.txt?");
    let loaded = acp.request(
        "session/load",
        json!({"sessionId": sid, "cwd": sb.work.path(), "mcpServers": []}),
    );
    assert_eq!(loaded["modes"]["currentModeId"], "default", "{loaded}");
    assert_eq!(
        acp.updates_of("user_message_chunk")[0]["content"]["text"],
        "what is in notes.txt?"
    );
    assert_eq!(acp.updates_of("tool_call").len(), 1);
    sb.mock.push(Reply::text("still alpha"));
    let again = acp.prompt(&sid, "and now?");
    assert_eq!(again["stopReason"], "end_turn");
    let last = sb.requests().pop().unwrap();
    let users = messages_with_role(&last, "user");
    assert_eq!(users.len(), 2, "the loaded session keeps its history");
    let fork = acp.request(
        "session/fork",
        json!({"sessionId": sid, "cwd": sb.work.path(), "mcpServers": []}),
    );
    let forked = fork["sessionId"].as_str().unwrap().to_owned();
    assert_ne!(forked, sid);
    sb.mock.push(Reply::text("forked answer"));
    assert_eq!(acp.prompt(&forked, "in the fork")["stopReason"], "end_turn");
    let last = sb.requests().pop().unwrap();
    assert_eq!(messages_with_role(&last, "user").len(), 3, "{last}");
    assert!(acp.close().success());
    let listed = sb
        .command()
        .args(["sessions", "list", "--source", "acp"])
        .output()
        .unwrap();
    assert!(stdout(&listed).contains(&sid), "{}", stdout(&listed));
}

#[test]
fn a_dangerous_command_asks_the_client_and_obeys_the_answer() {
    let sb = Sandbox::start();
    sb.no_retries();
    let doomed = sb.work_path("build");
    std::fs::create_dir(&doomed).unwrap();
    let args = json!({"command": format!("rm -rf {}", doomed.display())}).to_string();
    sb.mock.push(Reply::tool_call("call_1", "terminal", &args));
    sb.mock.push(Reply::text("I was not allowed."));
    let mut acp = AcpClient::start(&sb, &[]);
    let sid = acp.open(sb.work.path());
    let done = acp.prompt_answering(&sid, "clean the build", "deny");
    assert_eq!(done["stopReason"], "end_turn");
    assert!(doomed.exists(), "denied: nothing deleted");
    let ask = &acp.permission_requests[0];
    assert_eq!(ask["sessionId"], sid.as_str());
    assert_eq!(ask["toolCall"]["kind"], "execute");
    let options: Vec<&str> = ask["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["optionId"].as_str().unwrap())
        .collect();
    assert_eq!(
        options,
        [
            "allow_once",
            "allow_session",
            "allow_always",
            "deny",
            "deny_always"
        ]
    );
    let failed = acp.updates_of("tool_call_update")[0].clone();
    assert_eq!(failed["status"], "failed", "{failed}");

    sb.mock.push(Reply::tool_call("call_2", "terminal", &args));
    sb.mock.push(Reply::text("Cleaned."));
    let done = acp.prompt_answering(&sid, "do it now", "allow_once");
    assert_eq!(done["stopReason"], "end_turn");
    assert!(!doomed.exists(), "approved: the command ran");
    assert!(acp.close().success());
}

#[test]
fn edits_ask_with_a_diff_in_default_mode_and_not_in_dont_ask() {
    let sb = Sandbox::start();
    sb.no_retries();
    let target = sb.work_path("app.txt");
    std::fs::write(&target, "version = 1\n").unwrap();
    let patch =
        json!({"path": "app.txt", "old_string": "version = 1", "new_string": "version = 2"})
            .to_string();
    sb.mock.push(Reply::tool_call("call_1", "patch", &patch));
    sb.mock.push(Reply::text("Edit refused."));
    let mut acp = AcpClient::start(&sb, &[]);
    let sid = acp.open(sb.work.path());
    let done = acp.prompt_answering(&sid, "bump the version", "deny");
    assert_eq!(done["stopReason"], "end_turn");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "version = 1\n");
    let ask = acp.permission_requests[0].clone();
    assert_eq!(ask["toolCall"]["kind"], "edit");
    let diff = &ask["toolCall"]["content"][0];
    assert_eq!(diff["type"], "diff");
    assert_eq!(diff["oldText"], "version = 1\n");
    assert_eq!(diff["newText"], "version = 2\n");
    assert!(diff["path"].as_str().unwrap().ends_with("app.txt"));
    let reqs = sb.requests();
    let tool = messages_with_role(&reqs[1], "tool")[0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(tool.contains(hermes_acp::EDIT_DENIED), "{tool}");

    // Don't Ask: the same edit goes ahead without a request.
    let r = acp.request(
        "session/set_mode",
        json!({"sessionId": sid, "modeId": "dont_ask"}),
    );
    assert!(r.get("error").is_none(), "{r}");
    sb.mock.push(Reply::tool_call("call_2", "patch", &patch));
    sb.mock.push(Reply::text("Bumped."));
    let asked = acp.permission_requests.len();
    let done = acp.prompt(&sid, "bump it anyway");
    assert_eq!(done["stopReason"], "end_turn");
    assert_eq!(acp.permission_requests.len(), asked);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "version = 2\n");
    let started = acp
        .updates_of("tool_call")
        .last()
        .unwrap()
        .to_owned()
        .clone();
    assert_eq!(started["content"][0]["type"], "diff", "{started}");
    assert!(acp.close().success());
}

#[test]
fn cancel_mid_tool_stops_the_command_and_ends_the_turn_cancelled() {
    let sb = Sandbox::start();
    sb.no_retries();
    let marker = sb.work_path("finished");
    let args = json!({"command": format!("sleep 30 && touch {}", marker.display())}).to_string();
    sb.mock.push(Reply::tool_call("call_1", "terminal", &args));
    sb.mock.push(Reply::text("never used"));
    let mut acp = AcpClient::start(&sb, &[]);
    let sid = acp.open(sb.work.path());
    let started = Instant::now();
    let sid2 = sid.clone();
    let done = acp.request_with(
        "session/prompt",
        json!({"sessionId": sid, "prompt": [{"type": "text", "text": "wait a while"}]}),
        &mut |_| select("allow_once"),
        &mut |client, update| {
            if update["sessionUpdate"] == "tool_call" {
                std::thread::sleep(Duration::from_millis(300));
                client.notify("session/cancel", json!({"sessionId": sid2}));
            }
        },
    );
    assert_eq!(done["stopReason"], "cancelled", "{done}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the sleep was cut short"
    );
    std::thread::sleep(Duration::from_millis(300));
    assert!(!marker.exists());
    // The session goes on after a cancel.
    sb.mock.push(Reply::text("back"));
    assert_eq!(acp.prompt(&sid, "hello again")["stopReason"], "end_turn");
    assert!(acp.close().success());
}

/// The agent command line for SDK drivers.
fn agent_cmd() -> String {
    env!("CARGO_BIN_EXE_hermes").to_owned()
}

fn fixture_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/acp")
        .join(name)
}

/// Runs an SDK driver against the sandbox: it writes hello.txt, answers
/// permissions with `permission` and, with `cancel`, cancels mid-tool.
fn driven(
    mut cmd: std::process::Command,
    sb: &Sandbox,
    permission: &str,
    cancel: bool,
) -> std::process::Output {
    cmd.env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", sb.home.path())
        .env("HERMES_HOME", sb.home.path())
        .env("ACP_CWD", sb.work.path())
        .env("ACP_PROMPT", "write hello.txt")
        .env("ACP_PERMISSION", permission)
        .env("ACP_CANCEL_ON_TOOL", if cancel { "1" } else { "0" })
        .current_dir(sb.work.path())
        .output()
        .unwrap()
}

/// JSON lines a driver printed.
fn events(out: &std::process::Output) -> Vec<Value> {
    stdout(out)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn scripted_edit(sb: &Sandbox) {
    let write = json!({"path": "hello.txt", "content": "hi from hermes\n"}).to_string();
    sb.mock
        .push(Reply::tool_call("call_1", "write_file", &write).with_reasoning("write it"));
    sb.mock.push(Reply::text("Wrote hello.txt."));
}

/// The official TypeScript SDK: a permission answered by the client, then a
/// cancel mid-tool.
#[test]
fn typescript_sdk_client_drives_a_turn_with_permission_and_cancel() {
    let Some(sdk) = std::env::var_os("HERMES_ACP_NPM").map(PathBuf::from) else {
        eprintln!(
            "skipped: HERMES_ACP_NPM (node_modules with @agentclientprotocol/sdk@0.12.0) is not set; .ci/run sets it"
        );
        return;
    };
    let entry = sdk.join("@agentclientprotocol/sdk/dist/acp.js");
    let sb = Sandbox::start();
    sb.no_retries();
    scripted_edit(&sb);
    let run = |permission: &str, cancel: bool| {
        let mut cmd = std::process::Command::new("node");
        cmd.arg(fixture_path("drive.mjs"))
            .arg(agent_cmd())
            .arg("acp")
            .env("ACP_SDK", &entry);
        driven(cmd, &sb, permission, cancel)
    };
    let out = run("allow_once", false);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let ev = events(&out);
    let perm = ev
        .iter()
        .find(|e| e["event"] == "request_permission")
        .unwrap();
    assert_eq!(perm["options"], json!(["allow_once", "deny"]));
    assert_eq!(ev.last().unwrap()["stopReason"], "end_turn");
    assert!(
        ev.iter()
            .any(|e| e["update"]["sessionUpdate"] == "agent_thought_chunk")
    );
    assert_eq!(
        std::fs::read_to_string(sb.work_path("hello.txt")).unwrap(),
        "hi from hermes\n"
    );
    let wrote = ev
        .iter()
        .find(|e| e["event"] == "fs/write_text_file")
        .unwrap();
    assert!(
        wrote["path"].as_str().unwrap().ends_with("hello.txt"),
        "the editor wrote it: {wrote}"
    );

    let args = json!({"command": "sleep 30"}).to_string();
    sb.mock.push(Reply::tool_call("call_9", "terminal", &args));
    sb.mock.push(Reply::text("never"));
    let t0 = Instant::now();
    let out = run("allow_once", true);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(
        events(&out).last().unwrap()["stopReason"],
        "cancelled",
        "{}",
        stdout(&out)
    );
    assert!(t0.elapsed() < Duration::from_secs(20));
}

/// The official Python SDK (pydantic-validated): the same two turns.
#[test]
fn python_sdk_client_drives_a_turn_with_permission_and_cancel() {
    let Some(python) = std::env::var_os("HERMES_ACP_PYTHON").map(PathBuf::from) else {
        eprintln!(
            "skipped: HERMES_ACP_PYTHON (a python with agent-client-protocol==0.12.1) is not set; .ci/run sets it"
        );
        return;
    };
    let sb = Sandbox::start();
    sb.no_retries();
    scripted_edit(&sb);
    let run = |permission: &str, cancel: bool| {
        // The SDK starts the agent with a minimal environment of its own, so
        // the home travels on the command line.
        let mut cmd = std::process::Command::new(&python);
        cmd.arg(fixture_path("drive.py"))
            .arg("env")
            .arg(format!("HERMES_HOME={}", sb.home.path().display()))
            .arg(agent_cmd())
            .arg("acp")
            .env_clear();
        driven(cmd, &sb, permission, cancel)
    };
    let out = run("deny", false);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let ev = events(&out);
    assert!(ev.iter().any(|e| e["event"] == "request_permission"));
    assert_eq!(ev.last().unwrap()["stopReason"], "end_turn");
    assert!(!sb.work_path("hello.txt").exists(), "denied by the client");
    assert!(
        !stderr(&out).contains("ValidationError"),
        "{}",
        stderr(&out)
    );

    let args = json!({"command": "sleep 30"}).to_string();
    sb.mock.push(Reply::tool_call("call_9", "terminal", &args));
    sb.mock.push(Reply::text("never"));
    let out = run("allow_once", true);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(
        events(&out).last().unwrap()["stopReason"],
        "cancelled",
        "{}",
        stdout(&out)
    );
}

/// The official Rust SDK's example client (the crate Zed uses): it approves
/// the edit itself and prints typed updates.
#[test]
fn rust_sdk_client_drives_a_turn() {
    let Some(client) = std::env::var_os("HERMES_ACP_RUST_CLIENT").map(PathBuf::from) else {
        eprintln!(
            "skipped: HERMES_ACP_RUST_CLIENT (the SDK's yolo_one_shot_client) is not set; .ci/run sets it"
        );
        return;
    };
    let sb = Sandbox::start();
    sb.no_retries();
    scripted_edit(&sb);
    let out = std::process::Command::new(client)
        .arg("--command")
        .arg(format!("{} acp", agent_cmd()))
        .arg("write hello.txt")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", sb.home.path())
        .env("HERMES_HOME", sb.home.path())
        .current_dir(sb.work.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("ToolCall("), "{text}");
    assert!(text.contains("AgentMessageChunk"), "{text}");
    assert!(
        stderr(&out).contains("Auto-approving permission request"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("EndTurn"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(sb.work_path("hello.txt")).unwrap(),
        "hi from hermes\n"
    );
}

/// An MCP server the editor brings in `session/new` serves that session's tools.
#[test]
fn mcp_servers_from_the_client_join_the_session() {
    let Some(python) = std::env::var_os("HERMES_MCP_PYTHON").map(PathBuf::from) else {
        eprintln!(
            "skipped: HERMES_MCP_PYTHON (a python with the mcp SDK) is not set; .ci/run sets it"
        );
        return;
    };
    let sb = Sandbox::start();
    sb.no_retries();
    // A cold Python (a fresh venv compiling the SDK's bytecode) may take longer
    // than the default 1.5 s to connect; this test is about joining, not speed.
    sb.add_config("mcp_discovery_timeout: 30\n");
    sb.mock.push(Reply::tool_call(
        "call_1",
        "mcp__tiny__add",
        r#"{"a":20,"b":22}"#,
    ));
    sb.mock.push(Reply::text("It is 42."));
    let mut acp = AcpClient::start(&sb, &[]);
    acp.request("initialize", json!({"protocolVersion": 1}));
    let server = json!({
        "name": "tiny",
        "command": python,
        "args": [PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp_server.py"), "stdio"],
        "env": [],
    });
    let s = acp.request(
        "session/new",
        json!({"cwd": sb.work.path(), "mcpServers": [server]}),
    );
    let sid = s["sessionId"].as_str().unwrap().to_owned();
    let done = acp.prompt(&sid, "add 20 and 22");
    assert_eq!(done["stopReason"], "end_turn", "{done}");
    let reqs = sb.requests();
    assert!(
        tool_names(&reqs[0]).iter().any(|n| n == "mcp__tiny__add"),
        "{:?}",
        tool_names(&reqs[0])
    );
    let result = acp.updates_of("tool_call_update")[0].clone();
    assert_eq!(result["status"], "completed", "{result}");
    assert!(result.to_string().contains("42"), "{result}");
    assert!(acp.close().success());
}

/// With the client's fs capabilities, read_file sees the editor's copy of a file.
#[test]
fn read_file_goes_through_the_editor_when_it_offers_fs() {
    let sb = Sandbox::start();
    sb.no_retries();
    std::fs::write(sb.work_path("draft.md"), "on disk\n").unwrap();
    sb.mock.push(Reply::tool_call(
        "call_1",
        "read_file",
        r#"{"path":"draft.md"}"#,
    ));
    sb.mock.push(Reply::text("read it"));
    let mut acp = AcpClient::start(&sb, &[]);
    let sid = acp.open(sb.work.path());
    let asked = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let log = asked.clone();
    acp.serve_fs(move |method, params| {
        log.borrow_mut().push((method.to_owned(), params.clone()));
        json!({"content": "unsaved buffer text\n"})
    });
    let done = acp.prompt(&sid, "read the draft");
    assert_eq!(done["stopReason"], "end_turn", "{done}");
    let asked = asked.borrow();
    assert_eq!(asked[0].0, "fs/read_text_file");
    assert!(asked[0].1["path"].as_str().unwrap().ends_with("draft.md"));
    let reqs = sb.requests();
    let tool = messages_with_role(&reqs[1], "tool")[0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        tool.contains("unsaved buffer text") && !tool.contains("on disk"),
        "{tool}"
    );
    assert!(acp.close().success());
}

/// Slash commands answer without the model: help, switching models, context.
#[test]
fn slash_commands_answer_in_the_session() {
    let sb = Sandbox::start();
    sb.no_retries();
    let mut acp = AcpClient::start(&sb, &[]);
    let sid = acp.open(sb.work.path());
    let says = |acp: &AcpClient| -> String {
        acp.updates_of("agent_message_chunk")
            .last()
            .map(|u| u["content"]["text"].as_str().unwrap().to_owned())
            .unwrap_or_default()
    };
    acp.prompt(&sid, "/help");
    assert!(
        says(&acp).starts_with("Available commands:"),
        "{}",
        says(&acp)
    );
    acp.prompt(&sid, "/model other-model");
    assert!(
        says(&acp).starts_with("Model switched to: other-model"),
        "{}",
        says(&acp)
    );
    acp.prompt(&sid, "/context");
    assert!(says(&acp).contains("Context usage: ~"), "{}", says(&acp));
    assert!(
        sb.mock.chat_requests().is_empty(),
        "no model call for commands"
    );
    sb.mock.push(Reply::text("hi"));
    acp.prompt(&sid, "/unknowncommand please");
    let reqs = sb.requests();
    assert_eq!(reqs.len(), 1, "unknown commands go to the model");
    assert_eq!(reqs[0]["model"], "other-model");
    assert!(acp.close().success());
}

/// Approval hooks observe a permission put to the editor and its answer.
#[test]
fn approval_hooks_see_the_question_and_the_answer() {
    let sb = Sandbox::start();
    sb.no_retries();
    let log = sb.log_hooks(
        &["pre_approval_request", "post_approval_response"],
        "approvals.log",
    );
    let doomed = sb.work_path("build");
    std::fs::create_dir(&doomed).unwrap();
    let args = json!({"command": format!("rm -rf {}", doomed.display())}).to_string();
    sb.mock.push(Reply::tool_call("call_1", "terminal", &args));
    sb.mock.push(Reply::text("Not allowed."));
    let mut acp = AcpClient::start(&sb, &[]);
    let sid = acp.open(sb.work.path());
    acp.prompt_answering(&sid, "clean", "deny");
    assert!(acp.close().success());
    let seen = hook_payloads(&log);
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[0]["hook_event_name"], "pre_approval_request");
    assert!(
        seen[0]["extra"]["command"]
            .as_str()
            .unwrap()
            .starts_with("rm -rf")
    );
    assert_eq!(seen[1]["hook_event_name"], "post_approval_response");
    assert_eq!(seen[1]["extra"]["choice"], "deny");
    assert_eq!(seen[1]["session_id"], sid.as_str());
}

/// `/compact` compresses the session; `pre_compress` and `post_compress` hooks observe it.
#[test]
fn compact_compresses_and_compression_hooks_observe_it() {
    let sb = Sandbox::start();
    sb.no_retries();
    sb.add_config("compression:\n  protect_first_n: 1\n");
    let log = sb.log_hooks(&["pre_compress", "post_compress"], "compress.log");
    let mut acp = AcpClient::start(&sb, &[]);
    let sid = acp.open(sb.work.path());
    for n in 1..=6 {
        sb.mock.push(Reply::text(format!("answer {n}")));
        acp.prompt(&sid, &format!("question {n}"));
    }
    sb.mock
        .push(Reply::text("## Summary\nThree questions were answered."));
    acp.prompt(&sid, "/compact");
    let said = acp.updates_of("agent_message_chunk").last().unwrap()["content"]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(said.starts_with("Context compressed:"), "{said}");
    assert!(acp.close().success());
    // The editor's session logs its turns under its id, as the terminal's do.
    let agent_log =
        std::fs::read_to_string(sb.home.path().join("logs/agent.log")).unwrap_or_default();
    assert!(
        agent_log.contains(&format!("[{sid}] agent: turn ended")),
        "{agent_log}"
    );
    let seen = hook_payloads(&log);
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[0]["hook_event_name"], "pre_compress");
    assert_eq!(seen[0]["extra"]["trigger"], "manual");
    assert_eq!(seen[1]["hook_event_name"], "post_compress");
    assert_eq!(seen[1]["extra"]["old_session_id"], sid.as_str());
    assert!(
        seen[1]["extra"]["message_count_after"].as_u64()
            < seen[1]["extra"]["message_count_before"].as_u64()
    );
}
