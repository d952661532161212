//! The external memory provider around a turn: recall rides on the user's
//! message for the model (never stored), the finished exchange reaches the
//! provider, and a provider that fails or panics costs only its recall.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hermes_agent::{Agent, AgentOptions};
use hermes_llm::{ChatCompletionsConfig, ChatCompletionsProvider};
use hermes_mock::{MockServer, Reply};
use hermes_protocol::{Event, Role};
use hermes_tools::Registry;
use hermes_tools::memory_provider::MemoryProvider;
use tokio_util::sync::CancellationToken;

/// What a provider does when asked for recall.
#[derive(Clone, Copy, PartialEq)]
enum Behaviour {
    Recalls,
    Fails,
    Panics,
}

struct Scripted {
    behaviour: Behaviour,
    synced: Mutex<Vec<(String, String)>>,
    ended: Mutex<usize>,
    switched: Mutex<Vec<(String, String, bool)>>,
}

impl MemoryProvider for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }
    fn prefetch(&self, query: &str, _session: &str) -> Result<String, String> {
        match self.behaviour {
            Behaviour::Recalls => Ok(format!("- [0.5] recalled for {query}")),
            Behaviour::Fails => Err("database is locked".into()),
            Behaviour::Panics => panic!("provider bug"),
        }
    }
    fn sync_turn(&self, user: &str, answer: &str, _session: &str) -> Result<(), String> {
        self.synced
            .lock()
            .unwrap()
            .push((user.into(), answer.into()));
        if self.behaviour == Behaviour::Recalls {
            Ok(())
        } else {
            Err("write failed".into())
        }
    }
    fn on_session_switch(&self, new: &str, parent: &str, reset: bool) {
        self.switched
            .lock()
            .unwrap()
            .push((new.into(), parent.into(), reset));
    }
    fn on_session_end(&self, messages: &[hermes_protocol::Message]) {
        *self.ended.lock().unwrap() = messages.len();
    }
}

fn agent(mock: &MockServer, provider: Arc<Scripted>) -> Agent {
    let model = ChatCompletionsProvider::new("custom", ChatCompletionsConfig::new(mock.base_url()))
        .unwrap();
    let options = AgentOptions {
        model: "mock-model".into(),
        max_turns: 5,
        max_tokens: None,
        temperature: None,
        cwd: std::env::temp_dir(),
        session_id: "s1".into(),
        homes: Default::default(),
    };
    Agent::builder(Arc::new(model), Registry::new(), options)
        .system_prompt(Some("system".into()))
        .memory_provider(Some(provider))
        .build()
}

fn scripted(behaviour: Behaviour) -> Arc<Scripted> {
    Arc::new(Scripted {
        behaviour,
        synced: Mutex::default(),
        ended: Mutex::default(),
        switched: Mutex::default(),
    })
}

async fn synced_soon(provider: &Scripted) -> Vec<(String, String)> {
    for _ in 0..100 {
        let synced = provider.synced.lock().unwrap().clone();
        if !synced.is_empty() {
            return synced;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Vec::new()
}

#[tokio::test]
async fn recall_is_fenced_on_the_sent_message_and_the_exchange_is_kept() {
    let mock = MockServer::start();
    mock.push(Reply::text("sure"));
    let provider = scripted(Behaviour::Recalls);
    let mut agent = agent(&mock, provider.clone());
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    agent
        .run_turn("what do you know?", &tx, &CancellationToken::new())
        .await
        .unwrap();
    let sent = mock.chat_requests();
    let user = sent[0]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|m| m["role"] == "user")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        user.starts_with("what do you know?\n\n<memory-context>\n[System note:"),
        "{user}"
    );
    assert!(
        user.contains("- [0.5] recalled for what do you know?\n</memory-context>"),
        "{user}"
    );
    // The stored conversation keeps the user's words alone.
    let stored = agent
        .messages()
        .iter()
        .rfind(|m| m.role == Role::User)
        .unwrap();
    assert_eq!(stored.text(), "what do you know?");
    assert_eq!(
        synced_soon(&provider).await,
        vec![("what do you know?".to_owned(), "sure".to_owned())]
    );
    agent.memory_session_switched("s2", "s1", true);
    for _ in 0..100 {
        if !provider.switched.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        *provider.switched.lock().unwrap(),
        vec![("s2".to_owned(), "s1".to_owned(), true)]
    );
    agent.end_memory().await;
    assert_eq!(*provider.ended.lock().unwrap(), 3);
}

#[tokio::test]
async fn a_failing_or_panicking_provider_costs_the_turn_only_its_recall() {
    for behaviour in [Behaviour::Fails, Behaviour::Panics] {
        let mock = MockServer::start();
        mock.push(Reply::text("answered anyway"));
        let provider = scripted(behaviour);
        let mut agent = agent(&mock, provider.clone());
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let result = agent
            .run_turn("hello", &tx, &CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(result.final_text, "answered anyway");
        let sent = mock.chat_requests();
        assert!(!sent[0].to_string().contains("memory-context"));
        let mut warned = false;
        while let Ok(event) = rx.try_recv() {
            if let Event::Status { message } = event {
                warned |= message.contains("Memory provider 'scripted': recall failed");
            }
        }
        assert!(warned);
        // The exchange was still offered (and its failure swallowed).
        assert_eq!(synced_soon(&provider).await.len(), 1);
    }
}
