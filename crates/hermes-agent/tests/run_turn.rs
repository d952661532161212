//! `Agent::run_turn` against the scripted mock, with test tools whose timing we control.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use hermes_agent::{Agent, AgentBuilder, AgentError, AgentOptions};
use hermes_llm::{ChatCompletionsConfig, ChatCompletionsProvider};
use hermes_mock::{MockServer, Reply};
use hermes_protocol::{Event, Role, ToolSchema, TurnEnd};
use hermes_tools::{ParallelClass, Registry, Tool, ToolContext, ToolError, ToolResult};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Sleeps `ms` (or until cancelled), then echoes its label.
struct Sleepy {
    name: &'static str,
    class: ParallelClass,
}

impl Tool for Sleepy {
    fn name(&self) -> &str {
        self.name
    }
    fn toolset(&self) -> &str {
        "test"
    }
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: self.name.into(),
            description: "test".into(),
            parameters: json!({"type": "object"}),
        }
    }
    fn parallel_class(&self) -> ParallelClass {
        self.class
    }
    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let ms = args["ms"].as_u64().unwrap_or(0);
            if args["fatal"] == true {
                return Err(ToolError::Fatal("disk on fire".into()));
            }
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(ms)) => Ok(json!({"label": args["label"]}).to_string()),
                _ = ctx.cancel.cancelled() => Err(ToolError::Cancelled),
            }
        })
    }
}

fn agent(mock: &MockServer, max_turns: u32) -> Agent {
    builder(mock, max_turns).build()
}

fn builder(mock: &MockServer, max_turns: u32) -> AgentBuilder {
    let provider =
        ChatCompletionsProvider::new("custom", ChatCompletionsConfig::new(mock.base_url()))
            .unwrap();
    let mut tools = Registry::new();
    tools.register(Arc::new(Sleepy {
        name: "sleepy",
        class: ParallelClass::ReadOnly,
    }));
    tools.register(Arc::new(Sleepy {
        name: "exclusive",
        class: ParallelClass::Exclusive,
    }));
    let options = AgentOptions {
        model: "mock-model".into(),
        max_turns,
        max_tokens: None,
        temperature: None,
        cwd: std::env::temp_dir(),
        session_id: "test".into(),
        homes: Default::default(),
    };
    Agent::builder(Arc::new(provider), tools, options).system_prompt(Some("system".into()))
}

/// Call ids in the order their tools finished.
fn finished_ids(rx: &mut tokio::sync::mpsc::UnboundedReceiver<Event>) -> Vec<String> {
    collect(rx)
        .into_iter()
        .filter_map(|e| match e {
            Event::ToolFinished { call_id, .. } => Some(call_id),
            _ => None,
        })
        .collect()
}

fn collect(rx: &mut tokio::sync::mpsc::UnboundedReceiver<Event>) -> Vec<Event> {
    let mut out = Vec::new();
    while let Ok(e) = rx.try_recv() {
        out.push(e);
    }
    out
}

