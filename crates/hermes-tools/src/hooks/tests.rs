#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::*;

#[test]
fn config_entries_are_read_and_mistakes_warned() {
    let hooks = json!({
        "pre_tool_call": [
            {"command": "  ~/guard.sh  ", "matcher": "terminal|patch", "timeout": 5},
            {"matcher": "x"},
        ],
        "pre_llm_call": [{"command": "ctx.py", "matcher": "terminal", "timeout": 900}],
        "pre_tool_cal": [{"command": "x"}],
        "on_session_end": "not a list",
        "output_spill": {"enabled": true},
        "post_tool_call": null,
    });
    let (specs, warnings) = parse_hook_specs(Some(&hooks));
    assert_eq!(specs.len(), 2);
    let guard = specs
        .iter()
        .find(|s| s.event == HookEvent::PreToolCall)
        .unwrap();
    assert_eq!(guard.command, "~/guard.sh");
    assert_eq!(guard.matcher.as_deref(), Some("terminal|patch"));
    assert_eq!(guard.timeout_secs, 5);
    let ctx = specs
        .iter()
        .find(|s| s.event == HookEvent::PreLlmCall)
        .unwrap();
    assert_eq!(ctx.matcher, None, "matchers only apply to tool events");
    assert_eq!(ctx.timeout_secs, 300, "clamped");
    let all = warnings.join("\n");
    assert!(all.contains("did you mean \"pre_tool_call\""), "{all}");
    assert!(all.contains("hooks.on_session_end must be a list"), "{all}");
    assert!(all.contains("has no 'command'"), "{all}");
    assert!(all.contains("over the 300s maximum"), "{all}");
    assert!(!all.contains("output_spill"), "{all}");
}

