//! Damage control: FTS health probes, backups, and the repair strategies the reference uses
//! for a malformed schema or a corrupt FTS index. Canonical `sessions`/`messages` rows are
//! never modified here.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OpenFlags};

use super::error::{Ctx, DbError, is_corruption_error, is_fts_write_damage};
use super::schema;

/// True when `table` exists and can be read.
pub(crate) fn table_queryable(conn: &Connection, table: &str) -> bool {
    conn.prepare(&format!("SELECT 1 FROM {table} LIMIT 0"))
        .and_then(|mut s| s.query([]).map(|_| ()))
        .is_ok()
}

/// Result of [`probe_fts`].
#[derive(Debug)]
pub(crate) enum FtsHealth {
    Healthy,
    Damaged(String),
}

/// Cheap health probe of both FTS indexes: a read that loads each index structure, then a
/// rolled-back message insert that drives the sync triggers (the write-corruption class
/// reads fine but rejects inserts). Errors that do not indicate damage (busy, a schema this
/// probe does not fit) count as healthy.
pub(crate) fn probe_fts(conn: &Connection) -> FtsHealth {
    for table in schema::FTS_TABLES {
        if !table_queryable(conn, table) {
            continue;
        }
        let read = || -> Result<(), rusqlite::Error> {
            let sql = format!("SELECT rowid FROM {table} WHERE {table} MATCH ?1 LIMIT 1");
            let mut stmt = conn.prepare(&sql)?;
            let mut rows = stmt.query(["hermesftsprobe"])?;
            while rows.next()?.is_some() {}
            Ok(())
        };
        if let Err(e) = read()
            && is_corruption_error(&e)
        {
            return FtsHealth::Damaged(e.to_string());
        }
    }
    let write = || -> Result<(), rusqlite::Error> {
        conn.execute_batch("BEGIN")?;
        let result = (|| {
            let id = format!("_hermes_fts_health_probe_{}", now_nanos());
            conn.execute(
                "INSERT INTO sessions (id, source, started_at) VALUES (?1, '_health_probe', 0)",
                [&id],
            )?;
            let insert = "INSERT INTO messages (session_id, role, content, timestamp) \
                          VALUES (?1, 'user', '_fts_health_probe', 0)";
            conn.execute(insert, [&id])?;
            // Opening a savepoint makes FTS5 flush its pending inserts to the index tables
            // now rather than at commit, so segment-level damage surfaces before the rollback.
            conn.execute_batch("SAVEPOINT hermes_fts_probe")?;
            conn.execute(insert, [&id])?;
            conn.execute_batch("RELEASE hermes_fts_probe")?;
            Ok(())
        })();
        let _ = conn.execute_batch("ROLLBACK");
        result
    };
    match write() {
        Err(e) if is_fts_write_damage(&e) => FtsHealth::Damaged(e.to_string()),
        _ => FtsHealth::Healthy,
    }
}

/// Runs FTS5's full `'integrity-check'` on both indexes (reads every row; not for every open).
pub(crate) fn fts_integrity_check(conn: &Connection) -> Result<(), rusqlite::Error> {
    for table in schema::FTS_TABLES {
        if table_queryable(conn, table) {
            conn.execute(
                &format!("INSERT INTO {table}({table}) VALUES('integrity-check')"),
                [],
            )?;
        }
    }
    Ok(())
}

/// Drops both FTS tables and their triggers, recreates them and re-indexes every message,
/// in one transaction. Returns how many indexes were built.
pub(crate) fn recreate_fts(conn: &Connection, include_trigram: bool) -> Result<usize, DbError> {
    const CTX: &str = "rebuilding the search index";
    conn.execute_batch("BEGIN IMMEDIATE").ctx(CTX)?;
    let result = (|| {
        for trigger in schema::FTS_TRIGGERS {
            conn.execute(&format!("DROP TRIGGER IF EXISTS {trigger}"), [])
                .ctx(CTX)?;
        }
        for table in schema::FTS_TABLES {
            conn.execute(&format!("DROP TABLE IF EXISTS {table}"), [])
                .ctx(CTX)?;
        }
        conn.execute_batch(schema::FTS_SQL).ctx(CTX)?;
        backfill(conn, "messages_fts").ctx(CTX)?;
        if include_trigram {
            conn.execute_batch(schema::FTS_TRIGRAM_SQL).ctx(CTX)?;
            backfill(conn, "messages_fts_trigram").ctx(CTX)?;
        }
        Ok(1 + usize::from(include_trigram))
    })();
    match result {
        Ok(n) => {
            conn.execute_batch("COMMIT").ctx(CTX)?;
            Ok(n)
        }
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

/// Indexes every message row into `table` (which must be empty).
pub(crate) fn backfill(conn: &Connection, table: &str) -> Result<usize, rusqlite::Error> {
    conn.execute(
        &format!(
            "INSERT INTO {table}(rowid, content) SELECT id, {} FROM messages",
            schema::FTS_DOC_EXPR
        ),
        [],
    )
}

/// Copies the database file (and its `-wal`/`-shm` sidecars) to `<name>.bak-<unix seconds>`
/// next to it. Returns the backup path.
pub(crate) fn backup_db_file(path: &Path) -> Result<PathBuf, DbError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut backup = path.with_file_name(format!("{name}.bak-{stamp}"));
    let mut n = 1;
    while backup.exists() {
        backup = path.with_file_name(format!("{name}.bak-{stamp}-{n}"));
        n += 1;
    }
    std::fs::copy(path, &backup).map_err(|source| DbError::Io {
        action: "cannot back up the damaged database to",
        path: backup.clone(),
        source,
    })?;
    for suffix in ["-wal", "-shm"] {
        let side = path.with_file_name(format!("{name}{suffix}"));
        if side.exists() {
            let target = backup.with_file_name(format!(
                "{}{suffix}",
                backup
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            ));
            std::fs::copy(&side, &target).map_err(|source| DbError::Io {
                action: "cannot back up the damaged database to",
                path: target.clone(),
                source,
            })?;
        }
    }
    Ok(backup)
}

fn raw_connect(path: &Path) -> Result<Connection, rusqlite::Error> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(super::conn::BUSY_TIMEOUT)?;
    Ok(conn)
}

