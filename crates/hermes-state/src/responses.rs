//! The API server's stored responses (`/v1/responses` with `store`) and
//! named conversations: `HERMES_HOME/response_store.db` on one machine, as
//! the reference keeps them; the shared database for replicas, so a chain
//! started through one continues through any.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::OptionalExtension;

use crate::store::StoreError;

/// Stored responses (JSON text by id) and conversation names.
pub trait ResponseStore: Send + Sync {
    /// Stores `data` under `id` (and names it `conversation`), then keeps
    /// only the `keep` most recently used.
    fn put(
        &self,
        id: &str,
        data: &str,
        conversation: Option<&str>,
        keep: usize,
    ) -> Result<(), StoreError>;
    /// The stored text of `id`, marking it used.
    fn get(&self, id: &str) -> Result<Option<String>, StoreError>;
    /// Removes `id` (and the names pointing at it); whether it was there.
    fn delete(&self, id: &str) -> Result<bool, StoreError>;
    /// The response the conversation `name` last ended with.
    fn conversation(&self, name: &str) -> Result<Option<String>, StoreError>;
}

/// `response_store.db`, opened on first use (a server that never sees
/// `/v1/responses` pays nothing); in memory when the file cannot be opened.
pub struct SqliteResponses {
    path: PathBuf,
    db: Mutex<Option<rusqlite::Connection>>,
}

impl std::fmt::Debug for SqliteResponses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteResponses")
            .field("path", &self.path)
            .finish()
    }
}

const SCHEMA: &str = "PRAGMA journal_mode=WAL;
CREATE TABLE IF NOT EXISTS responses (response_id TEXT PRIMARY KEY, data TEXT NOT NULL, accessed_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS conversations (name TEXT PRIMARY KEY, response_id TEXT NOT NULL);";

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

fn sql_error(e: rusqlite::Error) -> StoreError {
    StoreError(format!("response store: {e}"))
}

impl SqliteResponses {
    /// The store at `path` (created when first used).
    pub fn open(path: &Path) -> Self {
        Self {
            path: path.to_owned(),
            db: Mutex::new(None),
        }
    }

    fn connect(&self) -> Result<rusqlite::Connection, rusqlite::Error> {
        let on_disk = rusqlite::Connection::open(&self.path).and_then(|c| {
            c.execute_batch(SCHEMA)?;
            Ok(c)
        });
        #[cfg(unix)]
        if on_disk.is_ok() {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&self.path, std::fs::Permissions::from_mode(0o600));
        }
        on_disk.or_else(|_| {
            let c = rusqlite::Connection::open_in_memory()?;
            c.execute_batch(SCHEMA)?;
            Ok(c)
        })
    }

    fn with<R>(
        &self,
        f: impl FnOnce(&rusqlite::Connection) -> Result<R, rusqlite::Error>,
    ) -> Result<R, StoreError> {
        let mut guard = self.db.lock().unwrap_or_else(|e| e.into_inner());
        if guard.is_none() {
            *guard = Some(self.connect().map_err(sql_error)?);
        }
        match guard.as_ref() {
            Some(db) => f(db).map_err(sql_error),
            None => Err(StoreError("response store unavailable".into())),
        }
    }
}

impl ResponseStore for SqliteResponses {
    fn put(
        &self,
        id: &str,
        data: &str,
        conversation: Option<&str>,
        keep: usize,
    ) -> Result<(), StoreError> {
        self.with(|db| {
            db.execute(
                "INSERT OR REPLACE INTO responses (response_id, data, accessed_at) VALUES (?1, ?2, ?3)",
                rusqlite::params![id, data, unix_now()],
            )?;
            db.execute(
                "DELETE FROM responses WHERE response_id NOT IN \
                 (SELECT response_id FROM responses ORDER BY accessed_at DESC LIMIT ?1)",
                [keep as i64],
            )?;
            db.execute(
                "DELETE FROM conversations WHERE response_id NOT IN (SELECT response_id FROM responses)",
                [],
            )?;
            if let Some(name) = conversation {
                db.execute(
                    "INSERT OR REPLACE INTO conversations (name, response_id) VALUES (?1, ?2)",
                    [name, id],
                )?;
            }
            Ok(())
        })
    }

    fn get(&self, id: &str) -> Result<Option<String>, StoreError> {
        self.with(|db| {
            let data: Option<String> = db
                .query_row(
                    "SELECT data FROM responses WHERE response_id = ?1",
                    [id],
                    |r| r.get(0),
                )
                .optional()?;
            if data.is_some() {
                db.execute(
                    "UPDATE responses SET accessed_at = ?1 WHERE response_id = ?2",
                    rusqlite::params![unix_now(), id],
                )?;
            }
            Ok(data)
        })
    }

    fn delete(&self, id: &str) -> Result<bool, StoreError> {
        self.with(|db| {
            db.execute("DELETE FROM conversations WHERE response_id = ?1", [id])?;
            Ok(db.execute("DELETE FROM responses WHERE response_id = ?1", [id])? > 0)
        })
    }

    fn conversation(&self, name: &str) -> Result<Option<String>, StoreError> {
        self.with(|db| {
            db.query_row(
                "SELECT response_id FROM conversations WHERE name = ?1",
                [name],
                |r| r.get(0),
            )
            .optional()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_are_kept_most_recently_used_first() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteResponses::open(&dir.path().join("response_store.db"));
        store.put("a", "A", Some("chat"), 2).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        store.put("b", "B", None, 2).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert_eq!(store.get("a").unwrap().as_deref(), Some("A"));
        store.put("c", "C", None, 2).unwrap();
        assert_eq!(
            store.get("b").unwrap(),
            None,
            "the least recently used went"
        );
        assert_eq!(store.conversation("chat").unwrap().as_deref(), Some("a"));
        assert!(store.delete("a").unwrap());
        assert_eq!(store.conversation("chat").unwrap(), None);
        assert!(!store.delete("a").unwrap());
    }
}
