//! [`PgStore`]: the [`SessionStore`] over PostgreSQL, statement for
//! statement what `SessionDb` does on state.db (the same rows, counters,
//! titles and lookups), each write one transaction.

use std::time::{SystemTime, UNIX_EPOCH};

use hermes_protocol::Message;
use hermes_state::DbError;
use hermes_state::session_db::{
    MSG_COLS, MessageExtra, MessageRecord, NewSession, SESSION_COLS, SessionRouting, SessionRow,
    StoredMessage, UsageDelta, json_truthy, like_escape, lineage_base, next_in_lineage,
    py_json_dumps, replay, sanitize_title,
};
use hermes_state::store::{SessionStore, StoreError};
use postgres::Row;
use postgres::error::SqlState;

use crate::error::{Ctx, PgError};
use crate::pool::{self, Pool, prepared};
use crate::text::{dec, dec_opt, enc, enc_opt};
use crate::{Target, schema};

/// Connections a store keeps (a replica's sessions share them).
const CONNECTIONS: usize = 4;

/// Sessions in PostgreSQL.
pub struct PgStore {
    pub(crate) pool: Pool,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("target", self.pool.target())
            .finish()
    }
}

pub(crate) fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// A subagent run (a parent, but neither a branch nor a compression continuation).
fn ephemeral_child(a: &str) -> String {
    format!(
        "({a}.parent_session_id IS NOT NULL AND NOT (hermes_json_field({a}.model_config, \
         '_branched_from') IS NOT NULL OR EXISTS (SELECT 1 FROM sessions p WHERE \
         p.id = {a}.parent_session_id AND p.end_reason = 'branched' AND {a}.started_at >= p.ended_at)) \
         AND NOT EXISTS (SELECT 1 FROM sessions p WHERE p.id = {a}.parent_session_id \
         AND p.end_reason = 'compression'))"
    )
}

pub(crate) fn session_row(r: &Row) -> SessionRow {
    let int = |i: usize| r.get::<_, Option<i64>>(i).unwrap_or(0);
    let text = |i: usize| dec_opt(r.get::<_, Option<String>>(i));
    SessionRow {
        id: dec(r.get(0)),
        source: dec(r.get(1)),
        user_id: text(2),
        model: text(3),
        model_config: text(4),
        title: text(5),
        system_prompt: text(6),
        parent_session_id: text(7),
        cwd: text(8),
        git_branch: text(9),
        git_repo_root: text(10),
        started_at: r.get(11),
        ended_at: r.get(12),
        end_reason: text(13),
        message_count: int(14),
        tool_call_count: int(15),
        api_call_count: int(16),
        input_tokens: int(17),
        output_tokens: int(18),
        cache_read_tokens: int(19),
        cache_write_tokens: int(20),
        reasoning_tokens: int(21),
        billing_provider: text(22),
        billing_base_url: text(23),
        estimated_cost_usd: r.get(24),
        actual_cost_usd: r.get(25),
        archived: int(26) != 0,
    }
}

pub(crate) fn stored_message(r: &Row) -> StoredMessage {
    let text = |i: usize| dec_opt(r.get::<_, Option<String>>(i));
    StoredMessage {
        id: r.get(0),
        session_id: dec(r.get(1)),
        role: dec(r.get(2)),
        content: text(3),
        tool_call_id: text(4),
        tool_calls: text(5),
        tool_name: text(6),
        timestamp: r.get(7),
        token_count: r.get(8),
        finish_reason: text(9),
        reasoning: text(10),
    }
}

