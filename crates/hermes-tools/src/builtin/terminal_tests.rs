use std::time::Instant;

use serde_json::{Value, json};

use super::*;

async fn run(args: Value) -> Result<Value, ToolError> {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path(), "t");
    TerminalTool
        .call(args, &ctx)
        .await
        .map(|s| serde_json::from_str(&s).unwrap())
}

#[tokio::test]
async fn echo_round_trip() {
    let out = run(json!({"command": "echo hello; echo oops >&2; exit 3"}))
        .await
        .unwrap();
    assert_eq!(out["output"], "hello\noops");
    assert_eq!(out["exit_code"], 3);
    assert!(out["error"].is_null());
}

#[tokio::test]
async fn runs_in_workdir() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new("/", "t");
    let args = json!({"command": "pwd", "workdir": dir.path()});
    let out: Value = serde_json::from_str(&TerminalTool.call(args, &ctx).await.unwrap()).unwrap();
    let want = std::fs::canonicalize(dir.path()).unwrap();
    assert_eq!(out["output"], want.to_str().unwrap());
}

#[tokio::test]
async fn timeout_kills_the_process_group() {
    let start = Instant::now();
    let out = run(json!({"command": "sleep 30 & sleep 30", "timeout": 1}))
        .await
        .unwrap();
    assert_eq!(out["exit_code"], 124);
    assert_eq!(out["error"], "Command timed out after 1 seconds");
    assert!(start.elapsed().as_secs() < 10);
}

#[tokio::test]
async fn too_long_timeout_is_refused() {
    let err = run(json!({"command": "true", "timeout": 601}))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("exceeds the maximum of 600s"),
        "{err}"
    );
}

#[tokio::test]
async fn long_output_keeps_head_and_tail() {
    let out = run(json!({"command": "echo START; yes x | head -c 200000; echo; echo END"}))
        .await
        .unwrap();
    let text = out["output"].as_str().unwrap();
    assert!(text.starts_with("START"));
    assert!(text.ends_with("END"));
    assert!(text.len() < MAX_OUTPUT_BYTES + 200);
    assert!(text.contains("truncated"));
}

#[tokio::test]
async fn cancellation_stops_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path(), "t");
    let cancel = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        cancel.cancel();
    });
    let start = Instant::now();
    let err = TerminalTool
        .call(json!({"command": "sleep 20"}), &ctx)
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::Cancelled));
    assert!(start.elapsed().as_secs() < 5);
}

#[tokio::test]
async fn missing_command_and_bad_workdir_are_model_errors() {
    assert!(matches!(run(json!({})).await, Err(ToolError::Model(_))));
    let err = run(json!({"command": "true", "workdir": "/no/such/dir"}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not an existing directory"));
}

#[test]
fn ansi_is_stripped() {
    assert_eq!(
        strip_ansi("\u{1b}[31mred\u{1b}[0m \u{1b}]0;title\u{7}ok"),
        "red ok"
    );
}

/// A context whose session hears from its background processes.
fn announcing(dir: &std::path::Path) -> ToolContext {
    let mut ctx = ToolContext::new(dir, "t");
    ctx.processes = std::sync::Arc::new(crate::processes::ProcessTable::announcing());
    ctx
}

async fn call(tool: &dyn Tool, args: Value, ctx: &ToolContext) -> Value {
    serde_json::from_str(&tool.call(args, ctx).await.unwrap()).unwrap()
}

#[tokio::test]
async fn watch_patterns_are_kept_and_listed_and_dropped_beside_notify_on_complete() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = announcing(dir.path());
    let started = call(
        &TerminalTool,
        json!({"command": "echo ready; sleep 30", "background": true, "watch_patterns": ["ready", ""]}),
        &ctx,
    )
    .await;
    assert_eq!(started["watch_patterns"], json!(["ready"]), "{started}");
    assert!(started.get("notify_on_complete").is_none(), "{started}");
    assert!(started.get("hint").is_none(), "{started}");
    assert!(started.get("watch_patterns_ignored").is_none(), "{started}");
    let process = crate::builtin::process::ProcessTool;
    let mut listed = Value::Null;
    for _ in 0..250 {
        listed = call(&process, json!({"action": "list"}), &ctx).await;
        if listed["processes"][0]["watch_hit"] == true {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let entry = &listed["processes"][0];
    assert_eq!(entry["watch_patterns"], json!(["ready"]), "{listed}");
    assert_eq!(entry["watch_hit"], true, "{listed}");
    assert!(entry.get("notify_on_complete").is_none(), "{listed}");

    let both = call(
        &TerminalTool,
        json!({"command": "true", "background": true, "notify_on_complete": true, "watch_patterns": ["x"]}),
        &ctx,
    )
    .await;
    assert_eq!(both["notify_on_complete"], true, "{both}");
    assert!(both.get("watch_patterns").is_none(), "{both}");
    assert_eq!(
        both["watch_patterns_ignored"],
        "watch_patterns ignored because notify_on_complete=True; these two flags produce \
         duplicate notifications when combined"
    );
    ctx.processes.kill_all().await;
}

#[tokio::test]
async fn a_session_that_cannot_be_told_refuses_watch_patterns() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path(), "t");
    let started = call(
        &TerminalTool,
        json!({"command": "sleep 30", "background": true, "watch_patterns": "ready"}),
        &ctx,
    )
    .await;
    assert_eq!(started["notify_on_complete"], false, "{started}");
    assert!(
        started["notify_unsupported"]
            .as_str()
            .unwrap()
            .starts_with("notify_on_complete / watch_patterns are not available"),
        "{started}"
    );
    assert!(started.get("watch_patterns").is_none(), "{started}");
    let id = started["session_id"].as_str().unwrap();
    assert!(ctx.processes.get(id).unwrap().watch_patterns().is_empty());
    assert_eq!(ctx.processes.kill_all().await, 1);
}

#[tokio::test]
async fn pty_runs_on_a_terminal_unless_the_command_wants_piped_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path(), "t");
    let on_tty = call(
        &TerminalTool,
        json!({"command": "test -t 0 && test -t 1 && echo tty-yes", "background": true, "pty": true}),
        &ctx,
    )
    .await;
    assert!(on_tty.get("pty_note").is_none(), "{on_tty}");
    let id = on_tty["session_id"].as_str().unwrap();
    let process = ctx.processes.get(id).unwrap();
    assert!(process.terminal);
    process
        .wait(std::time::Duration::from_secs(10))
        .await
        .unwrap();
    // The reader may finish a moment after the exit.
    for _ in 0..250 {
        if process.tail(100).contains("tty-yes") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let waited = call(
        &crate::builtin::process::ProcessTool,
        json!({"action": "wait", "session_id": id, "timeout": 5}),
        &ctx,
    )
    .await;
    assert!(
        waited["output"].as_str().unwrap().contains("tty-yes"),
        "{waited}"
    );
    let piped = call(
        &TerminalTool,
        json!({"command": "gh auth login --with-token || cat", "background": true, "pty": true}),
        &ctx,
    )
    .await;
    assert!(
        piped["pty_note"]
            .as_str()
            .unwrap()
            .starts_with("PTY disabled for this command because it expects piped stdin/EOF"),
        "{piped}"
    );
    let id = piped["session_id"].as_str().unwrap();
    assert!(!ctx.processes.get(id).unwrap().terminal);
    ctx.processes.kill_all().await;
}
