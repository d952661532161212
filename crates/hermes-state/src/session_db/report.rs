//! Usage over time for the dashboard: tokens and cost per day and model, and
//! the busiest sessions, summed by the database rather than row by row.

use serde::Serialize;

use super::SessionDb;
use super::error::{Ctx, DbError};

/// Sessions started on one UTC day with one model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UsageRow {
    /// `YYYY-MM-DD` (UTC).
    pub day: String,
    /// The session's model (none recorded: `None`).
    pub model: Option<String>,
    /// Sessions started.
    pub sessions: i64,
    /// Input tokens.
    pub input_tokens: i64,
    /// Output tokens.
    pub output_tokens: i64,
    /// Cost in USD (actual where known, else estimated).
    pub cost_usd: f64,
}

/// One of the sessions that used the most tokens.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BusySession {
    /// Session id.
    pub id: String,
    /// Title, if any.
    pub title: Option<String>,
    /// Source.
    pub source: String,
    /// Input tokens.
    pub input_tokens: i64,
    /// Output tokens.
    pub output_tokens: i64,
    /// Cost in USD (actual where known, else estimated).
    pub cost_usd: f64,
}

/// Usage since a moment.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct UsageReport {
    /// Per day and model, oldest first.
    pub rows: Vec<UsageRow>,
    /// The sessions with the most tokens, most first.
    pub busiest: Vec<BusySession>,
}

/// The SQL (SQLite and PostgreSQL alike, but for the day expression) of the
/// per-day rows; `{day}` turns `started_at` into `YYYY-MM-DD`.
pub const USAGE_ROWS_SQL: &str = "SELECT {day} AS day, model, CAST(COUNT(*) AS BIGINT), \
     CAST(COALESCE(SUM(input_tokens), 0) AS BIGINT), \
     CAST(COALESCE(SUM(output_tokens), 0) AS BIGINT), \
     CAST(COALESCE(SUM(COALESCE(actual_cost_usd, estimated_cost_usd, 0)), 0) AS DOUBLE PRECISION) \
     FROM sessions WHERE started_at >= {since} GROUP BY day, model ORDER BY day, model";

/// The SQL of the busiest sessions.
pub const BUSIEST_SQL: &str = "SELECT id, title, COALESCE(source, ''), \
     CAST(COALESCE(input_tokens, 0) AS BIGINT), CAST(COALESCE(output_tokens, 0) AS BIGINT), \
     CAST(COALESCE(actual_cost_usd, estimated_cost_usd, 0) AS DOUBLE PRECISION) \
     FROM sessions WHERE started_at >= {since} \
     ORDER BY COALESCE(input_tokens, 0) + COALESCE(output_tokens, 0) DESC, started_at DESC LIMIT {limit}";

impl SessionDb {
    /// Usage of the sessions started at or after `since` (Unix seconds),
    /// with the `busiest` sessions by tokens.
    pub fn usage_report(&self, since: f64, busiest: usize) -> Result<UsageReport, DbError> {
        const CTX: &str = "summing usage";
        let sql = USAGE_ROWS_SQL
            .replace("{day}", "strftime('%Y-%m-%d', started_at, 'unixepoch')")
            .replace("{since}", "?1");
        let rows = self
            .conn
            .prepare(&sql)
            .ctx(CTX)?
            .query_map([since], |r| {
                Ok(UsageRow {
                    day: r.get(0)?,
                    model: r.get(1)?,
                    sessions: r.get(2)?,
                    input_tokens: r.get(3)?,
                    output_tokens: r.get(4)?,
                    cost_usd: r.get(5)?,
                })
            })
            .ctx(CTX)?
            .collect::<Result<Vec<_>, _>>()
            .ctx(CTX)?;
        let sql = BUSIEST_SQL
            .replace("{since}", "?1")
            .replace("{limit}", "?2");
        let limit = i64::try_from(busiest).unwrap_or(i64::MAX);
        let busiest = self
            .conn
            .prepare(&sql)
            .ctx(CTX)?
            .query_map(rusqlite::params![since, limit], |r| {
                Ok(BusySession {
                    id: r.get(0)?,
                    title: r.get(1)?,
                    source: r.get(2)?,
                    input_tokens: r.get(3)?,
                    output_tokens: r.get(4)?,
                    cost_usd: r.get(5)?,
                })
            })
            .ctx(CTX)?
            .collect::<Result<Vec<_>, _>>()
            .ctx(CTX)?;
        Ok(UsageReport { rows, busiest })
    }
}
