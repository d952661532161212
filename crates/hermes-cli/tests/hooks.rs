//! Shell hooks and plugins through the real binary: a `pre_tool_call` hook
//! that blocks a command, a `transform_tool_result` hook that rewrites what
//! the model reads, `pre_llm_call` context, consent, `hermes hooks` and an
//! executable plugin enabled with `hermes plugins enable`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use hermes_mock::Reply;
use serde_json::{Value, json};
use support::*;

/// Writes an executable script.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// Scripts one terminal call, then a closing answer.
fn propose(sb: &Sandbox, command: &str) {
    let args = json!({ "command": command }).to_string();
    sb.mock.push(Reply::tool_call("call_1", "terminal", &args));
    sb.mock.push(Reply::text("done"));
}

/// The tool result the model read in the second request.
fn tool_result_text(sb: &Sandbox) -> String {
    let reqs = sb.requests();
    assert_eq!(reqs.len(), 2, "expected one tool round trip");
    let tools = messages_with_role(&reqs[1], "tool");
    tools[0]["content"].as_str().unwrap().to_owned()
}

/// A hook that records its stdin and blocks any command mentioning `rm`.
const GUARD: &str = r#"#!/usr/bin/env python3
import json, sys
payload = json.load(sys.stdin)
with open(sys.argv[1], "a") as f:
    f.write(json.dumps(payload) + "\n")
if "rm " in (payload.get("tool_input") or {}).get("command", ""):
    print(json.dumps({"decision": "block", "reason": "policy: no rm in this repo"}))
"#;

