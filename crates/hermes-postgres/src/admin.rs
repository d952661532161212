//! Managing sessions on the shared database as on state.db: the listing
//! (children hidden, a compressed conversation shown as its newest
//! continuation), exports with every column, deletion with subagent runs.

use hermes_state::session_db::{
    BUSIEST_SQL, BulkCandidate, BusySession, GatewaySession, ListFilter, SessionFilter,
    SessionSummary, USAGE_ROWS_SQL, UsageReport, UsageRow, decode_message_json, list_preview,
};
use hermes_state::store::{SessionAdmin, StoreError};
use postgres::GenericClient;
use serde_json::{Map, Value};

use crate::error::{Ctx, PgError};
use crate::store::PgStore;
use crate::text::{dec, dec_opt, enc};

/// Characters of the first user message read for a preview (escapes may
/// double a few; the preview keeps 63).
const PREVIEW_READ: i32 = 126;

/// A `/branch` child (the marker, or the older "parent ended as branched").
fn branch_child(a: &str) -> String {
    format!(
        "(hermes_json_field({a}.model_config, '_branched_from') IS NOT NULL \
         OR EXISTS (SELECT 1 FROM sessions p WHERE p.id = {a}.parent_session_id \
         AND p.end_reason = 'branched' AND {a}.started_at >= p.ended_at))"
    )
}

fn rich_select() -> String {
    format!(
        "SELECT s.id, s.source, s.model, s.title, s.started_at, s.ended_at, \
         COALESCE(s.message_count, 0), s.parent_session_id, s.end_reason, \
         COALESCE((SELECT left(m.content, {PREVIEW_READ}) FROM messages m \
           WHERE m.session_id = s.id AND m.role = 'user' AND m.content IS NOT NULL \
           ORDER BY m.timestamp, m.id LIMIT 1), ''), \
         COALESCE((SELECT MAX(m2.timestamp) FROM messages m2 WHERE m2.session_id = s.id), \
           s.started_at) \
         FROM sessions s"
    )
}

fn summary(r: &postgres::Row) -> (SessionSummary, Option<String>) {
    let started_at: f64 = r.get(4);
    let last: Option<f64> = r.get(10);
    (
        SessionSummary {
            id: dec(r.get(0)),
            source: dec(r.get(1)),
            model: dec_opt(r.get(2)),
            title: dec_opt(r.get(3)),
            started_at,
            ended_at: r.get(5),
            message_count: r.get(6),
            parent_session_id: dec_opt(r.get(7)),
            preview: list_preview(&dec(r.get(9))),
            last_active: last.unwrap_or(started_at),
        },
        dec_opt(r.get(8)),
    )
}

/// The newest continuation of a compressed conversation (itself when none).
fn compression_tip(c: &mut impl GenericClient, id: &str) -> Result<String, PgError> {
    const CTX: &str = "following a compression chain";
    let step = "SELECT child.id FROM sessions parent \
         JOIN sessions child ON child.parent_session_id = parent.id \
         WHERE parent.id = $1 AND parent.end_reason = 'compression' \
         AND hermes_json_field(child.model_config, '_branched_from') IS NULL \
         AND hermes_json_field(child.model_config, '_delegate_from') IS NULL \
         AND COALESCE(child.source, '') != 'tool' \
         ORDER BY CASE WHEN child.end_reason = 'compression' THEN 0 \
         WHEN child.ended_at IS NULL THEN 1 ELSE 2 END, \
         COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = child.id), \
         child.started_at) DESC, child.started_at DESC, child.id DESC LIMIT 1";
    let mut current = id.to_owned();
    let mut seen = vec![current.clone()];
    for _ in 0..100 {
        let next: Option<String> = c
            .query_opt(step, &[&enc(&current)])
            .ctx(CTX)?
            .map(|r| dec(r.get(0)));
        match next {
            Some(child) if !child.is_empty() && !seen.contains(&child) => {
                seen.push(child.clone());
                current = child;
            }
            _ => break,
        }
    }
    Ok(current)
}

