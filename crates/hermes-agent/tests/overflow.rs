//! Compression against the scripted mock: a 400 that states the real window steps the
//! context length down and compresses (summary written by the model, request checked);
//! a long session crosses the preflight threshold; the summary falls back to the main
//! model and then to a local summary; the transcript moves to a child session; the todo
//! list survives; an output-cap rejection shrinks `max_tokens` instead.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, Mutex};

use hermes_agent::compress::{SUMMARY_PREFIX, SYSTEM_NOTE};
use hermes_agent::{Agent, AgentBuilder, AgentError, AgentOptions, LimitStore, MessageStore};
use hermes_llm::{ChatCompletionsConfig, ChatCompletionsProvider};
use hermes_mock::{MockServer, Reply, check_conversation};
use hermes_protocol::{Event, Message, Usage};
use hermes_tools::Registry;
use hermes_tools::builtin::todo::TodoTool;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

#[derive(Clone, Default)]
struct Remembered(Arc<Mutex<Vec<(String, u64)>>>);

impl LimitStore for Remembered {
    fn save_context_length(&mut self, model: &str, tokens: u64) -> Result<(), String> {
        self.0.lock().unwrap().push((model.to_owned(), tokens));
        Ok(())
    }
}

/// Session id and its messages.
type Transcript = (String, Vec<Message>);

/// Records appends and forks like a session store.
#[derive(Clone, Default)]
struct Sessions(Arc<Mutex<Vec<Transcript>>>);