/// A foreign-key failure means the session (or parent) is not there.
fn missing_session(e: &postgres::Error, id: &str, context: &'static str) -> PgError {
    if e.code() == Some(&SqlState::FOREIGN_KEY_VIOLATION) {
        PgError::Invalid(DbError::NoSuchSession(id.to_owned()).to_string())
    } else {
        PgError::query(context, e)
    }
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn non_empty(s: &str) -> Option<&str> {
    (!s.is_empty()).then_some(s)
}

impl PgStore {
    /// Connects to `target` and creates (or checks) Hermes' tables there. An
    /// unreachable server, a wrong password or a schema from a newer Hermes
    /// is an error naming the host and database, never the password.
    pub fn open(target: Target) -> Result<Self, PgError> {
        let describe = target.describe();
        let schema_name = target.schema().to_owned();
        let pool = Pool::start(target, CONNECTIONS)?;
        pool.run(move |c| schema::prepare(c, &schema_name))
            .map_err(|e| match e {
                PgError::Newer {
                    found, supported, ..
                } => PgError::Newer {
                    target: describe,
                    found,
                    supported,
                },
                e => e,
            })?;
        Ok(Self { pool })
    }

    /// Where the sessions are.
    pub fn target(&self) -> &Target {
        self.pool.target()
    }

    /// Runs `f` on a connection; a caller on a multi-threaded runtime tells
    /// it that this worker blocks, so other tasks keep moving.
    pub(crate) fn with<T, F>(&self, f: F) -> Result<T, PgError>
    where
        T: Send + 'static,
        F: FnOnce(&mut postgres::Client) -> Result<T, PgError> + Send + 'static,
    {
        match tokio::runtime::Handle::try_current() {
            Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(|| self.pool.run(f))
            }
            _ => self.pool.run(f),
        }
    }

    /// The session's active messages in insertion order.
    pub fn messages(&self, session_id: &str) -> Result<Vec<StoredMessage>, PgError> {
        let id = session_id.to_owned();
        self.with(move |c| {
            Ok(c.query(
                &format!(
                    "SELECT {MSG_COLS} FROM messages WHERE session_id = $1 AND active = 1 \
                     ORDER BY id"
                ),
                &[&enc(&id)],
            )
            .ctx("reading messages")?
            .iter()
            .map(stored_message)
            .collect())
        })
    }

    /// `VACUUM (ANALYZE)` of the session tables: space given back, fresh
    /// statistics, the search indexes' pending lists merged.
    pub fn vacuum_analyze(&self) -> Result<(), PgError> {
        self.with(|c| {
            c.batch_execute("VACUUM (ANALYZE) sessions, messages, session_model_usage")
                .ctx("vacuuming the session tables")
        })
    }

    /// Numbers of sessions and messages (every row).
    pub fn counts(&self) -> Result<(u64, u64), PgError> {
        self.with(|c| {
            let row = c
                .query_one(
                    "SELECT (SELECT COUNT(*) FROM sessions), (SELECT COUNT(*) FROM messages)",
                    &[],
                )
                .ctx("counting sessions")?;
            let n = |i: usize| u64::try_from(row.get::<_, i64>(i)).unwrap_or(0);
            Ok((n(0), n(1)))
        })
    }
}

fn create_session(c: &mut postgres::Client, s: &NewSession) -> Result<(), PgError> {
    const CTX: &str = "creating a session";
    let model_config = match s.model_config.as_ref().filter(|v| json_truthy(v)) {
        Some(v) => {
            Some(py_json_dumps(v, "model_config").map_err(|e| PgError::Invalid(e.to_string()))?)
        }
        None => None,
    };
    let st = prepared(
        c,
        "INSERT INTO sessions (id, source, model, model_config, system_prompt, \
         parent_session_id, cwd, started_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
         ON CONFLICT (id) DO UPDATE SET \
         model = COALESCE(sessions.model, EXCLUDED.model), \
         model_config = COALESCE(sessions.model_config, EXCLUDED.model_config), \
         system_prompt = COALESCE(sessions.system_prompt, EXCLUDED.system_prompt), \
         parent_session_id = COALESCE(sessions.parent_session_id, EXCLUDED.parent_session_id), \
         cwd = COALESCE(sessions.cwd, EXCLUDED.cwd)",
    )
    .ctx(CTX)?;
    c.execute(
        &st,
        &[
            &enc(&s.id),
            &enc(&s.source),
            &enc_opt(s.model.as_deref()),
            &enc_opt(model_config.as_deref()),
            &enc_opt(s.system_prompt.as_deref()),
            &enc_opt(s.parent_session_id.as_deref()),
            &enc_opt(s.cwd.as_deref()),
            &s.started_at,
        ],
    )
    .map_err(|e| missing_session(&e, s.parent_session_id.as_deref().unwrap_or(""), CTX))?;
    Ok(())
}

