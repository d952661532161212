//! `hermes sessions migrate`: every session, message and usage row (titles
//! and routing included) copied between a state.db file and PostgreSQL,
//! either way. Rows keep their ids, so a second run updates what the first
//! wrote instead of doubling it; a message id the target already uses for
//! another session stops the copy (the target holds other history). Each
//! copy is verified: row counts and a checksum of the copied rows' contents,
//! read back from the target.

use std::collections::HashSet;
use std::path::Path;

use postgres::types::ToSql;
use rusqlite::types::ValueRef;

use crate::error::{Ctx, PgError};
use crate::store::PgStore;
use crate::text::{dec_opt, enc};

/// What a column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Int,
    Real,
}

use Kind::{Int, Real, Text};

const SESSIONS: &[(&str, Kind)] = &[
    ("id", Text),
    ("source", Text),
    ("user_id", Text),
    ("session_key", Text),
    ("chat_id", Text),
    ("chat_type", Text),
    ("thread_id", Text),
    ("display_name", Text),
    ("origin_json", Text),
    ("expiry_finalized", Int),
    ("model", Text),
    ("model_config", Text),
    ("system_prompt", Text),
    ("parent_session_id", Text),
    ("started_at", Real),
    ("ended_at", Real),
    ("end_reason", Text),
    ("message_count", Int),
    ("tool_call_count", Int),
    ("input_tokens", Int),
    ("output_tokens", Int),
    ("cache_read_tokens", Int),
    ("cache_write_tokens", Int),
    ("reasoning_tokens", Int),
    ("cwd", Text),
    ("git_branch", Text),
    ("git_repo_root", Text),
    ("billing_provider", Text),
    ("billing_base_url", Text),
    ("billing_mode", Text),
    ("estimated_cost_usd", Real),
    ("actual_cost_usd", Real),
    ("cost_status", Text),
    ("cost_source", Text),
    ("pricing_version", Text),
    ("title", Text),
    ("api_call_count", Int),
    ("handoff_state", Text),
    ("handoff_platform", Text),
    ("handoff_error", Text),
    ("compression_failure_cooldown_until", Real),
    ("compression_failure_error", Text),
    ("compression_fallback_streak", Int),
    ("profile_name", Text),
    ("rewind_count", Int),
    ("archived", Int),
];

const MESSAGES: &[(&str, Kind)] = &[
    ("id", Int),
    ("session_id", Text),
    ("role", Text),
    ("content", Text),
    ("tool_call_id", Text),
    ("tool_calls", Text),
    ("tool_name", Text),
    ("effect_disposition", Text),
    ("timestamp", Real),
    ("token_count", Int),
    ("finish_reason", Text),
    ("reasoning", Text),
    ("reasoning_content", Text),
    ("reasoning_details", Text),
    ("codex_reasoning_items", Text),
    ("codex_message_items", Text),
    ("platform_message_id", Text),
    ("observed", Int),
    ("active", Int),
    ("compacted", Int),
    ("api_content", Text),
];

const USAGE: &[(&str, Kind)] = &[
    ("session_id", Text),
    ("model", Text),
    ("billing_provider", Text),
    ("billing_base_url", Text),
    ("billing_mode", Text),
    ("task", Text),
    ("api_call_count", Int),
    ("input_tokens", Int),
    ("output_tokens", Int),
    ("cache_read_tokens", Int),
    ("cache_write_tokens", Int),
    ("reasoning_tokens", Int),
    ("estimated_cost_usd", Real),
    ("actual_cost_usd", Real),
    ("cost_status", Text),
    ("cost_source", Text),
    ("first_seen", Real),
    ("last_seen", Real),
];

const USAGE_KEY: &str = "session_id, model, billing_provider, billing_base_url, billing_mode, task";

/// One value of a row, in its column's kind.
#[derive(Debug, Clone, PartialEq)]
enum Val {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

type Row = Vec<Val>;

/// What a copy did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CopyReport {
    /// Sessions copied.
    pub sessions: u64,
    /// Messages copied.
    pub messages: u64,
    /// Per-model usage rows copied.
    pub usage_rows: u64,
    /// The checksum both sides agree on (hex).
    pub checksum: String,
}

