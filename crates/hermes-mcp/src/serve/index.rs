//! What `hermes mcp serve` reads from state.db (or the database replicas
//! share): gateway conversations (by routing key) and their messages.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hermes_state::store::SessionAdmin;
use hermes_state::{GatewaySession, SessionDb, StoredMessage};
use serde_json::{Map, Value, json};

/// One conversation as the reference's sessions index describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The routing key.
    pub session_key: String,
    /// The session id.
    pub session_id: String,
    /// The platform (`source`).
    pub platform: String,
    /// dm, group, channel, thread.
    pub chat_type: String,
    /// Display name.
    pub display_name: String,
    /// The origin mapping (platform, chat_id, chat_name, user_name …).
    pub origin: Map<String, Value>,
    /// ISO start time.
    pub created_at: String,
    /// ISO time of the newest message.
    pub updated_at: String,
    /// Token totals.
    pub input_tokens: i64,
    /// Token totals.
    pub output_tokens: i64,
}

impl Entry {
    fn from_row(row: GatewaySession) -> Self {
        let mut origin = row
            .origin_json
            .as_deref()
            .and_then(|j| serde_json::from_str::<Value>(j).ok())
            .and_then(|v| v.as_object().cloned())
            .unwrap_or_default();
        if origin.is_empty() {
            origin.insert("platform".into(), json!(row.source));
            origin.insert("chat_id".into(), json!(row.chat_id));
            origin.insert("chat_type".into(), json!(row.chat_type));
            origin.insert("thread_id".into(), json!(row.thread_id));
            origin.insert("user_id".into(), json!(row.user_id));
        }
        let origin_str = |key: &str| {
            origin
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        Entry {
            chat_type: row
                .chat_type
                .clone()
                .filter(|c| !c.is_empty())
                .unwrap_or_else(|| origin_str("chat_type")),
            display_name: row
                .display_name
                .clone()
                .filter(|d| !d.is_empty())
                .unwrap_or_else(|| origin_str("chat_name")),
            session_key: row.session_key,
            session_id: row.id,
            platform: row.source,
            created_at: iso(row.started_at),
            updated_at: iso(if row.last_active > 0.0 {
                row.last_active
            } else {
                row.started_at
            }),
            input_tokens: row.input_tokens,
            output_tokens: row.output_tokens,
            origin,
        }
    }

    /// An `origin` field as text (`""` when missing).
    pub fn origin_text(&self, key: &str) -> String {
        match self.origin.get(key) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => String::new(),
            Some(other) => other.to_string(),
        }
    }
}

/// `YYYY-MM-DDTHH:MM:SS[.ffffff]` (UTC) as Python's `isoformat()` writes it.
pub fn iso(ts: f64) -> String {
    if ts <= 0.0 || !ts.is_finite() {
        return String::new();
    }
    let secs = ts.floor() as i64;
    let micros = ((ts - ts.floor()) * 1e6).round() as i64;
    let base = hermes_state::time::UtcTime::from_unix(secs).iso();
    if micros > 0 && micros < 1_000_000 {
        format!("{base}.{micros:06}")
    } else {
        base
    }
}

/// Where the conversations are read: state.db, opened read-only for each
/// read (the gateway writes it), or the database replicas share.
#[derive(Clone)]
pub struct Index {
    db: PathBuf,
    shared: Option<Arc<dyn SessionAdmin>>,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index")
            .field("db", &self.db)
            .field("shared", &self.shared.is_some())
            .finish()
    }
}

impl Index {
    /// The index over `state_db`.
    pub fn new(state_db: impl Into<PathBuf>) -> Self {
        Self {
            db: state_db.into(),
            shared: None,
        }
    }

    /// The index over a store replicas share (PostgreSQL).
    pub fn shared(store: Arc<dyn SessionAdmin>) -> Self {
        Self {
            db: PathBuf::new(),
            shared: Some(store),
        }
    }

    /// Whether this reads a store replicas share (no file to watch).
    pub fn is_shared(&self) -> bool {
        self.shared.is_some()
    }

    /// The database file (empty for a shared store).
    pub fn path(&self) -> &Path {
        &self.db
    }