#[test]
fn shell_answers_are_read_per_event() {
    let block = parse_shell_response(
        HookEvent::PreToolCall,
        r#"{"decision":"block","reason":"no"}"#,
    );
    assert_eq!(block, Some(json!({"action": "block", "message": "no"})));
    let block = parse_shell_response(HookEvent::PreToolCall, r#"{"action":"block"}"#);
    assert_eq!(
        block,
        Some(json!({"action": "block", "message": "Blocked by shell hook."}))
    );
    assert_eq!(
        parse_shell_response(HookEvent::PreToolCall, r#"{"action":"approve"}"#),
        None,
        "shell hooks cannot approve"
    );
    assert_eq!(
        parse_shell_response(HookEvent::PreToolCall, "not json"),
        None
    );
    assert_eq!(
        parse_shell_response(HookEvent::PreLlmCall, r#"{"context":"note"}"#),
        Some(json!({"context": "note"}))
    );
    assert_eq!(
        parse_shell_response(HookEvent::PreLlmCall, r#"{"context":"   "}"#),
        None
    );
    assert_eq!(
        parse_shell_response(HookEvent::TransformToolResult, r#"{"result":""}"#),
        Some(json!({"result": ""})),
        "an empty replacement is still a replacement"
    );
    assert_eq!(
        parse_shell_response(
            HookEvent::PreVerify,
            r#"{"decision":"block","reason":"run tests"}"#
        ),
        Some(json!({"action": "continue", "message": "run tests"}))
    );
}

#[test]
fn the_payload_puts_the_tool_and_session_on_top() {
    let site = HookSite {
        session_id: "s1",
        cwd: Path::new("/w"),
        events: None,
    };
    let extra = object([("tool_call_id", json!("c1"))]);
    let p = payload(
        HookEvent::PreToolCall,
        site,
        Some(("terminal", &json!({"command": "ls"}))),
        extra,
    );
    assert_eq!(p["hook_event_name"], "pre_tool_call");
    assert_eq!(p["tool_name"], "terminal");
    assert_eq!(p["tool_input"]["command"], "ls");
    assert_eq!(p["session_id"], "s1");
    assert_eq!(p["cwd"], "/w");
    assert_eq!(p["extra"]["tool_call_id"], "c1");
    assert_eq!(p["extra"]["telemetry_schema_version"], "hermes.observer.v1");
    assert!(p["extra"].get("tool_name").is_none());
}

#[test]
fn matchers_match_the_whole_tool_name() {
    let spec = |m: &str| HookSpec {
        event: HookEvent::PreToolCall,
        command: "true".into(),
        matcher: Some(m.into()),
        timeout_secs: 5,
    };
    let hook = ShellHook::new(spec("terminal|write_file"), None);
    assert!(hook.matches(Some("terminal")));
    assert!(!hook.matches(Some("terminal2")));
    assert!(!hook.matches(None));
    let literal = ShellHook::new(spec("mcp_[bad"), None);
    assert!(
        literal.matches(Some("mcp_[bad")),
        "a bad regex matches literally"
    );
    assert!(!literal.handles(HookEvent::PostToolCall, Some("mcp_[bad")));
}

#[derive(Debug)]
struct Fake {
    answer: Option<Value>,
    seen: Mutex<Vec<Value>>,
}

impl HookHandler for Fake {
    fn handles(&self, _event: HookEvent, _tool: Option<&str>) -> bool {
        true
    }
    fn call<'a>(
        &'a self,
        _event: HookEvent,
        payload: &'a Value,
    ) -> BoxFuture<'a, Result<Option<Value>, String>> {
        self.seen.lock().unwrap().push(payload.clone());
        let answer = self.answer.clone();
        Box::pin(async move { Ok(answer) })
    }
}

fn site() -> HookSite<'static> {
    HookSite {
        session_id: "s",
        cwd: Path::new("/"),
        events: None,
    }
}

#[tokio::test]
async fn the_first_block_wins_and_later_hooks_still_run() {
    let first = Arc::new(Fake {
        answer: Some(json!({"action": "block", "message": "first"})),
        seen: Mutex::default(),
    });
    let second = Arc::new(Fake {
        answer: Some(json!({"action": "block", "message": "second"})),
        seen: Mutex::default(),
    });
    let hooks = Hooks::new(vec![first.clone(), second.clone()]);
    let decision = hooks.before_tool(site(), "terminal", &json!({}), "c").await;
    assert_eq!(decision, PreToolDecision::Block("first".into()));
    assert_eq!(second.seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_transform_replaces_the_result_and_context_pieces_join() {
    let t = Arc::new(Fake {
        answer: Some(json!({"result": "new", "context": "note"})),
        seen: Mutex::default(),
    });
    let hooks = Hooks::new(vec![t.clone(), t.clone()]);
    let report = ToolCallReport {
        tool: "terminal",
        args: &json!({}),
        call_id: "c",
        result: "old",
        duration_ms: Some(3),
        status: "ok",
    };
    assert_eq!(hooks.after_tool(site(), report).await, "new");
    let ctx = hooks.turn_context(site(), Map::new()).await;
    assert_eq!(ctx.as_deref(), Some("note\n\nnote"));
}

#[tokio::test]
async fn a_shell_hook_reads_stdin_and_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("echo.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\ncat > \"$1\"\necho '{\"context\":\"ok\"}'\n",
    )
    .unwrap();
    let out = dir.path().join("got.json");
    let spec = HookSpec {
        event: HookEvent::PreLlmCall,
        command: format!("sh {} {}", script.display(), out.display()),
        matcher: None,
        timeout_secs: 5,
    };
    let hook = ShellHook::new(spec, None);
    let answer = hook
        .call(HookEvent::PreLlmCall, &json!({"hello": "world"}))
        .await
        .unwrap();
    assert_eq!(answer, Some(json!({"context": "ok"})));
    let got: Value = serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
    assert_eq!(got["hello"], "world");

    let slow = ShellHook::new(
        HookSpec {
            event: HookEvent::PreLlmCall,
            command: "sleep 5".into(),
            matcher: None,
            timeout_secs: 1,
        },
        None,
    );
    let started = std::time::Instant::now();
    let err = slow
        .call(HookEvent::PreLlmCall, &json!({}))
        .await
        .unwrap_err();
    assert!(err.contains("timed out after 1s"), "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(4));
    let missing = ShellHook::new(
        HookSpec {
            event: HookEvent::PreLlmCall,
            command: "/no/such/hook".into(),
            matcher: None,
            timeout_secs: 1,
        },
        None,
    );
    let err = missing
        .call(HookEvent::PreLlmCall, &json!({}))
        .await
        .unwrap_err();
    assert!(err.contains("command not found"), "{err}");
}

#[test]
fn the_allowlist_records_and_revokes_approvals() {
    let home = tempfile::tempdir().unwrap();
    let mut list = Allowlist::load(home.path());
    assert!(list.approvals.is_empty());
    list.approve("pre_tool_call", "sh guard.sh", None);
    list.approve("pre_tool_call", "sh guard.sh", None);
    list.approve("post_tool_call", "sh guard.sh", None);
    assert_eq!(
        list.approvals.len(),
        2,
        "a second approval replaces the first"
    );
    list.save(home.path()).unwrap();
    let text = std::fs::read_to_string(Allowlist::path(home.path())).unwrap();
    assert!(text.contains("\"approved_at\""), "{text}");
    let mut again = Allowlist::load(home.path());
    assert!(again.find("pre_tool_call", "sh guard.sh").is_some());
    assert!(again.find("pre_llm_call", "sh guard.sh").is_none());
    assert_eq!(again.revoke("sh guard.sh"), 2);
}

#[test]
fn a_hook_whose_script_changed_since_approval_is_asked_about_again() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("guard.sh");
    std::fs::write(&script, "echo '{}'\n").unwrap();
    let command = format!("sh {}", script.display());
    let mut list = Allowlist::default();
    assert_eq!(
        list.standing("pre_tool_call", &command, None),
        Standing::Unknown
    );
    list.approve("pre_tool_call", &command, None);
    assert_eq!(
        list.standing("pre_tool_call", &command, None),
        Standing::Approved
    );
    // The model (or anyone) rewrites the approved script.
    std::fs::write(&script, "rm -rf ~\n").unwrap();
    assert_eq!(
        list.standing("pre_tool_call", &command, None),
        Standing::Changed
    );
    // An approval the reference wrote (mtime only) still notices an edit.
    list.approvals[0].script_sha256_at_approval = None;
    list.approvals[0].script_mtime_at_approval = Some("2001-01-01T00:00:00.000000Z".into());
    assert_eq!(
        list.standing("pre_tool_call", &command, None),
        Standing::Changed
    );
    list.approve("pre_tool_call", &command, None);
    assert_eq!(
        list.standing("pre_tool_call", &command, None),
        Standing::Approved
    );
}

/// A plugin that answers one hook and then exits: the next call restarts it.
#[tokio::test]
async fn a_plugin_that_dies_is_restarted_on_its_next_call() {
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    std::fs::write(
        dir.path().join("run.py"),
        format!(
            r#"import json, sys
open({starts:?}, "a").write("x")
for line in sys.stdin:
    msg = json.loads(line)
    result = {{"context": "from plugin"}} if msg["method"] == "hook" else {{}}
    print(json.dumps({{"jsonrpc": "2.0", "id": msg["id"], "result": result}}), flush=True)
    if msg["method"] == "hook":
        sys.exit(0)
"#,
            starts = starts.display().to_string()
        ),
    )
    .unwrap();
    let plugin = PluginHook::new(PluginCommand {
        name: "once".into(),
        argv: vec!["python3".into(), "run.py".into()],
        dir: dir.path().to_path_buf(),
        events: vec![HookEvent::PreLlmCall],
        tools: Vec::new(),
        timeout_secs: 10,
    });
    let hooks = Hooks::new(vec![Arc::new(plugin)]);
    for _ in 0..2 {
        let ctx = hooks.turn_context(site(), Map::new()).await;
        assert_eq!(ctx.as_deref(), Some("from plugin"));
        // Let it exit before the next call.
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    }
    // The second call found the process gone, so a fresh one answered.
    let count = std::fs::read_to_string(&starts).unwrap().len();
    assert!(count >= 2, "started {count} time(s)");
}
