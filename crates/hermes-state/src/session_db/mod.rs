//! `state.db`: sessions, messages and full-text search, file-compatible with hermes-agent
//! 0.19.0 (`hermes_state.py`, schema version 22).
//!
//! Either implementation can open a file the other wrote: the schema objects are created with
//! the reference's exact DDL, older files are upgraded in place the same way (missing columns
//! added, version-gated data migrations, FTS rebuilt from `messages` when recreated), and JSON
//! columns are written in Python's `json.dumps` format.
//!
//! Connection discipline follows the reference: WAL (DELETE where the filesystem refuses WAL),
//! foreign keys on, a 1 s busy timeout, every write in `BEGIN IMMEDIATE` retried up to 15
//! times with 20–150 ms jitter on SQLITE_BUSY, a PASSIVE checkpoint every 50 writes, and a
//! TRUNCATE checkpoint on close. Two deliberate differences, both for append speed (numbers in
//! the README): `synchronous=NORMAL` under WAL (every commit still reaches the WAL before
//! `append_message` returns, so a killed process loses nothing; see [`Durability`]), and a
//! bounded incremental FTS `'merge'` every 1 000 writes instead of the reference's full
//! `'optimize'`, which rewrites the whole index each time.

mod bulk;
mod conn;
mod error;
mod fts_query;
mod gateway;
mod legacy;
mod list;
mod messages;
mod migrate;
mod pyjson;
mod repair;
mod report;
mod schema;
mod search;
mod sessions;
mod sql;
mod text;
mod types;
mod usage;

use std::path::{Path, PathBuf};

use rusqlite::Connection;

pub use bulk::{BulkCandidate, FilterValue, SessionFilter};
pub use conn::{Durability, JournalMode};
pub use error::DbError;
pub use fts_query::{
    contains_cjk, count_cjk, is_operator, sanitize_fts5_query, terms as fts5_terms,
};
pub use gateway::{GatewaySession, SessionRouting};
pub use list::list_preview;
pub use messages::{CONTENT_JSON_PREFIX, MSG_COLS, MessageRecord, content_text, replay};
pub use pyjson::dumps as py_json_dumps;
pub use repair::RepairReport;
pub use report::{BUSIEST_SQL, BusySession, USAGE_ROWS_SQL, UsageReport, UsageRow};
pub use sessions::{SESSION_COLS, json_truthy, lineage_base, next_in_lineage};
pub use sql::like_escape;
pub use text::{MAX_TITLE_LENGTH, sanitize_title};
pub use types::{
    ListFilter, MessageExtra, NewSession, SearchHit, SearchQuery, SearchSort, SessionRow,
    SessionSummary, StoredMessage, UsageDelta,
};
pub use usage::decode_message_json;

use error::{Ctx, is_corruption_error};

/// The schema version this module writes (same as hermes-agent 0.19.0).
pub const SCHEMA_VERSION: i64 = schema::SCHEMA_VERSION;

/// A connection to `state.db`. One per thread or process; it is `Send` but not `Sync`.
pub struct SessionDb {
    conn: Connection,
    path: PathBuf,
    read_only: bool,
    closed: bool,
    journal_mode: JournalMode,
    write_count: u64,
    jitter: conn::Jitter,
    fts_enabled: bool,
    trigram_available: bool,
    fts_rebuild_attempted: bool,
    backups: Vec<PathBuf>,
}

impl std::fmt::Debug for SessionDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionDb")
            .field("path", &self.path)
            .field("read_only", &self.read_only)
            .field("journal_mode", &self.journal_mode)
            .finish_non_exhaustive()
    }
}

impl SessionDb {
    /// Opens (creating the parent directory and the file if needed) and creates or upgrades
    /// the schema. A file whose schema fails to load, or whose FTS indexes fail a quick probe
    /// (a read of each index structure and a rolled-back insert through the sync triggers), is
    /// copied to `<name>.bak-<unix seconds>` and repaired; only the FTS layer is ever rebuilt.
    /// The full FTS5 integrity check is too slow for every open (about 3 s per 100 000
    /// messages) and is available as [`verify_fts`](Self::verify_fts).
    pub fn open(path: &Path) -> Result<SessionDb, DbError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| DbError::Io {
                action: "cannot create directory",
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let mut backups = Vec::new();
        let mut db = match Self::open_and_init(path) {
            Err(e) if is_damage(&e) && path.exists() => {
                backups.push(repair::backup_db_file(path)?);
                repair::repair_file(path).map_err(|message| DbError::Corrupt {
                    path: path.to_path_buf(),
                    message,
                })?;
                Self::open_and_init(path)?
            }
            other => other?,
        };
        db.backups = backups;
        db.check_fts_health()?;
        Ok(db)
    }

    /// Opens an existing database for reading only: no schema work and no write lock, so it
    /// never contends with a live writer. Writes return [`DbError::ReadOnly`].
    pub fn open_read_only(path: &Path) -> Result<SessionDb, DbError> {
        let conn = conn::connect_ro(path)?;
        let fts_enabled = repair::table_queryable(&conn, "messages_fts");
        let trigram_available = repair::table_queryable(&conn, "messages_fts_trigram");
        let mut db = Self::from_conn(conn, path, JournalMode::Wal);
        db.read_only = true;
        db.fts_enabled = fts_enabled;
        db.trigram_available = trigram_available;
        db.journal_mode = match conn_journal_mode(&db.conn).as_deref() {
            Some("wal") => JournalMode::Wal,
            _ => JournalMode::Delete,
        };
        Ok(db)
    }

