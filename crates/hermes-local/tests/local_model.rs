//! The embedded model, for real: these load the GGUF. CI fetches it and sets
//! HERMES_REQUIRE_LOCAL_MODEL=1 so that a missing model fails instead of skipping.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use hermes_agent::{Agent, AgentOptions};
use hermes_llm::{ChatRequest, DeltaStream, LlmError, Provider, StreamDelta, ToolChoice, complete};
use hermes_local::{LocalConfig, LocalProvider, models};
use hermes_protocol::{Event, Message, ToolOutcome, ToolSchema};
use hermes_tools::{Registry, Tool};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// The GGUF under test: $HERMES_TEST_GGUF, else the default model in ~/.hermes/models.
fn model_path() -> Option<PathBuf> {
    let path = std::env::var_os("HERMES_TEST_GGUF")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .map(|h| models::default_path(&PathBuf::from(h).join(".hermes/models")))
        })?;
    if path.is_file() {
        return Some(path);
    }
    assert!(
        std::env::var_os("HERMES_REQUIRE_LOCAL_MODEL").is_none(),
        "the local model is required but missing at {}: run `hermes model pull smollm2`",
        path.display()
    );
    eprintln!(
        "skipped: no local model at {} (run `hermes model pull smollm2`)",
        path.display()
    );
    None
}

fn provider(path: PathBuf) -> LocalProvider {
    LocalProvider::start(LocalConfig {
        threads: 1,
        ..LocalConfig::new(path)
    })
    .unwrap()
}

fn echo_terminal_schema() -> ToolSchema {
    // The real terminal schema with its command pinned to a harmless echo.
    let mut schema = hermes_tools::builtin::terminal::TerminalTool.schema();
    schema.parameters["properties"]["command"] =
        json!({"type": "string", "pattern": "^echo [a-z]{2,12}$"});
    schema
}

#[tokio::test]
async fn answers_a_prompt_with_usage_from_its_tokenizer() {
    let Some(path) = model_path() else { return };
    let p = provider(path);
    let req = ChatRequest {
        model: "local".into(),
        messages: vec![
            Message::system("You are a helpful assistant."),
            Message::user("What is the capital of France? Answer in one sentence."),
        ],
        max_tokens: Some(48),
        temperature: Some(0.0),
        ..ChatRequest::default()
    };
    let done = complete(&p, &req, &CancellationToken::new()).await.unwrap();
    let text = done.message.content.unwrap_or_default();
    assert!(text.contains("Paris"), "{text}");
    let usage = done.usage.unwrap();
    assert!(
        usage.input_tokens > 10 && usage.output_tokens > 0,
        "{usage:?}"
    );
    assert!(done.message.tool_calls.is_empty());

    // The model stays loaded: a second request on the same provider works too.
    let again = complete(&p, &req, &CancellationToken::new()).await.unwrap();
    assert_eq!(
        again.message.content.unwrap_or_default(),
        text,
        "greedy decoding is deterministic"
    );
}

#[tokio::test]
async fn a_required_tool_call_is_grammar_valid() {
    let Some(path) = model_path() else { return };
    let p = provider(path);
    let req = ChatRequest {
        model: "local".into(),
        messages: vec![
            Message::system("You are an agent with tools."),
            Message::user("Use the terminal to echo hello."),
        ],
        tools: vec![
            echo_terminal_schema(),
            hermes_tools::builtin::read_file::ReadFileTool.schema(),
        ]
        .into(),
        tool_choice: ToolChoice::Named("terminal".into()),
        max_tokens: Some(64),
        temperature: Some(0.0),
    };
    let done = complete(&p, &req, &CancellationToken::new()).await.unwrap();
    assert_eq!(done.message.tool_calls.len(), 1, "{:?}", done.message);
    let call = &done.message.tool_calls[0];
    assert_eq!(call.function.name, "terminal");
    let args: Value = serde_json::from_str(&call.function.arguments).unwrap();
    let command = args["command"].as_str().unwrap();
    assert!(
        command.starts_with("echo ") && command.len() <= 17,
        "{command}"
    );
    assert_eq!(
        done.finish_reason,
        Some(hermes_protocol::FinishReason::ToolCalls)
    );
}

/// Forces the first call of a turn to use the terminal tool; later calls are free.
struct ForceFirstTerminal {
    inner: LocalProvider,
    calls: std::sync::atomic::AtomicUsize,
}

impl Provider for ForceFirstTerminal {
    fn name(&self) -> &str {
        "local"
    }
    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<DeltaStream, LlmError>> {
        Box::pin(async move {
            let mut req = request.clone();
            if self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                req.tool_choice = ToolChoice::Named("terminal".into());
                req.tools = req
                    .tools
                    .iter()
                    .map(|t| {
                        if t.name == "terminal" {
                            echo_terminal_schema()
                        } else {
                            t.clone()
                        }
                    })
                    .collect();
            }
            req.max_tokens = Some(64);
            req.temperature = Some(0.0);
            let owned = req;
            let stream = self.inner.stream(&owned, cancel).await?;
            Ok(stream)
        })
    }
}

