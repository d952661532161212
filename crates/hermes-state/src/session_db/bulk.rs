//! Bulk selection of ended sessions for `hermes sessions prune` / `archive`:
//! one filter, the reference's semantics (all conditions AND together, only
//! ended sessions are ever touched), and the actions on what it selects.

use rusqlite::ToSql;
use rusqlite::types::Value as SqlValue;

use super::SessionDb;
use super::error::{Ctx, DbError};
use super::messages::{f64_at, i64_at, text_at};

/// Which ended sessions a bulk action applies to. `None` fields do not filter.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionFilter {
    /// Started before this Unix time.
    pub started_before: Option<f64>,
    /// Started at or after this Unix time.
    pub started_after: Option<f64>,
    /// Exactly this source.
    pub source: Option<String>,
    /// Title contains this (case-insensitive).
    pub title_like: Option<String>,
    /// Exactly this end reason.
    pub end_reason: Option<String>,
    /// Working directory is this path or under it.
    pub cwd_prefix: Option<String>,
    /// At least this many messages.
    pub min_messages: Option<i64>,
    /// At most this many messages.
    pub max_messages: Option<i64>,
    /// Model contains this (case-insensitive).
    pub model_like: Option<String>,
    /// Billing provider, case-insensitive.
    pub provider: Option<String>,
    /// Exactly this user id.
    pub user_id: Option<String>,
    /// Exactly this chat id.
    pub chat_id: Option<String>,
    /// Exactly this chat type.
    pub chat_type: Option<String>,
    /// Git branch contains this (case-insensitive).
    pub branch_like: Option<String>,
    /// At least this many input + output tokens.
    pub min_tokens: Option<i64>,
    /// At most this many input + output tokens.
    pub max_tokens: Option<i64>,
    /// Costs at least this much (actual, else estimated, USD).
    pub min_cost: Option<f64>,
    /// Costs at most this much.
    pub max_cost: Option<f64>,
    /// At least this many tool calls.
    pub min_tool_calls: Option<i64>,
    /// At most this many tool calls.
    pub max_tool_calls: Option<i64>,
    /// `Some(true)`: only archived; `Some(false)`: only not archived; `None`: both.
    pub archived: Option<bool>,
}

/// A session a bulk action would touch, for previews and dry runs.
#[derive(Debug, Clone, PartialEq)]
pub struct BulkCandidate {
    /// Session id.
    pub id: String,
    /// Source.
    pub source: String,
    /// Title, if any.
    pub title: Option<String>,
    /// Model, if recorded.
    pub model: Option<String>,
    /// Start time (Unix seconds).
    pub started_at: f64,
    /// End time.
    pub ended_at: Option<f64>,
    /// Messages stored.
    pub message_count: i64,
}

impl SessionFilter {
    /// Whether any condition besides the time window is set.
    pub fn has_non_time_filters(&self) -> bool {
        let Self {
            started_before: _,
            started_after: _,
            archived: _,
            source,
            title_like,
            end_reason,
            cwd_prefix,
            min_messages,
            max_messages,
            model_like,
            provider,
            user_id,
            chat_id,
            chat_type,
            branch_like,
            min_tokens,
            max_tokens,
            min_cost,
            max_cost,
            min_tool_calls,
            max_tool_calls,
        } = self;
        [
            source,
            title_like,
            end_reason,
            cwd_prefix,
            model_like,
            provider,
            user_id,
            chat_id,
            chat_type,
            branch_like,
        ]
        .iter()
        .any(|v| v.is_some())
            || [
                min_messages,
                max_messages,
                min_tokens,
                max_tokens,
                min_tool_calls,
                max_tool_calls,
            ]
            .iter()
            .any(|v| v.is_some())
            || min_cost.is_some()
            || max_cost.is_some()
    }

    /// The `WHERE` clause over `sessions s`, with its parameters.
    fn where_clause(&self) -> (String, Vec<SqlValue>) {
        let (clause, values) = self.conditions();
        let params = values
            .into_iter()
            .map(|v| match v {
                FilterValue::Text(t) => SqlValue::Text(t),
                FilterValue::Real(r) => SqlValue::Real(r),
                FilterValue::Integer(n) => SqlValue::Integer(n),
            })
            .collect();
        (clause, params)
    }

