//! The gateway's durable inbox (`$HERMES_HOME/gateway/inbox.db`): every
//! message is written here with the platform's new position before it is
//! handled, and marked done once answered. After a crash or `kill -9` the
//! gateway resumes from the saved position and handles what was left
//! unanswered, so no message is lost or answered twice.

use std::path::Path;
use std::sync::{Arc, Mutex};

use hermes_state::coordination::{Accepted, Fence, InboxStore};
use hermes_state::store::StoreError;
use rusqlite::{Connection, OptionalExtension, params};

use super::platform::Incoming;

/// Answered messages are forgotten after this many seconds.
const KEEP_DONE_SECS: f64 = 7.0 * 86_400.0;

/// The inbox on state.db's machine (`gateway/inbox.db`).
#[derive(Debug)]
pub struct SqliteInbox {
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

impl From<StoreError> for InboxError {
    fn from(e: StoreError) -> Self {
        Self(e.0)
    }
}

fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

impl SqliteInbox {
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
    ) -> Result<T, StoreError> {
        let mut conn = self
            .conn
            .lock()
            .map_err(|_| StoreError("gateway inbox: poisoned lock".into()))?;
        f(&mut conn).map_err(|e| StoreError(format!("gateway inbox: {e}")))
    }
}

impl InboxStore for SqliteInbox {
    fn cursor(&self, platform: &str) -> Result<Option<String>, StoreError> {
        self.with(|c| {
            c.query_row(
                "SELECT value FROM cursors WHERE platform = ?1",
                [platform],
                |r| r.get(0),
            )
            .optional()
        })
    }

    // One gateway per home holds this file: there is no lease to fence with.
    fn accept(
        &self,
        platform: &str,
        items: &[(String, String)],
        cursor: Option<&str>,
        _fence: Option<&Fence>,
    ) -> Result<Accepted, StoreError> {
        self.with(|c| {
            let tx = c.transaction()?;
            let mut fresh = Vec::new();
            for (key, payload) in items {
                let added = tx.execute(
                    "INSERT OR IGNORE INTO inbox (platform, key, payload, received_at) \
                     VALUES (?1, ?2, ?3, ?4)",
                    params![platform, key, payload, now()],
                )?;
                if added > 0 {
                    fresh.push(key.clone());
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
            Ok(Accepted::Fresh(fresh))
        })
    }

    fn pending(&self, platform: &str) -> Result<Vec<String>, StoreError> {
        self.with(|c| {
            let mut stmt = c.prepare(
                "SELECT payload FROM inbox WHERE platform = ?1 AND done_at IS NULL \
                 ORDER BY received_at, rowid",
            )?;
            let rows = stmt.query_map([platform], |r| r.get::<_, String>(0))?;
            rows.collect()
        })
    }

    fn done(&self, platform: &str, key: &str) -> Result<(), StoreError> {
        self.with(|c| {
            c.execute(
                "UPDATE inbox SET done_at = ?3 WHERE platform = ?1 AND key = ?2",
                params![platform, key, now()],
            )
            .map(|_| ())
        })
    }
}

/// The inbox every platform of one gateway shares: state.db's machine's
/// file, or the shared database's tables when replicas run.
#[derive(Clone)]
pub struct Inbox {
    store: Arc<dyn InboxStore>,
}

impl std::fmt::Debug for Inbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Inbox")
    }
}

impl Inbox {
    /// The file inbox at `path`.
    pub fn open(path: &Path) -> Result<Self, InboxError> {
        Ok(Self::over(Arc::new(SqliteInbox::open(path)?)))
    }

    /// An inbox kept by `store`.
    pub fn over(store: Arc<dyn InboxStore>) -> Self {
        Self { store }
    }

    /// The saved position of `platform`.
    pub fn cursor(&self, platform: &str) -> Result<Option<String>, InboxError> {
        Ok(self.store.cursor(platform)?)
    }

    /// Stores `messages` and the new `cursor` in one transaction (under
    /// `fence`, when given); returns the messages not seen before (a repeat
    /// delivery is dropped), or `None` when the lease is no longer ours.
    pub fn accept(
        &self,
        platform: &str,
        messages: Vec<Incoming>,
        cursor: Option<&str>,
        fence: Option<&Fence>,
    ) -> Result<Option<Vec<Incoming>>, InboxError> {
        let items: Vec<(String, String)> = messages
            .iter()
            .map(|m| (m.key.clone(), serde_json::to_string(m).unwrap_or_default()))
            .collect();
        match self.store.accept(platform, &items, cursor, fence)? {
            Accepted::Fenced => Ok(None),
            Accepted::Fresh(keys) => Ok(Some(
                messages
                    .into_iter()
                    .filter(|m| keys.contains(&m.key))
                    .collect(),
            )),
        }
    }

    /// Messages of `platform` accepted but never marked done, oldest first.
    pub fn pending(&self, platform: &str) -> Result<Vec<Incoming>, InboxError> {
        Ok(self
            .store
            .pending(platform)?
            .iter()
            .filter_map(|p| serde_json::from_str(p).ok())
            .collect())
    }

    /// Marks a message handled.
    pub fn done(&self, platform: &str, key: &str) -> Result<(), InboxError> {
        Ok(self.store.done(platform, key)?)
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
                .accept(
                    "telegram",
                    vec![message("1"), message("2")],
                    Some("3"),
                    None,
                )
                .unwrap()
                .unwrap();
            assert_eq!(fresh.len(), 2);
            let again = inbox
                .accept("telegram", vec![message("2")], Some("3"), None)
                .unwrap()
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