    fn from_conn(conn: Connection, path: &Path, journal_mode: JournalMode) -> SessionDb {
        SessionDb {
            conn,
            path: path.to_path_buf(),
            read_only: false,
            closed: false,
            journal_mode,
            write_count: 0,
            jitter: conn::Jitter::from_time(),
            fts_enabled: false,
            trigram_available: false,
            fts_rebuild_attempted: true,
            backups: Vec::new(),
        }
    }

    fn open_and_init(path: &Path) -> Result<SessionDb, DbError> {
        let (conn, mode) = conn::connect_rw(path)?;
        let mut db = Self::from_conn(conn, path, mode);
        let db_path = db.path.clone();
        // Schema work is one immediate transaction (retried like any write), so a concurrent
        // opener never sees a half-upgraded file.
        let state = db.write("creating or upgrading the schema", |c| {
            migrate::init_schema(c, &db_path)
        })?;
        db.fts_enabled = state.fts_enabled;
        db.trigram_available = state.trigram_available;
        db.write_count = 0;
        db.fts_rebuild_attempted = false;
        Ok(db)
    }

    /// Probes the FTS indexes; on damage backs the file up, rebuilds, and probes again.
    fn check_fts_health(&mut self) -> Result<(), DbError> {
        if !self.fts_enabled {
            return Ok(());
        }
        if let repair::FtsHealth::Damaged(_) = repair::probe_fts(&self.conn) {
            self.backups.push(repair::backup_db_file(&self.path)?);
            self.fts_rebuild_attempted = true;
            repair::recreate_fts(&self.conn, self.trigram_available)?;
            if let repair::FtsHealth::Damaged(reason) = repair::probe_fts(&self.conn) {
                return Err(DbError::Corrupt {
                    path: self.path.clone(),
                    message: format!("the search index could not be rebuilt: {reason}"),
                });
            }
        }
        Ok(())
    }

    /// Runs FTS5's full `'integrity-check'` on both indexes (reads the whole index, about 3 s
    /// per 100 000 messages; meant for a doctor command, not every open). On failure backs the file up and rebuilds; returns
    /// whether a rebuild was needed.
    pub fn verify_fts(&mut self) -> Result<bool, DbError> {
        if self.read_only {
            return Err(DbError::ReadOnly);
        }
        match repair::fts_integrity_check(&self.conn) {
            Ok(()) => Ok(false),
            Err(e) if error::is_fts_write_damage(&e) => {
                self.backups.push(repair::backup_db_file(&self.path)?);
                repair::recreate_fts(&self.conn, self.trigram_available)?;
                Ok(true)
            }
            Err(source) => Err(DbError::Sqlite {
                context: "checking the search index",
                source,
            }),
        }
    }

    /// Caps this connection's page cache at `kib` KiB (opening sets 32 MiB, for searches over a
    /// large history). Speed only, never results.
    pub fn limit_page_cache(&self, kib: u32) -> Result<(), DbError> {
        self.conn
            .pragma_update(None, "cache_size", -i64::from(kib))
            .map_err(|source| DbError::Sqlite {
                context: "setting the cache size",
                source,
            })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// WAL, or DELETE where the filesystem refused WAL.
    pub fn journal_mode(&self) -> JournalMode {
        self.journal_mode
    }

    /// Whether full-text search is available (FTS5 present).
    pub fn fts_enabled(&self) -> bool {
        self.fts_enabled
    }

    /// Backup copies made by repairs during this connection's lifetime (normally empty).
    pub fn backups(&self) -> &[PathBuf] {
        &self.backups
    }

    /// Checkpoints the WAL with TRUNCATE (shrinking it) and closes. Busy checkpoints are not
    /// errors; another process simply still uses the WAL.
    pub fn close(mut self) -> Result<(), DbError> {
        self.closed = true;
        if self.read_only {
            return Ok(());
        }
        match self
            .conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        {
            Err(e) if !error::is_busy_error(&e) => Err(DbError::Sqlite {
                context: "checkpointing the WAL on close",
                source: e,
            }),
            _ => Ok(()),
        }
    }

    /// Reads one `state_meta` value.
    pub fn get_meta(&self, key: &str) -> Result<Option<String>, DbError> {
        use rusqlite::OptionalExtension;
        self.conn
            .query_row("SELECT value FROM state_meta WHERE key = ?1", [key], |r| {
                r.get(0)
            })
            .optional()
            .map(Option::flatten)
            .ctx("reading state_meta")
    }

    /// Writes one `state_meta` value.
    pub fn set_meta(&mut self, key: &str, value: &str) -> Result<(), DbError> {
        self.write("writing state_meta", |c| {
            c.execute(
                "INSERT INTO state_meta (key, value) VALUES (?1, ?2) \
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [key, value],
            )
            .ctx("writing state_meta")?;
            Ok(())
        })
    }
}

impl Drop for SessionDb {
    fn drop(&mut self) {
        if !self.closed && !self.read_only {
            let _ = self
                .conn
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        }
    }
}

fn conn_journal_mode(conn: &Connection) -> Option<String> {
    conn.query_row("PRAGMA journal_mode", [], |r| r.get::<_, String>(0))
        .ok()
        .map(|m| m.to_ascii_lowercase())
}

/// Errors that mean the file (schema or FTS) is damaged rather than busy or missing.
fn is_damage(e: &DbError) -> bool {
    match e {
        DbError::Sqlite { source, .. } => is_corruption_error(source),
        DbError::Corrupt { .. } => true,
        _ => false,
    }
}

#[cfg(test)]
mod test_support;

#[cfg(test)]
#[path = "mod_tests.rs"]
mod tests;