#[test]
fn pre_tool_call_hook_blocks_a_command_and_sees_the_payload() {
    let sb = Sandbox::start();
    sb.no_retries();
    let guard = script(sb.home.path(), "guard.py", GUARD);
    let log = sb.work_path("guard.log");
    sb.add_config(&format!(
        "hooks:\n  pre_tool_call:\n    - command: \"{} {}\"\n      matcher: \"terminal|write_file\"\n      timeout: 10\n",
        guard.display(),
        log.display()
    ));
    let victim = sb.work_path("keep.txt");
    std::fs::write(&victim, "precious").unwrap();
    propose(&sb, "rm keep.txt");
    let out = sb.chat("tidy up", &["--accept-hooks", "--yolo"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(victim.exists(), "the blocked command must not run");
    let result = tool_result_text(&sb);
    assert!(result.contains("policy: no rm in this repo"), "{result}");
    let payload: Value = serde_json::from_str(
        std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(payload["hook_event_name"], "pre_tool_call");
    assert_eq!(payload["tool_name"], "terminal");
    assert_eq!(payload["tool_input"]["command"], "rm keep.txt");
    assert_eq!(payload["extra"]["tool_call_id"], "call_1");
    assert_eq!(payload["session_id"], session_id_of(&out));
    // Consent was recorded, so the next run needs no flag.
    let allow: Value = serde_json::from_str(
        &std::fs::read_to_string(sb.home.path().join("shell-hooks-allowlist.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(allow["approvals"][0]["event"], "pre_tool_call");
    propose(&sb, "echo fine");
    let out = sb.chat("say fine", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let reqs = sb.requests();
    let tools = messages_with_role(&reqs[3], "tool");
    assert!(tools[0]["content"].as_str().unwrap().contains("fine"));
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 2);
}

/// A sandbox whose config has the [`GUARD`] hook on `pre_tool_call`, not yet
/// approved: the sandbox, the script, and the log it writes.
fn sandbox_with_guard() -> (Sandbox, PathBuf, PathBuf) {
    let sb = Sandbox::start();
    sb.no_retries();
    let guard = script(sb.home.path(), "guard.py", GUARD);
    let log = sb.work_path("guard.log");
    sb.add_config(&format!(
        "hooks:\n  pre_tool_call:\n    - command: \"{} {}\"\n",
        guard.display(),
        log.display()
    ));
    (sb, guard, log)
}

#[test]
fn hook_is_skipped_until_someone_approves_it() {
    let (sb, _guard, log) = sandbox_with_guard();
    propose(&sb, "echo 'rm nothing'");
    let out = sb.chat("go", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("not allowlisted"), "{}", stderr(&out));
    assert!(!log.exists(), "an unapproved hook must not run");
    let list = sb.run(&["hooks", "list"]);
    assert!(
        stdout(&list).contains("✗ not allowlisted"),
        "{}",
        stdout(&list)
    );
    // HERMES_ACCEPT_HOOKS approves it as the flag does.
    propose(&sb, "echo ok");
    let out = sb
        .command()
        .env("HERMES_ACCEPT_HOOKS", "1")
        .args(["chat", "-q", "go", "-Q"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(log.exists());
    let list = sb.run(&["hooks", "list"]);
    assert!(stdout(&list).contains("✓ allowed"), "{}", stdout(&list));
}

#[test]
fn an_approved_hook_whose_script_was_rewritten_is_asked_about_again() {
    let (sb, guard, log) = sandbox_with_guard();
    propose(&sb, "echo ok");
    let out = sb.chat("go", &["--accept-hooks"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(log.exists(), "the approved hook ran");
    std::fs::remove_file(&log).unwrap();
    // Someone (the model, with a terminal command) rewrites the approved script.
    let planted = sb.work_path("planted");
    std::fs::write(
        &guard,
        format!("#!/bin/sh\ntouch '{}'\n", planted.display()),
    )
    .unwrap();
    propose(&sb, "echo again");
    let out = sb.chat("go", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("changed since it was approved"),
        "{}",
        stderr(&out)
    );
    assert!(
        !planted.exists(),
        "the rewritten hook ran without a new approval"
    );
}

#[test]
fn transform_tool_result_hook_rewrites_what_the_model_reads() {
    let sb = Sandbox::start();
    sb.no_retries();
    let hook = script(
        sb.home.path(),
        "redact.py",
        r#"#!/usr/bin/env python3
import json, sys
p = json.load(sys.stdin)
result = p["extra"]["result"]
print(json.dumps({"result": result.replace("s3cr3t-token", "[REDACTED BY HOOK]")}))
"#,
    );
    sb.add_config(&format!(
        "hooks:\n  transform_tool_result:\n    - command: {}\n",
        hook.display()
    ));
    propose(&sb, "echo the value is s3cr3t-token");
    let out = sb.chat("show it", &["--accept-hooks", "--yolo"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let result = tool_result_text(&sb);
    assert!(result.contains("[REDACTED BY HOOK]"), "{result}");
    assert!(!result.contains("s3cr3t-token"), "{result}");
    // The transcript keeps what the model read.
    let export = sb.run(&[
        "sessions",
        "export",
        "-",
        "--session-id",
        &session_id_of(&out),
    ]);
    let session: Value = serde_json::from_str(stdout(&export).trim()).unwrap();
    let stored = session["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        stored.contains("[REDACTED BY HOOK]") && !stored.contains("s3cr3t-token"),
        "{stored}"
    );
}

#[test]
fn pre_llm_call_context_rides_on_the_user_message_only_for_the_model() {
    let sb = Sandbox::start();
    sb.no_retries();
    let hook = script(
        sb.home.path(),
        "ctx.sh",
        "#!/bin/sh\ncat >/dev/null\necho '{\"context\": \"Team note: deploys freeze on Fridays.\"}'\n",
    );
    sb.add_config(&format!(
        "hooks_auto_accept: true\nhooks:\n  pre_llm_call:\n    - command: {}\n",
        hook.display()
    ));
    sb.mock.push(Reply::text("noted"));
    let out = sb.chat("can I deploy?", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let reqs = sb.requests();
    let users = messages_with_role(&reqs[0], "user");
    let sent = users.last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(sent.starts_with("can I deploy?"), "{sent}");
    assert!(sent.contains("deploys freeze on Fridays"), "{sent}");
    let export = sb.run(&[
        "sessions",
        "export",
        "-",
        "--session-id",
        &session_id_of(&out),
    ]);
    assert!(
        !stdout(&export).contains("deploys freeze"),
        "stored copy stays clean"
    );
}

#[test]
fn hooks_test_fires_a_hook_on_a_sample_payload() {
    let sb = Sandbox::start();
    let guard = script(sb.home.path(), "guard.py", GUARD);
    let log = sb.work_path("guard.log");
    sb.add_config(&format!(
        "hooks:\n  pre_tool_call:\n    - command: \"{} {}\"\n  pre_tool_calls:\n    - command: x\n",
        guard.display(),
        log.display()
    ));
    let payload = sb.work_path("payload.json");
    std::fs::write(&payload, r#"{"args": {"command": "rm -rf /tmp/x"}}"#).unwrap();
    let out = sb
        .command()
        .args(["hooks", "test", "pre_tool_call", "--payload-file"])
        .arg(&payload)
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        text.contains("Firing 1 hook(s) for event 'pre_tool_call'"),
        "{text}"
    );
    assert!(
        text.contains(r#"parsed (Hermes wire shape): {"action":"block","message":"policy: no rm in this repo"}"#),
        "{text}"
    );
    assert!(
        stderr(&out).contains("did you mean \"pre_tool_call\""),
        "{}",
        stderr(&out)
    );
    let bad = sb.run(&["hooks", "test", "nope"]);
    assert!(!bad.status.success());
    assert!(stdout(&bad).contains("Valid events:"), "{}", stdout(&bad));
}

/// Installs plugin `name`: its executable `run.py` and its `plugin.yaml`.
fn install_plugin(sb: &Sandbox, name: &str, program: &str, manifest: &str) {
    let dir = sb.home.path().join("plugins").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    script(&dir, "run.py", program);
    std::fs::write(dir.join("plugin.yaml"), manifest).unwrap();
}

/// A plugin speaking JSON-RPC on stdio that upper-cases tool results.
const PLUGIN: &str = r#"#!/usr/bin/env python3
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg["method"] == "initialize":
        result = {"name": "shouty"}
    elif msg["method"] == "hook":
        p = msg["params"]["payload"]
        result = "PLUGIN SAYS: " + p["extra"]["result"].upper()
    else:
        result = None
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"#;

#[test]
fn an_enabled_executable_plugin_rewrites_tool_results() {
    let sb = Sandbox::start();
    sb.no_retries();
    install_plugin(
        &sb,
        "shouty",
        PLUGIN,
        "name: shouty\nversion: 1.0.0\ndescription: Upper-cases tool results\nexecutable: ./run.py\nprovides_hooks: [transform_tool_result]\n",
    );
    let py = sb.home.path().join("plugins").join("legacy");
    std::fs::create_dir_all(&py).unwrap();
    std::fs::write(py.join("plugin.yaml"), "name: legacy\nversion: '0.1'\n").unwrap();
    std::fs::write(py.join("__init__.py"), "def register(ctx):\n    pass\n").unwrap();

    let list = sb.run(&["plugins", "list", "--plain"]);
    assert_eq!(
        stdout(&list),
        "not enabled  python   0.1      legacy\nnot enabled  exec     1.0.0    shouty\n"
    );
    // Not enabled: it does not run.
    propose(&sb, "echo quiet");
    let out = sb.chat("go", &["--yolo"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!tool_result_text(&sb).contains("PLUGIN SAYS"));

    let on = sb.run(&["plugins", "enable", "shouty"]);
    assert_eq!(
        stdout(&on),
        "✓ Plugin shouty enabled. Takes effect on next session.\n"
    );
    let again = sb.run(&["plugins", "enable", "shouty"]);
    assert_eq!(stdout(&again), "Plugin 'shouty' is already enabled.\n");
    let missing = sb.run(&["plugins", "enable", "nope"]);
    assert!(!missing.status.success());
    assert!(
        stderr(&missing).contains("not installed"),
        "{}",
        stderr(&missing)
    );

    let sb2_requests_before = sb.mock.chat_requests().len();
    propose(&sb, "echo quiet");
    let out = sb.chat("go", &["--yolo"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let reqs = sb.mock.chat_requests();
    let tools = messages_with_role(&reqs[sb2_requests_before + 1], "tool");
    let last = tools.last().unwrap()["content"].as_str().unwrap();
    assert!(last.starts_with("PLUGIN SAYS: "), "{last}");
    assert!(last.contains("QUIET"), "{last}");

    let off = sb.run(&["plugins", "disable", "shouty"]);
    assert_eq!(
        stdout(&off),
        "⊘ Plugin shouty disabled. Takes effect on next session.\n"
    );
    let list = sb.run(&["plugins", "list", "--plain"]);
    assert!(
        stdout(&list).contains("disabled     exec     1.0.0    shouty"),
        "{}",
        stdout(&list)
    );
}

#[test]
fn observers_see_the_lifecycle_in_order_and_terminal_output_can_be_rewritten() {
    let sb = Sandbox::start();
    sb.no_retries();
    let log = sb.work_path("events.log");
    let logger = script(
        sb.home.path(),
        "log.py",
        &format!(
            r#"#!/usr/bin/env python3
import json, sys
p = json.load(sys.stdin)
with open({log:?}, "a") as f:
    f.write(p["hook_event_name"] + " " + (p["tool_name"] or "-") + "\n")
if p["hook_event_name"] == "transform_terminal_output":
    print(json.dumps({{"result": "rewritten: " + p["extra"]["output"].strip()}}))
"#,
            log = log.display().to_string()
        ),
    );
    let events = [
        "on_session_start",
        "pre_llm_call",
        "pre_api_request",
        "post_api_request",
        "pre_tool_call",
        "transform_terminal_output",
        "post_tool_call",
        "post_llm_call",
        "on_session_end",
        "on_session_finalize",
    ];
    let mut yaml = String::from("hooks_auto_accept: true\nhooks:\n");
    for e in events {
        yaml.push_str(&format!("  {e}:\n    - command: {}\n", logger.display()));
    }
    sb.add_config(&yaml);
    propose(&sb, "echo original");
    let out = sb.chat("go", &["--yolo"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let seen: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(
        seen,
        [
            "on_session_start -",
            "pre_llm_call -",
            "pre_api_request -",
            "post_api_request -",
            "pre_tool_call terminal",
            "transform_terminal_output -",
            "post_tool_call terminal",
            "pre_api_request -",
            "post_api_request -",
            "post_llm_call -",
            "on_session_end -",
            "on_session_finalize -",
        ]
    );
    let result = tool_result_text(&sb);
    assert!(result.contains("rewritten: original"), "{result}");
}

/// A plugin offering a tool: listed in its `initialize` reply, run with `tools/call`.
const TOOL_PLUGIN: &str = r#"#!/usr/bin/env python3
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg["method"] == "initialize":
        result = {"tools": [{
            "name": "shout_text",
            "description": "Upper-cases text",
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        }]}
    elif msg["method"] == "tools/call":
        p = msg["params"]
        result = {"shouted": p["arguments"]["text"].upper(), "cwd": p["cwd"], "session": p["session_id"]}
    else:
        result = None
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"#;

#[test]
fn an_enabled_plugin_offers_its_tools_to_the_model() {
    let sb = Sandbox::start();
    sb.no_retries();
    install_plugin(
        &sb,
        "loud",
        TOOL_PLUGIN,
        "name: loud\nversion: '1'\nexecutable: ./run.py\nprovides_tools: [shout_text]\n",
    );
    sb.add_config("plugins:\n  enabled: [loud]\n");
    sb.mock.push(Reply::tool_call(
        "call_1",
        "shout_text",
        r#"{"text":"quiet please"}"#,
    ));
    sb.mock.push(Reply::text("done"));
    let out = sb.chat("shout", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let reqs = sb.requests();
    assert!(tool_names(&reqs[0]).iter().any(|n| n == "shout_text"));
    let result: Value = serde_json::from_str(&tool_result_text(&sb)).unwrap();
    assert_eq!(result["shouted"], "QUIET PLEASE");
    assert_eq!(result["session"], session_id_of(&out).as_str());
    assert_eq!(
        std::path::Path::new(result["cwd"].as_str().unwrap()),
        sb.work.path()
    );
}

#[test]
fn subagent_hooks_see_the_child_start_and_stop() {
    let sb = Sandbox::start();
    sb.no_retries();
    let log = sb.log_hooks(&["subagent_start", "subagent_stop"], "sub.log");
    sb.mock.push(Reply::tool_call(
        "call_1",
        "delegate_task",
        r#"{"goal":"count the files"}"#,
    ));
    sb.mock.push(Reply::text("There are 3 files."));
    sb.mock.push(Reply::text("The child says 3."));
    let out = sb.chat("delegate it", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let seen = hook_payloads(&log);
    assert_eq!(seen.len(), 2, "{seen:?}");
    let parent = session_id_of(&out);
    assert_eq!(seen[0]["hook_event_name"], "subagent_start");
    assert_eq!(seen[0]["session_id"], parent.as_str());
    assert_eq!(seen[0]["extra"]["child_goal"], "count the files");
    assert_eq!(seen[1]["hook_event_name"], "subagent_stop");
    assert_eq!(seen[1]["extra"]["child_status"], "completed");
    assert_eq!(seen[1]["extra"]["child_summary"], "There are 3 files.");
    assert_eq!(
        seen[0]["extra"]["child_session_id"],
        seen[1]["extra"]["child_session_id"]
    );
}

#[test]
fn a_pre_verify_hook_sends_a_finished_edit_back_for_checking() {
    let sb = Sandbox::start();
    sb.no_retries();
    let hook = script(
        sb.home.path(),
        "verify.py",
        r#"#!/usr/bin/env python3
import json, sys
p = json.load(sys.stdin)
if p["extra"]["attempt"] == 0:
    paths = ", ".join(p["extra"]["changed_paths"])
    print(json.dumps({"decision": "block", "reason": "Run the tests for " + paths + " before you finish."}))
"#,
    );
    sb.add_config(&format!(
        "hooks_auto_accept: true\nhooks:\n  pre_verify:\n    - command: {}\n",
        hook.display()
    ));
    let write = json!({"path": "app.py", "content": "print('hi')\n"}).to_string();
    sb.mock
        .push(Reply::tool_call("call_1", "write_file", &write));
    sb.mock.push(Reply::text("Wrote app.py."));
    sb.mock.push(Reply::text("Tests pass; app.py is done."));
    let out = sb.chat("write app.py", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Tests pass; app.py is done.\n");
    let reqs = sb.requests();
    assert_eq!(reqs.len(), 3);
    let users = messages_with_role(&reqs[2], "user");
    assert_eq!(
        users.last().unwrap()["content"],
        "Run the tests for app.py before you finish."
    );
    // Without a file change the hook is not asked.
    sb.mock.push(Reply::text("Just chatting."));
    let out = sb.chat("hello", &[]);
    assert_eq!(stdout(&out), "Just chatting.\n");
    assert_eq!(sb.requests().len(), 4);
}