    fn open(&self) -> Result<SessionDb, String> {
        if !self.db.exists() {
            return Err("Session database unavailable".into());
        }
        SessionDb::open_read_only(&self.db)
            .map_err(|e| format!("Session database unavailable: {e}"))
    }

    /// Active conversations, most recently active first.
    pub fn entries(&self) -> Vec<Entry> {
        let rows = match &self.shared {
            Some(store) => store.gateway_sessions(true).map_err(|e| e.to_string()),
            None => self
                .open()
                .and_then(|db| db.gateway_sessions(true).map_err(|e| e.to_string())),
        };
        rows.map(|rows| rows.into_iter().map(Entry::from_row).collect())
            .unwrap_or_default()
    }

    /// One conversation by routing key.
    pub fn entry(&self, session_key: &str) -> Option<Entry> {
        self.entries()
            .into_iter()
            .find(|e| e.session_key == session_key)
    }

    /// A session's stored messages.
    pub fn messages(&self, session_id: &str) -> Result<Vec<StoredMessage>, String> {
        let read = match &self.shared {
            Some(store) => store.messages(session_id).map_err(|e| e.to_string()),
            None => self.open()?.messages(session_id).map_err(|e| e.to_string()),
        };
        read.map_err(|e| format!("Failed to read messages: {e}"))
    }
}

/// A message's text: multi-part content keeps only its text parts.
pub fn message_text(msg: &StoredMessage) -> String {
    let Some(content) = msg.content.as_deref() else {
        return String::new();
    };
    if content.trim_start().starts_with('[')
        && let Ok(Value::Array(parts)) = serde_json::from_str::<Value>(content)
    {
        return parts
            .iter()
            .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n");
    }
    content.to_owned()
}

/// Non-text attachments of a message: image parts and `MEDIA:` tags.
pub fn attachments(msg: &StoredMessage) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(content) = msg.content.as_deref()
        && let Ok(Value::Array(parts)) = serde_json::from_str::<Value>(content)
    {
        for part in parts {
            match part.get("type").and_then(Value::as_str).unwrap_or("") {
                "text" => {}
                "image_url" => {
                    if let Some(url) = part.pointer("/image_url/url").and_then(Value::as_str)
                        && !url.is_empty()
                    {
                        out.push(json!({"type": "image", "url": url}));
                    }
                }
                "image" => {
                    let url = part
                        .get("url")
                        .or_else(|| part.pointer("/source/url"))
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    if !url.is_empty() {
                        out.push(json!({"type": "image", "url": url}));
                    }
                }
                other => out.push(json!({"type": other, "data": part})),
            }
        }
    }
    let text = message_text(msg);
    let mut rest = text.as_str();
    while let Some(at) = rest.find("MEDIA:") {
        let after = rest[at + 6..].trim_start();
        let path: String = after.chars().take_while(|c| !c.is_whitespace()).collect();
        if !path.is_empty() {
            out.push(json!({"type": "media", "path": path}));
        }
        rest = &after[path.len()..];
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn iso_matches_python() {
        assert_eq!(iso(0.0), "");
        assert_eq!(iso(1_700_000_000.0), "2023-11-14T22:13:20");
        assert_eq!(iso(1_700_000_000.25), "2023-11-14T22:13:20.250000");
    }

    #[test]
    fn attachments_come_from_parts_and_media_tags() {
        let msg = StoredMessage {
            content: Some(
                json!([{"type": "text", "text": "see MEDIA:/tmp/a.png and MEDIA: /tmp/b.ogg"}, {"type": "image_url", "image_url": {"url": "http://x/i.png"}}])
                    .to_string(),
            ),
            ..StoredMessage::default()
        };
        assert_eq!(
            message_text(&msg),
            "see MEDIA:/tmp/a.png and MEDIA: /tmp/b.ogg"
        );
        let found = attachments(&msg);
        assert_eq!(found[0], json!({"type": "image", "url": "http://x/i.png"}));
        assert_eq!(found[1], json!({"type": "media", "path": "/tmp/a.png"}));
        assert_eq!(found[2], json!({"type": "media", "path": "/tmp/b.ogg"}));
    }
}