fn append_message(
    c: &mut postgres::Client,
    id: &str,
    r: &MessageRecord,
    extra: &MessageExtra,
) -> Result<i64, PgError> {
    const CTX: &str = "appending a message";
    // One statement (one round trip, atomic): the row and the counters.
    let st = prepared(
        c,
        "WITH ins AS (INSERT INTO messages (session_id, role, content, tool_call_id, \
             tool_calls, tool_name, timestamp, token_count, finish_reason, reasoning, \
             reasoning_details, codex_reasoning_items, observed, active) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 0, 1) RETURNING id), \
             bump AS (UPDATE sessions SET message_count = COALESCE(message_count, 0) + 1, \
             tool_call_count = COALESCE(tool_call_count, 0) + $13 WHERE id = $1) \
             SELECT id FROM ins",
    )
    .ctx(CTX)?;
    let row = c
        .query_one(
            &st,
            &[
                &enc(id),
                &r.role,
                &enc_opt(r.content.as_deref()),
                &enc_opt(r.tool_call_id.as_deref()),
                &enc_opt(r.tool_calls.as_deref()),
                &enc_opt(r.tool_name.as_deref()),
                &extra.timestamp,
                &extra.token_count,
                &enc_opt(extra.finish_reason.as_deref()),
                &enc_opt(r.reasoning.as_deref()),
                &enc_opt(r.reasoning_details.as_deref()),
                &enc_opt(r.codex_reasoning_items.as_deref()),
                &r.tool_call_count,
            ],
        )
        .map_err(|e| missing_session(&e, id, CTX))?;
    Ok(row.get(0))
}

fn add_usage(c: &mut postgres::Client, id: &str, u: &UsageDelta) -> Result<(), PgError> {
    const CTX: &str = "recording token usage";
    let model = non_empty(&u.model);
    let provider = non_empty(&u.billing_provider);
    let base_url = non_empty(&u.billing_base_url);
    let cost = u.estimated_cost_usd;
    let counted = u.input_tokens != 0
        || u.output_tokens != 0
        || u.cache_read_tokens != 0
        || u.cache_write_tokens != 0
        || u.reasoning_tokens != 0
        || u.api_calls != 0;
    let accounted = counted || cost.is_some_and(|c| c != 0.0);
    let at = now();
    let sid = enc(id);
    let mut tx = c.transaction().ctx(CTX)?;
    // The row is made if missing and locked (the upsert locks it), its
    // current values returned, in one round trip.
    let cur = pool::query_one(
        &mut tx,
        "INSERT INTO sessions (id, source, model, started_at) VALUES ($1, 'unknown', $2, $3) \
         ON CONFLICT (id) DO UPDATE SET model = COALESCE(sessions.model, EXCLUDED.model) \
         RETURNING model, billing_provider, api_call_count",
        &[&sid, &model, &at],
    )
    .ctx(CTX)?;
    let (cur_model, cur_provider, cur_calls): (Option<String>, Option<String>, Option<i64>) =
        (cur.get(0), cur.get(1), cur.get(2));
    if let (Some(m), Some(p)) = (model, provider)
        && cur_calls.unwrap_or(0) == 0
        && accounted
        && (cur_model.as_deref() != Some(m) || cur_provider.as_deref() != Some(p))
    {
        pool::exec(
            &mut tx,
            "UPDATE sessions SET model = $1, billing_provider = $2, billing_base_url = $3, \
             billing_mode = $4 WHERE id = $5",
            &[&m, &p, &base_url, &u.billing_mode, &sid],
        )
        .ctx(CTX)?;
    }
    let (bp, bu, bm) = if accounted {
        (provider, base_url, model)
    } else {
        (None, None, None)
    };
    let mode = if accounted {
        u.billing_mode.as_deref()
    } else {
        None
    };
    let billed = pool::query_one(
        &mut tx,
        "UPDATE sessions SET input_tokens = COALESCE(input_tokens, 0) + $1, \
         output_tokens = COALESCE(output_tokens, 0) + $2, \
         cache_read_tokens = COALESCE(cache_read_tokens, 0) + $3, \
         cache_write_tokens = COALESCE(cache_write_tokens, 0) + $4, \
         reasoning_tokens = COALESCE(reasoning_tokens, 0) + $5, \
         estimated_cost_usd = COALESCE(estimated_cost_usd, 0) + COALESCE($6::float8, 0), \
         billing_provider = COALESCE(billing_provider, $7), \
         billing_base_url = COALESCE(billing_base_url, $8), \
         model = COALESCE(model, $9), api_call_count = COALESCE(api_call_count, 0) + $10, \
         cost_status = COALESCE($12, cost_status), cost_source = COALESCE($13, cost_source), \
         pricing_version = COALESCE($14, pricing_version), \
         billing_mode = COALESCE(billing_mode, $15) WHERE id = $11 \
         RETURNING model, billing_provider, billing_base_url, billing_mode",
        &[
            &to_i64(u.input_tokens),
            &to_i64(u.output_tokens),
            &to_i64(u.cache_read_tokens),
            &to_i64(u.cache_write_tokens),
            &to_i64(u.reasoning_tokens),
            &cost,
            &bp,
            &bu,
            &bm,
            &to_i64(u.api_calls),
            &sid,
            &u.cost_status,
            &u.cost_source,
            &u.pricing_version,
            &mode,
        ],
    )
    .ctx(CTX)?;
    if accounted {
        record_model_usage(&mut tx, &sid, u, &billed, at)?;
    }
    tx.commit().ctx(CTX)
}

