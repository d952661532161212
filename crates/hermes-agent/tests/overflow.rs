//! Context-window overflow against the scripted mock: a 400 that states the real
//! window steps the context length down, the conversation is compacted and the
//! retried request fits; an output-cap rejection shrinks `max_tokens` instead.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, Mutex};

use hermes_agent::compact::SUMMARY_END;
use hermes_agent::{Agent, AgentError, AgentOptions, LimitStore};
use hermes_llm::{ChatCompletionsConfig, ChatCompletionsProvider};
use hermes_mock::{MockServer, Reply, check_conversation};
use hermes_protocol::{Event, Message};
use hermes_tools::Registry;
use tokio_util::sync::CancellationToken;

#[derive(Clone, Default)]
struct Remembered(Arc<Mutex<Vec<(String, u64)>>>);

impl LimitStore for Remembered {
    fn save_context_length(&mut self, model: &str, tokens: u64) -> Result<(), String> {
        self.0.lock().unwrap().push((model.to_owned(), tokens));
        Ok(())
    }
}

fn history(rounds: usize) -> Vec<Message> {
    let mut v = Vec::new();
    for i in 0..rounds {
        v.push(Message::user(format!(
            "step {i}: {}",
            "please check this ".repeat(40)
        )));
        v.push(Message::assistant(format!(
            "checked {i}: {}",
            "all good here ".repeat(40)
        )));
    }
    v
}

fn agent(mock: &MockServer, past: Vec<Message>) -> (Agent, Remembered) {
    let provider = Arc::new(
        ChatCompletionsProvider::new("custom", ChatCompletionsConfig::new(mock.base_url()))
            .unwrap(),
    );
    let options = AgentOptions {
        model: "small-model".into(),
        max_turns: 5,
        max_tokens: Some(4000),
        temperature: None,
        cwd: std::env::temp_dir(),
        session_id: "t".into(),
        homes: Default::default(),
    };
    let tools = Registry::with_builtins()
        .filtered(&["terminal".to_owned()])
        .unwrap();
    let mut a = Agent::new(provider, tools, options, Some("sys".into()), past);
    a.set_context_length(128_000);
    let remembered = Remembered::default();
    a.set_limit_store(Box::new(remembered.clone()));
    (a, remembered)
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
async fn reported_window_steps_down_compacts_and_is_remembered() {
    let mock = MockServer::start();
    mock.push_all([
        Reply::error(
            400,
            r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 13000 tokens. Please reduce the length of the messages.","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
        ),
        Reply::text("fitted"),
    ]);
    let (mut a, remembered) = agent(&mock, history(30));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let r = a
        .run_turn("now fix the build", &tx, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(r.final_text, "fitted");
    assert_eq!(a.context_length(), 8192);
    assert_eq!(
        *remembered.0.lock().unwrap(),
        vec![("small-model".to_owned(), 8192)]
    );

    let requests = mock.chat_requests();
    assert_eq!(requests.len(), 2);
    let first = requests[0]["messages"].as_array().unwrap().len();
    let second = requests[1]["messages"].as_array().unwrap();
    assert!(second.len() < first / 2, "{} vs {first}", second.len());
    check_conversation(&requests[1]).unwrap();
    assert_eq!(second.last().unwrap()["content"], "now fix the build");
    assert!(second.iter().any(|m| {
        m["content"]
            .as_str()
            .is_some_and(|c| c.contains(SUMMARY_END))
    }));
    // The summary names the task that was active in the compacted turns.
    assert!(
        serde_json::to_string(&requests[1])
            .unwrap()
            .contains("## Active Task")
    );

    let s = statuses(&mut rx);
    assert!(
        s.iter().any(|m| m.contains("8192 tokens (was 128000)")),
        "{s:?}"
    );
    assert!(s.iter().any(|m| m.contains("compacted")), "{s:?}");
    assert!(
        s.iter()
            .any(|m| m.contains("Remembered the context window")),
        "{s:?}"
    );
}

#[tokio::test]
async fn output_cap_rejection_shrinks_max_tokens_for_one_call() {
    let mock = MockServer::start();
    mock.push_all([
        Reply::error(
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: max_tokens: 4000 > context_window: 128000 - input_tokens: 126000 = available_tokens: 2000"}}"#,
        ),
        Reply::text("short answer"),
        Reply::text("next turn"),
    ]);
    let (mut a, remembered) = agent(&mock, Vec::new());
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    assert_eq!(
        a.run_turn("hi", &tx, &cancel).await.unwrap().final_text,
        "short answer"
    );
    a.run_turn("again", &tx, &cancel).await.unwrap();
    let requests = mock.chat_requests();
    let caps: Vec<_> = requests.iter().map(|r| r["max_tokens"].as_u64()).collect();
    assert_eq!(caps, vec![Some(4000), Some(2000 - 64), Some(4000)]);
    assert_eq!(a.context_length(), 128_000);
    assert!(remembered.0.lock().unwrap().is_empty());
}

#[tokio::test]
async fn an_overflow_that_cannot_shrink_ends_the_turn_with_advice() {
    let mock = MockServer::start();
    let overflow = || Reply::error(400, r#"{"error":{"message":"prompt is too long"}}"#);
    mock.push_all([overflow(), overflow(), overflow(), overflow()]);
    let (mut a, _) = agent(&mock, Vec::new());
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let err = a
        .run_turn("hi", &tx, &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, AgentError::ContextExhausted(m) if m.contains("new session")),
        "{err}"
    );
    assert_eq!(mock.chat_requests().len(), 1);
}