    /// The filter as SQL over `sessions s`: conditions joined with AND, `?`
    /// for each value in order (SQLite's LIKE: case-insensitive, no escape
    /// character), so every store selects the same sessions.
    pub fn conditions(&self) -> (String, Vec<FilterValue>) {
        use FilterValue as SqlValue;
        let mut clauses = vec!["s.ended_at IS NOT NULL".to_owned()];
        let mut params: Vec<SqlValue> = Vec::new();
        let mut add = |clause: &str, values: Vec<SqlValue>| {
            clauses.push(clause.to_owned());
            params.extend(values);
        };
        let text = |s: &str| SqlValue::Text(s.to_owned());
        let like = |s: &str| SqlValue::Text(format!("%{}%", s.to_lowercase()));
        if let Some(t) = self.started_before {
            add("s.started_at < ?", vec![SqlValue::Real(t)]);
        }
        if let Some(t) = self.started_after {
            add("s.started_at >= ?", vec![SqlValue::Real(t)]);
        }
        if let Some(v) = nonempty(&self.source) {
            add("s.source = ?", vec![text(v)]);
        }
        if let Some(v) = nonempty(&self.title_like) {
            add("LOWER(COALESCE(s.title, '')) LIKE ?", vec![like(v)]);
        }
        if let Some(v) = nonempty(&self.end_reason) {
            add("s.end_reason = ?", vec![text(v)]);
        }
        if let Some(v) = nonempty(&self.cwd_prefix) {
            let prefix = v.trim_end_matches(['/', '\\']);
            let prefix = if prefix.is_empty() { v } else { prefix };
            add(
                "(s.cwd = ? OR s.cwd LIKE ? OR s.cwd LIKE ?)",
                vec![
                    text(prefix),
                    SqlValue::Text(format!("{prefix}/%")),
                    SqlValue::Text(format!("{prefix}\\%")),
                ],
            );
        }
        if let Some(n) = self.min_messages {
            add("s.message_count >= ?", vec![SqlValue::Integer(n)]);
        }
        if let Some(n) = self.max_messages {
            add("s.message_count <= ?", vec![SqlValue::Integer(n)]);
        }
        if let Some(v) = nonempty(&self.model_like) {
            add("LOWER(COALESCE(s.model, '')) LIKE ?", vec![like(v)]);
        }
        if let Some(v) = nonempty(&self.provider) {
            add(
                "LOWER(COALESCE(s.billing_provider, '')) = ?",
                vec![SqlValue::Text(v.to_lowercase())],
            );
        }
        if let Some(v) = nonempty(&self.user_id) {
            add("s.user_id = ?", vec![text(v)]);
        }
        if let Some(v) = nonempty(&self.chat_id) {
            add("s.chat_id = ?", vec![text(v)]);
        }
        if let Some(v) = nonempty(&self.chat_type) {
            add("s.chat_type = ?", vec![text(v)]);
        }
        if let Some(v) = nonempty(&self.branch_like) {
            add("LOWER(COALESCE(s.git_branch, '')) LIKE ?", vec![like(v)]);
        }
        const TOKENS: &str = "(COALESCE(s.input_tokens, 0) + COALESCE(s.output_tokens, 0))";
        if let Some(n) = self.min_tokens {
            add(&format!("{TOKENS} >= ?"), vec![SqlValue::Integer(n)]);
        }
        if let Some(n) = self.max_tokens {
            add(&format!("{TOKENS} <= ?"), vec![SqlValue::Integer(n)]);
        }
        const COST: &str = "COALESCE(s.actual_cost_usd, s.estimated_cost_usd, 0)";
        if let Some(c) = self.min_cost {
            add(&format!("{COST} >= ?"), vec![SqlValue::Real(c)]);
        }
        if let Some(c) = self.max_cost {
            add(&format!("{COST} <= ?"), vec![SqlValue::Real(c)]);
        }
        if let Some(n) = self.min_tool_calls {
            add(
                "COALESCE(s.tool_call_count, 0) >= ?",
                vec![SqlValue::Integer(n)],
            );
        }
        if let Some(n) = self.max_tool_calls {
            add(
                "COALESCE(s.tool_call_count, 0) <= ?",
                vec![SqlValue::Integer(n)],
            );
        }
        match self.archived {
            Some(true) => add("s.archived = 1", Vec::new()),
            Some(false) => add("s.archived = 0", Vec::new()),
            None => {}
        }
        (clauses.join(" AND "), params)
    }
}

/// A value a [`SessionFilter`] condition compares with.
#[derive(Debug, Clone, PartialEq)]
pub enum FilterValue {
    /// Text.
    Text(String),
    /// A float.
    Real(f64),
    /// An integer.
    Integer(i64),
}

fn nonempty(v: &Option<String>) -> Option<&str> {
    v.as_deref().filter(|s| !s.is_empty())
}