#[tokio::test]
async fn the_agent_executes_the_local_models_tool_call() {
    let Some(path) = model_path() else { return };
    let provider = ForceFirstTerminal {
        inner: provider(path),
        calls: Default::default(),
    };
    let tools = Registry::with_builtins()
        .filtered(&["terminal".to_owned(), "file".to_owned()])
        .0;
    let dir = tempfile::tempdir().unwrap();
    let options = AgentOptions {
        model: "local".into(),
        max_turns: 2,
        max_tokens: Some(64),
        temperature: Some(0.0),
        cwd: dir.path().to_path_buf(),
        session_id: "local-test".into(),
        homes: Default::default(),
    };
    let mut agent = Agent::builder(Arc::new(provider), tools, options)
        .system_prompt(Some("You are an agent with tools.".into()))
        .build();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    agent
        .run_turn(
            "Use the terminal to echo hello, then tell me what it printed.",
            &tx,
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    let mut finished = None;
    while let Ok(e) = rx.try_recv() {
        if let Event::ToolFinished {
            name,
            outcome,
            result,
            ..
        } = e
        {
            finished.get_or_insert((name, outcome, result));
        }
    }
    let (name, outcome, result) = finished.expect("a tool ran");
    assert_eq!(name, "terminal");
    assert_eq!(outcome, ToolOutcome::Ok, "{result}");
    let out: Value = serde_json::from_str(&result).unwrap();
    assert_eq!(out["exit_code"], 0);
    assert!(!out["output"].as_str().unwrap().is_empty(), "{result}");
}

#[tokio::test]
async fn cancellation_stops_generation_promptly() {
    let Some(path) = model_path() else { return };
    let p = provider(path);
    let req = ChatRequest {
        model: "local".into(),
        messages: vec![Message::user(
            "Write a very long story about a lighthouse keeper.",
        )],
        max_tokens: Some(4000),
        temperature: Some(0.7),
        ..ChatRequest::default()
    };
    let cancel = CancellationToken::new();
    let mut stream = p.stream(&req, &cancel).await.unwrap();
    let mut got_text = false;
    let mut stopped_at = None;
    let start = Instant::now();
    while let Some(item) = stream.next().await {
        match item {
            Ok(StreamDelta::Text(_)) if !got_text => {
                got_text = true;
                cancel.cancel();
                stopped_at = Some(Instant::now());
            }
            Ok(_) => {}
            Err(LlmError::Cancelled) => break,
            Err(e) => panic!("{e}"),
        }
        assert!(start.elapsed() < Duration::from_secs(60), "never stopped");
    }
    assert!(got_text);
    assert!(
        stopped_at.unwrap().elapsed() < Duration::from_secs(2),
        "stopped within a few tokens"
    );
    // The thread is still serving requests after a cancellation.
    let short = ChatRequest {
        max_tokens: Some(8),
        messages: vec![Message::user("Say hi.")],
        ..req
    };
    let done = complete(&p, &short, &CancellationToken::new())
        .await
        .unwrap();
    assert!(done.usage.unwrap().output_tokens > 0);
}

#[tokio::test]
async fn a_missing_model_file_is_a_clear_error() {
    let err = LocalProvider::start(LocalConfig::new("/nonexistent/model.gguf")).unwrap_err();
    assert!(
        err.to_string().contains("hermes model pull smollm2"),
        "{err}"
    );
}

#[tokio::test]
async fn a_long_prompt_is_evaluated_once_across_processes() {
    let Some(path) = model_path() else { return };
    let cache = tempfile::tempdir().unwrap();
    let start = || {
        LocalProvider::start(LocalConfig {
            threads: 1,
            prompt_cache: Some(cache.path().to_path_buf()),
            ..LocalConfig::new(path.clone())
        })
        .unwrap()
    };
    // A system prompt past the save threshold, like Hermes's with its tools.
    let system = format!(
        "You are a helpful assistant. {}",
        "Answer briefly and accurately. ".repeat(60)
    );
    let ask = |question: &str| ChatRequest {
        model: "local".into(),
        messages: vec![Message::system(system.clone()), Message::user(question)],
        max_tokens: Some(24),
        temperature: Some(0.0),
        ..ChatRequest::default()
    };
    let first = {
        let p = start();
        complete(
            &p,
            &ask("What is the capital of France?"),
            &CancellationToken::new(),
        )
        .await
        .unwrap()
    };
    assert_eq!(
        first.usage.unwrap().cache_read_tokens,
        0,
        "nothing saved yet"
    );
    let saved: Vec<_> = std::fs::read_dir(cache.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(saved.len(), 1, "{saved:?}");
    assert!(saved[0].extension().is_some_and(|e| e == "kv"));

    // A new provider (as a new process would) starts from the saved state: only
    // the part after the shared prefix is evaluated, and the answer is the same.
    let p = start();
    let again = complete(
        &p,
        &ask("What is the capital of France?"),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    let usage = again.usage.unwrap();
    assert!(
        usage.cache_read_tokens + 1 >= usage.input_tokens && usage.cache_read_tokens > 256,
        "{usage:?}"
    );
    assert_eq!(again.message.content, first.message.content);
    let other = complete(&p, &ask("Name a colour."), &CancellationToken::new())
        .await
        .unwrap();
    assert!(other.usage.unwrap().cache_read_tokens > 256);

    // A damaged file is dropped, not trusted.
    drop(p);
    std::fs::write(&saved[0], b"not a llama.cpp state").unwrap();
    let p = start();
    let fresh = complete(
        &p,
        &ask("What is the capital of France?"),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(fresh.usage.unwrap().cache_read_tokens, 0);
    assert_eq!(fresh.message.content, first.message.content);
}
