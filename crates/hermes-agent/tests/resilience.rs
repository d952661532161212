//! Retry and fallback against the scripted mock: a user never loses a turn to a 429.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use hermes_agent::{Agent, AgentBuilder, AgentOptions, RetryPolicy};
use hermes_llm::{ChatCompletionsConfig, ChatCompletionsProvider, LlmError};
use hermes_mock::{MockServer, Reply};
use hermes_protocol::{Event, Role};
use hermes_tools::Registry;
use tokio_util::sync::CancellationToken;

fn provider(mock: &MockServer) -> Arc<ChatCompletionsProvider> {
    Arc::new(
        ChatCompletionsProvider::new("custom", ChatCompletionsConfig::new(mock.base_url()))
            .unwrap(),
    )
}

fn agent(mock: &MockServer) -> Agent {
    builder(mock).build()
}

fn builder(mock: &MockServer) -> AgentBuilder {
    let options = AgentOptions {
        model: "primary-model".into(),
        max_turns: 10,
        max_tokens: None,
        temperature: None,
        cwd: std::env::temp_dir(),
        session_id: "t".into(),
        homes: Default::default(),
    };
    let tools = Registry::with_builtins()
        .filtered(&["terminal".to_owned()])
        .0;
    Agent::builder(provider(mock), tools, options)
        .system_prompt(Some("sys".into()))
        .retry_policy(RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(200),
            ..RetryPolicy::default()
        })
}

fn statuses(rx: &mut tokio::sync::mpsc::UnboundedReceiver<Event>) -> Vec<String> {
    let mut out = Vec::new();
    while let Ok(e) = rx.try_recv() {
        if let Event::Status { message } = e {
            out.push(message);
        }
    }
    out
}

