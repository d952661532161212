//! Where `/v1/runs` live: their status, their numbered events, the answers
//! to idempotent POSTs and the signals (stop, approvals) sent to a run from
//! a process other than the one running it. Replicas share the PostgreSQL
//! implementation (hermes-postgres); the one here is `HERMES_HOME/runs.db`
//! (SQLite, WAL), never state.db, whose schema stays the reference's.

use std::path::Path;
use std::sync::Mutex;

use serde_json::Value;

/// A store failure (the message is the driver's).
#[derive(Debug, thiserror::Error)]
#[error("run store: {0}")]
pub struct StoreError(pub String);

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        Self(e.to_string())
    }
}

/// One event of a run with its place in the run's sequence (1, 2, 3 …).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredEvent {
    /// Its sequence number (the SSE `id:`).
    pub seq: u64,
    /// The event object.
    pub event: Value,
}

/// The first answer given to an `Idempotency-Key`.
#[derive(Debug, Clone, PartialEq)]
pub struct Remembered {
    /// Hash of the request body the key first came with.
    pub fingerprint: String,
    /// The HTTP status answered.
    pub status: u16,
    /// The JSON body answered.
    pub body: Value,
}

/// Run storage: status objects, events by sequence number, idempotent answers.
pub trait RunStore: Send + Sync {
    /// Writes the status object of `run_id` (replacing the one before).
    fn put_status(&self, run_id: &str, status: &Value) -> Result<(), StoreError>;
    /// The status object of `run_id`, if the run exists.
    fn status(&self, run_id: &str) -> Result<Option<Value>, StoreError>;
    /// Appends events in one transaction; their sequence numbers must follow
    /// the run's last one (a duplicate number is an error, not a second copy).
    fn append(&self, run_id: &str, events: &[StoredEvent]) -> Result<(), StoreError>;
    /// Up to `limit` events of `run_id` numbered above `after`, in order.
    fn read_after(
        &self,
        run_id: &str,
        after: u64,
        limit: usize,
    ) -> Result<Vec<StoredEvent>, StoreError>;
    /// Records the answer for `(scope, key)` unless one is there already;
    /// returns the answer that holds (the earlier one when there was one).
    fn remember(
        &self,
        scope: &str,
        key: &str,
        answer: &Remembered,
    ) -> Result<Remembered, StoreError>;
    /// The answer recorded for `(scope, key)`.
    fn recall(&self, scope: &str, key: &str) -> Result<Option<Remembered>, StoreError>;
    /// Asks whichever process runs `run_id` to act on `signal` (`{"stop":
    /// true}`, `{"approval": CHOICE, "all": BOOL}`).
    fn signal(&self, run_id: &str, signal: &Value) -> Result<(), StoreError>;
    /// The signals sent to `run_id` and not yet taken, oldest first; taking
    /// them removes them.
    fn take_signals(&self, run_id: &str) -> Result<Vec<Value>, StoreError>;
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS run_events (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    event TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS run_signals (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL,
    signal TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS idempotency_keys (
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    status INTEGER NOT NULL,
    body TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (scope, key)
);
";

/// The SQLite store (one connection; writes are small batches).
pub struct SqliteRunStore {
    conn: Mutex<rusqlite::Connection>,
}

impl std::fmt::Debug for SqliteRunStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SqliteRunStore")
    }
}

impl SqliteRunStore {
    /// Opens (creating) the store at `path`, owner-only, in WAL mode.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let conn = rusqlite::Connection::open(path)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
        }
        Self::init(conn, true)
    }

    /// A store that lives in memory (when the file cannot be opened, and for tests).
    pub fn in_memory() -> Result<Self, StoreError> {
        Self::init(rusqlite::Connection::open_in_memory()?, false)
    }

    fn init(conn: rusqlite::Connection, wal: bool) -> Result<Self, StoreError> {
        if wal {
            // WAL lets readers (event streams) go on while a batch is written.
            conn.pragma_update(None, "journal_mode", "WAL")?;
            conn.pragma_update(None, "synchronous", "NORMAL")?;
        }
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.execute_batch(SCHEMA)?;
        Ok(Self {
            conn: Mutex::new(conn),
        })
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, rusqlite::Connection> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

fn json_text(value: &Value) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError(e.to_string()))
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

