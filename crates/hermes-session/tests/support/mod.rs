//! A Hermes home pointed at the scripted mock, and helpers to drive sessions.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(dead_code)]

use std::path::PathBuf;

use hermes_mock::{MockServer, RecordedRequest, Reply};
use hermes_protocol::{Event, Op, SessionEvent};
use hermes_session::{Conversation, SessionManager, SessionSpec, Setup};
use hermes_state::{Env, SessionDb};
use serde_json::Value;

/// A temporary home whose config.yaml points at a running mock.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
    pub mock: MockServer,
}

impl Sandbox {
    pub fn new() -> Self {
        Self::with_config("")
    }

    /// `extra` is appended to config.yaml.
    pub fn with_config(extra: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mock = MockServer::start();
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(dir.path().join("work")).unwrap();
        std::fs::write(
            home.join("config.yaml"),
            format!(
                "model:\n  provider: custom\n  base_url: {}\n  default: mock-model\n{extra}",
                mock.base_url()
            ),
        )
        .unwrap();
        Self { dir, mock }
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    pub fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    pub fn setup(&self) -> Setup {
        let env = Env::from_pairs([
            ("HERMES_HOME".to_owned(), self.home().display().to_string()),
            ("HOME".to_owned(), self.dir.path().display().to_string()),
        ]);
        Setup::load(env, false).unwrap()
    }

    pub fn manager(&self) -> SessionManager {
        SessionManager::new(self.setup())
    }

    pub fn spec(&self) -> SessionSpec {
        SessionSpec::new("test", self.work())
    }

    pub fn db(&self) -> SessionDb {
        SessionDb::open(&self.home().join("state.db")).unwrap()
    }
}

/// Sends a user message and returns every event of the turn, the last included.
pub async fn turn(conv: &mut Conversation, text: &str) -> Vec<Event> {
    let mut seen = Vec::new();
    conv.request(
        Op::UserInput {
            text: text.to_owned(),
        },
        |e| seen.push(e.clone()),
    )
    .await
    .unwrap();
    seen
}

/// Reads events until one matches `want` (panics after 20 s).
pub async fn wait_for(conv: &mut Conversation, want: impl Fn(&Event) -> bool) -> SessionEvent {
    let deadline = std::time::Duration::from_secs(20);
    tokio::time::timeout(deadline, async {
        loop {
            let ev = conv.next_event().await.expect("the session stopped");
            if want(&ev.event) {
                return ev;
            }
        }
    })
    .await
    .expect("timed out waiting for an event")
}

/// The final text of a turn's events.
pub fn final_text(events: &[Event]) -> String {
    match events.last() {
        Some(Event::TurnComplete { final_text, .. }) => final_text.clone(),
        other => panic!("the turn did not complete: {other:?}"),
    }
}

/// The role of the last message of a model call.
pub fn last_role(req: &RecordedRequest) -> String {
    req.body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["role"].as_str())
        .unwrap_or("")
        .to_owned()
}

/// The text of the first user message of a model call.
pub fn first_user_text(req: &RecordedRequest) -> String {
    req.body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["role"] == "user")
        .map(|m| text_of(&m["content"]))
        .unwrap_or_default()
}

/// A message content as text (string or parts).
pub fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// A script for many conversations at once: the first call of each gets a
/// `write_file` of `out/<marker>.txt`, the call after the tool result gets
/// `done <marker>`, where the marker is the conversation's first user message.
pub fn write_then_answer(req: &RecordedRequest) -> Option<Reply> {
    let marker = first_user_text(req);
    if marker.is_empty() {
        return None;
    }
    Some(match last_role(req).as_str() {
        "user" => Reply::tool_call(
            &format!("call-{marker}"),
            "write_file",
            &serde_json::json!({"path": format!("out/{marker}.txt"), "content": marker})
                .to_string(),
        ),
        _ => Reply::text(format!("done {marker}")),
    })
}

/// The content of the last tool message the model was sent.
pub fn last_tool_result(sb: &Sandbox) -> String {
    let requests = sb.mock.chat_requests();
    let last = requests.last().unwrap();
    last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .map(|m| text_of(&m["content"]))
        .unwrap_or_default()
}