fn list(c: &mut postgres::Client, f: &ListFilter) -> Result<Vec<SessionSummary>, PgError> {
    const CTX: &str = "listing sessions";
    let mut clauses = vec!["($1::text IS NULL OR s.source = $1)".to_owned()];
    if !f.include_children {
        clauses.push(format!(
            "(s.parent_session_id IS NULL OR {})",
            branch_child("s")
        ));
        clauses.push("hermes_json_field(s.model_config, '_delegate_from') IS NULL".to_owned());
    }
    if !f.include_archived {
        clauses.push("s.archived = 0".to_owned());
    }
    let sql = format!(
        "{} WHERE {} ORDER BY s.started_at DESC LIMIT $2 OFFSET $3",
        rich_select(),
        clauses.join(" AND ")
    );
    let limit = i64::try_from(f.limit).unwrap_or(i64::MAX);
    let offset = i64::try_from(f.offset).unwrap_or(i64::MAX);
    let source = f.source.as_deref().map(enc);
    let rows = c.query(&sql, &[&source, &limit, &offset]).ctx(CTX)?;
    let one = format!("{} WHERE s.id = $1", rich_select());
    let mut out = Vec::with_capacity(rows.len());
    for row in &rows {
        let (summary, end_reason) = summary(row);
        if f.include_children || end_reason.as_deref() != Some("compression") {
            out.push(summary);
            continue;
        }
        let tip = compression_tip(c, &summary.id)?;
        if tip == summary.id {
            out.push(summary);
            continue;
        }
        match c.query_opt(&one, &[&enc(&tip)]).ctx(CTX)? {
            Some(r) => out.push(SessionSummary {
                started_at: summary.started_at,
                source: summary.source,
                parent_session_id: summary.parent_session_id,
                ..self::summary(&r).0
            }),
            None => out.push(summary),
        }
    }
    Ok(out)
}

/// A row as state.db's export writes it: every column by name, text as it
/// was written, `DOUBLE PRECISION` as a float (`210.0`, as SQLite's REAL),
/// `BIGINT` as an integer; columns of other types (the word index) are ours
/// and left out.
fn row_object(row: &postgres::Row) -> Map<String, Value> {
    use postgres::types::Type;
    let mut out = Map::new();
    for (i, column) in row.columns().iter().enumerate() {
        let value = match *column.type_() {
            Type::TEXT | Type::VARCHAR => row
                .get::<_, Option<String>>(i)
                .map_or(Value::Null, |t| Value::String(dec(t))),
            Type::INT8 => row
                .get::<_, Option<i64>>(i)
                .map_or(Value::Null, Value::from),
            Type::INT4 => row
                .get::<_, Option<i32>>(i)
                .map_or(Value::Null, Value::from),
            Type::FLOAT8 => row
                .get::<_, Option<f64>>(i)
                .and_then(serde_json::Number::from_f64)
                .map_or(Value::Null, Value::Number),
            _ => continue,
        };
        out.insert(column.name().to_owned(), value);
    }
    out
}

fn export(c: &mut postgres::Client, id: &str) -> Result<Option<Value>, PgError> {
    const CTX: &str = "exporting a session";
    let sid = enc(id);
    let Some(row) = c
        .query_opt("SELECT * FROM sessions WHERE id = $1", &[&sid])
        .ctx(CTX)?
    else {
        return Ok(None);
    };
    let mut session = row_object(&row);
    let mut messages = Vec::new();
    for row in c
        .query(
            "SELECT * FROM messages WHERE session_id = $1 AND active = 1 ORDER BY id",
            &[&sid],
        )
        .ctx(CTX)?
    {
        let mut m = row_object(&row);
        decode_message_json(&mut m);
        messages.push(Value::Object(m));
    }
    session.insert("messages".to_owned(), Value::Array(messages));
    Ok(Some(Value::Object(session)))
}

fn delete(c: &mut postgres::Client, id: &str) -> Result<bool, PgError> {
    const CTX: &str = "deleting a session";
    let mut tx = c.transaction().ctx(CTX)?;
    let sid = enc(id).into_owned();
    if tx
        .query_opt("SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE", &[&sid])
        .ctx(CTX)?
        .is_none()
    {
        return Ok(false);
    }
    // Subagent runs go with their parent, however deep.
    let runs: Vec<String> = tx
        .query(
            "WITH RECURSIVE runs(id) AS ( \
               SELECT id FROM sessions WHERE \
                 hermes_json_field(model_config, '_delegate_from') = $1 \
                 OR (parent_session_id = $1 \
                     AND hermes_json_field(model_config, '_delegate_from') IS NOT NULL) \
               UNION \
               SELECT s.id FROM sessions s JOIN runs r ON \
                 hermes_json_field(s.model_config, '_delegate_from') = r.id \
                 OR (s.parent_session_id = r.id \
                     AND hermes_json_field(s.model_config, '_delegate_from') IS NOT NULL)) \
             SELECT id FROM runs WHERE id <> $1",
            &[&sid],
        )
        .ctx(CTX)?
        .iter()
        .map(|r| r.get(0))
        .collect();
    for run in runs.iter().chain(std::iter::once(&sid)) {
        tx.execute(
            "UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = $1",
            &[run],
        )
        .ctx(CTX)?;
        tx.execute("DELETE FROM messages WHERE session_id = $1", &[run])
            .ctx(CTX)?;
        tx.execute(
            "DELETE FROM session_model_usage WHERE session_id = $1",
            &[run],
        )
        .ctx(CTX)?;
    }
    for run in runs.iter().chain(std::iter::once(&sid)) {
        tx.execute("DELETE FROM sessions WHERE id = $1", &[run])
            .ctx(CTX)?;
    }
    tx.commit().ctx(CTX)?;
    Ok(true)
}