impl RunStore for SqliteRunStore {
    fn put_status(&self, run_id: &str, status: &Value) -> Result<(), StoreError> {
        self.conn().execute(
            "INSERT INTO runs (run_id, status, updated_at) VALUES (?1, ?2, ?3)
             ON CONFLICT(run_id) DO UPDATE SET status = ?2, updated_at = ?3",
            rusqlite::params![run_id, json_text(status)?, now()],
        )?;
        Ok(())
    }

    fn status(&self, run_id: &str) -> Result<Option<Value>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached("SELECT status FROM runs WHERE run_id = ?1")?;
        let mut rows = stmt.query([run_id])?;
        match rows.next()? {
            Some(row) => Ok(Some(parse(&row.get::<_, String>(0)?))),
            None => Ok(None),
        }
    }

    fn append(&self, run_id: &str, events: &[StoredEvent]) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        {
            let mut stmt = tx.prepare_cached(
                "INSERT INTO run_events (run_id, seq, event) VALUES (?1, ?2, ?3)",
            )?;
            for e in events {
                let seq = i64::try_from(e.seq).map_err(|e| StoreError(e.to_string()))?;
                stmt.execute(rusqlite::params![run_id, seq, json_text(&e.event)?])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    fn read_after(
        &self,
        run_id: &str,
        after: u64,
        limit: usize,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT seq, event FROM run_events WHERE run_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
        )?;
        let after = i64::try_from(after).unwrap_or(i64::MAX);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = stmt.query_map(rusqlite::params![run_id, after, limit], |row| {
            Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (seq, text) = row?;
            out.push(StoredEvent {
                seq: u64::try_from(seq).unwrap_or(0),
                event: parse(&text),
            });
        }
        Ok(out)
    }

    fn remember(
        &self,
        scope: &str,
        key: &str,
        answer: &Remembered,
    ) -> Result<Remembered, StoreError> {
        self.conn().execute(
            "INSERT OR IGNORE INTO idempotency_keys (scope, key, fingerprint, status, body, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            rusqlite::params![
                scope,
                key,
                answer.fingerprint,
                answer.status,
                json_text(&answer.body)?,
                now()
            ],
        )?;
        Ok(self.recall(scope, key)?.unwrap_or_else(|| answer.clone()))
    }

    fn recall(&self, scope: &str, key: &str) -> Result<Option<Remembered>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT fingerprint, status, body FROM idempotency_keys WHERE scope = ?1 AND key = ?2",
        )?;
        let mut rows = stmt.query([scope, key])?;
        match rows.next()? {
            Some(row) => Ok(Some(Remembered {
                fingerprint: row.get(0)?,
                status: row.get(1)?,
                body: parse(&row.get::<_, String>(2)?),
            })),
            None => Ok(None),
        }
    }

    fn signal(&self, run_id: &str, signal: &Value) -> Result<(), StoreError> {
        self.conn().execute(
            "INSERT INTO run_signals (run_id, signal, created_at) VALUES (?1, ?2, ?3)",
            rusqlite::params![run_id, json_text(signal)?, now()],
        )?;
        Ok(())
    }

    fn take_signals(&self, run_id: &str) -> Result<Vec<Value>, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let taken: Vec<String> = {
            let mut stmt =
                tx.prepare_cached("SELECT signal FROM run_signals WHERE run_id = ?1 ORDER BY id")?;
            stmt.query_map([run_id], |r| r.get(0))?
                .collect::<Result<_, _>>()?
        };
        tx.execute("DELETE FROM run_signals WHERE run_id = ?1", [run_id])?;
        tx.commit()?;
        Ok(taken.iter().map(|t| parse(t)).collect())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn events(range: std::ops::RangeInclusive<u64>) -> Vec<StoredEvent> {
        range
            .map(|seq| StoredEvent {
                seq,
                event: json!({"event": "message.delta", "delta": seq.to_string()}),
            })
            .collect()
    }

    #[test]
    fn events_are_read_back_in_order_from_any_sequence_number() {
        let store = SqliteRunStore::in_memory().unwrap();
        store.append("run_a", &events(1..=3)).unwrap();
        store.append("run_a", &events(4..=5)).unwrap();
        store.append("run_b", &events(1..=2)).unwrap();
        let all = store.read_after("run_a", 0, 100).unwrap();
        assert_eq!(
            all.iter().map(|e| e.seq).collect::<Vec<_>>(),
            [1, 2, 3, 4, 5]
        );
        assert_eq!(all[3].event["delta"], "4");
        let tail = store.read_after("run_a", 3, 100).unwrap();
        assert_eq!(tail.iter().map(|e| e.seq).collect::<Vec<_>>(), [4, 5]);
        assert_eq!(store.read_after("run_a", 1, 2).unwrap().len(), 2);
        assert!(store.read_after("run_a", 5, 100).unwrap().is_empty());
        assert!(store.read_after("nope", 0, 100).unwrap().is_empty());
    }

    #[test]
    fn a_batch_repeating_a_sequence_number_is_refused_whole() {
        let store = SqliteRunStore::in_memory().unwrap();
        store.append("run_a", &events(1..=2)).unwrap();
        assert!(store.append("run_a", &events(2..=3)).is_err());
        // Nothing of the refused batch went in: seq 3 is still free.
        assert_eq!(store.read_after("run_a", 0, 10).unwrap().len(), 2);
        store.append("run_a", &events(3..=3)).unwrap();
    }

    #[test]
    fn status_is_replaced_and_survives_reopening_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("runs.db");
        {
            let store = SqliteRunStore::open(&path).unwrap();
            assert_eq!(store.status("run_a").unwrap(), None);
            store
                .put_status("run_a", &json!({"status": "queued"}))
                .unwrap();
            store
                .put_status("run_a", &json!({"status": "completed", "output": "hi"}))
                .unwrap();
            store.append("run_a", &events(1..=1)).unwrap();
        }
        let store = SqliteRunStore::open(&path).unwrap();
        let status = store.status("run_a").unwrap().unwrap();
        assert_eq!(status["status"], "completed");
        assert_eq!(status["output"], "hi");
        assert_eq!(store.read_after("run_a", 0, 10).unwrap().len(), 1);
        let mode: String = store
            .conn()
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
    }

    #[test]
    fn signals_are_taken_once_in_order() {
        let store = SqliteRunStore::in_memory().unwrap();
        store.signal("run_a", &json!({"stop": true})).unwrap();
        store.signal("run_b", &json!({"approval": "once"})).unwrap();
        store.signal("run_a", &json!({"approval": "deny"})).unwrap();
        let taken = store.take_signals("run_a").unwrap();
        assert_eq!(taken, [json!({"stop": true}), json!({"approval": "deny"})]);
        assert!(store.take_signals("run_a").unwrap().is_empty());
        assert_eq!(store.take_signals("run_b").unwrap().len(), 1);
    }

    #[test]
    fn the_first_answer_to_a_key_is_the_one_kept() {
        let store = SqliteRunStore::in_memory().unwrap();
        let first = Remembered {
            fingerprint: "f1".into(),
            status: 202,
            body: json!({"run_id": "run_1"}),
        };
        assert_eq!(store.recall("runs", "k").unwrap(), None);
        assert_eq!(store.remember("runs", "k", &first).unwrap(), first);
        let second = Remembered {
            body: json!({"run_id": "run_2"}),
            ..first.clone()
        };
        assert_eq!(store.remember("runs", "k", &second).unwrap(), first);
        // Keys are per scope.
        assert_eq!(store.remember("stop", "k", &second).unwrap(), second);
        assert_eq!(store.recall("runs", "k").unwrap(), Some(first));
    }
}