fn as_params(values: &[SqlValue]) -> Vec<&dyn ToSql> {
    values.iter().map(|v| v as &dyn ToSql).collect()
}

impl SessionDb {
    /// The ended sessions `filter` selects, oldest first; changes nothing.
    pub fn bulk_candidates(&self, filter: &SessionFilter) -> Result<Vec<BulkCandidate>, DbError> {
        const CTX: &str = "selecting sessions";
        let (clause, params) = filter.where_clause();
        let sql = format!(
            "SELECT s.id, s.source, s.title, s.model, s.started_at, s.ended_at, s.message_count \
             FROM sessions s WHERE {clause} ORDER BY s.started_at ASC"
        );
        let mut stmt = self.conn.prepare(&sql).ctx(CTX)?;
        let rows = stmt
            .query_map(as_params(&params).as_slice(), |r| {
                Ok(BulkCandidate {
                    id: text_at(r, 0)?.unwrap_or_default(),
                    source: text_at(r, 1)?.unwrap_or_default(),
                    title: text_at(r, 2)?,
                    model: text_at(r, 3)?,
                    started_at: f64_at(r, 4)?.unwrap_or(0.0),
                    ended_at: f64_at(r, 5)?,
                    message_count: i64_at(r, 6)?.unwrap_or(0),
                })
            })
            .ctx(CTX)?;
        rows.collect::<Result<_, _>>().ctx(CTX)
    }

    /// Deletes the sessions `filter` selects (messages and usage rows too);
    /// their children are detached, not deleted. Returns how many went.
    pub fn prune_matching(&mut self, filter: &SessionFilter) -> Result<usize, DbError> {
        const CTX: &str = "pruning sessions";
        let (clause, params) = filter.where_clause();
        self.write(CTX, |c| {
            let ids: Vec<String> = c
                .prepare(&format!("SELECT s.id FROM sessions s WHERE {clause}"))
                .ctx(CTX)?
                .query_map(as_params(&params).as_slice(), |r| r.get(0))
                .ctx(CTX)?
                .collect::<Result<_, _>>()
                .ctx(CTX)?;
            for id in &ids {
                super::sessions::remove_session_rows(c, id).ctx(CTX)?;
            }
            Ok(ids.len())
        })
    }

    /// Archives (hides, deletes nothing) the sessions `filter` selects that are
    /// not archived yet, each with its compression lineage. Returns how many matched.
    pub fn archive_matching(&mut self, filter: &SessionFilter) -> Result<usize, DbError> {
        let filter = SessionFilter {
            archived: Some(false),
            ..filter.clone()
        };
        let ids: Vec<String> = self
            .bulk_candidates(&filter)?
            .into_iter()
            .map(|c| c.id)
            .collect();
        for id in &ids {
            self.set_archived(id, true)?;
        }
        Ok(ids.len())
    }

    /// Archives or restores a session together with the sessions it continues
    /// or that continue it after compression (one conversation, one state).
    /// Returns whether any row changed.
    pub fn set_archived(&mut self, session_id: &str, archived: bool) -> Result<bool, DbError> {
        const CTX: &str = "archiving a session";
        let sql = format!(
            "WITH RECURSIVE \
               up(id) AS (SELECT ?1 UNION SELECT p.id FROM up JOIN sessions c ON c.id = up.id \
                          JOIN sessions p ON p.id = c.parent_session_id WHERE {up}), \
               down(id) AS (SELECT ?1 UNION SELECT c.id FROM down JOIN sessions p ON p.id = down.id \
                            JOIN sessions c ON c.parent_session_id = p.id WHERE {down}) \
             UPDATE sessions SET archived = ?2 \
             WHERE id IN (SELECT id FROM up UNION SELECT id FROM down) AND archived != ?2",
            up = "p.end_reason = 'compression'",
            down = "p.end_reason = 'compression'",
        );
        let flag = i64::from(archived);
        self.write(CTX, |c| {
            c.execute(&sql, rusqlite::params![session_id, flag])
                .ctx(CTX)
                .map(|n| n > 0)
        })
    }

    /// Merges the FTS indexes into one segment each, then `VACUUM`s the file to
    /// give freed pages back. Returns how many indexes were merged.
    pub fn vacuum(&mut self) -> Result<usize, DbError> {
        let merged = self.optimize_fts()?;
        self.conn
            .execute_batch("VACUUM")
            .ctx("vacuuming the database")?;
        Ok(merged)
    }
}

#[cfg(test)]
#[path = "bulk_tests.rs"]
mod tests;