impl SessionAdmin for PgStore {
    fn list_sessions(&self, filter: &ListFilter) -> Result<Vec<SessionSummary>, StoreError> {
        let filter = filter.clone();
        Ok(self.with(move |c| list(c, &filter))?)
    }

    fn export_session(&self, id: &str) -> Result<Option<Value>, StoreError> {
        let id = id.to_owned();
        Ok(self.with(move |c| export(c, &id))?)
    }

    fn delete_session(&self, id: &str) -> Result<bool, StoreError> {
        let id = id.to_owned();
        Ok(self.with(move |c| delete(c, &id))?)
    }

    fn bulk_candidates(&self, filter: &SessionFilter) -> Result<Vec<BulkCandidate>, StoreError> {
        let filter = filter.clone();
        Ok(self.with(move |c| crate::bulk::candidates(c, &filter))?)
    }

    fn prune_matching(&self, filter: &SessionFilter) -> Result<usize, StoreError> {
        let filter = filter.clone();
        Ok(self.with(move |c| crate::bulk::prune(c, &filter))?)
    }

    fn archive_matching(&self, filter: &SessionFilter) -> Result<usize, StoreError> {
        let filter = filter.clone();
        Ok(self.with(move |c| crate::bulk::archive(c, &filter))?)
    }

    fn gateway_sessions(&self, active_only: bool) -> Result<Vec<GatewaySession>, StoreError> {
        Ok(self.with(move |c| gateway_sessions(c, active_only))?)
    }

    fn usage_report(&self, since: f64, busiest: usize) -> Result<UsageReport, StoreError> {
        Ok(self.with(move |c| usage_report(c, since, busiest))?)
    }
}

/// [`SessionAdmin::usage_report`] in one round trip per part; days in UTC.
fn usage_report(
    c: &mut postgres::Client,
    since: f64,
    busiest: usize,
) -> Result<UsageReport, PgError> {
    const CTX: &str = "summing usage";
    let sql = USAGE_ROWS_SQL
        .replace(
            "{day}",
            "to_char(to_timestamp(started_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD')",
        )
        .replace("{since}", "$1");
    let rows = c
        .query(&sql, &[&since])
        .ctx(CTX)?
        .iter()
        .map(|r| UsageRow {
            day: r.get(0),
            model: dec_opt(r.get(1)),
            sessions: r.get(2),
            input_tokens: r.get(3),
            output_tokens: r.get(4),
            cost_usd: r.get(5),
        })
        .collect();
    let limit = i64::try_from(busiest).unwrap_or(i64::MAX);
    let sql = BUSIEST_SQL
        .replace("{since}", "$1")
        .replace("{limit}", "$2");
    let busiest = c
        .query(&sql, &[&since, &limit])
        .ctx(CTX)?
        .iter()
        .map(|r| BusySession {
            id: dec(r.get(0)),
            title: dec_opt(r.get(1)),
            source: dec(r.get(2)),
            input_tokens: r.get(3),
            output_tokens: r.get(4),
            cost_usd: r.get(5),
        })
        .collect();
    Ok(UsageReport { rows, busiest })
}

fn gateway_sessions(
    c: &mut postgres::Client,
    active_only: bool,
) -> Result<Vec<GatewaySession>, PgError> {
    let sql = format!(
        "SELECT id, session_key, source, chat_type, display_name, origin_json, chat_id, \
         thread_id, user_id, started_at, \
         COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = sessions.id), \
                  started_at) AS last_active, \
         COALESCE(input_tokens, 0), COALESCE(output_tokens, 0) \
         FROM sessions WHERE session_key IS NOT NULL \
         AND started_at = (SELECT MAX(s2.started_at) FROM sessions s2 \
                           WHERE s2.session_key = sessions.session_key){} \
         ORDER BY last_active DESC",
        if active_only {
            " AND ended_at IS NULL"
        } else {
            ""
        }
    );
    Ok(c.query(&sql, &[])
        .ctx("listing gateway sessions")?
        .iter()
        .map(|r| GatewaySession {
            id: dec(r.get(0)),
            session_key: dec(r.get(1)),
            source: dec_opt(r.get(2)).unwrap_or_default(),
            chat_type: dec_opt(r.get(3)),
            display_name: dec_opt(r.get(4)),
            origin_json: dec_opt(r.get(5)),
            chat_id: dec_opt(r.get(6)),
            thread_id: dec_opt(r.get(7)),
            user_id: dec_opt(r.get(8)),
            started_at: r.get(9),
            last_active: r.get::<_, Option<f64>>(10).unwrap_or_default(),
            input_tokens: r.get(11),
            output_tokens: r.get(12),
        })
        .collect())
}