/// `None` when the file opens, passes `integrity_check`, reads `sessions` and accepts a
/// (rolled-back) message insert; otherwise the reason.
pub(crate) fn opens_cleanly(path: &Path) -> Option<String> {
    let check = || -> Result<Option<String>, rusqlite::Error> {
        let conn = raw_connect(path)?;
        conn.query_row("PRAGMA journal_mode", [], |_| Ok(()))?;
        let problems: Vec<String> = conn
            .prepare("PRAGMA integrity_check")?
            .query_map([], |r| r.get::<_, String>(0))?
            .filter_map(Result::ok)
            .filter(|s| !s.eq_ignore_ascii_case("ok"))
            .take(3)
            .collect();
        if !problems.is_empty() {
            return Ok(Some(problems.join("; ")));
        }
        conn.query_row("SELECT COUNT(*) FROM sessions", [], |_| Ok(()))?;
        match probe_fts(&conn) {
            FtsHealth::Healthy => Ok(None),
            FtsHealth::Damaged(reason) => Ok(Some(reason)),
        }
    };
    match check() {
        Ok(reason) => reason,
        Err(e) => Some(e.to_string()),
    }
}

/// Repairs a file whose schema fails to load or whose FTS index is damaged, least
/// destructive first: FTS `'rebuild'` in place; de-duplicate `sqlite_master`; drop every FTS
/// object (the next open recreates and re-indexes them). Returns the strategy that worked.
pub(crate) fn repair_file(path: &Path) -> Result<&'static str, String> {
    if opens_cleanly(path).is_none() {
        return Ok("already_healthy");
    }
    if let Ok(conn) = raw_connect(path) {
        for table in schema::FTS_TABLES {
            let _ = conn.execute(
                &format!("INSERT INTO {table}({table}) VALUES('rebuild')"),
                [],
            );
        }
    }
    if opens_cleanly(path).is_none() {
        return Ok("rebuild_fts");
    }
    let dedup = || -> Result<(), rusqlite::Error> {
        let conn = raw_connect(path)?;
        conn.execute_batch("PRAGMA writable_schema=ON")?;
        conn.execute(
            "DELETE FROM sqlite_master WHERE rowid NOT IN \
             (SELECT MIN(rowid) FROM sqlite_master GROUP BY type, name)",
            [],
        )?;
        conn.execute_batch("PRAGMA writable_schema=OFF")?;
        Ok(())
    };
    if dedup().is_ok() && opens_cleanly(path).is_none() {
        return Ok("dedup_schema");
    }
    let drop_fts = || -> Result<(), rusqlite::Error> {
        let conn = raw_connect(path)?;
        conn.execute_batch("PRAGMA writable_schema=ON")?;
        conn.execute(
            "DELETE FROM sqlite_master WHERE name LIKE 'messages\\_fts%' ESCAPE '\\'",
            [],
        )?;
        conn.execute_batch("PRAGMA writable_schema=OFF")?;
        drop(conn);
        let conn = raw_connect(path)?;
        conn.execute_batch("VACUUM")?;
        Ok(())
    };
    drop_fts().map_err(|e| e.to_string())?;
    match opens_cleanly(path) {
        None => Ok("drop_fts_rebuild"),
        Some(reason) => Err(reason),
    }
}

fn now_nanos() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

/// What [`SessionDb::repair_file`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepairReport {
    /// The step that made the file open cleanly (`rebuild_fts`, `dedup_schema`,
    /// `drop_fts_rebuild`), or `already_healthy`.
    pub strategy: &'static str,
    /// The copy made first, if one was.
    pub backup: Option<PathBuf>,
}

impl super::SessionDb {
    /// Why the database at `path` does not open cleanly (integrity check, a
    /// readable `sessions` table, working search indexes), or `None` when it does.
    pub fn check_file(path: &Path) -> Option<String> {
        opens_cleanly(path)
    }

    /// Repairs the file at `path` in place, least destructive step first; sessions
    /// and messages are kept, only the search layer is ever rebuilt. A timestamped
    /// copy is made first unless `backup` is false.
    pub fn repair_file(path: &Path, backup: bool) -> Result<RepairReport, DbError> {
        if opens_cleanly(path).is_none() {
            return Ok(RepairReport {
                strategy: "already_healthy",
                backup: None,
            });
        }
        let backup = if backup {
            Some(backup_db_file(path)?)
        } else {
            None
        };
        let strategy = repair_file(path).map_err(|message| DbError::Corrupt {
            path: path.to_path_buf(),
            message,
        })?;
        Ok(RepairReport { strategy, backup })
    }
}
