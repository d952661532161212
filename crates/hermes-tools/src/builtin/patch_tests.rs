use std::path::Path;

use serde_json::{Value, json};

use super::PatchTool;
use crate::{Tool, ToolContext, ToolError};

async fn patch(dir: &Path, args: Value) -> Result<Value, ToolError> {
    let ctx = ToolContext::new(dir, "test");
    let out = PatchTool.call(args, &ctx).await?;
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

fn get(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

async fn replace(dir: &Path, file: &str, old: &str, new: &str) -> Result<Value, ToolError> {
    patch(
        dir,
        json!({"mode": "replace", "path": file, "old_string": old, "new_string": new}),
    )
    .await
}

// ---------------------------------------------------------------- replace mode

#[tokio::test]
async fn exact_replace_returns_a_diff() {
    let dir = tempfile::tempdir().unwrap();
    put(dir.path(), "a.py", "def f():\n    return 1\n");
    let v = patch(
        dir.path(),
        json!({"path": "a.py", "old_string": "return 1", "new_string": "return 2"}),
    )
    .await
    .unwrap();
    assert_eq!(v["success"], true);
    assert_eq!(get(dir.path(), "a.py"), "def f():\n    return 2\n");
    let diff = v["diff"].as_str().unwrap();
    assert!(
        diff.starts_with("--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n"),
        "{diff}"
    );
    assert!(diff.contains("-    return 1\n+    return 2\n"), "{diff}");
    assert_eq!(
        v["files_modified"][0],
        dir.path().join("a.py").display().to_string()
    );
    assert!(v.get("match_strategy").is_none());
}

#[tokio::test]
async fn non_unique_match_is_an_error_unless_replace_all() {
    let dir = tempfile::tempdir().unwrap();
    put(dir.path(), "c.txt", "x = 1\ny = 2\nx = 1\n");
    let msg = model_error(replace(dir.path(), "c.txt", "x = 1", "x = 5").await);
    assert!(
        msg.contains("Found 2 matches") && msg.contains("replace_all"),
        "{msg}"
    );
    assert_eq!(get(dir.path(), "c.txt"), "x = 1\ny = 2\nx = 1\n");

    let v = patch(
        dir.path(),
        json!({"path": "c.txt", "old_string": "x = 1", "new_string": "x = 5", "replace_all": true}),
    )
    .await
    .unwrap();
    assert_eq!(v["replacements"], 2);
    assert_eq!(get(dir.path(), "c.txt"), "x = 5\ny = 2\nx = 5\n");
}

#[tokio::test]
async fn line_trimmed_match_is_reindented() {
    let dir = tempfile::tempdir().unwrap();
    put(
        dir.path(),
        "a.py",
        "class A:\n    def f(self):\n        return 1\n",
    );
    let v = replace(
        dir.path(),
        "a.py",
        "def f(self):\n    return 1",
        "def f(self):\n    return 2",
    )
    .await
    .unwrap();
    assert_eq!(v["match_strategy"], "line_trimmed");
    assert_eq!(
        get(dir.path(), "a.py"),
        "class A:\n    def f(self):\n        return 2\n"
    );
}

#[tokio::test]
async fn whitespace_normalized_match() {
    let dir = tempfile::tempdir().unwrap();
    put(dir.path(), "a.rs", "let x  =   compute(a,  b);\n");
    let v = replace(
        dir.path(),
        "a.rs",
        "let x = compute(a, b);",
        "let x = compute(a, c);",
    )
    .await
    .unwrap();
    assert_eq!(v["match_strategy"], "whitespace_normalized");
    assert_eq!(get(dir.path(), "a.rs"), "let x = compute(a, c);\n");
}

#[tokio::test]
async fn escape_normalized_match() {
    let dir = tempfile::tempdir().unwrap();
    put(dir.path(), "t.txt", "alpha\nbeta\n");
    let v = replace(dir.path(), "t.txt", "alpha\\nbeta", "alpha\ngamma")
        .await
        .unwrap();
    assert_eq!(v["match_strategy"], "escape_normalized");
    assert_eq!(get(dir.path(), "t.txt"), "alpha\ngamma\n");
}

#[tokio::test]
async fn unicode_normalized_match_keeps_typography() {
    let dir = tempfile::tempdir().unwrap();
    put(dir.path(), "doc.md", "title — one\nvalue = 1\n");
    let v = replace(
        dir.path(),
        "doc.md",
        "title -- one\nvalue = 1",
        "title -- one\nvalue = 2",
    )
    .await
    .unwrap();
    assert_eq!(v["match_strategy"], "unicode_normalized");
    assert_eq!(get(dir.path(), "doc.md"), "title — one\nvalue = 2\n");
}

#[tokio::test]
async fn block_anchor_match() {
    let dir = tempfile::tempdir().unwrap();
    put(
        dir.path(),
        "a.rs",
        "fn a() {\n    let x = 1;\n    let y = 2;\n    x + y\n}\n",
    );
    let v = replace(
        dir.path(),
        "a.rs",
        "fn a() {\n    let x = 1;\n    let y = 3;\n    x + y\n}",
        "fn a() {\n    let x = 1;\n    let y = 3;\n    x * y\n}",
    )
    .await
    .unwrap();
    assert_eq!(v["match_strategy"], "block_anchor");
    assert_eq!(
        get(dir.path(), "a.rs"),
        "fn a() {\n    let x = 1;\n    let y = 3;\n    x * y\n}\n"
    );
}

#[tokio::test]
async fn not_found_shows_the_closest_region() {
    let dir = tempfile::tempdir().unwrap();
    put(
        dir.path(),
        "m.rs",
        "fn main() {\n    println!(\"hello\");\n}\n",
    );
    let msg =
        model_error(replace(dir.path(), "m.rs", "println!(\"goodbye world\", 42);", "x").await);
    assert!(msg.contains("Could not find a match"), "{msg}");
    assert!(
        msg.contains("Did you mean") && msg.contains("   2|     println!(\"hello\");"),
        "{msg}"
    );

    let msg = model_error(replace(dir.path(), "m.rs", "zzzzzzzzzzzzzzzzzz", "x").await);
    assert!(msg.contains("read_file"), "{msg}");
}

#[tokio::test]
async fn replace_argument_errors() {
    let dir = tempfile::tempdir().unwrap();
    put(dir.path(), "f.txt", "abc\n");
    let msg = model_error(replace(dir.path(), "f.txt", "", "x").await);
    assert!(msg.contains("empty"), "{msg}");
    let msg = model_error(replace(dir.path(), "f.txt", "abc", "abc").await);
    assert!(msg.contains("identical"), "{msg}");
    let msg = model_error(replace(dir.path(), "nope.txt", "a", "b").await);
    assert!(
        msg.contains("File not found") && msg.contains("write_file"),
        "{msg}"
    );
    let msg = model_error(patch(dir.path(), json!({"path": "f.txt", "old_string": "abc"})).await);
    assert!(msg.contains("new_string"), "{msg}");
    let msg = model_error(patch(dir.path(), json!({"old_string": "a", "new_string": "b"})).await);
    assert!(msg.contains("'path'"), "{msg}");
    let msg = model_error(patch(dir.path(), json!({"mode": "sideways"})).await);
    assert!(msg.contains("unknown mode"), "{msg}");
    let msg = model_error(patch(dir.path(), json!({"mode": "patch"})).await);
    assert!(msg.contains("V4A"), "{msg}");
}

#[tokio::test]
async fn crlf_and_bom_files_keep_their_conventions() {
    let dir = tempfile::tempdir().unwrap();
    put(dir.path(), "w.txt", "\u{feff}one\r\ntwo\r\nthree\r\n");
    replace(dir.path(), "w.txt", "one\ntwo", "one\n2")
        .await
        .unwrap();
    assert_eq!(get(dir.path(), "w.txt"), "\u{feff}one\r\n2\r\nthree\r\n");
}

#[tokio::test]
async fn replace_refuses_to_break_json() {
    let dir = tempfile::tempdir().unwrap();
    put(dir.path(), "c.json", "{\"a\": 1}\n");
    let msg = model_error(replace(dir.path(), "c.json", "\"a\": 1", "\"a\": ").await);
    assert!(msg.contains("not valid JSON"), "{msg}");
    assert_eq!(get(dir.path(), "c.json"), "{\"a\": 1}\n");
}

// ---------------------------------------------------------------- V4A mode

async fn v4a(dir: &Path, text: &str) -> Result<Value, ToolError> {
    patch(dir, json!({"mode": "patch", "patch": text})).await
}

#[tokio::test]
async fn v4a_updates_with_several_hunks() {
    let dir = tempfile::tempdir().unwrap();
    let body: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    put(dir.path(), "f.txt", &body);
    let v = v4a(
        dir.path(),
        "*** Begin Patch\n*** Update File: f.txt\n@@\n line 2\n-line 3\n+LINE THREE\n line 4\n@@\n \
         line 25\n-line 26\n+LINE 26\n*** End Patch",
    )
    .await
    .unwrap();
    assert_eq!(v["success"], true);
    let text = get(dir.path(), "f.txt");
    assert!(
        text.contains("line 2\nLINE THREE\nline 4\n") && text.contains("line 25\nLINE 26\nline 27")
    );
    assert_eq!(v["diff"].as_str().unwrap().matches("@@ -").count(), 2);
    assert_eq!(
        v["files_modified"][0],
        dir.path().join("f.txt").display().to_string()
    );
}

#[tokio::test]
async fn v4a_add_delete_and_update_together() {
    let dir = tempfile::tempdir().unwrap();
    put(dir.path(), "old.txt", "bye\n");
    put(dir.path(), "keep.txt", "a\nb\n");
    let v = v4a(
        dir.path(),
        "*** Begin Patch\n*** Add File: new/dir/hello.txt\n+hello\n+world\n*** Delete File: old.txt\n\
         *** Update File: keep.txt\n a\n-b\n+c\n*** End Patch",
    )
    .await
    .unwrap();
    assert_eq!(get(dir.path(), "new/dir/hello.txt"), "hello\nworld\n");
    assert!(!dir.path().join("old.txt").exists());
    assert_eq!(get(dir.path(), "keep.txt"), "a\nc\n");
    assert_eq!(v["files_created"].as_array().unwrap().len(), 1);
    assert_eq!(v["files_deleted"].as_array().unwrap().len(), 1);
    assert_eq!(v["files_modified"].as_array().unwrap().len(), 1);
    let diff = v["diff"].as_str().unwrap();
    assert!(
        diff.contains("--- /dev/null\n+++ b/new/dir/hello.txt") && diff.contains("-bye"),
        "{diff}"
    );
}

#[tokio::test]
async fn v4a_moves_files() {
    let dir = tempfile::tempdir().unwrap();
    put(dir.path(), "a.py", "x = 1\n");
    put(dir.path(), "m.txt", "data\n");
    v4a(
        dir.path(),
        "*** Begin Patch\n*** Update File: a.py\n*** Move to: pkg/b.py\n-x = 1\n+x = 2\n\
         *** Move File: m.txt -> moved.txt\n*** End Patch",
    )
    .await
    .unwrap();
    assert!(!dir.path().join("a.py").exists());
    assert_eq!(get(dir.path(), "pkg/b.py"), "x = 2\n");
    assert!(!dir.path().join("m.txt").exists());
    assert_eq!(get(dir.path(), "moved.txt"), "data\n");
}

#[tokio::test]
async fn v4a_is_all_or_nothing() {
    let dir = tempfile::tempdir().unwrap();
    put(dir.path(), "one.txt", "alpha\n");
    put(dir.path(), "two.txt", "beta\n");
    let msg = model_error(
        v4a(
            dir.path(),
            "*** Begin Patch\n*** Update File: one.txt\n-alpha\n+ALPHA\n*** Add File: three.txt\n+new\n\
             *** Update File: two.txt\n@@ section two\n-this text is not in the file at all\n+x\n\
             *** End Patch",
        )
        .await,
    );
    assert!(msg.contains("no files were modified"), "{msg}");
    assert!(msg.contains("two.txt: hunk 1 'section two'"), "{msg}");
    assert_eq!(get(dir.path(), "one.txt"), "alpha\n");
    assert_eq!(get(dir.path(), "two.txt"), "beta\n");
    assert!(!dir.path().join("three.txt").exists());

    let msg = model_error(
        v4a(
            dir.path(),
            "*** Begin Patch\n*** Delete File: missing.txt\n*** End Patch",
        )
        .await,
    );
    assert!(msg.contains("missing.txt"), "{msg}");
    let msg = model_error(
        v4a(
            dir.path(),
            "*** Begin Patch\n*** Move File: one.txt -> two.txt\n*** End Patch",
        )
        .await,
    );
    assert!(msg.contains("already exists"), "{msg}");
}

#[tokio::test]
async fn v4a_hint_and_end_of_file_pick_among_repeats() {
    let dir = tempfile::tempdir().unwrap();
    let body = "fn a() {\n    ret(0)\n}\nfn b() {\n    ret(0)\n}\nfn c() {\n    ret(0)\n}\n";
    put(dir.path(), "f.rs", body);
    v4a(dir.path(), "*** Begin Patch\n*** Update File: f.rs\n@@ fn b() {\n-    ret(0)\n+    ret(2)\n*** End Patch")
        .await
        .unwrap();
    let text = get(dir.path(), "f.rs");
    assert_eq!(
        text,
        body.replacen("fn b() {\n    ret(0)", "fn b() {\n    ret(2)", 1)
    );

    v4a(dir.path(), "*** Begin Patch\n*** Update File: f.rs\n@@\n-    ret(0)\n+    ret(3)\n }\n*** End of File\n*** End Patch")
        .await
        .unwrap();
    assert!(get(dir.path(), "f.rs").ends_with("fn c() {\n    ret(3)\n}\n"));

    let msg = model_error(
        v4a(
            dir.path(),
            "*** Begin Patch\n*** Update File: f.rs\n-}\n+};\n*** End Patch",
        )
        .await,
    );
    assert!(msg.contains("hint"), "{msg}");
}

#[tokio::test]
async fn v4a_addition_only_hunks() {
    let dir = tempfile::tempdir().unwrap();
    put(dir.path(), "f.py", "import os\n\ndef main():\n    pass\n");
    v4a(
        dir.path(),
        "*** Begin Patch\n*** Update File: f.py\n@@ import os\n+import sys\n*** End Patch",
    )
    .await
    .unwrap();
    assert_eq!(
        get(dir.path(), "f.py"),
        "import os\nimport sys\n\ndef main():\n    pass\n"
    );
    v4a(
        dir.path(),
        "*** Begin Patch\n*** Update File: f.py\n+# end\n*** End Patch",
    )
    .await
    .unwrap();
    assert!(get(dir.path(), "f.py").ends_with("    pass\n# end\n"));
}

#[tokio::test]
async fn v4a_reports_parse_errors_and_context_only_patches() {
    let dir = tempfile::tempdir().unwrap();
    put(dir.path(), "f.txt", "a\n");
    let msg = model_error(v4a(dir.path(), "*** Begin Patch\n*** Bogus: x\n*** End Patch").await);
    assert!(msg.starts_with("Failed to parse patch"), "{msg}");
    let msg = model_error(
        v4a(
            dir.path(),
            "*** Begin Patch\n*** Update File: f.txt\n a\n*** End Patch",
        )
        .await,
    );
    assert!(msg.contains("no changes"), "{msg}");
}

#[test]
fn schema_matches_the_contract() {
    let s = PatchTool.schema();
    assert_eq!(s.name, "patch");
    assert_eq!(s.parameters["required"], json!(["mode"]));
    assert_eq!(
        s.parameters["properties"]["mode"]["enum"],
        json!(["replace", "patch"])
    );
    assert_eq!(s.parameters["properties"]["replace_all"]["default"], false);
    for key in ["path", "old_string", "new_string", "patch", "cross_profile"] {
        assert!(s.parameters["properties"].get(key).is_some(), "{key}");
    }
}