/// One row per model of the session's usage; `s` is the session's billing
/// (model, provider, base URL, mode) after this call's update.
fn record_model_usage(
    tx: &mut postgres::Transaction<'_>,
    sid: &str,
    u: &UsageDelta,
    s: &Row,
    at: f64,
) -> Result<(), PgError> {
    const CTX: &str = "recording token usage";
    let pick = |own: &str, session: Option<String>, fallback: &str| {
        non_empty(own)
            .map(str::to_owned)
            .or(session.filter(|s| !s.is_empty()))
            .unwrap_or_else(|| fallback.to_owned())
    };
    let mode = u
        .billing_mode
        .clone()
        .filter(|m| !m.is_empty())
        .or(s.get(3))
        .unwrap_or_default();
    pool::exec(
        tx,
        "INSERT INTO session_model_usage (session_id, model, billing_provider, billing_base_url, \
         billing_mode, task, api_call_count, input_tokens, output_tokens, cache_read_tokens, \
         cache_write_tokens, reasoning_tokens, estimated_cost_usd, actual_cost_usd, cost_status, \
         cost_source, first_seen, last_seen) \
         VALUES ($1, $2, $3, $4, $5, '', $6, $7, $8, $9, $10, $11, $12, 0.0, $14, $15, $13, $13) \
         ON CONFLICT (session_id, model, billing_provider, billing_base_url, billing_mode, task) \
         DO UPDATE SET api_call_count = session_model_usage.api_call_count + EXCLUDED.api_call_count, \
         input_tokens = session_model_usage.input_tokens + EXCLUDED.input_tokens, \
         output_tokens = session_model_usage.output_tokens + EXCLUDED.output_tokens, \
         cache_read_tokens = session_model_usage.cache_read_tokens + EXCLUDED.cache_read_tokens, \
         cache_write_tokens = session_model_usage.cache_write_tokens + EXCLUDED.cache_write_tokens, \
         reasoning_tokens = session_model_usage.reasoning_tokens + EXCLUDED.reasoning_tokens, \
         estimated_cost_usd = session_model_usage.estimated_cost_usd + EXCLUDED.estimated_cost_usd, \
         actual_cost_usd = session_model_usage.actual_cost_usd + EXCLUDED.actual_cost_usd, \
         cost_status = COALESCE(EXCLUDED.cost_status, session_model_usage.cost_status), \
         cost_source = COALESCE(EXCLUDED.cost_source, session_model_usage.cost_source), \
         last_seen = EXCLUDED.last_seen",
        &[
            &sid,
            &pick(&u.model, s.get(0), "unknown"),
            &pick(&u.billing_provider, s.get(1), ""),
            &pick(&u.billing_base_url, s.get(2), ""),
            &mode,
            &to_i64(u.api_calls),
            &to_i64(u.input_tokens),
            &to_i64(u.output_tokens),
            &to_i64(u.cache_read_tokens),
            &to_i64(u.cache_write_tokens),
            &to_i64(u.reasoning_tokens),
            &u.estimated_cost_usd.unwrap_or(0.0),
            &at,
            &u.cost_status,
            &u.cost_source,
        ],
    )
    .ctx(CTX)?;
    Ok(())
}

