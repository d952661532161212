//! Connection set-up (journal mode, pragmas) and the retrying write transaction.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OpenFlags, TransactionBehavior};

use super::error::{Ctx, DbError, is_busy_error, is_fts_write_damage};
use super::{SessionDb, schema};

/// SQLite's own busy wait; application-level jittered retries do the rest.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(1);
/// Attempts of one write before [`DbError::Busy`].
pub(crate) const WRITE_MAX_RETRIES: u32 = 15;
/// Jitter bounds between attempts.
pub(crate) const RETRY_MIN_MS: u64 = 20;
pub(crate) const RETRY_MAX_MS: u64 = 150;
/// Passive WAL checkpoint cadence (successful writes).
pub(crate) const CHECKPOINT_EVERY: u64 = 50;
/// FTS segment-merge cadence (successful writes).
pub(crate) const MERGE_EVERY: u64 = 1000;
/// Leaf pages one periodic FTS `'merge'` may write (per index; about 4 MB).
///
/// The reference runs a full `'optimize'` here, which rewrites the whole index every 1 000
/// writes: about 1.2 s at 100 000 messages and growing linearly, so it alone cost more than
/// every other part of an append (measured: 80% of append time at 100 000 messages). FTS5's
/// own automerge already keeps the number of segments logarithmic (15–17 segments after
/// 3 000 single-row commits on an optimised 100 000-message index); this bounded, incremental
/// merge of every level holding 4+ segments tidies what automerge leaves behind at a cost
/// that does not grow with the index. Search latency is unchanged (see the README).
pub(crate) const MERGE_PAGES: i64 = 1000;
/// Page cache per connection (`PRAGMA cache_size`, KiB when negative): 32 MiB instead of
/// SQLite's 2 MiB, so searches over a large history and FTS merges stop re-reading pages.
/// Memory is only taken as pages are actually used.
pub(crate) const CACHE_SIZE_KIB: i64 = 32 * 1024;

/// The journal mode a connection ended up in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JournalMode {
    /// Write-ahead log (normal).
    Wal,
    /// Rollback journal: the filesystem refused WAL (NFS, SMB, some FUSE mounts).
    Delete,
}

/// How long each commit waits for the disk (`PRAGMA synchronous`).
///
/// The default is [`Normal`](Self::Normal) under WAL and [`Full`](Self::Full) under a rollback
/// journal. Under WAL, `NORMAL` still writes every commit to the WAL file before the commit
/// returns, so a process crash (`kill -9`, panic, OOM kill) loses nothing; only an OS crash or
/// power loss can drop the commits made since the last WAL fsync (at most the 50 writes
/// between passive checkpoints), and the file is never corrupted. Under a rollback journal
/// `NORMAL` is not corruption-proof on power loss, so `FULL` is kept there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// `synchronous=FULL`: every commit is fsynced before it returns (the reference's setting).
    Full,
    /// `synchronous=NORMAL`: under WAL, commits are fsynced at checkpoints only.
    Normal,
}

/// Tiny xorshift64* generator for retry jitter.
#[derive(Debug, Clone)]
pub(crate) struct Jitter(u64);

impl Jitter {
    pub(crate) fn from_time() -> Self {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0x9E37_79B9_7F4A_7C15);
        let seed = nanos ^ (u64::from(std::process::id()) << 32) ^ 0xA076_1D64_78BD_642F;
        Self(if seed == 0 { 1 } else { seed })
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A delay uniformly drawn from `[RETRY_MIN_MS, RETRY_MAX_MS]`.
    pub(crate) fn delay(&mut self) -> Duration {
        let span = RETRY_MAX_MS - RETRY_MIN_MS + 1;
        Duration::from_millis(RETRY_MIN_MS + self.next_u64() % span)
    }
}

