//! Helpers shared by the unit tests.

use hermes_protocol::{Message, ToolCall};
use tempfile::TempDir;

use super::{MessageExtra, NewSession, SessionDb};

/// A fresh database in a temporary directory (kept alive by the returned guard).
pub(crate) fn temp_db() -> (TempDir, SessionDb) {
    let dir = tempfile::tempdir().unwrap();
    let db = SessionDb::open(&dir.path().join("state.db")).unwrap();
    (dir, db)
}

/// A CLI session started at `started_at`.
pub(crate) fn session(id: &str, started_at: f64) -> NewSession {
    NewSession {
        id: id.to_owned(),
        source: "cli".to_owned(),
        model: Some("test/model".to_owned()),
        started_at,
        ..NewSession::default()
    }
}

/// Message metadata at time `ts`.
pub(crate) fn at(ts: f64) -> MessageExtra {
    MessageExtra {
        timestamp: ts,
        ..MessageExtra::default()
    }
}

/// An assistant message calling `n` tools.
pub(crate) fn calling(n: usize) -> Message {
    let mut m = Message::assistant("");
    m.content = None;
    m.tool_calls = (0..n)
        .map(|i| {
            ToolCall::new(
                format!("call_{i}"),
                "read_file",
                format!("{{\"path\": \"f{i}.rs\"}}"),
            )
        })
        .collect();
    m
}

/// Creates session `id` and appends `texts` as alternating user/assistant messages,
/// one second apart from `t0`.
pub(crate) fn seed(db: &mut SessionDb, id: &str, t0: f64, texts: &[&str]) -> Vec<i64> {
    db.create_session(&session(id, t0)).unwrap();
    texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let m = if i % 2 == 0 {
                Message::user(*t)
            } else {
                Message::assistant(*t)
            };
            db.append_message(id, &m, &at(t0 + i as f64 + 1.0)).unwrap()
        })
        .collect()
}
