use std::path::Path;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use super::SearchFilesTool;
use crate::{Tool, ToolContext, ToolError};

async fn search(dir: &Path, args: Value) -> Result<Value, ToolError> {
    let ctx = ToolContext::new(dir, "test");
    let out = SearchFilesTool.call(args, &ctx).await?;
    serde_json::from_str(&out).map_err(|e| ToolError::Fatal(e.to_string()))
}

fn model_error(r: Result<Value, ToolError>) -> String {
    match r {
        Err(ToolError::Model(m)) => m,
        other => panic!("expected a model error, got {other:?}"),
    }
}

fn put(dir: &Path, name: &str, content: &str) {
    let p = dir.join(name);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(p, content).unwrap();
}

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    put(
        dir.path(),
        "src/main.rs",
        "fn main() {\n    let total = add(1, 2);\n    println!(\"{total}\");\n}\n",
    );
    put(
        dir.path(),
        "src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
    );
    put(dir.path(), "notes.md", "remember to add tests\n");
    dir
}

#[tokio::test]
async fn content_search_with_context() {
    let dir = tree();
    let v = search(dir.path(), json!({"pattern": "let total", "context": 1}))
        .await
        .unwrap();
    assert_eq!(v["total_count"], 3);
    let rows = v["matches"].as_array().unwrap();
    let lines: Vec<i64> = rows.iter().map(|r| r["line"].as_i64().unwrap()).collect();
    assert_eq!(lines, vec![1, 2, 3]);
    assert_eq!(rows[1]["path"], "./src/main.rs");
    assert_eq!(rows[1]["content"], "    let total = add(1, 2);");
}

#[tokio::test]
async fn many_matches_are_grouped_by_path() {
    let dir = tempfile::tempdir().unwrap();
    put(dir.path(), "a.txt", "hit 1\nhit 2\nhit 3\n");
    put(dir.path(), "b.txt", "hit 4\nhit 5\n");
    let v = search(dir.path(), json!({"pattern": "hit", "path": "."}))
        .await
        .unwrap();
    assert_eq!(v["total_count"], 5);
    assert!(v.get("matches").is_none());
    assert_eq!(
        v["matches_text"],
        "./a.txt\n  1: hit 1\n  2: hit 2\n  3: hit 3\n./b.txt\n  1: hit 4\n  2: hit 5"
    );
}

#[tokio::test]
async fn files_only_and_count_modes() {
    let dir = tree();
    let v = search(
        dir.path(),
        json!({"pattern": "add", "output_mode": "files_only", "path": "src"}),
    )
    .await
    .unwrap();
    assert_eq!(v["files"], json!(["src/lib.rs", "src/main.rs"]));
    assert_eq!(v["total_count"], 2);

    let v = search(dir.path(), json!({"pattern": "a", "output_mode": "count"}))
        .await
        .unwrap();
    assert_eq!(v["counts"]["./src/lib.rs"], 2);
    assert_eq!(v["counts"]["./notes.md"], 1);
    let sum: i64 = v["counts"]
        .as_object()
        .unwrap()
        .values()
        .map(|c| c.as_i64().unwrap())
        .sum();
    assert_eq!(v["total_count"], sum);
}

