//! Tool-loop guardrails end to end: the scripted model keeps repeating a failing
//! terminal call; the agent warns after the threshold and, with hard stops on,
//! blocks the call and ends the turn.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::future::BoxFuture;
use hermes_agent::{Agent, AgentOptions, GuardrailConfig};
use hermes_llm::{ChatCompletionsConfig, ChatCompletionsProvider};
use hermes_mock::{MockServer, Reply};
use hermes_protocol::{Event, Role, ToolSchema, TurnEnd};
use hermes_tools::{ParallelClass, Registry, Tool, ToolContext, ToolResult};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// A stand-in `terminal` whose command always exits 1 (and echoes a secret).
struct FailingTerminal {
    runs: Arc<AtomicUsize>,
}

impl Tool for FailingTerminal {
    fn name(&self) -> &str {
        "terminal"
    }
    fn toolset(&self) -> &str {
        "test"
    }
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "terminal".into(),
            description: "test".into(),
            parameters: json!({"type": "object"}),
        }
    }
    fn parallel_class(&self) -> ParallelClass {
        ParallelClass::Exclusive
    }
    fn call<'a>(&'a self, _args: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            Ok(json!({
                "output": "make: *** No rule to make target 'build'.\nGITHUB=ghp_abcdefghijklmnopqrstuvwxyz0123456789",
                "exit_code": 2,
                "error": null,
            })
            .to_string())
        })
    }
}

fn agent(mock: &MockServer, runs: Arc<AtomicUsize>, guardrails: GuardrailConfig) -> Agent {
    let provider =
        ChatCompletionsProvider::new("custom", ChatCompletionsConfig::new(mock.base_url()))
            .unwrap();
    let mut tools = Registry::new();
    tools.register(Arc::new(FailingTerminal { runs }));
    let options = AgentOptions {
        model: "mock-model".into(),
        max_turns: 20,
        max_tokens: None,
        temperature: None,
        cwd: std::env::temp_dir(),
        session_id: "test".into(),
        homes: Default::default(),
    };
    Agent::builder(Arc::new(provider), tools, options)
        .system_prompt(Some("system".into()))
        .guardrails(guardrails)
        .build()
}

fn script_repeats(mock: &MockServer, n: usize) {
    for i in 0..n {
        mock.push(Reply::tool_call(
            &format!("c{i}"),
            "terminal",
            // Key order and spacing vary; the canonical signature does not.
            if i % 2 == 0 {
                r#"{"command": "make build", "timeout": 60}"#
            } else {
                r#"{"timeout":60,"command":"make build"}"#
            },
        ));
    }
}

fn tool_texts(agent: &Agent) -> Vec<String> {
    agent
        .messages()
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.text().to_owned())
        .collect()
}

#[tokio::test]
async fn repeated_failing_call_gets_a_warning_by_default() {
    let mock = MockServer::start();
    script_repeats(&mock, 3);
    mock.push(Reply::text("giving up"));
    let runs = Arc::new(AtomicUsize::new(0));
    let mut agent = agent(&mock, runs.clone(), GuardrailConfig::default());
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let result = agent
        .run_turn("build it", &tx, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(result.final_text, "giving up");
    assert_eq!(runs.load(Ordering::SeqCst), 3, "warnings never stop a call");
    let texts = tool_texts(&agent);
    assert!(!texts[0].contains("Tool loop warning"), "{}", texts[0]);
    assert!(
        texts[1].contains("[Tool loop warning: repeated_exact_failure_warning; count=2;"),
        "{}",
        texts[1]
    );
    assert!(texts[2].contains("count=3"), "{}", texts[2]);
    // Terminal output is redacted before the model sees it.
    assert!(
        texts.iter().all(|t| !t.contains("ghijklmnopqrstuv")),
        "{texts:?}"
    );
    let mut statuses = Vec::new();
    while let Ok(e) = rx.try_recv() {
        if let Event::Status { message } = e {
            statuses.push(message);
        }
    }
    assert!(
        statuses
            .iter()
            .any(|s| s.contains("repeated_exact_failure_warning")),
        "{statuses:?}"
    );
    // The warning reached the model in the next request.
    let last = mock.chat_requests().last().unwrap().to_string();
    assert!(last.contains("Tool loop warning"));
    for body in mock.chat_requests() {
        hermes_mock::check_conversation(&body).unwrap();
    }
}

#[tokio::test]
async fn hard_stop_blocks_the_sixth_identical_failure_and_ends_the_turn() {
    let mock = MockServer::start();
    script_repeats(&mock, 6);
    let runs = Arc::new(AtomicUsize::new(0));
    let mut agent = agent(
        &mock,
        runs.clone(),
        GuardrailConfig {
            hard_stop_enabled: true,
            ..GuardrailConfig::default()
        },
    );
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let result = agent
        .run_turn("build it", &tx, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 5, "the sixth call is blocked");
    assert_eq!(result.reason, TurnEnd::Completed);
    assert!(
        result.final_text.contains("repeated_exact_failure_block"),
        "{}",
        result.final_text
    );
    assert_eq!(
        mock.chat_requests().len(),
        6,
        "no model call after the halt"
    );
    let texts = tool_texts(&agent);
    assert_eq!(texts.len(), 6);
    assert!(texts[5].contains("\"guardrail\""), "{}", texts[5]);
    let last = agent.messages().last().unwrap();
    assert_eq!(last.role, Role::Assistant);
    // A new turn starts with clean counts.
    script_repeats(&mock, 1);
    mock.push(Reply::text("ok"));
    agent
        .run_turn("again", &tx, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 6);
}