fn set_title(c: &mut postgres::Client, id: &str, title: Option<String>) -> Result<bool, PgError> {
    const CTX: &str = "setting a title";
    let sid = enc(id);
    let mut tx = c.transaction().ctx(CTX)?;
    if let Some(t) = &title {
        let holder: Option<String> = tx
            .query_opt(
                "SELECT id FROM sessions WHERE title = $1 AND id != $2",
                &[&enc(t), &sid],
            )
            .ctx(CTX)?
            .map(|r| dec(r.get(0)));
        if let Some(holder) = holder {
            let ancestor = tx
                .query_opt(
                    "WITH RECURSIVE ancestors(id) AS (SELECT $1::text UNION SELECT parent.id \
                     FROM ancestors a JOIN sessions child ON child.id = a.id \
                     JOIN sessions parent ON parent.id = child.parent_session_id \
                     WHERE parent.end_reason = 'compression') \
                     SELECT 1 FROM ancestors WHERE id = $2 AND id != $1 LIMIT 1",
                    &[&sid, &enc(&holder)],
                )
                .ctx(CTX)?
                .is_some();
            if !ancestor {
                return Err(PgError::Invalid(
                    DbError::TitleTaken {
                        title: t.clone(),
                        session_id: holder,
                    }
                    .to_string(),
                ));
            }
            tx.execute(
                "UPDATE sessions SET title = NULL WHERE id = $1",
                &[&enc(&holder)],
            )
            .ctx(CTX)?;
        }
    }
    let n = tx
        .execute(
            "UPDATE sessions SET title = $1 WHERE id = $2",
            &[&enc_opt(title.as_deref()), &sid],
        )
        .ctx(CTX)?;
    tx.commit().ctx(CTX)?;
    Ok(n > 0)
}

fn resolve(c: &mut postgres::Client, key: &str) -> Result<Option<String>, PgError> {
    const CTX: &str = "resolving a session id";
    if key.is_empty() {
        return Ok(None);
    }
    let k = enc(key);
    if let Some(r) = c
        .query_opt("SELECT id FROM sessions WHERE id = $1", &[&k])
        .ctx(CTX)?
    {
        return Ok(Some(dec(r.get(0))));
    }
    let pattern = format!("{}%", like_escape(&k));
    let mut candidates: Vec<String> = c
        .query(
            "SELECT id FROM sessions WHERE id LIKE $1 ORDER BY started_at DESC LIMIT 6",
            &[&pattern],
        )
        .ctx(CTX)?
        .iter()
        .map(|r| dec(r.get(0)))
        .collect();
    match candidates.len() {
        0 => {}
        1 => return Ok(candidates.pop()),
        _ => {
            return Err(PgError::Invalid(
                DbError::Ambiguous {
                    prefix: key.to_owned(),
                    candidates,
                }
                .to_string(),
            ));
        }
    }
    // A title, preferring the newest numbered continuation ("t #3") over "t".
    let numbered = format!("{} #%", like_escape(&k));
    if let Some(r) = c
        .query_opt(
            "SELECT id FROM sessions WHERE title LIKE $1 ORDER BY started_at DESC LIMIT 1",
            &[&numbered],
        )
        .ctx("resolving a title")?
    {
        return Ok(Some(dec(r.get(0))));
    }
    Ok(
        c.query_opt("SELECT id FROM sessions WHERE title = $1", &[&k])
            .ctx("resolving a title")?
            .map(|r| dec(r.get(0))),
    )
}

fn next_title_in_lineage(c: &mut postgres::Client, title: &str) -> Result<String, PgError> {
    let base = lineage_base(title);
    let pattern = format!("{} #%", like_escape(&enc(base)));
    let titles: Vec<String> = c
        .query(
            "SELECT title FROM sessions WHERE title = $1 OR title LIKE $2",
            &[&enc(base), &pattern],
        )
        .ctx("numbering a title")?
        .iter()
        .map(|r| dec(r.get(0)))
        .collect();
    Ok(next_in_lineage(base, &titles))
}