#[tokio::test]
async fn file_glob_restricts_content_search() {
    let dir = tree();
    let v = search(
        dir.path(),
        json!({"pattern": "add", "file_glob": "*.md", "output_mode": "files_only"}),
    )
    .await
    .unwrap();
    assert_eq!(v["files"], json!(["./notes.md"]));
    let v = search(
        dir.path(),
        json!({"pattern": "add", "file_glob": "!*.md", "output_mode": "files_only"}),
    )
    .await
    .unwrap();
    assert_eq!(v["files"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn files_target_sorts_newest_first() {
    let dir = tempfile::tempdir().unwrap();
    let now = SystemTime::now();
    for (i, name) in [
        "old_config.yaml",
        "mid/app_config.toml",
        "new_config.json",
        "other.txt",
    ]
    .iter()
    .enumerate()
    {
        put(dir.path(), name, "x");
        let f = std::fs::File::options()
            .write(true)
            .open(dir.path().join(name))
            .unwrap();
        f.set_modified(now - Duration::from_secs(1_000 - 100 * i as u64))
            .unwrap();
    }
    let v = search(
        dir.path(),
        json!({"pattern": "*config*", "target": "files"}),
    )
    .await
    .unwrap();
    assert_eq!(
        v["files"],
        json!([
            "./new_config.json",
            "./mid/app_config.toml",
            "./old_config.yaml"
        ])
    );
    assert_eq!(v["total_count"], 3);

    // A bare name matches as a suffix at any depth; `find` is an alias.
    let v = search(
        dir.path(),
        json!({"pattern": "config.toml", "target": "find"}),
    )
    .await
    .unwrap();
    assert_eq!(v["files"], json!(["./mid/app_config.toml"]));
    // A pattern with a slash is anchored to the search root.
    let v = search(
        dir.path(),
        json!({"pattern": "mid/*.toml", "target": "files"}),
    )
    .await
    .unwrap();
    assert_eq!(v["files"], json!(["./mid/app_config.toml"]));
}

#[tokio::test]
async fn pagination_reports_next_offset() {
    let dir = tempfile::tempdir().unwrap();
    let body: String = (1..=10).map(|i| format!("item {i}\n")).collect();
    put(dir.path(), "list.txt", &body);
    let v = search(
        dir.path(),
        json!({"pattern": "item", "limit": 3, "offset": 3, "path": "list.txt"}),
    )
    .await
    .unwrap();
    assert_eq!(v["total_count"], 10);
    let rows = v["matches"].as_array().unwrap();
    let lines: Vec<i64> = rows.iter().map(|r| r["line"].as_i64().unwrap()).collect();
    assert_eq!(lines, vec![4, 5, 6]);
    assert_eq!(rows[0]["path"], "list.txt");
    assert_eq!(v["truncated"], true);
    assert_eq!(v["next_offset"], 6);
    assert!(v["hint"].as_str().unwrap().contains("offset=6"));

    let v = search(
        dir.path(),
        json!({"pattern": "item", "limit": 5, "offset": 5, "path": "list.txt"}),
    )
    .await
    .unwrap();
    assert!(v.get("truncated").is_none());
}

#[tokio::test]
async fn invalid_regex_is_explained() {
    let dir = tree();
    let msg = model_error(search(dir.path(), json!({"pattern": "fn main("})).await);
    assert!(msg.contains("Invalid regex pattern 'fn main('"), "{msg}");
    assert!(msg.contains("escape"), "{msg}");
}

#[tokio::test]
async fn newline_patterns_get_a_warning() {
    let dir = tree();
    let v = search(dir.path(), json!({"pattern": "main\\(\\) \\{\\n"}))
        .await
        .unwrap();
    assert_eq!(v["total_count"], 0);
    assert!(v["warning"].as_str().unwrap().contains("line-oriented"));
}

#[tokio::test]
async fn hidden_ignored_and_binary_files_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    put(dir.path(), ".gitignore", "target/\n");
    put(dir.path(), "target/out.txt", "needle\n");
    put(dir.path(), ".hidden/x.txt", "needle\n");
    put(dir.path(), "blob.bin", "needle\0\0\0");
    put(dir.path(), "real.txt", "needle\n");
    let v = search(
        dir.path(),
        json!({"pattern": "needle", "output_mode": "files_only"}),
    )
    .await
    .unwrap();
    assert_eq!(v["files"], json!(["./real.txt"]));
    // An explicitly named hidden directory is searched.
    let v = search(
        dir.path(),
        json!({"pattern": "needle", "path": ".hidden", "output_mode": "files_only"}),
    )
    .await
    .unwrap();
    assert_eq!(v["files"], json!([".hidden/x.txt"]));
}

#[tokio::test]
async fn argument_errors() {
    let dir = tree();
    let msg = model_error(search(dir.path(), json!({"pattern": "x", "path": "srcc"})).await);
    assert!(
        msg.contains("Path not found: srcc") && msg.contains("src"),
        "{msg}"
    );
    let msg =
        model_error(search(dir.path(), json!({"pattern": "x", "target": "everything"})).await);
    assert!(msg.contains("unknown target"), "{msg}");
    let msg =
        model_error(search(dir.path(), json!({"pattern": "x", "output_mode": "lines"})).await);
    assert!(msg.contains("unknown output_mode"), "{msg}");
    let msg = model_error(search(dir.path(), json!({})).await);
    assert!(msg.contains("pattern"), "{msg}");
    let v = search(
        dir.path(),
        json!({"pattern": "add", "target": "grep", "output_mode": "files_only"}),
    )
    .await
    .unwrap();
    assert_eq!(v["total_count"], 3);
}

#[tokio::test]
async fn absolute_paths_are_shown_absolute() {
    let dir = tree();
    let root = dir.path().join("src");
    let v = search(
        dir.path(),
        json!({"pattern": "a \\+ b", "path": root.display().to_string()}),
    )
    .await
    .unwrap();
    assert_eq!(
        v["matches"][0]["path"],
        root.join("lib.rs").display().to_string()
    );
}

#[test]
fn schema_matches_the_contract() {
    let s = SearchFilesTool.schema();
    assert_eq!(s.name, "search_files");
    assert_eq!(s.parameters["required"], json!(["pattern"]));
    assert_eq!(
        s.parameters["properties"]["target"]["enum"],
        json!(["content", "files"])
    );
    assert_eq!(
        s.parameters["properties"]["output_mode"]["enum"],
        json!(["content", "files_only", "count"])
    );
    assert_eq!(s.parameters["properties"]["limit"]["default"], 50);
    assert_eq!(
        SearchFilesTool.parallel_class(),
        crate::ParallelClass::ReadOnly
    );
}
