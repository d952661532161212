//! Checkpoints a turn takes before a file-changing tool: complete before the
//! tool runs, and taken off the async runtime, so the session's other tasks
//! (events, the spinner, other sessions of a server) go on meanwhile.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use hermes_agent::{Agent, AgentOptions};
use hermes_llm::{ChatCompletionsConfig, ChatCompletionsProvider};
use hermes_mock::{MockServer, Reply};
use hermes_protocol::ToolSchema;
use hermes_tools::checkpoints::Checkpoints;
use hermes_tools::{ParallelClass, Registry, Tool, ToolContext, ToolResult};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// A `write_file` that notes how many checkpoints its project had when it ran.
struct Write {
    checkpoints: Arc<Checkpoints>,
    project: PathBuf,
    seen: Arc<Mutex<Option<usize>>>,
}

impl Tool for Write {
    fn name(&self) -> &str {
        "write_file"
    }
    fn toolset(&self) -> &str {
        "file"
    }
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "write_file".into(),
            description: "test".into(),
            parameters: json!({"type": "object"}),
        }
    }
    fn parallel_class(&self) -> ParallelClass {
        ParallelClass::Exclusive
    }
    fn call<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            *self.seen.lock().unwrap() = Some(self.checkpoints.list(&self.project).len());
            let path = self.project.join(args["path"].as_str().unwrap_or("x"));
            std::fs::write(path, args["content"].as_str().unwrap_or("")).unwrap();
            Ok("{\"ok\": true}".into())
        })
    }
}

// The default test runtime has one thread: a snapshot run on it would stop
// every other task until it ends.
#[tokio::test]
async fn the_snapshot_is_taken_off_the_runtime_and_before_the_tool_runs() {
    if std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("SKIPPED: git is not installed");
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let project = root.path().join("project");
    for i in 0..2000 {
        let dir = project.join(format!("src/m{:02}", i / 100));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(format!("f{i}.rs")),
            format!("pub fn f{i}() {{}}\n"),
        )
        .unwrap();
    }
    std::fs::write(project.join("Cargo.toml"), "[package]\n").unwrap();
    std::fs::write(project.join("notes.txt"), "original\n").unwrap();
    let checkpoints = Arc::new(Checkpoints::new(&root.path().join("home"), true, 20));
    let seen = Arc::new(Mutex::new(None));
    let mut tools = Registry::new();
    tools.register(Arc::new(Write {
        checkpoints: checkpoints.clone(),
        project: project.clone(),
        seen: seen.clone(),
    }));
    let mock = MockServer::start();
    mock.push(Reply::tool_call(
        "w1",
        "write_file",
        &json!({"path": "notes.txt", "content": "changed\n"}).to_string(),
    ));
    mock.push(Reply::text("done"));
    let provider =
        ChatCompletionsProvider::new("custom", ChatCompletionsConfig::new(mock.base_url()))
            .unwrap();
    let options = AgentOptions {
        model: "mock-model".into(),
        max_turns: 5,
        max_tokens: None,
        temperature: None,
        cwd: project.clone(),
        session_id: "test".into(),
        homes: Default::default(),
    };
    let mut agent = Agent::builder(Arc::new(provider), tools, options)
        .checkpoints(checkpoints.clone())
        .build();

    // A heartbeat on the same runtime: it beats only while the turn yields.
    let beats = Arc::new(Mutex::new(Vec::new()));
    let stop = CancellationToken::new();
    let heart = tokio::spawn({
        let (beats, stop) = (beats.clone(), stop.clone());
        async move {
            while !stop.is_cancelled() {
                beats.lock().unwrap().push(Instant::now());
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        }
    });
    tokio::task::yield_now().await;
    let started = Instant::now();
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let result = agent
        .run_turn("change the notes", &tx, &CancellationToken::new())
        .await
        .unwrap();
    let took = started.elapsed();
    stop.cancel();
    heart.await.unwrap();

    assert_eq!(result.final_text, "done");
    assert_eq!(*seen.lock().unwrap(), Some(1), "the checkpoint came first");
    let list = checkpoints.list(&project);
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].reason, "before write_file");
    let beats = beats.lock().unwrap();
    let longest = beats.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(took);
    // Taken on the runtime's thread, the snapshot of 2000 files would be one
    // silence as long as most of the turn.
    assert!(
        longest < took / 3,
        "the runtime stalled {longest:?} of a {took:?} turn"
    );
}
