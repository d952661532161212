//! `delegate_task` inside the loop, against the scripted mock: an interrupt
//! reaches running children, and roles/depth decide who may delegate.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use hermes_agent::delegate::{ChildSpec, DelegateTool, DelegationSettings, SubagentFactory};
use hermes_agent::{Agent, AgentBuilder, AgentOptions};
use hermes_llm::{ChatCompletionsConfig, ChatCompletionsProvider};
use hermes_mock::{MockServer, Reply};
use hermes_protocol::{Event, ToolOutcome, ToolSchema, TurnEnd};
use hermes_tools::{Registry, Tool, ToolContext, ToolError, ToolResult};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Waits `ms` or until cancelled.
struct Wait;

impl Tool for Wait {
    fn name(&self) -> &str {
        "wait"
    }
    fn toolset(&self) -> &str {
        "test"
    }
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "wait".into(),
            description: "test".into(),
            parameters: json!({"type": "object"}),
        }
    }
    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let ms = args["ms"].as_u64().unwrap_or(0);
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(ms)) => Ok("{\"waited\": true}".into()),
                _ = ctx.cancel.cancelled() => Err(ToolError::Cancelled),
            }
        })
    }
}

/// Builds children against the mock and remembers what it was asked for.
struct Factory {
    base_url: String,
    specs: Mutex<Vec<ChildSpec>>,
}

impl SubagentFactory for Factory {
    fn build(&self, spec: ChildSpec) -> Result<Agent, String> {
        self.specs.lock().unwrap().push(spec.clone());
        Ok(agent_with(
            &self.base_url,
            spec.tools,
            spec.max_turns,
            Some(spec.system_prompt),
        )
        .approvals(spec.approvals)
        .build())
    }
}

fn agent_with(
    base_url: &str,
    tools: Registry,
    max_turns: u32,
    prompt: Option<String>,
) -> AgentBuilder {
    let provider =
        ChatCompletionsProvider::new("custom", ChatCompletionsConfig::new(base_url.to_owned()))
            .unwrap();
    let options = AgentOptions {
        model: "mock-model".into(),
        max_turns,
        max_tokens: None,
        temperature: None,
        cwd: std::env::temp_dir(),
        session_id: "parent-session".into(),
        homes: Default::default(),
    };
    Agent::builder(Arc::new(provider), tools, options).system_prompt(prompt)
}

fn parent(mock: &MockServer, settings: DelegationSettings) -> (Agent, Arc<Factory>) {
    let factory = Arc::new(Factory {
        base_url: mock.base_url(),
        specs: Mutex::new(Vec::new()),
    });
    let mut tools = Registry::new();
    tools.register(Arc::new(Wait));
    tools.register(Arc::new(DelegateTool::new(settings, factory.clone())));
    (
        agent_with(&mock.base_url(), tools, 10, Some("parent".into())).build(),
        factory,
    )
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn an_interrupt_reaches_a_running_child_and_its_tool() {
    let mock = MockServer::start();
    mock.push(Reply::tool_call(
        "d1",
        "delegate_task",
        r#"{"goal": "TASK-LONG: wait a long time"}"#,
    ));
    mock.push(
        Reply::tool_call("w1", "wait", r#"{"ms": 600000}"#).for_request_containing("TASK-LONG"),
    );
    let (mut agent, factory) = parent(&mock, DelegationSettings::default());
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let watcher = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            let mut seen = Vec::new();
            while let Some(event) = rx.recv().await {
                if let Event::Nested { inner, .. } = &event
                    && matches!(**inner, Event::ToolStarted { ref name, .. } if name == "wait")
                {
                    cancel.cancel();
                }
                seen.push(event);
            }
            seen
        })
    };
    let result = agent.run_turn("delegate it", &tx, &cancel).await.unwrap();
    drop(tx);
    assert_eq!(result.reason, TurnEnd::Interrupted);
    let seen = watcher.await.unwrap();
    assert!(
        seen.iter().any(|e| matches!(e, Event::Nested { inner, .. }
            if matches!(**inner, Event::ToolFinished { ref name, outcome: ToolOutcome::Cancelled, .. } if name == "wait"))),
        "the child's tool was not cancelled: {seen:#?}"
    );
    // The parent keeps the (interrupted) report as the call's result, so its
    // history stays a valid conversation.
    let report: Value = serde_json::from_str(
        agent
            .messages()
            .iter()
            .find(|m| m.tool_call_id.as_deref() == Some("d1"))
            .and_then(|m| m.content.as_deref())
            .unwrap(),
    )
    .unwrap();
    assert_eq!(report["results"][0]["status"], "interrupted", "{report}");
    assert_eq!(
        report["results"][0]["exit_reason"], "interrupted",
        "{report}"
    );
    let specs = factory.specs.lock().unwrap();
    assert_eq!(specs[0].parent_session_id, "parent-session");
}