#[tokio::test]
async fn read_only_calls_run_concurrently_and_results_keep_call_order() {
    let mock = MockServer::start();
    mock.push(Reply::tool_calls(&[
        ("slow", "sleepy", r#"{"ms": 400, "label": "slow"}"#),
        ("fast", "sleepy", r#"{"ms": 10, "label": "fast"}"#),
    ]));
    mock.push(Reply::text("both done"));
    let mut agent = agent(&mock, 10);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let result = agent
        .run_turn("go", &tx, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(result.final_text, "both done");
    assert_eq!(result.api_calls, 2);

    let finished = finished_ids(&mut rx);
    assert_eq!(
        finished,
        vec!["fast", "slow"],
        "the fast call finished first, so they overlapped"
    );

    let tool_ids: Vec<_> = agent
        .messages()
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.tool_call_id.clone().unwrap())
        .collect();
    assert_eq!(
        tool_ids,
        vec!["slow", "fast"],
        "history keeps the model's call order"
    );
    for body in mock.chat_requests() {
        hermes_mock::check_conversation(&body).unwrap();
    }
}

#[tokio::test]
async fn exclusive_calls_run_one_after_another() {
    let mock = MockServer::start();
    mock.push(Reply::tool_calls(&[
        ("slow", "exclusive", r#"{"ms": 200, "label": "slow"}"#),
        ("fast", "exclusive", r#"{"ms": 1, "label": "fast"}"#),
    ]));
    mock.push(Reply::text("ok"));
    let mut agent = agent(&mock, 10);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    agent
        .run_turn("go", &tx, &CancellationToken::new())
        .await
        .unwrap();
    let finished = finished_ids(&mut rx);
    assert_eq!(finished, vec!["slow", "fast"]);
}

#[tokio::test]
async fn interrupt_cancels_the_running_tool_and_keeps_history_valid() {
    let mock = MockServer::start();
    mock.push(Reply::tool_call(
        "long",
        "sleepy",
        r#"{"ms": 30000, "label": "never"}"#,
    ));
    let mut agent = agent(&mock, 10);
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let started = std::time::Instant::now();
    let result = agent.run_turn("go", &tx, &cancel).await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(result.reason, TurnEnd::Interrupted);
    let last = agent.messages().last().unwrap();
    assert_eq!(last.role, Role::Tool);
    assert!(last.text().contains("Interrupted"), "{}", last.text());
    assert_eq!(
        mock.chat_requests().len(),
        1,
        "no model call after the interrupt"
    );
}

#[tokio::test]
async fn a_fatal_tool_failure_ends_the_turn_after_recording_a_result() {
    let mock = MockServer::start();
    mock.push(Reply::tool_call("c1", "exclusive", r#"{"fatal": true}"#));
    let mut agent = agent(&mock, 10);
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let err = agent
        .run_turn("go", &tx, &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, AgentError::Tool { tool, .. } if tool == "exclusive"),
        "{err}"
    );
    assert_eq!(agent.messages().last().unwrap().role, Role::Tool);
}

#[tokio::test]
async fn events_report_each_appended_message_in_order() {
    let mock = MockServer::start();
    mock.push(Reply::tool_call(
        "c1",
        "sleepy",
        r#"{"ms": 1, "label": "x"}"#,
    ));
    mock.push(Reply::text("fin"));
    let mut agent = agent(&mock, 10);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    agent
        .run_turn("go", &tx, &CancellationToken::new())
        .await
        .unwrap();
    let appended: Vec<Role> = collect(&mut rx)
        .into_iter()
        .filter_map(|e| match e {
            Event::MessageAppended { message } => Some(message.role),
            _ => None,
        })
        .collect();
    assert_eq!(
        appended,
        vec![Role::User, Role::Assistant, Role::Tool, Role::Assistant]
    );
    assert_eq!(agent.messages().len(), 5, "system + the four appended");
}

/// Records what the agent persists, shared with the test through an Arc.
#[derive(Clone, Default)]
struct Recorder(Arc<std::sync::Mutex<(Vec<Role>, u32)>>);

impl hermes_agent::MessageStore for Recorder {
    fn append(&mut self, message: &hermes_protocol::Message) -> Result<(), String> {
        self.0.lock().unwrap().0.push(message.role);
        Ok(())
    }
    fn record_usage(&mut self, _usage: &hermes_protocol::Usage) -> Result<(), String> {
        self.0.lock().unwrap().1 += 1;
        Ok(())
    }
}

#[tokio::test]
async fn the_store_sees_every_message_and_every_call() {
    let mock = MockServer::start();
    mock.push(Reply::tool_call("c1", "sleepy", r#"{"ms": 1}"#));
    mock.push(Reply::text("fin"));
    let recorder = Recorder::default();
    let mut agent = builder(&mock, 10).store(Box::new(recorder.clone())).build();
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    agent
        .run_turn("go", &tx, &CancellationToken::new())
        .await
        .unwrap();
    let (roles, calls) = recorder.0.lock().unwrap().clone();
    assert_eq!(
        roles,
        vec![Role::User, Role::Assistant, Role::Tool, Role::Assistant]
    );
    assert_eq!(calls, 2);
}

/// A store that always fails: the turn still completes, with a warning.
struct Broken;

impl hermes_agent::MessageStore for Broken {
    fn append(&mut self, _message: &hermes_protocol::Message) -> Result<(), String> {
        Err("disk full".into())
    }
    fn record_usage(&mut self, _usage: &hermes_protocol::Usage) -> Result<(), String> {
        Err("disk full".into())
    }
}

#[tokio::test]
async fn a_failing_store_warns_but_does_not_break_the_turn() {
    let mock = MockServer::start();
    mock.push(Reply::text("still answered"));
    let mut agent = builder(&mock, 10).store(Box::new(Broken)).build();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let result = agent
        .run_turn("go", &tx, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(result.final_text, "still answered");
    let warned = collect(&mut rx)
        .iter()
        .any(|e| matches!(e, Event::Status { message } if message.contains("disk full")));
    assert!(warned);
}

#[tokio::test]
async fn a_steer_sent_while_a_tool_runs_rides_on_its_result() {
    let mock = MockServer::start();
    mock.push_all([
        Reply::tool_calls(&[
            ("a", "sleepy", r#"{"ms": 10, "label": "first"}"#),
            ("b", "sleepy", r#"{"ms": 400, "label": "second"}"#),
        ]),
        Reply::text("done"),
    ]);
    let mut agent = agent(&mock, 10);
    let steer = agent.steer_handle();
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(150)).await;
        assert!(steer.steer("use the other file"));
    });
    let result = agent.run_turn("go", &tx, &cancel).await.unwrap();
    assert_eq!(result.final_text, "done");
    let requests = mock.chat_requests();
    assert_eq!(requests.len(), 2);
    let msgs = requests[1]["messages"].as_array().unwrap();
    let tools: Vec<&Value> = msgs.iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(tools.len(), 2);
    let first = tools[0]["content"].as_str().unwrap();
    let last = tools[1]["content"].as_str().unwrap();
    assert!(!first.contains("use the other file"), "{first}");
    assert!(last.contains("second"), "{last}");
    assert!(
        last.contains(&hermes_agent::steer::steer_marker("use the other file")),
        "{last}"
    );
    // No extra user message was added mid-turn.
    assert_eq!(msgs.iter().filter(|m| m["role"] == "user").count(), 1);
    // The history (and so the store) keeps the steered result.
    let kept = agent
        .messages()
        .iter()
        .rfind(|m| m.role == Role::Tool)
        .unwrap();
    assert!(kept.text().contains("use the other file"));
    assert!(!agent.steer_handle().is_pending());
}

#[tokio::test]
async fn a_steer_with_no_tool_result_in_the_turn_stays_pending() {
    let mock = MockServer::start();
    mock.push(Reply::text("answer"));
    let mut agent = agent(&mock, 10);
    let steer = agent.steer_handle();
    steer.steer("be brief");
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let result = agent
        .run_turn("hi", &tx, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(result.final_text, "answer");
    let req = &mock.chat_requests()[0];
    let body = req.to_string();
    assert!(!body.contains("be brief"), "{body}");
    assert_eq!(
        agent
            .messages()
            .iter()
            .filter(|m| m.role == Role::User)
            .count(),
        1
    );
    assert_eq!(steer.take().as_deref(), Some("be brief"));
}

#[tokio::test]
async fn a_steer_never_edits_an_earlier_turns_tool_result() {
    let mock = MockServer::start();
    mock.push_all([
        Reply::tool_call("a", "sleepy", r#"{"ms": 1, "label": "x"}"#),
        Reply::text("ok"),
    ]);
    let mut agent = agent(&mock, 10);
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    agent
        .run_turn("go", &tx, &CancellationToken::new())
        .await
        .unwrap();
    // A steer left from the previous turn does not touch that turn's tool result.
    mock.push(Reply::text("fine"));
    agent.steer_handle().steer("late");
    agent
        .run_turn("again", &tx, &CancellationToken::new())
        .await
        .unwrap();
    let body = mock.chat_requests()[2].to_string();
    assert!(!body.contains("late"), "{body}");
    assert!(agent.steer_handle().is_pending());
}

#[tokio::test]
async fn a_round_of_only_execute_code_is_refunded_to_the_budget() {
    let mock = MockServer::start();
    mock.push_all([
        Reply::tool_call("s1", "execute_code", r#"{"ms": 0, "label": "script"}"#),
        Reply::text("done"),
        Reply::tool_call("t1", "sleepy", r#"{"ms": 0, "label": "plain"}"#),
        Reply::text("done again"),
    ]);
    let agent = agent(&mock, 1);
    let mut tools = agent.tools().clone();
    tools.register(Arc::new(Sleepy {
        name: "execute_code",
        class: ParallelClass::Exclusive,
    }));
    let mut agent = Agent::builder(
        agent.active_route().provider.clone(),
        tools,
        agent.options().clone(),
    )
    .system_prompt(Some("system".into()))
    .build();
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let scripted = agent
        .run_turn("script it", &tx, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        scripted.reason,
        TurnEnd::Completed,
        "the script round was free"
    );
    let plain = agent
        .run_turn("now plainly", &tx, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        plain.reason,
        TurnEnd::BudgetExhausted,
        "an ordinary tool round spends the single call"
    );
}

#[tokio::test]
async fn streamed_deltas_are_masked_and_add_up_to_the_stored_reply() {
    const KEY: &str = "sk-ant-api03-repeatedbythemodel0123456789";
    let mock = MockServer::start();
    mock.push(
        Reply::text(format!("Your key is {KEY} and that is it."))
            .with_reasoning(format!("The user pasted {KEY} earlier.")),
    );
    let mut agent = agent(&mock, 10);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    agent
        .run_turn("go", &tx, &CancellationToken::new())
        .await
        .unwrap();
    let (mut text, mut reasoning, mut deltas) = (String::new(), String::new(), 0);
    for event in collect(&mut rx) {
        match event {
            Event::TextDelta { text: t } => {
                deltas += 1;
                text.push_str(&t);
            }
            Event::ReasoningDelta { text: t } => reasoning.push_str(&t),
            _ => {}
        }
    }
    assert!(deltas > 1, "the reply still streams in pieces");
    assert!(!text.contains(KEY) && !reasoning.contains(KEY));
    let stored = agent.messages().last().unwrap();
    assert_eq!(stored.content.as_deref(), Some(text.as_str()));
    assert_eq!(stored.reasoning.as_deref(), Some(reasoning.as_str()));
    assert_eq!(text, "Your key is «redacted:sk-…» and that is it.");
}
