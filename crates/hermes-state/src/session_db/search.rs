//! Full-text search over messages (`search_messages` in the reference).
//!
//! Plain queries run against the `unicode61` index with BM25 ranking. Queries with 3+ CJK
//! characters per term use the trigram index; shorter CJK terms fall back to `LIKE`, as in
//! the reference. Two additions: a word query with no hits is retried as a substring query on
//! the trigram index (so `egra` finds `Telegram`), and a sanitised query FTS5 still rejects is
//! retried with every term quoted literally instead of silently returning nothing.
//! Every value is a bound parameter; only fixed SQL text is ever formatted.

use std::sync::LazyLock;

use rusqlite::{Row, ToSql};

use super::SessionDb;
use super::error::{Ctx, DbError};
use super::fts_query::{
    contains_cjk, count_cjk, is_operator, literal_query, sanitize_fts5_query, trigram_query,
};
use super::messages::{MSG_COLS, content_text, f64_at, query_messages, text_at};
use super::sql::like_escape;
use super::types::{SearchHit, SearchQuery, SearchSort, StoredMessage};

/// Characters of context-message content kept in a hit.
const CONTEXT_CHARS: usize = 200;

enum Outcome {
    Hits(Vec<SearchHit>),
    /// FTS5 refused the expression (syntax, unknown column …).
    Rejected(String),
}

fn hit_row(r: &Row<'_>) -> rusqlite::Result<SearchHit> {
    Ok(SearchHit {
        message_id: r.get(0)?,
        session_id: text_at(r, 1)?.unwrap_or_default(),
        role: text_at(r, 2)?.unwrap_or_default(),
        snippet: text_at(r, 3)?.unwrap_or_default(),
        timestamp: f64_at(r, 4)?.unwrap_or(0.0),
        session_source: text_at(r, 5)?.unwrap_or_default(),
        model: text_at(r, 6)?,
        session_title: text_at(r, 7)?,
        rank: f64_at(r, 8)?.unwrap_or(0.0),
        context: Vec::new(),
    })
}

/// Whether an error came from the FTS5 query (syntax, unknown column, special query …): the
/// statement itself is fixed and already prepared, so a plain SQLITE_ERROR while stepping it
/// can only be about the `MATCH` expression.
fn is_query_error(e: &rusqlite::Error) -> bool {
    e.sqlite_error_code() == Some(rusqlite::ErrorCode::Unknown)
}

/// The filter clauses and their parameters shared by every search path.
struct Filters<'q> {
    sql: String,
    params: Vec<&'q dyn ToSql>,
}

fn filters(q: &SearchQuery) -> Filters<'_> {
    let mut sql = String::from(" AND (m.active = 1 OR m.compacted = 1)");
    let mut params: Vec<&dyn ToSql> = Vec::new();
    let list = |col: &str, values: &'_ [String], sql: &mut String| {
        if !values.is_empty() {
            let marks = vec!["?"; values.len()].join(",");
            sql.push_str(&format!(" AND {col} IN ({marks})"));
        }
    };
    list("s.source", &q.source_filter, &mut sql);
    list("m.role", &q.role_filter, &mut sql);
    params.extend(q.source_filter.iter().map(|s| s as &dyn ToSql));
    params.extend(q.role_filter.iter().map(|s| s as &dyn ToSql));
    if let Some(id) = &q.session_id {
        sql.push_str(" AND m.session_id = ?");
        params.push(id);
    }
    Filters { sql, params }
}

/// Time orders break ties by id (insertion order) rather than the reference's rank: using
/// `rank` as a secondary sort key makes FTS5 score every match, several times slower.
fn order_by(sort: SearchSort) -> &'static str {
    match sort {
        SearchSort::Relevance => "ORDER BY rank",
        SearchSort::Newest => "ORDER BY m.timestamp DESC, m.id DESC",
        SearchSort::Oldest => "ORDER BY m.timestamp ASC, m.id ASC",
    }
}

