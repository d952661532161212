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