#[tokio::test]
async fn only_an_orchestrator_within_the_depth_limit_keeps_delegate_task() {
    // Depth 1 (the default): 'orchestrator' is forced to leaf.
    let mock = MockServer::start();
    mock.push_all([
        Reply::tool_call(
            "d1",
            "delegate_task",
            r#"{"goal": "TASK-FLAT", "role": "orchestrator"}"#,
        ),
        Reply::text("flat done").for_request_containing("TASK-FLAT"),
        Reply::text("parent done"),
    ]);
    let (mut agent, _) = parent(&mock, DelegationSettings::default());
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let done = agent
        .run_turn("go", &tx, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(done.final_text, "parent done");
    let reqs = mock.chat_requests();
    assert!(!tool_names(&reqs[1]).contains(&"delegate_task".to_owned()));
    assert!(tool_names(&reqs[1]).contains(&"wait".to_owned()));

    // Depth 2: the orchestrator child may delegate; its own child may not.
    let mock = MockServer::start();
    mock.push_all([
        Reply::tool_call(
            "d1",
            "delegate_task",
            r#"{"goal": "TASK-ORCH", "role": "orchestrator"}"#,
        ),
        Reply::tool_call(
            "d2",
            "delegate_task",
            r#"{"goal": "TASK-LEAF", "role": "orchestrator"}"#,
        )
        .for_request_containing("TASK-ORCH"),
        Reply::text("leaf done").for_request_containing("TASK-LEAF"),
        Reply::text("orchestrator done").for_request_containing("leaf done"),
        Reply::text("parent done"),
    ]);
    let settings = DelegationSettings {
        max_spawn_depth: 2,
        ..DelegationSettings::default()
    };
    let (mut agent, _) = parent(&mock, settings);
    let done = agent
        .run_turn("go", &tx, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(done.final_text, "parent done");
    let reqs = mock.chat_requests();
    assert_eq!(reqs.len(), 5);
    let orch = tool_names(&reqs[1]);
    assert!(orch.contains(&"delegate_task".to_owned()), "{orch:?}");
    let leaf = tool_names(&reqs[2]);
    assert!(!leaf.contains(&"delegate_task".to_owned()), "{leaf:?}");
    let orchestrator_prompt = reqs[1]["messages"][0]["content"].as_str().unwrap();
    assert!(
        orchestrator_prompt.contains("depth 1 of at most 2"),
        "{orchestrator_prompt}"
    );
    let report = reqs[4]["messages"].to_string();
    assert!(report.contains("orchestrator done"), "{report}");
    assert!(
        !report.contains("leaf done"),
        "a grandchild's summary must stay with its parent"
    );
}

/// Remembers the delegations it is told of.
#[derive(Default)]
struct Observing {
    seen: Mutex<Vec<(String, String)>>,
}

impl hermes_tools::memory_provider::MemoryProvider for Observing {
    fn name(&self) -> &str {
        "observing"
    }
    fn on_delegation(&self, task: &str, result: &str, _child: &str) {
        self.seen.lock().unwrap().push((task.into(), result.into()));
    }
}

#[tokio::test]
async fn the_parents_memory_provider_observes_each_delegation() {
    let mock = MockServer::start();
    mock.push_all([
        Reply::tool_call("d1", "delegate_task", r#"{"goal": "TASK-NOTE"}"#),
        Reply::text("child found 42").for_request_containing("TASK-NOTE"),
        Reply::text("parent done"),
    ]);
    let factory = Arc::new(Factory {
        base_url: mock.base_url(),
        specs: Mutex::new(Vec::new()),
    });
    let mut tools = Registry::new();
    tools.register(Arc::new(DelegateTool::new(
        DelegationSettings::default(),
        factory,
    )));
    let provider = Arc::new(Observing::default());
    let mut agent = agent_with(&mock.base_url(), tools, 10, Some("parent".into()))
        .memory_provider(Some(provider.clone()))
        .build();
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let done = agent
        .run_turn("go", &tx, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(done.final_text, "parent done");
    for _ in 0..100 {
        if !provider.seen.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let seen = provider.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].0, "TASK-NOTE");
    assert!(seen[0].1.contains("child found 42"), "{seen:?}");
}