impl SessionDb {
    /// Searches message text, tool names and tool-call arguments. Returns at most
    /// `q.limit` hits after `q.offset`, each with a `>>>match<<<` snippet and its neighbours.
    /// Hostile input yields `Ok` (possibly empty) or [`DbError::InvalidQuery`], never a raw
    /// SQL error.
    pub fn search(&self, q: &SearchQuery) -> Result<Vec<SearchHit>, DbError> {
        if !self.fts_enabled {
            return Ok(Vec::new());
        }
        // NUL is meaningless in a query and would collide with the sanitiser's placeholders.
        let raw = q.query.replace('\0', " ");
        if raw.trim().is_empty() || q.limit == 0 {
            return Ok(Vec::new());
        }
        let query = sanitize_fts5_query(&raw);
        if query.is_empty() {
            return Ok(Vec::new());
        }
        let mut hits = if contains_cjk(&query) {
            self.search_cjk(&query, q)?
        } else {
            let (mut hits, expr) = match self.run_fts("messages_fts", &query, q)? {
                Outcome::Hits(h) => (h, Some(query.clone())),
                Outcome::Rejected(why) => match literal_query(&query) {
                    None => (Vec::new(), None),
                    Some(lit) => match self.run_fts("messages_fts", &lit, q)? {
                        Outcome::Hits(h) => (h, Some(lit)),
                        Outcome::Rejected(_) => {
                            return Err(DbError::InvalidQuery(format!(
                                "the search engine could not parse {:?} ({why})",
                                truncate(&raw, 80)
                            )));
                        }
                    },
                },
            };
            // Substring fallback, only when the words match nothing at all (not merely
            // nothing on this page).
            if hits.is_empty()
                && self.trigram_available
                && !self.any_word_match(expr.as_deref(), q)?
                && let Some(tq) = trigram_query(&query)
                && let Outcome::Hits(h) = self.run_fts("messages_fts_trigram", &tq, q)?
            {
                hits = h;
            }
            hits
        };
        for hit in &mut hits {
            hit.context = self.context_of(hit)?;
        }
        Ok(hits)
    }

    /// Whether the word index has any match for `expr` under the query's filters (an empty
    /// first page already says it has none).
    fn any_word_match(&self, expr: Option<&str>, q: &SearchQuery) -> Result<bool, DbError> {
        let Some(expr) = expr else { return Ok(false) };
        if q.offset == 0 {
            return Ok(false);
        }
        let probe = SearchQuery {
            limit: 1,
            offset: 0,
            sort: SearchSort::Relevance,
            ..q.clone()
        };
        Ok(matches!(self.run_fts("messages_fts", expr, &probe)?, Outcome::Hits(h) if !h.is_empty()))
    }

    /// Runs one FTS query. Relevance order is consumed by FTS5 itself, so snippets are built
    /// for the returned page only; for time orders the page of ids is selected first and
    /// the snippets and ranks are computed for those rows alone.
    fn run_fts(
        &self,
        table: &'static str,
        expr: &str,
        q: &SearchQuery,
    ) -> Result<Outcome, DbError> {
        const CTX: &str = "searching messages";
        let f = filters(q);
        let from = format!(
            "FROM {table} JOIN messages m ON m.id = {table}.rowid \
             JOIN sessions s ON s.id = m.session_id WHERE {table} MATCH ?"
        );
        let hit_cols = format!(
            "m.id, m.session_id, m.role, snippet({table}, 0, '>>>', '<<<', '...', 40), \
             m.timestamp, s.source, s.model, s.title, {table}.rank"
        );
        let limit = i64::try_from(q.limit).unwrap_or(i64::MAX);
        let offset = i64::try_from(q.offset).unwrap_or(i64::MAX);
        let mut params: Vec<&dyn ToSql> = vec![&expr];
        params.extend(f.params);
        params.push(&limit);
        params.push(&offset);
        let classify = |e: rusqlite::Error| {
            if is_query_error(&e) {
                Ok(Outcome::Rejected(e.to_string()))
            } else {
                Err(DbError::Sqlite {
                    context: CTX,
                    source: e,
                })
            }
        };

        if q.sort == SearchSort::Relevance {
            return self.run_fts_ranked(table, expr, q).or_else(classify);
        }

        let sql = format!(
            "SELECT m.id {from}{} {} LIMIT ? OFFSET ?",
            f.sql,
            order_by(q.sort)
        );
        let mut stmt = self.conn.prepare_cached(&sql).ctx(CTX)?;
        let ids = match stmt
            .query_map(params.as_slice(), |r| r.get::<_, i64>(0))
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        {
            Ok(ids) => ids,
            Err(e) => return classify(e),
        };
        let mut one = self
            .conn
            .prepare_cached(&format!("SELECT {hit_cols} {from} AND {table}.rowid = ?"))
            .ctx(CTX)?;
        let mut hits = Vec::with_capacity(ids.len());
        for id in ids {
            match one.query_row(rusqlite::params![expr, id], hit_row) {
                Ok(hit) => hits.push(hit),
                Err(rusqlite::Error::QueryReturnedNoRows) => {}
                Err(e) => return classify(e),
            }
        }
        Ok(Outcome::Hits(hits))
    }

