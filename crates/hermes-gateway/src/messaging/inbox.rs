//! The gateway's durable inbox (`$HERMES_HOME/gateway/inbox.db`): every
//! message is written here with the platform's new position before it is
//! handled, and marked done once answered. After a crash or `kill -9` the
//! gateway resumes from the saved position and handles what was left
//! unanswered, so no message is lost or answered twice.

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension, params};

use super::platform::Incoming;

/// Answered messages are forgotten after this many seconds.
const KEEP_DONE_SECS: f64 = 7.0 * 86_400.0;

/// The inbox; shared by every platform of one gateway.
#[derive(Debug)]
pub struct Inbox {
    conn: Mutex<Connection>,
}

/// An inbox operation failed.
#[derive(Debug, thiserror::Error)]
#[error("gateway inbox: {0}")]
pub struct InboxError(String);

impl From<rusqlite::Error> for InboxError {
    fn from(e: rusqlite::Error) -> Self {
        Self(e.to_string())
    }
}

fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

impl Inbox {
    /// Opens (creating) the inbox at `path`.
    pub fn open(path: &Path) -> Result<Self, InboxError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| InboxError(format!("{}: {e}", dir.display())))?;
        }
        let conn = Connection::open(path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS inbox (
                platform TEXT NOT NULL,
                key TEXT NOT NULL,
                payload TEXT NOT NULL,
                received_at REAL NOT NULL,
                done_at REAL,
                PRIMARY KEY (platform, key));
             CREATE INDEX IF NOT EXISTS inbox_pending ON inbox(platform, done_at);
             CREATE TABLE IF NOT EXISTS cursors (
                platform TEXT PRIMARY KEY,
                value TEXT NOT NULL);",
        )?;
        conn.execute(
            "DELETE FROM inbox WHERE done_at IS NOT NULL AND done_at < ?1",
            params![now() - KEEP_DONE_SECS],
        )?;
        Ok(Self {
            conn: Mutex::new(conn),
        })
    }

    fn with<T>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, rusqlite::Error>,
    ) -> Result<T, InboxError> {
        let mut conn = self
            .conn
            .lock()
            .map_err(|_| InboxError("poisoned lock".into()))?;
        Ok(f(&mut conn)?)
    }

    /// The saved position of `platform`.
    pub fn cursor(&self, platform: &str) -> Result<Option<String>, InboxError> {
        self.with(|c| {
            c.query_row(
                "SELECT value FROM cursors WHERE platform = ?1",
                [platform],
                |r| r.get(0),
            )
            .optional()
        })
    }

    /// Stores `messages` and the new `cursor` in one transaction; returns
    /// the messages not seen before (a repeat delivery is dropped).
    pub fn accept(
        &self,
        platform: &str,
        messages: Vec<Incoming>,
        cursor: Option<&str>,
    ) -> Result<Vec<Incoming>, InboxError> {
        self.with(|c| {
            let tx = c.transaction()?;
            let mut fresh = Vec::new();
            for message in messages {
                let payload = serde_json::to_string(&message).unwrap_or_default();
                let added = tx.execute(
                    "INSERT OR IGNORE INTO inbox (platform, key, payload, received_at) \
                     VALUES (?1, ?2, ?3, ?4)",
                    params![platform, message.key, payload, now()],
                )?;
                if added > 0 {
                    fresh.push(message);
                }
            }
            if let Some(cursor) = cursor {
                tx.execute(
                    "INSERT INTO cursors (platform, value) VALUES (?1, ?2) \
                     ON CONFLICT(platform) DO UPDATE SET value = excluded.value",
                    params![platform, cursor],
                )?;
            }
            tx.commit()?;
            Ok(fresh)
        })
    }

    /// Messages of `platform` accepted but never marked done, oldest first.
    pub fn pending(&self, platform: &str) -> Result<Vec<Incoming>, InboxError> {
        self.with(|c| {
            let mut stmt = c.prepare(
                "SELECT payload FROM inbox WHERE platform = ?1 AND done_at IS NULL \
                 ORDER BY received_at, rowid",
            )?;
            let rows = stmt.query_map([platform], |r| r.get::<_, String>(0))?;
            let mut out = Vec::new();
            for row in rows {
                if let Ok(message) = serde_json::from_str(&row?) {
                    out.push(message);
                }
            }
            Ok(out)
        })
    }

    /// Marks a message handled.
    pub fn done(&self, platform: &str, key: &str) -> Result<(), InboxError> {
        self.with(|c| {
            c.execute(
                "UPDATE inbox SET done_at = ?3 WHERE platform = ?1 AND key = ?2",
                params![platform, key, now()],
            )
            .map(|_| ())
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::messaging::platform::{ChatKind, ChatRef, Sender};

    fn message(key: &str) -> Incoming {
        Incoming {
            key: key.into(),
            chat: ChatRef {
                id: "42".into(),
                kind: ChatKind::Dm,
                thread_id: None,
                name: None,
            },
            sender: Sender {
                id: "42".into(),
                name: "Ann".into(),
            },
            text: format!("text {key}"),
            addressed: true,
            button_press: None,
            attachments: Vec::new(),
        }
    }

    #[test]
    fn repeats_are_dropped_and_pending_survives_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gateway/inbox.db");
        {
            let inbox = Inbox::open(&path).unwrap();
            let fresh = inbox
                .accept("telegram", vec![message("1"), message("2")], Some("3"))
                .unwrap();
            assert_eq!(fresh.len(), 2);
            let again = inbox
                .accept("telegram", vec![message("2")], Some("3"))
                .unwrap();
            assert!(again.is_empty());
            inbox.done("telegram", "1").unwrap();
        }
        let inbox = Inbox::open(&path).unwrap();
        assert_eq!(inbox.cursor("telegram").unwrap().as_deref(), Some("3"));
        assert_eq!(inbox.cursor("slack").unwrap(), None);
        let pending = inbox.pending("telegram").unwrap();
        assert_eq!(pending, vec![message("2")]);
    }
}