impl MessageStore for Sessions {
    fn append(&mut self, message: &Message) -> Result<(), String> {
        let mut s = self.0.lock().unwrap();
        if s.is_empty() {
            s.push(("parent".into(), Vec::new()));
        }
        s.last_mut().unwrap().1.push(message.clone());
        Ok(())
    }
    fn record_usage(&mut self, _: &Usage) -> Result<(), String> {
        Ok(())
    }
    fn fork(&mut self, messages: &[Message]) -> Result<Option<String>, String> {
        let mut s = self.0.lock().unwrap();
        let id = format!("child{}", s.len());
        s.push((id.clone(), messages.to_vec()));
        Ok(Some(id))
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

fn provider(mock: &MockServer) -> Arc<ChatCompletionsProvider> {
    Arc::new(
        ChatCompletionsProvider::new("custom", ChatCompletionsConfig::new(mock.base_url()))
            .unwrap(),
    )
}

fn agent_with(
    mock: &MockServer,
    past: Vec<Message>,
    tools: Registry,
    tune: impl FnOnce(AgentBuilder) -> AgentBuilder,
) -> (Agent, Remembered) {
    let options = AgentOptions {
        model: "small-model".into(),
        max_turns: 5,
        max_tokens: Some(4000),
        temperature: None,
        cwd: std::env::temp_dir(),
        session_id: "parent".into(),
        homes: Default::default(),
    };
    let remembered = Remembered::default();
    let builder = Agent::builder(provider(mock), tools, options)
        .system_prompt(Some("sys".into()))
        .history(past)
        .context_length(Some(128_000))
        .limit_store(Box::new(remembered.clone()));
    (tune(builder).build(), remembered)
}

fn agent(mock: &MockServer, past: Vec<Message>) -> (Agent, Remembered) {
    agent_tuned(mock, past, |b| b)
}

fn agent_tuned(
    mock: &MockServer,
    past: Vec<Message>,
    tune: impl FnOnce(AgentBuilder) -> AgentBuilder,
) -> (Agent, Remembered) {
    let tools = Registry::with_builtins()
        .filtered(&["terminal".to_owned()])
        .0;
    agent_with(mock, past, tools, tune)
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

fn text_of(v: &Value) -> String {
    v["content"].as_str().unwrap_or_default().to_owned()
}

const SUMMARY: &str =
    "## Active Task\nUser asked: 'now fix the build'\n\n## Completed Actions\n1. CHECKED 30 steps";

#[tokio::test]
async fn reported_window_steps_down_compresses_and_is_remembered() {
    let mock = MockServer::start();
    mock.push_all([
        Reply::error(
            400,
            r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 13000 tokens. Please reduce the length of the messages.","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
        ),
        Reply::text(SUMMARY),
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
    assert_eq!(requests.len(), 3);
    // The summary request: one user message with the serialized span, no tools.
    let summary_req = &requests[1];
    let msgs = summary_req["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 1);
    let prompt = text_of(&msgs[0]);
    assert!(
        prompt.contains("TURNS TO SUMMARIZE") && prompt.contains("[USER]: step 3"),
        "{prompt}"
    );
    assert!(prompt.contains("## Active Task"));
    assert!(summary_req.get("tools").is_none());
    // The retried request: head + summary + tail, valid, the task last.
    let first = requests[0]["messages"].as_array().unwrap().len();
    let retried = requests[2]["messages"].as_array().unwrap();
    assert!(retried.len() < first / 2, "{} vs {first}", retried.len());
    check_conversation(&requests[2]).unwrap();
    assert!(text_of(retried.last().unwrap()).ends_with("now fix the build"));
    assert!(text_of(&retried[0]).contains(SYSTEM_NOTE));
    assert!(retried.iter().any(|m| text_of(m).contains(SUMMARY_PREFIX)
        && text_of(m).contains("User asked: 'now fix the build'")));

    let s = statuses(&mut rx);
    assert!(
        s.iter().any(|m| m.contains("8192 tokens (was 128000)")),
        "{s:?}"
    );
    assert!(
        s.iter()
            .any(|m| m.contains("Context too large for the model: compressed")),
        "{s:?}"
    );
    assert!(
        s.iter()
            .any(|m| m.contains("Remembered the context window")),
        "{s:?}"
    );
}

#[tokio::test]
async fn a_long_session_is_compressed_before_the_call_into_a_child_session() {
    let mock = MockServer::start();
    mock.push_all([Reply::text(SUMMARY), Reply::text("on it")]);
    let todo = TodoTool::default();
    todo.list().lock().unwrap().write(
        &[serde_json::json!({"id": "1", "content": "fix the build", "status": "in_progress"})],
        false,
    );
    let mut tools = Registry::new();
    tools.register(Arc::new(todo));
    let sessions = Sessions::default();
    // 32K window: compression triggers at 85 % of it.
    let (mut a, _) = agent_with(&mock, history(40), tools, |b| {
        b.context_length(Some(8_000))
            .store(Box::new(sessions.clone()))
    });
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let r = a
        .run_turn("now fix the build", &tx, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(r.final_text, "on it");
    let requests = mock.chat_requests();
    assert_eq!(requests.len(), 2, "summary first, then the real call");
    assert!(text_of(&requests[0]["messages"][0]).contains("TURNS TO SUMMARIZE"));
    check_conversation(&requests[1]).unwrap();
    let sent = requests[1]["messages"].as_array().unwrap();
    let last = text_of(sent.last().unwrap());
    assert!(last.contains("now fix the build"), "{last}");
    assert!(
        last.contains("[Your active task list was preserved"),
        "{last}"
    );
    assert!(last.contains("fix the build (in_progress)"), "{last}");

    // The compressed transcript went to a child session; later messages follow it.
    assert_eq!(a.options().session_id, "child1");
    let s = sessions.0.lock().unwrap();
    assert_eq!(s.len(), 2);
    assert_eq!(s[1].0, "child1");
    assert!(s[1].1.iter().any(|m| m.text().contains(SUMMARY_PREFIX)));
    assert_eq!(s[1].1.last().unwrap().text(), "on it");
    let st = statuses(&mut rx);
    assert!(
        st.iter()
            .any(|m| m.contains("over the compression threshold")),
        "{st:?}"
    );
    assert!(
        st.iter().any(|m| m.contains("continues as child1")),
        "{st:?}"
    );
}

#[tokio::test]
async fn a_failing_summarizer_falls_back_to_the_main_model_then_to_a_local_summary() {
    let aux_mock = MockServer::start();
    aux_mock.push(Reply::error(500, r#"{"error":{"message":"aux down"}}"#));
    let mock = MockServer::start();
    mock.push_all([Reply::text(SUMMARY), Reply::text("done")]);
    let (mut a, _) = agent_tuned(&mock, history(40), |b| {
        b.context_length(Some(8_000))
            .auxiliary(provider(&aux_mock), "cheap-model")
    });
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    a.run_turn("go", &tx, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(aux_mock.chat_requests()[0]["model"], "cheap-model");
    assert_eq!(mock.chat_requests()[0]["model"], "small-model");
    let st = statuses(&mut rx);
    assert!(
        st.iter()
            .any(|m| m.contains("Compression model cheap-model failed")),
        "{st:?}"
    );

    // Both failing: the local summary stands in and the turn still completes.
    let mock = MockServer::start();
    mock.push_all([
        Reply::error(500, r#"{"error":{"message":"down"}}"#),
        Reply::text("done anyway"),
    ]);
    let (mut a, _) = agent_tuned(&mock, history(40), |b| b.context_length(Some(8_000)));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let r = a
        .run_turn("go", &tx, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(r.final_text, "done anyway");
    let sent = mock.chat_requests()[1]["messages"]
        .as_array()
        .unwrap()
        .clone();
    assert!(
        sent.iter()
            .any(|m| text_of(m).contains("built locally without a model"))
    );
    let st = statuses(&mut rx);
    assert!(
        st.iter().any(|m| m.contains("locally built summary")),
        "{st:?}"
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
    mock.push_all([overflow(), overflow()]);
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