/// Opens a read-write connection (creating the file) with the reference's pragmas.
pub(crate) fn connect_rw(path: &Path) -> Result<(Connection, JournalMode), DbError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let conn = Connection::open_with_flags(path, flags).map_err(|e| DbError::Open {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .ctx("setting the busy timeout")?;
    let mode = apply_journal_mode(&conn)?;
    // See `Durability`: NORMAL under WAL survives process crashes; FULL for rollback journals.
    let sync = match mode {
        JournalMode::Wal => "NORMAL",
        JournalMode::Delete => "FULL",
    };
    conn.pragma_update(None, "synchronous", sync)
        .ctx("setting synchronous")?;
    conn.pragma_update(None, "foreign_keys", "ON")
        .ctx("enabling foreign keys")?;
    tune(&conn)?;
    Ok((conn, mode))
}

/// Connection settings that change speed, never results: a larger page cache, and the query
/// planner stability guarantee. Without the latter SQLite re-prepares (re-parses and re-plans)
/// a statement every time new values are bound when its plan looked at a bound value; the
/// search's context query hit that on every hit (a fifth of search time).
fn tune(conn: &Connection) -> Result<(), DbError> {
    conn.pragma_update(None, "cache_size", -CACHE_SIZE_KIB)
        .ctx("setting the cache size")?;
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )
    .ctx("enabling the query planner stability guarantee")?;
    Ok(())
}

