//! Session listing with previews (`list_sessions_rich` in the reference).

use rusqlite::{OptionalExtension, Row, ToSql};

use super::error::{Ctx, DbError};
use super::messages::{f64_at, i64_at, text_at};
use super::types::{ListFilter, SessionSummary};
use super::{SessionDb, sql};

/// Longest preview, in characters, before `"..."` is appended.
const PREVIEW_CHARS: usize = 60;

const RICH_SELECT: &str = "SELECT s.id, s.source, s.model, s.title, s.started_at, s.ended_at, \
    s.message_count, s.parent_session_id, s.end_reason, \
    COALESCE((SELECT SUBSTR(REPLACE(REPLACE(m.content, X'0A', ' '), X'0D', ' '), 1, 63) \
      FROM messages m WHERE m.session_id = s.id AND m.role = 'user' AND m.content IS NOT NULL \
      ORDER BY m.timestamp, m.id LIMIT 1), '') AS preview_raw, \
    COALESCE((SELECT MAX(m2.timestamp) FROM messages m2 WHERE m2.session_id = s.id), s.started_at) \
      AS last_active \
    FROM sessions s";

struct RichRow {
    summary: SessionSummary,
    end_reason: Option<String>,
}

/// A list row's preview of its first user message: line breaks as spaces,
/// the first 63 characters (what the listing query reads), trimmed, and cut
/// to 60 with `"..."` when longer.
pub fn list_preview(content: &str) -> String {
    let flat: String = content
        .chars()
        .take(63)
        .map(|c| if matches!(c, '\n' | '\r') { ' ' } else { c })
        .collect();
    let raw = flat.trim();
    let mut chars = raw.chars();
    let head: String = chars.by_ref().take(PREVIEW_CHARS).collect();
    if chars.next().is_some() {
        format!("{head}...")
    } else {
        head
    }
}

fn rich_row(r: &Row<'_>) -> rusqlite::Result<RichRow> {
    let started_at = f64_at(r, 4)?.unwrap_or(0.0);
    Ok(RichRow {
        summary: SessionSummary {
            id: text_at(r, 0)?.unwrap_or_default(),
            source: text_at(r, 1)?.unwrap_or_default(),
            model: text_at(r, 2)?,
            title: text_at(r, 3)?,
            started_at,
            ended_at: f64_at(r, 5)?,
            message_count: i64_at(r, 6)?.unwrap_or(0),
            parent_session_id: text_at(r, 7)?,
            preview: list_preview(&text_at(r, 9)?.unwrap_or_default()),
            last_active: f64_at(r, 10)?.unwrap_or(started_at),
        },
        end_reason: text_at(r, 8)?,
    })
}

impl SessionDb {
    /// Sessions, newest start first, with a preview (first user message) and last activity.
    ///
    /// Like the reference's `list_sessions_rich`: unless `include_children`, subagent runs and
    /// compression continuations are hidden (branches stay), and a compressed conversation
    /// is shown once, as its newest continuation (id, title, counts, activity, preview)
    /// while keeping the root's start time.
    pub fn list_sessions(&self, f: &ListFilter) -> Result<Vec<SessionSummary>, DbError> {
        const CTX: &str = "listing sessions";
        let mut clauses: Vec<String> = Vec::new();
        let mut params: Vec<&dyn ToSql> = Vec::new();
        if !f.include_children {
            clauses.push(sql::listable_child("s"));
            clauses.push(format!("{} IS NULL", sql::delegate_from("s.model_config")));
        }
        if let Some(source) = &f.source {
            clauses.push("s.source = ?".to_owned());
            params.push(source);
        }
        if !f.include_archived {
            clauses.push("s.archived = 0".to_owned());
        }
        let limit = i64::try_from(f.limit).unwrap_or(i64::MAX);
        let offset = i64::try_from(f.offset).unwrap_or(i64::MAX);
        params.push(&limit);
        params.push(&offset);
        let where_sql = if clauses.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", clauses.join(" AND "))
        };
        let sql = format!("{RICH_SELECT}{where_sql} ORDER BY s.started_at DESC LIMIT ? OFFSET ?");
        let rows: Vec<RichRow> = self
            .conn
            .prepare(&sql)
            .ctx(CTX)?
            .query_map(params.as_slice(), rich_row)
            .ctx(CTX)?
            .collect::<Result<_, _>>()
            .ctx(CTX)?;

        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            if f.include_children || row.end_reason.as_deref() != Some("compression") {
                out.push(row.summary);
                continue;
            }
            let tip_id = self.compression_tip(&row.summary.id)?;
            if tip_id == row.summary.id {
                out.push(row.summary);
                continue;
            }
            match self.rich_row(&tip_id)? {
                Some(tip) => out.push(SessionSummary {
                    started_at: row.summary.started_at,
                    source: row.summary.source,
                    parent_session_id: row.summary.parent_session_id,
                    ..tip.summary
                }),
                None => out.push(row.summary),
            }
        }
        Ok(out)
    }

    fn rich_row(&self, id: &str) -> Result<Option<RichRow>, DbError> {
        self.conn
            .prepare_cached(&format!("{RICH_SELECT} WHERE s.id = ?1"))
            .ctx("reading a session")?
            .query_row([id], rich_row)
            .optional()
            .ctx("reading a session")
    }

    /// Follows compression continuations forward and returns the newest one (the input
    /// when there is none), preferring continuing or live children over stale siblings.
    pub fn compression_tip(&self, session_id: &str) -> Result<String, DbError> {
        const CTX: &str = "following a compression chain";
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT child.id FROM sessions parent \
                 JOIN sessions child ON child.parent_session_id = parent.id \
                 WHERE parent.id = ?1 AND parent.end_reason = 'compression' \
                 AND json_extract(COALESCE(child.model_config, '{}'), '$._branched_from') IS NULL \
                 AND json_extract(COALESCE(child.model_config, '{}'), '$._delegate_from') IS NULL \
                 AND COALESCE(child.source, '') != 'tool' \
                 ORDER BY CASE WHEN child.end_reason = 'compression' THEN 0 \
                 WHEN child.ended_at IS NULL THEN 1 ELSE 2 END, \
                 COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = child.id), \
                 child.started_at) DESC, child.started_at DESC, child.id DESC LIMIT 1",
            )
            .ctx(CTX)?;
        let mut current = session_id.to_owned();
        let mut seen = vec![current.clone()];
        for _ in 0..100 {
            let next: Option<String> = stmt
                .query_row([&current], |r| r.get(0))
                .optional()
                .ctx(CTX)?;
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
}