    /// Relevance order, top-k first. `ORDER BY rank` makes FTS5 score every match twice (its
    /// internal sort query selects `rank` and orders by `bm25()`) and sort them all; here an
    /// FTS-only subquery scores each match once and keeps the best `offset + limit` in a
    /// bounded sort (30–40% less time for a word in 5% of 100 000 messages). A second,
    /// unranked pass over the matches (cheap: no scoring) keeps those rows, which alone are
    /// joined, filtered and given snippets; seeking the expression to each row instead would
    /// rebuild a prefix query's whole doclist per row. Ties go by rowid. When the filters drop
    /// rows and the page comes up short, it runs again over every match.
    fn run_fts_ranked(
        &self,
        table: &'static str,
        expr: &str,
        q: &SearchQuery,
    ) -> rusqlite::Result<Outcome> {
        let f = filters(q);
        let sql = format!(
            "SELECT m.id, m.session_id, m.role, snippet({table}, 0, '>>>', '<<<', '...', 40), \
             m.timestamp, s.source, s.model, s.title, top.r \
             FROM {table} \
             CROSS JOIN (SELECT rowid AS id, bm25({table}) AS r FROM {table} \
                         WHERE {table} MATCH ?1 ORDER BY r, rowid LIMIT ?2) AS top \
                   ON top.id = {table}.rowid \
             CROSS JOIN messages m ON m.id = top.id \
             CROSS JOIN sessions s ON s.id = m.session_id \
             WHERE {table} MATCH ?1{} ORDER BY top.r, top.id LIMIT ? OFFSET ?",
            f.sql
        );
        let limit = i64::try_from(q.limit).unwrap_or(i64::MAX);
        let offset = i64::try_from(q.offset).unwrap_or(i64::MAX);
        let page_end = limit.saturating_add(offset);
        let mut stmt = self.conn.prepare_cached(&sql)?;
        // Extra filters are likely to drop rows from the top-k: go straight to every match.
        let first_k = if f.params.is_empty() { page_end } else { -1 };
        for k in [first_k, -1] {
            let mut params: Vec<&dyn ToSql> = vec![&expr, &k];
            params.extend(f.params.iter().copied());
            params.push(&limit);
            params.push(&offset);
            let hits = stmt
                .query_map(params.as_slice(), hit_row)?
                .collect::<Result<Vec<_>, _>>()?;
            if k < 0 || hits.len() >= q.limit {
                return Ok(Outcome::Hits(hits));
            }
        }
        Ok(Outcome::Hits(Vec::new()))
    }