#[tokio::test]
async fn two_rate_limits_then_success() {
    let mock = MockServer::start();
    let limited = || {
        Reply::error(
            429,
            r#"{"error":{"message":"Rate limit exceeded, please slow down"}}"#,
        )
        .with_header("retry-after", "0")
    };
    mock.push_all([limited(), limited(), Reply::text("made it")]);
    let mut a = agent(&mock);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let r = a
        .run_turn("hi", &tx, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(r.final_text, "made it");
    assert_eq!(mock.chat_requests().len(), 3);
    let s = statuses(&mut rx);
    assert_eq!(
        s.iter()
            .filter(|m| m.starts_with("rate limited") && m.contains("retrying in 0.0s"))
            .count(),
        2,
        "{s:?}"
    );
    // The failed attempts left nothing in the history.
    let roles: Vec<Role> = a.messages().iter().map(|m| m.role).collect();
    assert_eq!(roles, vec![Role::System, Role::User, Role::Assistant]);
}

#[tokio::test]
async fn payment_required_falls_back_to_the_next_provider() {
    let primary = MockServer::start();
    let backup = MockServer::start();
    primary.push(Reply::error(402, r#"{"error":{"message":"Insufficient credits. Add more at https://openrouter.ai/credits"}}"#));
    backup.push(Reply::text("answered by the backup"));
    let mut a = builder(&primary)
        .fallback(provider(&backup), "backup-model")
        .build();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let r = a
        .run_turn("hi", &tx, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(r.final_text, "answered by the backup");
    assert_eq!(
        primary.chat_requests().len(),
        1,
        "billing errors are not retried on the same provider"
    );
    let sent = backup.chat_requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["model"], "backup-model");
    assert!(
        statuses(&mut rx)
            .iter()
            .any(|m| m.starts_with("out of credits")
                && m.contains("falling back to custom (backup-model)"))
    );
    assert_eq!(
        a.active_route().model,
        "backup-model",
        "the fallback stays active for the session"
    );
}

#[tokio::test]
async fn retries_exhausted_then_fallback_then_clear_failure() {
    let primary = MockServer::start();
    let backup = MockServer::start();
    for _ in 0..4 {
        primary.push(Reply::error(
            503,
            r#"{"error":{"message":"The server is overloaded"}}"#,
        ));
    }
    for _ in 0..4 {
        backup.push(Reply::error(
            500,
            r#"{"error":{"message":"internal error"}}"#,
        ));
    }
    let mut a = builder(&primary)
        .fallback(provider(&backup), "backup-model")
        .build();
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let err = a
        .run_turn("hi", &tx, &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        matches!(
            &err,
            hermes_agent::AgentError::Llm(LlmError::Http { status: 500, .. })
        ),
        "{err}"
    );
    assert_eq!(
        primary.chat_requests().len(),
        4,
        "one call and three retries"
    );
    assert_eq!(backup.chat_requests().len(), 4);
}

#[tokio::test]
async fn a_stream_cut_mid_tool_call_is_retried_without_duplicates() {
    let mock = MockServer::start();
    mock.push(Reply::tool_call("call_1", "terminal", r#"{"command": "echo once"}"#).cut_after(4));
    mock.push(Reply::tool_call(
        "call_1",
        "terminal",
        r#"{"command": "echo once"}"#,
    ));
    mock.push(Reply::text("done"));
    let mut a = agent(&mock);
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let r = a
        .run_turn("go", &tx, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(r.final_text, "done");
    let calls: Vec<_> = a
        .messages()
        .iter()
        .flat_map(|m| m.tool_calls.iter())
        .collect();
    assert_eq!(
        calls.len(),
        1,
        "one tool call in history, not a partial plus a full one"
    );
    let results: Vec<_> = a
        .messages()
        .iter()
        .filter(|m| m.role == Role::Tool)
        .collect();
    assert_eq!(results.len(), 1);
    assert!(results[0].text().contains("once"));
    for body in mock.chat_requests() {
        hermes_mock::check_conversation(&body).unwrap();
    }
}

#[tokio::test]
async fn an_interrupt_during_backoff_stops_at_once() {
    let mock = MockServer::start();
    mock.push(
        Reply::error(429, r#"{"error":{"message":"rate limited"}}"#)
            .with_header("retry-after", "60"),
    );
    let mut a = builder(&mock)
        .retry_policy(RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_secs(60),
            max_delay: Duration::from_secs(120),
            ..RetryPolicy::default()
        })
        .build();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        trigger.cancel();
    });
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let started = std::time::Instant::now();
    let r = a.run_turn("hi", &tx, &cancel).await.unwrap();
    assert_eq!(r.reason, hermes_protocol::TurnEnd::Interrupted);
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_401_rotates_to_the_next_pooled_key() {
    use hermes_llm::credentials::{
        AuthStore, CredentialPool, PooledProvider, SplitMix64, Strategy, SystemClock,
    };
    let dir = tempfile::tempdir().unwrap();
    let auth = dir.path().join("auth.json");
    let mut store = AuthStore::new(&auth, Arc::new(SystemClock), Box::new(SplitMix64::new(7)));
    store
        .add("custom", "sk-first-key-0001", Some("first"))
        .unwrap();
    store
        .add("custom", "sk-second-key-0002", Some("second"))
        .unwrap();
    let pool =
        CredentialPool::load(&auth, "custom", Strategy::FillFirst, Arc::new(SystemClock)).unwrap();

    let mock = MockServer::start();
    mock.push(Reply::error(
        401,
        r#"{"error":{"message":"Invalid API key provided"}}"#,
    ));
    mock.push(Reply::text("second key works"));
    let base = mock.base_url();
    let pooled = PooledProvider::new(
        "custom",
        pool,
        Box::new(move |key| {
            let cfg = ChatCompletionsConfig {
                api_key: Some(key.to_owned()),
                ..ChatCompletionsConfig::new(base.clone())
            };
            Ok(Arc::new(ChatCompletionsProvider::new("custom", cfg)?)
                as Arc<dyn hermes_llm::Provider>)
        }),
    )
    .unwrap()
    .unwrap();
    let options = AgentOptions {
        model: "m".into(),
        max_turns: 5,
        max_tokens: None,
        temperature: None,
        cwd: std::env::temp_dir(),
        session_id: "t".into(),
        homes: Default::default(),
    };
    let mut a = Agent::builder(Arc::new(pooled), Registry::new(), options).build();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let r = a
        .run_turn("hi", &tx, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(r.final_text, "second key works");
    let auths: Vec<String> = mock
        .requests()
        .iter()
        .filter(|q| q.is_chat())
        .map(|q| q.header("authorization").unwrap().to_owned())
        .collect();
    assert_eq!(
        auths,
        vec!["Bearer sk-first-key-0001", "Bearer sk-second-key-0002"]
    );
    assert!(
        statuses(&mut rx)
            .iter()
            .any(|m| m.contains("switched to the next pooled API key"))
    );
    // The exhausted key is recorded in auth.json for other processes.
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&auth).unwrap()).unwrap();
    let entries = saved["credential_pool"]["custom"].as_array().unwrap();
    assert!(
        entries
            .iter()
            .any(|e| e["last_status"] == "exhausted" && e["last_error_code"] == 401),
        "{saved:#}"
    );
}