fn most_recent(c: &mut postgres::Client, source: Option<&str>) -> Result<Option<String>, PgError> {
    let sql = format!(
        "SELECT s.id FROM sessions s LEFT JOIN (SELECT session_id, MAX(timestamp) AS last_active \
         FROM messages GROUP BY session_id) m ON m.session_id = s.id \
         WHERE ($1::text IS NULL OR s.source = $1) AND NOT {} \
         AND hermes_json_field(s.model_config, '_delegate_from') IS NULL \
         ORDER BY COALESCE(m.last_active, s.started_at) DESC, s.started_at DESC, s.id DESC LIMIT 1",
        ephemeral_child("s"),
    );
    Ok(c.query_opt(&sql, &[&enc_opt(source)])
        .ctx("finding the most recent session")?
        .map(|r| dec(r.get(0))))
}

/// A `Send + 'static` copy of a borrowed value, for a worker's closure.
fn own(s: &str) -> String {
    s.to_owned()
}

impl SessionStore for PgStore {
    fn create_session(&self, session: &NewSession) -> Result<(), StoreError> {
        let s = session.clone();
        Ok(self.with(move |c| create_session(c, &s))?)
    }

    fn reopen_session(&self, id: &str) -> Result<(), StoreError> {
        let id = own(id);
        Ok(self.with(move |c| {
            c.execute(
                "UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = $1",
                &[&enc(&id)],
            )
            .ctx("reopening a session")
            .map(|_| ())
        })?)
    }

    fn end_session(&self, id: &str, reason: &str) -> Result<(), StoreError> {
        let (id, reason) = (own(id), own(reason));
        Ok(self.with(move |c| {
            pool::exec(
                c,
                "UPDATE sessions SET ended_at = $1, end_reason = $2 WHERE id = $3 \
                 AND ended_at IS NULL",
                &[&now(), &enc(&reason), &enc(&id)],
            )
            .ctx("ending a session")
            .map(|_| ())
        })?)
    }

    fn discard_if_empty(&self, id: &str) -> Result<bool, StoreError> {
        let id = own(id);
        Ok(self.with(move |c| {
            c.execute(
                "DELETE FROM sessions WHERE id = $1 AND title IS NULL \
                 AND NOT EXISTS (SELECT 1 FROM messages WHERE session_id = $1) \
                 AND NOT EXISTS (SELECT 1 FROM sessions AS child WHERE child.parent_session_id = $1)",
                &[&enc(&id)],
            )
            .ctx("discarding an empty session")
            .map(|n| n > 0)
        })?)
    }

    fn append_message(
        &self,
        id: &str,
        message: &Message,
        extra: &MessageExtra,
    ) -> Result<(), StoreError> {
        let record = MessageRecord::of(message)?;
        let (id, extra) = (own(id), extra.clone());
        Ok(self.with(move |c| append_message(c, &id, &record, &extra).map(|_| ()))?)
    }

    fn add_usage(&self, id: &str, usage: &UsageDelta) -> Result<(), StoreError> {
        let (id, usage) = (own(id), usage.clone());
        Ok(self.with(move |c| add_usage(c, &id, &usage))?)
    }

    fn deactivate_last_messages(&self, id: &str, count: usize) -> Result<(), StoreError> {
        let id = own(id);
        let limit = i64::try_from(count).unwrap_or(i64::MAX);
        Ok(self.with(move |c| {
            c.execute(
                "UPDATE messages SET active = 0 WHERE id IN (SELECT id FROM messages \
                 WHERE session_id = $1 AND active = 1 ORDER BY id DESC LIMIT $2)",
                &[&enc(&id), &limit],
            )
            .ctx("rewinding messages")
            .map(|_| ())
        })?)
    }

    fn session(&self, id: &str) -> Result<Option<SessionRow>, StoreError> {
        let id = own(id);
        Ok(self.with(move |c| {
            Ok(pool::query_opt(
                c,
                &format!("SELECT {SESSION_COLS} FROM sessions WHERE id = $1"),
                &[&enc(&id)],
            )
            .ctx("reading a session")?
            .map(|r| session_row(&r)))
        })?)
    }

