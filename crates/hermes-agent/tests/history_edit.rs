//! The conversation edits the REPL makes between turns: undo, new session,
//! resume another conversation, switch model.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, Mutex};

use hermes_agent::{Agent, AgentBuilder, AgentOptions, MessageStore, ModelSwitch};
use hermes_llm::{ChatCompletionsConfig, ChatCompletionsProvider};
use hermes_mock::{MockServer, Reply};
use hermes_protocol::{Message, Role, Usage};
use hermes_tools::Registry;
use tokio_util::sync::CancellationToken;

/// Records what the agent asks of its store.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<String>>>);

impl MessageStore for Recorder {
    fn append(&mut self, message: &Message) -> Result<(), String> {
        self.0
            .lock()
            .unwrap()
            .push(format!("append {}", message.text()));
        Ok(())
    }
    fn record_usage(&mut self, _usage: &Usage) -> Result<(), String> {
        Ok(())
    }
    fn rewind(&mut self, count: usize) -> Result<(), String> {
        self.0.lock().unwrap().push(format!("rewind {count}"));
        Ok(())
    }
}

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
        model: "mock-model".into(),
        max_turns: 5,
        max_tokens: None,
        temperature: None,
        cwd: std::env::temp_dir(),
        session_id: "s1".into(),
        homes: Default::default(),
    };
    Agent::builder(provider(mock), Registry::new(), options).system_prompt(Some("system".into()))
}

async fn turn(agent: &mut Agent, text: &str) {
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    agent
        .run_turn(text, &tx, &CancellationToken::new())
        .await
        .unwrap();
}

#[tokio::test]
async fn undo_drops_the_last_user_turn_and_rewinds_the_store() {
    let mock = MockServer::start();
    mock.push_all([Reply::text("a1"), Reply::text("a2"), Reply::text("a3")]);
    let store = Recorder::default();
    let mut agent = builder(&mock).store(Box::new(store.clone())).build();
    turn(&mut agent, "q1").await;
    turn(&mut agent, "q2").await;
    let undone = agent.undo_turns(1).unwrap();
    assert_eq!(undone, Some(("q2".to_owned(), 2)));
    assert_eq!(store.0.lock().unwrap().last().unwrap(), "rewind 2");
    turn(&mut agent, "q3").await;
    let users: Vec<String> = mock.chat_requests().last().unwrap()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(users, vec!["q1", "q3"]);
    // More turns than there are: back to the first one.
    assert_eq!(agent.undo_turns(9).unwrap().unwrap().0, "q1");
    assert_eq!(agent.messages().len(), 1, "only the system prompt is left");
    assert_eq!(agent.undo_turns(1).unwrap(), None);
}

#[tokio::test]
async fn new_session_resume_and_model_switch() {
    let mock = MockServer::start();
    mock.push_all([Reply::text("a1"), Reply::text("a2")]);
    let mut agent = agent(&mock);
    turn(&mut agent, "q1").await;
    agent.start_new_session("s2".into(), None);
    assert_eq!(agent.options().session_id, "s2");
    assert_eq!(agent.messages().len(), 1);
    assert_eq!(agent.messages()[0].role, Role::System);

    agent.replace_conversation(
        "old".into(),
        Some("stored prompt".into()),
        vec![Message::user("earlier"), Message::assistant("reply")],
        None,
    );
    assert_eq!(agent.options().session_id, "old");
    assert_eq!(agent.messages()[0].text(), "stored prompt");
    assert_eq!(agent.messages().len(), 3);

    agent.switch_model(ModelSwitch {
        provider: provider(&mock),
        model: "other-model".into(),
        context_length: None,
        limits: None,
        store: None,
    });
    assert_eq!(agent.options().model, "other-model");
    assert_eq!(agent.active_route().model, "other-model");
    turn(&mut agent, "q2").await;
    let last = mock.chat_requests().last().unwrap().clone();
    assert_eq!(last["model"], "other-model");
    assert_eq!(last["messages"][0]["content"], "stored prompt");
}
