//! Token/cost accounting (`update_token_counts` in the reference) and JSON export.

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OptionalExtension, Row};
use serde_json::{Map, Value};

use super::SessionDb;
use super::error::{Ctx, DbError};
use super::messages::CONTENT_JSON_PREFIX;
use super::sessions::now;
use super::types::UsageDelta;

fn non_empty(s: &str) -> Option<&str> {
    (!s.is_empty()).then_some(s)
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl SessionDb {
    /// Adds one API call's (or several calls') usage to the session, like the reference's
    /// incremental `update_token_counts`: creates the session row (source `"unknown"`) if it is
    /// missing, adds the counters, fills NULL model/billing fields, adopts the first accounted
    /// route when the session has no calls yet, and accumulates the per-model row in
    /// `session_model_usage` (task `''`, billing mode `''`). One transaction.
    pub fn add_usage(&mut self, session_id: &str, u: &UsageDelta) -> Result<(), DbError> {
        const CTX: &str = "recording token usage";
        let model = non_empty(&u.model);
        let provider = non_empty(&u.billing_provider);
        let base_url = non_empty(&u.billing_base_url);
        let cost = u.estimated_cost_usd;
        let cost_truthy = cost.is_some_and(|c| c != 0.0);
        let counted = u.input_tokens != 0
            || u.output_tokens != 0
            || u.cache_read_tokens != 0
            || u.cache_write_tokens != 0
            || u.reasoning_tokens != 0
            || u.api_calls != 0;
        let accounted = counted || cost_truthy;
        let at = now();
        self.write(CTX, |c| {
            c.execute(
                "INSERT INTO sessions (id, source, model, started_at) VALUES (?1, 'unknown', ?2, ?3) \
                 ON CONFLICT(id) DO UPDATE SET model = COALESCE(sessions.model, excluded.model)",
                rusqlite::params![session_id, model, at],
            )
            .ctx(CTX)?;
            let (cur_model, cur_provider, cur_calls): (Option<String>, Option<String>, Option<i64>) = c
                .query_row(
                    "SELECT model, billing_provider, api_call_count FROM sessions WHERE id = ?1",
                    [session_id],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .ctx(CTX)?;
            if let (Some(m), Some(p)) = (model, provider)
                && cur_calls.unwrap_or(0) == 0
                && accounted
                && (cur_model.as_deref() != Some(m) || cur_provider.as_deref() != Some(p))
            {
                c.execute(
                    "UPDATE sessions SET model = ?1, billing_provider = ?2, billing_base_url = ?3, \
                     billing_mode = ?4 WHERE id = ?5",
                    rusqlite::params![m, p, base_url, u.billing_mode, session_id],
                )
                .ctx(CTX)?;
            }
            let (bp, bu, bm) = if accounted { (provider, base_url, model) } else { (None, None, None) };
            c.prepare_cached(
                "UPDATE sessions SET input_tokens = input_tokens + ?1, \
                 output_tokens = output_tokens + ?2, cache_read_tokens = cache_read_tokens + ?3, \
                 cache_write_tokens = cache_write_tokens + ?4, reasoning_tokens = reasoning_tokens + ?5, \
                 estimated_cost_usd = COALESCE(estimated_cost_usd, 0) + COALESCE(?6, 0), \
                 billing_provider = COALESCE(billing_provider, ?7), \
                 billing_base_url = COALESCE(billing_base_url, ?8), \
                 model = COALESCE(model, ?9), api_call_count = COALESCE(api_call_count, 0) + ?10, \
                 cost_status = COALESCE(?12, cost_status), cost_source = COALESCE(?13, cost_source), \
                 pricing_version = COALESCE(?14, pricing_version), \
                 billing_mode = COALESCE(billing_mode, ?15) \
                 WHERE id = ?11",
            )
            .ctx(CTX)?
            .execute(rusqlite::params![
                to_i64(u.input_tokens),
                to_i64(u.output_tokens),
                to_i64(u.cache_read_tokens),
                to_i64(u.cache_write_tokens),
                to_i64(u.reasoning_tokens),
                cost,
                bp,
                bu,
                bm,
                to_i64(u.api_calls),
                session_id,
                u.cost_status,
                u.cost_source,
                u.pricing_version,
                if accounted { u.billing_mode.as_deref() } else { None },
            ])
            .ctx(CTX)?;
            if accounted {
                record_model_usage(c, session_id, u, at).ctx(CTX)?;
            }
            Ok(())
        })
    }

    /// The session and all its active messages as one JSON object, the shape of the
    /// reference's `export_session`: every `sessions` column plus `"messages"` (every
    /// `messages` column, structured content decoded, `tool_calls` parsed).
    pub fn export_session(&self, id: &str) -> Result<Option<Value>, DbError> {
        const CTX: &str = "exporting a session";
        let mut stmt = self
            .conn
            .prepare("SELECT * FROM sessions WHERE id = ?1")
            .ctx(CTX)?;
        let Some(mut session) = stmt.query_row([id], row_object).optional().ctx(CTX)? else {
            return Ok(None);
        };
        let mut stmt = self
            .conn
            .prepare("SELECT * FROM messages WHERE session_id = ?1 AND active = 1 ORDER BY id")
            .ctx(CTX)?;
        let mut messages = Vec::new();
        for row in stmt.query_map([id], row_object).ctx(CTX)? {
            let mut m = row.ctx(CTX)?;
            decode_message_json(&mut m);
            messages.push(Value::Object(m));
        }
        session.insert("messages".to_owned(), Value::Array(messages));
        Ok(Some(Value::Object(session)))
    }
}

fn record_model_usage(
    c: &Connection,
    session_id: &str,
    u: &UsageDelta,
    at: f64,
) -> rusqlite::Result<()> {
    let (s_model, s_provider, s_url, s_mode): (Option<String>, Option<String>, Option<String>, Option<String>) =
        c.query_row(
            "SELECT model, billing_provider, billing_base_url, billing_mode FROM sessions WHERE id = ?1",
            [session_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )?;
    let pick = |own: &str, session: Option<String>, fallback: &str| {
        non_empty(own)
            .map(str::to_owned)
            .or(session.filter(|s| !s.is_empty()))
            .unwrap_or_else(|| fallback.to_owned())
    };
    c.prepare_cached(
        "INSERT INTO session_model_usage (session_id, model, billing_provider, billing_base_url, \
         billing_mode, task, api_call_count, input_tokens, output_tokens, cache_read_tokens, \
         cache_write_tokens, reasoning_tokens, estimated_cost_usd, actual_cost_usd, cost_status, \
         cost_source, first_seen, last_seen) \
         VALUES (?1, ?2, ?3, ?4, ?5, '', ?6, ?7, ?8, ?9, ?10, ?11, ?12, 0.0, ?14, ?15, ?13, ?13) \
         ON CONFLICT(session_id, model, billing_provider, billing_base_url, billing_mode, task) \
         DO UPDATE SET api_call_count = api_call_count + excluded.api_call_count, \
         input_tokens = input_tokens + excluded.input_tokens, \
         output_tokens = output_tokens + excluded.output_tokens, \
         cache_read_tokens = cache_read_tokens + excluded.cache_read_tokens, \
         cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens, \
         reasoning_tokens = reasoning_tokens + excluded.reasoning_tokens, \
         estimated_cost_usd = estimated_cost_usd + excluded.estimated_cost_usd, \
         actual_cost_usd = actual_cost_usd + excluded.actual_cost_usd, \
         cost_status = COALESCE(excluded.cost_status, cost_status), \
         cost_source = COALESCE(excluded.cost_source, cost_source), \
         last_seen = excluded.last_seen",
    )?
    .execute(rusqlite::params![
        session_id,
        pick(&u.model, s_model, "unknown"),
        pick(&u.billing_provider, s_provider, ""),
        pick(&u.billing_base_url, s_url, ""),
        u.billing_mode
            .clone()
            .filter(|m| !m.is_empty())
            .or(s_mode)
            .unwrap_or_default(),
        to_i64(u.api_calls),
        to_i64(u.input_tokens),
        to_i64(u.output_tokens),
        to_i64(u.cache_read_tokens),
        to_i64(u.cache_write_tokens),
        to_i64(u.reasoning_tokens),
        u.estimated_cost_usd.unwrap_or(0.0),
        at,
        u.cost_status,
        u.cost_source,
    ])?;
    Ok(())
}

/// A row as a JSON object keyed by column name.
fn row_object(r: &Row<'_>) -> rusqlite::Result<Map<String, Value>> {
    let stmt = r.as_ref();
    let mut obj = Map::new();
    for i in 0..stmt.column_count() {
        let name = stmt.column_name(i)?.to_owned();
        let v = match r.get_ref(i)? {
            ValueRef::Null => Value::Null,
            ValueRef::Integer(n) => Value::from(n),
            ValueRef::Real(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
            ValueRef::Text(t) => Value::String(String::from_utf8_lossy(t).into_owned()),
            ValueRef::Blob(b) => Value::String(String::from_utf8_lossy(b).into_owned()),
        };
        obj.insert(name, v);
    }
    Ok(obj)
}

/// Decodes the JSON-carrying message columns the way the reference's `get_messages` does.
pub fn decode_message_json(m: &mut Map<String, Value>) {
    if let Some(Value::String(s)) = m.get("content")
        && let Some(json) = s.strip_prefix(CONTENT_JSON_PREFIX)
        && let Ok(v) = serde_json::from_str::<Value>(json)
    {
        m.insert("content".to_owned(), v);
    }
    if let Some(Value::String(s)) = m.get("tool_calls")
        && !s.is_empty()
    {
        let parsed = serde_json::from_str::<Value>(s).unwrap_or(Value::Array(Vec::new()));
        m.insert("tool_calls".to_owned(), parsed);
    }
}