    fn conversation(&self, id: &str) -> Result<Vec<Message>, StoreError> {
        let id = own(id);
        let rows = self.with(move |c| {
            Ok(pool::query(
                c,
                &format!(
                    "SELECT {MSG_COLS}, reasoning_details, codex_reasoning_items FROM messages \
                     WHERE session_id = $1 AND active = 1 ORDER BY id"
                ),
                &[&enc(&id)],
            )
            .ctx("reading messages")?
            .iter()
            .map(|r| (stored_message(r), dec_opt(r.get(11)), dec_opt(r.get(12))))
            .collect::<Vec<_>>())
        })?;
        Ok(replay(rows))
    }

    fn resolve(&self, key: &str) -> Result<Option<String>, StoreError> {
        let key = own(key.trim());
        Ok(self.with(move |c| resolve(c, &key))?)
    }

    fn most_recent(&self, source: Option<&str>) -> Result<Option<String>, StoreError> {
        let source = source.map(own);
        Ok(self.with(move |c| most_recent(c, source.as_deref()))?)
    }

    fn set_title(&self, id: &str, title: &str) -> Result<(), StoreError> {
        let title = sanitize_title(title)?;
        let id = own(id);
        Ok(self.with(move |c| set_title(c, &id, title).map(|_| ()))?)
    }

    fn next_title_in_lineage(&self, title: &str) -> Result<String, StoreError> {
        let title = own(title);
        Ok(self.with(move |c| next_title_in_lineage(c, &title))?)
    }

    fn set_routing(&self, id: &str, routing: &SessionRouting) -> Result<(), StoreError> {
        let (id, r) = (own(id), routing.clone());
        Ok(self.with(move |c| {
            c.execute(
                "UPDATE sessions SET session_key = $2, chat_id = $3, chat_type = $4, \
                 thread_id = $5, user_id = $6, display_name = $7, origin_json = $8 WHERE id = $1",
                &[
                    &enc(&id),
                    &enc(&r.session_key),
                    &enc_opt(r.chat_id.as_deref()),
                    &enc_opt(r.chat_type.as_deref()),
                    &enc_opt(r.thread_id.as_deref()),
                    &enc_opt(r.user_id.as_deref()),
                    &enc_opt(r.display_name.as_deref()),
                    &enc_opt(r.origin_json.as_deref()),
                ],
            )
            .ctx("storing a session's routing")
            .map(|_| ())
        })?)
    }

    fn copy_routing(&self, from: &str, to: &str) -> Result<(), StoreError> {
        let (from, to) = (own(from), own(to));
        Ok(self.with(move |c| {
            c.execute(
                "UPDATE sessions SET (session_key, chat_id, chat_type, thread_id, user_id, \
                 display_name, origin_json) = (SELECT session_key, chat_id, chat_type, thread_id, \
                 user_id, display_name, origin_json FROM sessions WHERE id = $1) WHERE id = $2",
                &[&enc(&from), &enc(&to)],
            )
            .ctx("copying a session's routing")
            .map(|_| ())
        })?)
    }

    fn open_session_for_key(&self, key: &str, source: &str) -> Result<Option<String>, StoreError> {
        let (key, source) = (own(key), own(source));
        Ok(self.with(move |c| {
            Ok(c.query_opt(
                "SELECT id FROM sessions WHERE session_key = $1 AND source = $2 \
                 AND (ended_at IS NULL OR end_reason IN ('agent_close', 'ws_orphan_reap')) \
                 AND EXISTS (SELECT 1 FROM messages m WHERE m.session_id = sessions.id) \
                 ORDER BY started_at DESC LIMIT 1",
                &[&enc(&key), &enc(&source)],
            )
            .ctx("finding a chat's session")?
            .map(|r| dec(r.get(0))))
        })?)
    }

    fn origin(&self, id: &str) -> Result<Option<String>, StoreError> {
        let id = own(id);
        Ok(self.with(move |c| {
            Ok(c.query_opt(
                "SELECT origin_json FROM sessions WHERE id = $1",
                &[&enc(&id)],
            )
            .ctx("reading a session's origin")?
            .and_then(|r| dec_opt(r.get(0))))
        })?)
    }
}
