use std::path::Path;

use serde_json::{Value, json};

use super::WriteFileTool;
use crate::{Tool, ToolContext, ToolError};

async fn write(dir: &Path, args: Value) -> Result<Value, ToolError> {
    let ctx = ToolContext::new(dir, "test");
    let out = WriteFileTool.call(args, &ctx).await?;
    serde_json::from_str(&out).map_err(|e| ToolError::Fatal(e.to_string()))
}

fn model_error(r: Result<Value, ToolError>) -> String {
    match r {
        Err(ToolError::Model(m)) => m,
        other => panic!("expected a model error, got {other:?}"),
    }
}

fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".hermes-tmp"))
        .collect()
}

#[tokio::test]
async fn creates_parent_directories() {
    let dir = tempfile::tempdir().unwrap();
    let v = write(
        dir.path(),
        json!({"path": "a/b/c.txt", "content": "hello\n"}),
    )
    .await
    .unwrap();
    let target = dir.path().join("a/b/c.txt");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hello\n");
    assert_eq!(v["bytes_written"], 6);
    assert_eq!(v["dirs_created"], true);
    assert_eq!(v["resolved_path"], target.display().to_string());
    assert_eq!(v["files_modified"][0], target.display().to_string());
}

#[tokio::test]
async fn overwrites_and_keeps_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("run.sh");
    std::fs::write(&target, "old").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o751)).unwrap();
    let v = write(
        dir.path(),
        json!({"path": "run.sh", "content": "#!/bin/sh\necho hi\n"}),
    )
    .await
    .unwrap();
    assert_eq!(v["dirs_created"], false);
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "#!/bin/sh\necho hi\n"
    );
    let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o751);
    assert!(leftovers(dir.path()).is_empty());
}

#[tokio::test]
async fn writes_through_symlinks() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("real.txt"), "old").unwrap();
    std::os::unix::fs::symlink(dir.path().join("real.txt"), dir.path().join("link.txt")).unwrap();
    write(dir.path(), json!({"path": "link.txt", "content": "new"}))
        .await
        .unwrap();
    assert!(
        std::fs::symlink_metadata(dir.path().join("link.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("real.txt")).unwrap(),
        "new"
    );
}

#[tokio::test]
async fn keeps_crlf_and_bom_of_existing_file() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("win.txt");
    std::fs::write(&target, "\u{feff}a\r\nb\r\n").unwrap();
    write(dir.path(), json!({"path": "win.txt", "content": "x\ny\n"}))
        .await
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "\u{feff}x\r\ny\r\n"
    );
}

#[tokio::test]
async fn missing_arguments_are_explained() {
    let dir = tempfile::tempdir().unwrap();
    let msg = model_error(write(dir.path(), json!({"content": "x"})).await);
    assert!(msg.contains("'path'"), "{msg}");
    let msg = model_error(write(dir.path(), json!({"path": "f.txt"})).await);
    assert!(msg.contains("'content'"), "{msg}");
    let msg = model_error(write(dir.path(), json!({"path": "f.txt", "content": 5})).await);
    assert!(
        msg.contains("must be a string") && msg.contains("number"),
        "{msg}"
    );
    assert!(!dir.path().join("f.txt").exists());
}

#[tokio::test]
async fn empty_content_is_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let v = write(dir.path(), json!({"path": "empty.txt", "content": ""}))
        .await
        .unwrap();
    assert_eq!(v["bytes_written"], 0);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("empty.txt")).unwrap(),
        ""
    );
}

#[tokio::test]
async fn invalid_json_is_refused_before_writing() {
    let dir = tempfile::tempdir().unwrap();
    let msg = model_error(
        write(
            dir.path(),
            json!({"path": "c.json", "content": "{\"a\": 1,"}),
        )
        .await,
    );
    assert!(msg.contains("not valid JSON"), "{msg}");
    assert!(!dir.path().join("c.json").exists());
    write(
        dir.path(),
        json!({"path": "c.json", "content": "{\"a\": 1}\n"}),
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn echoed_read_output_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let content = "1|fn main() {\n2|    println!(\"hi\");\n3|}\n";
    let msg = model_error(write(dir.path(), json!({"path": "m.rs", "content": content})).await);
    assert!(msg.contains("LINE_NUM|CONTENT"), "{msg}");
    // A lone numbered line is fine.
    write(
        dir.path(),
        json!({"path": "t.txt", "content": "1|one\nplain\n"}),
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn directories_and_system_paths_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("d")).unwrap();
    let msg = model_error(write(dir.path(), json!({"path": "d", "content": "x"})).await);
    assert!(msg.contains("directory"), "{msg}");
    let msg = model_error(
        write(
            dir.path(),
            json!({"path": "/etc/hermes-test", "content": "x"}),
        )
        .await,
    );
    assert!(msg.contains("sensitive system path"), "{msg}");
}

#[test]
fn schema_matches_the_contract() {
    let schema = WriteFileTool.schema();
    assert_eq!(schema.name, "write_file");
    assert_eq!(schema.parameters["required"], json!(["path", "content"]));
    assert_eq!(
        schema.parameters["properties"]["cross_profile"]["default"],
        false
    );
    assert_eq!(WriteFileTool.toolset(), "file");
    assert_eq!(
        WriteFileTool.parallel_class(),
        crate::ParallelClass::PathScoped
    );
}

#[tokio::test]
async fn credential_paths_under_the_given_homes_are_refused() {
    let home = tempfile::tempdir().unwrap();
    let hermes = home.path().join(".hermes");
    let mut ctx = ToolContext::new(home.path(), "t");
    ctx.homes = crate::Homes {
        home: Some(home.path().to_path_buf()),
        hermes_home: Some(hermes.clone()),
    };
    for target in [
        "~/.ssh/authorized_keys",
        "~/.hermes/.env",
        "~/.hermes/config.yaml",
    ] {
        let err = WriteFileTool
            .call(serde_json::json!({"path": target, "content": "x"}), &ctx)
            .await
            .unwrap_err();
        assert!(matches!(err, ToolError::Model(_)), "{target}: {err}");
        assert!(
            !ctx.resolve(target).exists(),
            "{target} must not be written"
        );
    }
    // The same relative file outside those homes is fine.
    let ok = WriteFileTool
        .call(
            serde_json::json!({"path": "notes/.env.example", "content": "x"}),
            &ctx,
        )
        .await;
    assert!(ok.is_ok(), "{ok:?}");
}
