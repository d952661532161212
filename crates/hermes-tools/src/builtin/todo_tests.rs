use serde_json::{Value, json};

use super::*;

async fn call(tool: &TodoTool, args: Value) -> Value {
    let ctx = ToolContext::new("/", "t");
    serde_json::from_str(&tool.call(args, &ctx).await.unwrap()).unwrap()
}

#[tokio::test]
async fn write_read_and_merge() {
    let tool = TodoTool::default();
    let out = call(
        &tool,
        json!({"todos": [
            {"id": "1", "content": "plan", "status": "in_progress"},
            {"id": "2", "content": "build", "status": "pending"}
        ]}),
    )
    .await;
    assert_eq!(out["summary"]["total"], 2);
    let out = call(
        &tool,
        json!({"merge": true, "todos": [
            {"id": "1", "status": "completed"},
            {"id": "3", "content": "ship", "status": "weird"}
        ]}),
    )
    .await;
    assert_eq!(out["todos"][0]["status"], "completed");
    assert_eq!(out["todos"][0]["content"], "plan");
    assert_eq!(out["todos"][2]["status"], "pending");
    assert_eq!(out["summary"]["completed"], 1);
    let read = call(&tool, json!({})).await;
    assert_eq!(read, out);
}

#[tokio::test]
async fn replace_dedupes_keeping_the_last() {
    let tool = TodoTool::default();
    let out = call(
        &tool,
        json!({"todos": [
            {"id": "a", "content": "first", "status": "pending"},
            {"id": "b", "content": "b", "status": "pending"},
            {"id": "a", "content": "second", "status": "pending"}
        ]}),
    )
    .await;
    let ids: Vec<_> = out["todos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].clone())
        .collect();
    assert_eq!(ids, vec![json!("b"), json!("a")]);
    assert_eq!(out["todos"][1]["content"], "second");
}

#[tokio::test]
async fn bad_todos_is_a_model_error() {
    let tool = TodoTool::default();
    let ctx = ToolContext::new("/", "t");
    let err = tool.call(json!({"todos": 5}), &ctx).await.unwrap_err();
    assert!(err.to_string().contains("got a number"));
    let ok = tool
        .call(
            json!({"todos": "[{\"id\":\"x\",\"content\":\"c\",\"status\":\"pending\"}]"}),
            &ctx,
        )
        .await;
    assert!(ok.is_ok());
}

#[test]
fn injection_lists_active_items_only() {
    let mut list = TodoList::default();
    list.write(
        &[
            json!({"id": "1", "content": "a", "status": "completed"}),
            json!({"id": "2", "content": "b", "status": "in_progress"}),
        ],
        false,
    );
    let text = list.format_for_injection().unwrap();
    assert!(text.contains("- [>] 2. b (in_progress)"));
    assert!(!text.contains("1. a"));
}