fn columns(spec: &[(&str, Kind)]) -> String {
    spec.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

/// A value read from SQLite, as its column's kind (old files are not always tidy).
fn from_sqlite(v: ValueRef<'_>, kind: Kind) -> Val {
    match (v, kind) {
        (ValueRef::Null, _) => Val::Null,
        (ValueRef::Integer(i), Int) => Val::Int(i),
        (ValueRef::Integer(i), Real) => Val::Real(i as f64),
        (ValueRef::Integer(i), Text) => Val::Text(i.to_string()),
        (ValueRef::Real(f), Int) => Val::Int(f as i64),
        (ValueRef::Real(f), Real) => Val::Real(f),
        (ValueRef::Real(f), Text) => Val::Text(f.to_string()),
        (ValueRef::Text(t) | ValueRef::Blob(t), Text) => {
            Val::Text(String::from_utf8_lossy(t).into_owned())
        }
        (ValueRef::Text(t) | ValueRef::Blob(t), k) => {
            let s = String::from_utf8_lossy(t);
            match k {
                Int => s.trim().parse().map(Val::Int).unwrap_or(Val::Null),
                _ => s.trim().parse().map(Val::Real).unwrap_or(Val::Null),
            }
        }
    }
}

fn read_sqlite(
    conn: &rusqlite::Connection,
    table: &str,
    spec: &[(&str, Kind)],
    order: &str,
) -> Result<Vec<Row>, PgError> {
    let sql = format!("SELECT {} FROM {table} ORDER BY {order}", columns(spec));
    let sqlite =
        |e: rusqlite::Error| PgError::Invalid(format!("reading {table} from state.db: {e}"));
    let mut stmt = conn.prepare(&sql).map_err(sqlite)?;
    let rows = stmt
        .query_map([], |r| {
            spec.iter()
                .enumerate()
                .map(|(i, (_, k))| Ok(from_sqlite(r.get_ref(i)?, *k)))
                .collect::<rusqlite::Result<Row>>()
        })
        .map_err(sqlite)?
        .collect::<Result<Vec<Row>, _>>()
        .map_err(sqlite)?;
    Ok(rows)
}

fn read_postgres(
    c: &mut postgres::Client,
    table: &str,
    spec: &[(&str, Kind)],
    order: &str,
) -> Result<Vec<Row>, PgError> {
    let sql = format!("SELECT {} FROM {table} ORDER BY {order}", columns(spec));
    let rows = c.query(&sql, &[]).ctx("reading rows to copy")?;
    Ok(rows
        .iter()
        .map(|r| {
            spec.iter()
                .enumerate()
                .map(|(i, (_, k))| match k {
                    Int => r.get::<_, Option<i64>>(i).map_or(Val::Null, Val::Int),
                    Real => r.get::<_, Option<f64>>(i).map_or(Val::Null, Val::Real),
                    Text => dec_opt(r.get::<_, Option<String>>(i)).map_or(Val::Null, Val::Text),
                })
                .collect()
        })
        .collect())
}

fn pg_param(v: &Val, kind: Kind) -> Box<dyn ToSql + Sync + Send> {
    match (v, kind) {
        (Val::Int(i), _) => Box::new(Some(*i)),
        (Val::Real(f), _) => Box::new(Some(*f)),
        (Val::Text(t), _) => Box::new(Some(enc(t).into_owned())),
        (Val::Null, Int) => Box::new(None::<i64>),
        (Val::Null, Real) => Box::new(None::<f64>),
        (Val::Null, Text) => Box::new(None::<String>),
    }
}

fn sqlite_param(v: &Val) -> rusqlite::types::Value {
    match v {
        Val::Null => rusqlite::types::Value::Null,
        Val::Int(i) => rusqlite::types::Value::Integer(*i),
        Val::Real(f) => rusqlite::types::Value::Real(*f),
        Val::Text(t) => rusqlite::types::Value::Text(t.clone()),
    }
}

/// `INSERT … ON CONFLICT (key) DO UPDATE` of every column, with `$n` or `?n` marks.
fn upsert(table: &str, spec: &[(&str, Kind)], key: &str, dollar: bool) -> String {
    let marks: Vec<String> = (1..=spec.len())
        .map(|i| {
            if dollar {
                format!("${i}")
            } else {
                format!("?{i}")
            }
        })
        .collect();
    let keys: HashSet<&str> = key.split(", ").collect();
    let sets: Vec<String> = spec
        .iter()
        .filter(|(n, _)| !keys.contains(n))
        .map(|(n, _)| format!("{n} = excluded.{n}"))
        .collect();
    format!(
        "INSERT INTO {table} ({}) VALUES ({}) ON CONFLICT ({key}) DO UPDATE SET {}",
        columns(spec),
        marks.join(", "),
        sets.join(", ")
    )
}

/// FNV-1a over the copied rows, in order: what both sides must agree on.
fn checksum(tables: &[&[Row]]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            hash ^= u64::from(*b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for rows in tables {
        for row in *rows {
            for v in row {
                match v {
                    Val::Null => feed(b"\x00N"),
                    Val::Int(i) => {
                        feed(b"\x00I");
                        feed(&i.to_le_bytes());
                    }
                    Val::Real(f) => {
                        feed(b"\x00R");
                        feed(&f.to_bits().to_le_bytes());
                    }
                    Val::Text(t) => {
                        feed(b"\x00T");
                        feed(&(t.len() as u64).to_le_bytes());
                        feed(t.as_bytes());
                    }
                }
            }
        }
    }
    format!("{hash:016x}")
}

/// What a store holds, read in a fixed order.
struct Snapshot {
    sessions: Vec<Row>,
    messages: Vec<Row>,
    usage: Vec<Row>,
}

impl Snapshot {
    /// Only the rows of `ids`' sessions (what a copy brought).
    fn only(self, ids: &HashSet<String>) -> Self {
        let of = |rows: Vec<Row>, col: usize| {
            rows.into_iter()
                .filter(|r| matches!(&r[col], Val::Text(t) if ids.contains(t)))
                .collect()
        };
        Self {
            sessions: of(self.sessions, 0),
            messages: of(self.messages, 1),
            usage: of(self.usage, 0),
        }
    }

    fn ids(&self) -> HashSet<String> {
        self.sessions
            .iter()
            .filter_map(|r| match &r[0] {
                Val::Text(t) => Some(t.clone()),
                _ => None,
            })
            .collect()
    }

    fn report(&self) -> CopyReport {
        CopyReport {
            sessions: self.sessions.len() as u64,
            messages: self.messages.len() as u64,
            usage_rows: self.usage.len() as u64,
            checksum: checksum(&[&self.sessions, &self.messages, &self.usage]),
        }
    }
}

const PARENT: usize = 13;

fn snapshot_sqlite(conn: &rusqlite::Connection) -> Result<Snapshot, PgError> {
    Ok(Snapshot {
        sessions: read_sqlite(conn, "sessions", SESSIONS, "id")?,
        messages: read_sqlite(conn, "messages", MESSAGES, "id")?,
        usage: read_sqlite(conn, "session_model_usage", USAGE, USAGE_KEY)?,
    })
}

fn snapshot_postgres(c: &mut postgres::Client) -> Result<Snapshot, PgError> {
    Ok(Snapshot {
        sessions: read_postgres(c, "sessions", SESSIONS, "id COLLATE \"C\"")?,
        messages: read_postgres(c, "messages", MESSAGES, "id")?,
        usage: read_postgres(
            c,
            "session_model_usage",
            USAGE,
            "session_id COLLATE \"C\", model COLLATE \"C\", billing_provider COLLATE \"C\", \
             billing_base_url COLLATE \"C\", billing_mode COLLATE \"C\", task COLLATE \"C\"",
        )?,
    })
}

/// Opens state.db at `path` (created, or upgraded from an older schema, as
/// Hermes opens it) and returns a plain connection to it.
fn open_sqlite(path: &Path) -> Result<rusqlite::Connection, PgError> {
    hermes_state::session_db::SessionDb::open(path)
        .and_then(|db| db.close())
        .map_err(|e| PgError::Invalid(e.to_string()))?;
    rusqlite::Connection::open(path)
        .map_err(|e| PgError::Invalid(format!("cannot open {}: {e}", path.display())))
}

fn mismatch(what: &str, source: &CopyReport, target: &CopyReport) -> PgError {
    PgError::Invalid(format!(
        "the copy did not verify ({what}): source has {} sessions, {} messages, {} usage rows \
         (checksum {}); target has {} / {} / {} (checksum {})",
        source.sessions,
        source.messages,
        source.usage_rows,
        source.checksum,
        target.sessions,
        target.messages,
        target.usage_rows,
        target.checksum
    ))
}

fn verified(source: &Snapshot, target: Snapshot) -> Result<CopyReport, PgError> {
    let want = source.report();
    let got = target.only(&source.ids()).report();
    if want != got {
        return Err(mismatch("read back", &want, &got));
    }
    Ok(want)
}

/// Copies every session of state.db at `path` into `store`, then verifies.
pub fn copy_sqlite_to_postgres(path: &Path, store: &PgStore) -> Result<CopyReport, PgError> {
    let conn = open_sqlite(path)?;
    let source = snapshot_sqlite(&conn)?;
    drop(conn);
    let rows = (
        source.sessions.clone(),
        source.messages.clone(),
        source.usage.clone(),
    );
    store.with(move |c| write_postgres(c, rows))?;
    // Fresh statistics (or the planner guesses badly for the first searches)
    // and the search indexes' pending lists merged.
    store.vacuum_analyze()?;
    let target = store.with(snapshot_postgres)?;
    verified(&source, target)
}

fn write_postgres(
    c: &mut postgres::Client,
    (sessions, messages, usage): (Vec<Row>, Vec<Row>, Vec<Row>),
) -> Result<(), PgError> {
    const CTX: &str = "copying sessions into PostgreSQL";
    let mut tx = c.transaction().ctx(CTX)?;
    // A message id the target uses for another session: not ours to overwrite.
    let ids: Vec<i64> = messages
        .iter()
        .filter_map(|r| match r[0] {
            Val::Int(i) => Some(i),
            _ => None,
        })
        .collect();
    let clash = tx
        .query(
            "SELECT id, session_id FROM messages WHERE id = ANY($1)",
            &[&ids],
        )
        .ctx(CTX)?;
    let theirs: std::collections::HashMap<i64, String> = messages
        .iter()
        .filter_map(|r| match (&r[0], &r[1]) {
            (Val::Int(i), Val::Text(s)) => Some((*i, s.clone())),
            _ => None,
        })
        .collect();
    for r in &clash {
        let (id, sid): (i64, String) = (r.get(0), crate::text::dec(r.get(1)));
        if theirs.get(&id).is_some_and(|s| *s != sid) {
            return Err(PgError::Invalid(format!(
                "message {id} already exists in the target for another session ({sid}): the \
                 target holds other history. Migrate into an empty database or schema."
            )));
        }
    }
    let session_sql = upsert("sessions", SESSIONS, "id", true);
    let stmt = tx.prepare(&session_sql).ctx(CTX)?;
    // Parents are linked once every session exists.
    for row in &sessions {
        let params: Vec<Box<dyn ToSql + Sync + Send>> = row
            .iter()
            .zip(SESSIONS)
            .enumerate()
            .map(|(i, (v, (_, k)))| pg_param(if i == PARENT { &Val::Null } else { v }, *k))
            .collect();
        let refs: Vec<&(dyn ToSql + Sync)> = params
            .iter()
            .map(|p| p.as_ref() as &(dyn ToSql + Sync))
            .collect();
        tx.execute(&stmt, &refs).ctx(CTX)?;
    }
    link_parents(&mut tx, &sessions)?;
    for (table, spec, key, rows) in [
        ("messages", MESSAGES, "id", &messages),
        ("session_model_usage", USAGE, USAGE_KEY, &usage),
    ] {
        let stmt = tx.prepare(&upsert(table, spec, key, true)).ctx(CTX)?;
        for row in rows.iter() {
            let params: Vec<Box<dyn ToSql + Sync + Send>> = row
                .iter()
                .zip(spec)
                .map(|(v, (_, k))| pg_param(v, *k))
                .collect();
            let refs: Vec<&(dyn ToSql + Sync)> = params
                .iter()
                .map(|p| p.as_ref() as &(dyn ToSql + Sync))
                .collect();
            tx.execute(&stmt, &refs).ctx(CTX)?;
        }
    }
    // New messages continue after the copied ids.
    tx.batch_execute(
        "SELECT setval(pg_get_serial_sequence('messages', 'id'), \
         GREATEST((SELECT COALESCE(MAX(id), 0) FROM messages), 1))",
    )
    .ctx(CTX)?;
    tx.commit().ctx(CTX)
}

/// Sets each copied session's parent once every session exists (a parent
/// neither copied nor already in the target stays unlinked).
fn link_parents(tx: &mut postgres::Transaction<'_>, sessions: &[Row]) -> Result<(), PgError> {
    const CTX: &str = "copying sessions into PostgreSQL";
    let known: HashSet<String> = sessions
        .iter()
        .filter_map(|r| match &r[0] {
            Val::Text(t) => Some(t.clone()),
            _ => None,
        })
        .collect();
    for row in sessions {
        if let (Val::Text(id), Val::Text(parent)) = (&row[0], &row[PARENT]) {
            let exists = known.contains(parent)
                || tx
                    .query_opt("SELECT 1 FROM sessions WHERE id = $1", &[&enc(parent)])
                    .ctx(CTX)?
                    .is_some();
            if exists {
                tx.execute(
                    "UPDATE sessions SET parent_session_id = $2 WHERE id = $1",
                    &[&enc(id), &enc(parent)],
                )
                .ctx(CTX)?;
            }
        }
    }
    Ok(())
}

/// Copies every session of `store` into state.db at `path` (created when
/// missing), then verifies.
pub fn copy_postgres_to_sqlite(store: &PgStore, path: &Path) -> Result<CopyReport, PgError> {
    let source = store.with(snapshot_postgres)?;
    let mut conn = open_sqlite(path)?;
    let sqlite = |e: rusqlite::Error| PgError::Invalid(format!("writing {}: {e}", path.display()));
    {
        let tx = conn.transaction().map_err(sqlite)?;
        let ids: HashSet<i64> = source
            .messages
            .iter()
            .filter_map(|r| match r[0] {
                Val::Int(i) => Some(i),
                _ => None,
            })
            .collect();
        {
            let mut check = tx
                .prepare("SELECT session_id FROM messages WHERE id = ?1")
                .map_err(sqlite)?;
            for row in &source.messages {
                if let (Val::Int(id), Val::Text(sid)) = (&row[0], &row[1])
                    && ids.contains(id)
                {
                    let existing: Option<String> = check
                        .query_row([id], |r| r.get(0))
                        .map(Some)
                        .or_else(|e| match e {
                            rusqlite::Error::QueryReturnedNoRows => Ok(None),
                            e => Err(e),
                        })
                        .map_err(sqlite)?;
                    if existing.is_some_and(|s| s != *sid) {
                        return Err(PgError::Invalid(format!(
                            "message {id} already exists in {} for another session: the file \
                             holds other history. Migrate into a new file.",
                            path.display()
                        )));
                    }
                }
            }
        }
        for (table, spec, key, rows, detach) in [
            ("sessions", SESSIONS, "id", &source.sessions, true),
            ("messages", MESSAGES, "id", &source.messages, false),
            (
                "session_model_usage",
                USAGE,
                USAGE_KEY,
                &source.usage,
                false,
            ),
        ] {
            let mut stmt = tx
                .prepare(&upsert(table, spec, key, false))
                .map_err(sqlite)?;
            for row in rows.iter() {
                let values: Vec<rusqlite::types::Value> = row
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        if detach && i == PARENT {
                            rusqlite::types::Value::Null
                        } else {
                            sqlite_param(v)
                        }
                    })
                    .collect();
                stmt.execute(rusqlite::params_from_iter(values))
                    .map_err(sqlite)?;
            }
        }
        for row in &source.sessions {
            if let (Val::Text(id), Val::Text(parent)) = (&row[0], &row[PARENT]) {
                tx.execute(
                    "UPDATE sessions SET parent_session_id = ?2 WHERE id = ?1",
                    [id, parent],
                )
                .map_err(sqlite)?;
            }
        }
        tx.commit().map_err(sqlite)?;
    }
    let target = snapshot_sqlite(&conn)?;
    let sorted = |mut s: Snapshot| {
        // state.db orders text by bytes, as PostgreSQL's "C" collation does.
        s.sessions
            .sort_by(|a, b| format!("{:?}", a[0]).cmp(&format!("{:?}", b[0])));
        s
    };
    verified(&sorted(source), sorted(target))
}