    /// CJK: trigram index when every CJK term has 3+ characters, else `LIKE` per term.
    fn search_cjk(&self, query: &str, q: &SearchQuery) -> Result<Vec<SearchHit>, DbError> {
        let raw = query.trim_matches('"').trim();
        let short_term = raw
            .split_whitespace()
            .filter(|t| !is_operator(t) && contains_cjk(t))
            .any(|t| count_cjk(t) < 3);
        if count_cjk(raw) >= 3 && !short_term && self.trigram_available {
            let expr = raw
                .split_whitespace()
                .map(|t| {
                    if is_operator(t) {
                        t.to_owned()
                    } else {
                        super::fts_query::quote(t)
                    }
                })
                .collect::<Vec<_>>()
                .join(" ");
            if let Outcome::Hits(h) = self.run_fts("messages_fts_trigram", &expr, q)? {
                return Ok(h);
            }
        }
        self.search_like(raw, q)
    }

    fn search_like(&self, raw: &str, q: &SearchQuery) -> Result<Vec<SearchHit>, DbError> {
        let mut terms: Vec<&str> = raw.split_whitespace().filter(|t| !is_operator(t)).collect();
        if terms.is_empty() {
            terms.push(raw);
        }
        let patterns: Vec<String> = terms
            .iter()
            .map(|t| format!("%{}%", like_escape(t)))
            .collect();
        let clause = vec![
            "(m.content LIKE ? ESCAPE '\\' OR m.tool_name LIKE ? ESCAPE '\\' OR m.tool_calls LIKE ? ESCAPE '\\')";
            terms.len()
        ]
        .join(" OR ");
        let f = filters(q);
        let sql = format!(
            "SELECT m.id, m.session_id, m.role, \
             substr(m.content, max(1, instr(m.content, ?) - 40), 120), m.timestamp, s.source, \
             s.model, s.title, 0.0 FROM messages m JOIN sessions s ON s.id = m.session_id \
             WHERE ({clause}){} ORDER BY m.timestamp DESC LIMIT ? OFFSET ?",
            f.sql
        );
        let limit = i64::try_from(q.limit).unwrap_or(i64::MAX);
        let offset = i64::try_from(q.offset).unwrap_or(i64::MAX);
        let first = terms[0];
        let mut params: Vec<&dyn ToSql> = vec![&first];
        for p in &patterns {
            params.extend([p as &dyn ToSql, p, p]);
        }
        params.extend(f.params);
        params.push(&limit);
        params.push(&offset);
        let mut stmt = self.conn.prepare(&sql).ctx("searching messages")?;
        let rows = stmt
            .query_map(params.as_slice(), hit_row)
            .ctx("searching messages")?;
        rows.collect::<Result<_, _>>().ctx("searching messages")
    }

    /// The message before (by timestamp, then id), the message itself, and the one after.
    fn context_of(&self, hit: &SearchHit) -> Result<Vec<StoredMessage>, DbError> {
        let mut out = query_messages(
            &self.conn,
            &CONTEXT_SQL,
            rusqlite::params![hit.session_id, hit.timestamp, hit.message_id],
        )?;
        for m in &mut out {
            m.content = m
                .content
                .as_deref()
                .map(|c| truncate(&content_text(c), CONTEXT_CHARS));
        }
        Ok(out)
    }
}

/// Neighbours of a hit in one statement; `?1` session, `?2` timestamp, `?3` id. Both range
/// lookups walk `idx_messages_session` from the hit.
static CONTEXT_SQL: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT * FROM (SELECT {MSG_COLS} FROM messages WHERE session_id = ?1 \
         AND (timestamp < ?2 OR (timestamp = ?2 AND id < ?3)) ORDER BY timestamp DESC, id DESC LIMIT 1) \
         UNION ALL SELECT {MSG_COLS} FROM messages WHERE id = ?3 \
         UNION ALL SELECT * FROM (SELECT {MSG_COLS} FROM messages WHERE session_id = ?1 \
         AND (timestamp > ?2 OR (timestamp = ?2 AND id > ?3)) ORDER BY timestamp ASC, id ASC LIMIT 1)"
    )
});

fn truncate(s: &str, chars: usize) -> String {
    s.chars().take(chars).collect()
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