/// Opens an existing database for reading only: no schema work, no write lock.
pub(crate) fn connect_ro(path: &Path) -> Result<Connection, DbError> {
    if !path.exists() {
        return Err(DbError::Open {
            path: path.to_path_buf(),
            message: "no such file".to_owned(),
        });
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(|e| DbError::Open {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .ctx("setting the busy timeout")?;
    tune(&conn)?;
    Ok(conn)
}

fn journal_mode(conn: &Connection) -> Result<String, rusqlite::Error> {
    conn.query_row("PRAGMA journal_mode", [], |r| r.get::<_, String>(0))
        .map(|m| m.trim().to_ascii_lowercase())
}

/// Switches to WAL unless the file already is WAL; falls back to DELETE when the filesystem
/// refuses (the pragma answers with another mode, or fails with a locking-protocol error).
/// Never downgrades a file whose header already says WAL.
fn apply_journal_mode(conn: &Connection) -> Result<JournalMode, DbError> {
    if let Ok(mode) = journal_mode(conn)
        && mode == "wal"
    {
        return Ok(JournalMode::Wal);
    }
    match conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get::<_, String>(0)) {
        Ok(answer) if answer.eq_ignore_ascii_case("wal") => Ok(JournalMode::Wal),
        Ok(_) => {
            conn.query_row("PRAGMA journal_mode=DELETE", [], |_| Ok(()))
                .ctx("falling back to journal_mode=DELETE")?;
            Ok(JournalMode::Delete)
        }
        Err(e) => {
            let msg = e.to_string().to_lowercase();
            let incompatible = msg.contains("locking protocol") || msg.contains("not authorized");
            if !incompatible || journal_mode(conn).is_ok_and(|m| m == "wal") {
                return Err(DbError::Sqlite {
                    context: "enabling WAL journal mode",
                    source: e,
                });
            }
            conn.query_row("PRAGMA journal_mode=DELETE", [], |_| Ok(()))
                .ctx("falling back to journal_mode=DELETE")?;
            Ok(JournalMode::Delete)
        }
    }
}

impl SessionDb {
    /// Changes the commit durability of this connection (see [`Durability`]).
    pub fn set_durability(&mut self, durability: Durability) -> Result<(), DbError> {
        let value = match durability {
            Durability::Full => "FULL",
            Durability::Normal => "NORMAL",
        };
        self.conn
            .pragma_update(None, "synchronous", value)
            .ctx("setting durability")
    }

    /// Runs `f` inside `BEGIN IMMEDIATE … COMMIT`, retrying on SQLITE_BUSY/LOCKED with 20–150 ms
    /// jitter (15 attempts), and once after an in-place FTS rebuild when the write failed with
    /// an FTS-corruption error. Maintenance (checkpoint, FTS merge) runs on its cadence after
    /// successful writes.
    pub(crate) fn write<T>(
        &mut self,
        context: &'static str,
        mut f: impl FnMut(&Connection) -> Result<T, DbError>,
    ) -> Result<T, DbError> {
        if self.read_only {
            return Err(DbError::ReadOnly);
        }
        let mut attempt = 0;
        loop {
            attempt += 1;
            let result = (|| {
                let tx = self
                    .conn
                    .transaction_with_behavior(TransactionBehavior::Immediate)
                    .ctx(context)?;
                let value = f(&tx)?;
                tx.commit().ctx(context)?;
                Ok(value)
            })();
            match result {
                Ok(value) => {
                    self.after_write();
                    return Ok(value);
                }
                Err(e) if e.is_busy() => {
                    if attempt >= WRITE_MAX_RETRIES {
                        return Err(DbError::Busy { attempts: attempt });
                    }
                    std::thread::sleep(self.jitter.delay());
                }
                Err(DbError::Sqlite { source, context })
                    if is_fts_write_damage(&source) && !self.fts_rebuild_attempted =>
                {
                    self.fts_rebuild_attempted = true;
                    if self.rebuild_fts().is_err() {
                        return Err(DbError::Sqlite { context, source });
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn after_write(&mut self) {
        self.write_count += 1;
        if self.write_count.is_multiple_of(CHECKPOINT_EVERY) {
            // Best effort: PASSIVE never blocks writers; failures only delay WAL reuse.
            let _ = self
                .conn
                .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
        }
        if self.write_count.is_multiple_of(MERGE_EVERY) {
            // Best effort, like the checkpoint: a failed merge only leaves more segments.
            let _ = self.fts_command("merge", Some(MERGE_PAGES));
        }
    }

    /// Merges each FTS index into one segment (`'optimize'`): rewrites the whole index (about
    /// 1.2 s per 100 000 messages), so it is an explicit maintenance step, not part of
    /// appending. Returns how many indexes were optimised.
    pub fn optimize_fts(&mut self) -> Result<usize, DbError> {
        self.fts_command("optimize", None)
    }

    /// Rebuilds both FTS indexes from their stored text (`'rebuild'`); if that fails, drops
    /// and recreates them from `messages`. Returns how many indexes were rebuilt.
    pub fn rebuild_fts(&mut self) -> Result<usize, DbError> {
        if self.read_only {
            return Err(DbError::ReadOnly);
        }
        match self.fts_command("rebuild", None) {
            Ok(n) if n == self.fts_table_count() => Ok(n),
            _ => super::repair::recreate_fts(&self.conn, self.trigram_available),
        }
    }

    fn fts_table_count(&self) -> usize {
        usize::from(self.fts_enabled) + usize::from(self.trigram_available)
    }

    /// Runs an FTS5 special command (with its `rank` argument, for `'merge'`) on each index.
    fn fts_command(&mut self, command: &'static str, arg: Option<i64>) -> Result<usize, DbError> {
        if self.read_only {
            return Err(DbError::ReadOnly);
        }
        let mut done = 0;
        for table in schema::FTS_TABLES {
            if !super::repair::table_queryable(&self.conn, table) {
                continue;
            }
            // Table names come from a fixed list; the command is a bound parameter.
            let result = match arg {
                None => self.conn.execute(
                    &format!("INSERT INTO {table}({table}) VALUES(?1)"),
                    [command],
                ),
                Some(n) => self.conn.execute(
                    &format!("INSERT INTO {table}({table}, rank) VALUES(?1, ?2)"),
                    rusqlite::params![command, n],
                ),
            };
            match result {
                Ok(_) => done += 1,
                Err(e) if is_busy_error(&e) => return Err(DbError::Busy { attempts: 1 }),
                Err(source) => {
                    return Err(DbError::Sqlite {
                        context: "running FTS maintenance",
                        source,
                    });
                }
            }
        }
        Ok(done)
    }
}

#[cfg(test)]
#[path = "conn_tests.rs"]
mod tests;
