use std::path::Path;

use serde_json::{Value, json};

use super::ReadFileTool;
use crate::{Tool, ToolContext, ToolError};

async fn read(dir: &Path, args: Value) -> Result<Value, ToolError> {
    let ctx = ToolContext::new(dir, "test");
    let out = ReadFileTool.call(args, &ctx).await?;
    serde_json::from_str(&out).map_err(|e| ToolError::Fatal(e.to_string()))
}

fn model_error(r: Result<Value, ToolError>) -> String {
    match r {
        Err(ToolError::Model(m)) => m,
        other => panic!("expected a model error, got {other:?}"),
    }
}

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[tokio::test]
async fn numbers_lines_compactly() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\nbeta\ngamma\n").unwrap();
    let v = read(dir.path(), json!({"path": "a.txt"})).await.unwrap();
    assert_eq!(v["content"], "1|alpha\n2|beta\n3|gamma");
    assert_eq!(v["total_lines"], 3);
    assert_eq!(v["truncated"], false);
    assert_eq!(v["path"], "a.txt");
    assert!(v.get("next_offset").is_none());
}

#[tokio::test]
async fn offset_and_limit_page_through_the_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), numbered(10)).unwrap();
    let v = read(
        dir.path(),
        json!({"path": "f.txt", "offset": 3, "limit": 2}),
    )
    .await
    .unwrap();
    assert_eq!(v["content"], "3|line 3\n4|line 4");
    assert_eq!(v["total_lines"], 10);
    assert_eq!(v["truncated"], true);
    assert_eq!(v["next_offset"], 5);
    assert!(v["hint"].as_str().unwrap().contains("offset=5"));

    let v = read(dir.path(), json!({"path": "f.txt", "offset": 9}))
        .await
        .unwrap();
    assert_eq!(v["content"], "9|line 9\n10|line 10");
    assert_eq!(v["truncated"], false);
}

#[tokio::test]
async fn limit_is_clamped_and_offset_floored() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big.txt"), numbered(2_500)).unwrap();
    let v = read(
        dir.path(),
        json!({"path": "big.txt", "offset": 0, "limit": 10_000}),
    )
    .await
    .unwrap();
    let content = v["content"].as_str().unwrap();
    assert_eq!(content.lines().count(), 2_000);
    assert!(content.starts_with("1|line 1\n"));
    assert_eq!(v["next_offset"], 2_001);

    let v = read(dir.path(), json!({"path": "big.txt", "limit": "3"}))
        .await
        .unwrap();
    assert_eq!(v["content"].as_str().unwrap().lines().count(), 3);
}

#[tokio::test]
async fn offset_past_the_end_says_so() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), numbered(3)).unwrap();
    let v = read(dir.path(), json!({"path": "f.txt", "offset": 50}))
        .await
        .unwrap();
    assert_eq!(v["content"], "");
    assert!(v["hint"].as_str().unwrap().contains("past the end"));
}

#[tokio::test]
async fn missing_file_suggests_similar_names() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.yaml"), "x: 1\n").unwrap();
    std::fs::write(dir.path().join("unrelated.rs"), "").unwrap();
    let msg = model_error(read(dir.path(), json!({"path": "config.yml"})).await);
    assert!(msg.contains("File not found: config.yml"), "{msg}");
    assert!(msg.contains("config.yaml"), "{msg}");
    assert!(!msg.contains("unrelated.rs"), "{msg}");

    let msg = model_error(read(dir.path(), json!({"path": "nodir/x.txt"})).await);
    assert!(msg.contains("does not exist"), "{msg}");
}

#[tokio::test]
async fn binary_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("blob"), b"abc\x00\x01\x02def").unwrap();
    let msg = model_error(read(dir.path(), json!({"path": "blob"})).await);
    assert!(msg.contains("binary"), "{msg}");

    std::fs::write(dir.path().join("pic.png"), b"not really a png").unwrap();
    let msg = model_error(read(dir.path(), json!({"path": "pic.png"})).await);
    assert!(
        msg.contains("binary file") && msg.contains("vision_analyze"),
        "{msg}"
    );
}

#[tokio::test]
async fn directories_point_to_search_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let msg = model_error(read(dir.path(), json!({"path": "sub"})).await);
    assert!(
        msg.contains("directory") && msg.contains("search_files"),
        "{msg}"
    );
}

#[tokio::test]
async fn missing_path_argument_is_a_model_error() {
    let dir = tempfile::tempdir().unwrap();
    let msg = model_error(read(dir.path(), json!({})).await);
    assert!(msg.contains("path"), "{msg}");
}

#[tokio::test]
async fn long_lines_are_cut() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("wide.txt"),
        format!("{}\nshort\n", "x".repeat(2_500)),
    )
    .unwrap();
    let v = read(dir.path(), json!({"path": "wide.txt"})).await.unwrap();
    let content = v["content"].as_str().unwrap();
    let first = content.lines().next().unwrap();
    assert_eq!(first, format!("1|{}... [truncated]", "x".repeat(2_000)));
    assert!(content.ends_with("2|short"));
}

#[tokio::test]
async fn character_budget_cuts_on_a_line_boundary() {
    let dir = tempfile::tempdir().unwrap();
    let body: String = (1..=1_500)
        .map(|i| format!("{i:04}{}\n", "y".repeat(196)))
        .collect();
    std::fs::write(dir.path().join("wide.log"), body).unwrap();
    let v = read(dir.path(), json!({"path": "wide.log", "limit": 2000}))
        .await
        .unwrap();
    let content = v["content"].as_str().unwrap();
    assert!(content.chars().count() <= 100_000);
    assert_eq!(v["truncated"], true);
    assert_eq!(v["truncated_by"], "bytes");
    let shown = content.lines().count();
    assert_eq!(v["next_offset"], shown + 1);
    assert!(
        content
            .lines()
            .last()
            .unwrap()
            .starts_with(&format!("{shown}|"))
    );
    assert!(
        v["hint"]
            .as_str()
            .unwrap()
            .contains(&format!("offset={}", shown + 1))
    );
}

#[tokio::test]
async fn bom_and_crlf_are_hidden() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("w.txt"), "\u{feff}one\r\ntwo\r\n").unwrap();
    let v = read(dir.path(), json!({"path": "w.txt"})).await.unwrap();
    assert_eq!(v["content"], "1|one\n2|two");
}

#[tokio::test]
async fn empty_file_reads_as_empty() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("e.txt"), "").unwrap();
    let v = read(dir.path(), json!({"path": "e.txt"})).await.unwrap();
    assert_eq!(v["content"], "");
    assert_eq!(v["total_lines"], 0);
}

#[tokio::test]
async fn notebooks_are_extracted() {
    let dir = tempfile::tempdir().unwrap();
    let nb = json!({"cells": [
        {"cell_type": "markdown", "source": ["# Title\n", "text"]},
        {"cell_type": "code", "source": "print(1)\n"}
    ]});
    std::fs::write(dir.path().join("n.ipynb"), nb.to_string()).unwrap();
    let v = read(dir.path(), json!({"path": "n.ipynb"})).await.unwrap();
    assert_eq!(v["extracted_document"], true);
    let content = v["content"].as_str().unwrap();
    assert!(
        content.starts_with("1|# ── Markdown cell 1 ──\n2|# Title\n3|text"),
        "{content}"
    );
    assert!(content.contains("|# ── Code cell 1 ──\n"), "{content}");
}

#[tokio::test]
async fn secret_env_files_are_blocked() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".env"), "KEY=secret\n").unwrap();
    let msg = model_error(read(dir.path(), json!({"path": ".env"})).await);
    assert!(msg.contains("Access denied"), "{msg}");
    assert!(!msg.contains("secret\n"));
}

#[tokio::test]
async fn device_files_are_blocked() {
    let dir = tempfile::tempdir().unwrap();
    let msg = model_error(read(dir.path(), json!({"path": "/dev/zero"})).await);
    assert!(msg.contains("device"), "{msg}");
}
