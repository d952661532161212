//! Session rows: creation, lifecycle, titles, lookup, deletion and export.

use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, Row};
use serde_json::Value;

use super::error::{Ctx, DbError};
use super::messages::{f64_at, i64_at, text_at};
use super::types::{NewSession, SessionRow};
use super::{SessionDb, pyjson, sql, text};

/// Current time in Unix seconds.
pub(crate) fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Columns read into a [`SessionRow`], in [`session_row`]'s order.
pub const SESSION_COLS: &str = "id, source, user_id, model, model_config, title, \
    system_prompt, parent_session_id, cwd, git_branch, git_repo_root, started_at, ended_at, \
    end_reason, message_count, tool_call_count, api_call_count, input_tokens, output_tokens, \
    cache_read_tokens, cache_write_tokens, reasoning_tokens, billing_provider, billing_base_url, \
    estimated_cost_usd, actual_cost_usd, archived";

pub(crate) fn session_row(r: &Row<'_>) -> rusqlite::Result<SessionRow> {
    let int = |i| i64_at(r, i).map(|v| v.unwrap_or(0));
    Ok(SessionRow {
        id: text_at(r, 0)?.unwrap_or_default(),
        source: text_at(r, 1)?.unwrap_or_default(),
        user_id: text_at(r, 2)?,
        model: text_at(r, 3)?,
        model_config: text_at(r, 4)?,
        title: text_at(r, 5)?,
        system_prompt: text_at(r, 6)?,
        parent_session_id: text_at(r, 7)?,
        cwd: text_at(r, 8)?,
        git_branch: text_at(r, 9)?,
        git_repo_root: text_at(r, 10)?,
        started_at: f64_at(r, 11)?.unwrap_or(0.0),
        ended_at: f64_at(r, 12)?,
        end_reason: text_at(r, 13)?,
        message_count: int(14)?,
        tool_call_count: int(15)?,
        api_call_count: int(16)?,
        input_tokens: int(17)?,
        output_tokens: int(18)?,
        cache_read_tokens: int(19)?,
        cache_write_tokens: int(20)?,
        reasoning_tokens: int(21)?,
        billing_provider: text_at(r, 22)?,
        billing_base_url: text_at(r, 23)?,
        estimated_cost_usd: f64_at(r, 24)?,
        actual_cost_usd: f64_at(r, 25)?,
        archived: int(26)? != 0,
    })
}

/// A title without its lineage number (`"t #3"` → `"t"`).
pub fn lineage_base(title: &str) -> &str {
    match title.rsplit_once(" #") {
        Some((b, n)) if !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()) => b,
        _ => title,
    }
}

/// The next title of the lineage `base` given the `titles` already in it
/// (`"t"` → `"t #2"` → `"t #3"` …; the unnumbered original counts as #1).
pub fn next_in_lineage(base: &str, titles: &[String]) -> String {
    if titles.is_empty() {
        return base.to_owned();
    }
    let highest = titles
        .iter()
        .filter_map(|t| t.rsplit_once(" #").and_then(|(_, n)| n.parse::<u64>().ok()))
        .max()
        .unwrap_or(1)
        .max(1);
    format!("{base} #{}", highest + 1)
}

/// Python truthiness of a JSON value (`if model_config:` in the reference).
pub fn json_truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// Inserts a session row, or fills the NULL metadata of an existing one (never overwrites),
/// like the reference's `_insert_session_row`.
pub(crate) fn upsert_session(
    c: &Connection,
    s: &NewSession,
    model_config: Option<&str>,
) -> rusqlite::Result<()> {
    c.prepare_cached(
        "INSERT INTO sessions (id, source, model, model_config, system_prompt, \
         parent_session_id, cwd, started_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) \
         ON CONFLICT(id) DO UPDATE SET \
         model = COALESCE(sessions.model, excluded.model), \
         model_config = COALESCE(sessions.model_config, excluded.model_config), \
         system_prompt = COALESCE(sessions.system_prompt, excluded.system_prompt), \
         parent_session_id = COALESCE(sessions.parent_session_id, excluded.parent_session_id), \
         cwd = COALESCE(sessions.cwd, excluded.cwd)",
    )?
    .execute(rusqlite::params![
        s.id,
        s.source,
        s.model,
        model_config,
        s.system_prompt,
        s.parent_session_id,
        s.cwd,
        s.started_at
    ])?;
    Ok(())
}

impl SessionDb {
    /// Creates a session. An existing row with the same id is kept, only its NULL metadata
    /// (model, model_config, system_prompt, parent, cwd) is filled in, as the reference does.
    pub fn create_session(&mut self, s: &NewSession) -> Result<(), DbError> {
        const CTX: &str = "creating a session";
        let model_config = match s.model_config.as_ref().filter(|v| json_truthy(v)) {
            Some(v) => Some(pyjson::dumps(v, "model_config")?),
            None => None,
        };
        self.write(CTX, |c| {
            upsert_session(c, s, model_config.as_deref()).map_err(|e| {
                super::messages::no_such_session(
                    e,
                    s.parent_session_id.as_deref().unwrap_or(""),
                    CTX,
                )
            })
        })
    }

    /// Stores the assembled system prompt.
    pub fn set_system_prompt(&mut self, session_id: &str, prompt: &str) -> Result<(), DbError> {
        self.write("storing the system prompt", |c| {
            c.execute(
                "UPDATE sessions SET system_prompt = ?1 WHERE id = ?2",
                [prompt, session_id],
            )
            .ctx("storing the system prompt")?;
            Ok(())
        })
    }

    /// Marks the session ended now. Already-ended sessions keep their first end reason.
    pub fn end_session(&mut self, session_id: &str, end_reason: &str) -> Result<(), DbError> {
        let at = now();
        self.write("ending a session", |c| {
            c.execute(
                "UPDATE sessions SET ended_at = ?1, end_reason = ?2 WHERE id = ?3 AND ended_at IS NULL",
                rusqlite::params![at, end_reason, session_id],
            )
            .ctx("ending a session")?;
            Ok(())
        })
    }

    /// Clears `ended_at`/`end_reason` so the session can be resumed.
    pub fn reopen_session(&mut self, session_id: &str) -> Result<(), DbError> {
        self.write("reopening a session", |c| {
            c.execute(
                "UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = ?1",
                [session_id],
            )
            .ctx("reopening a session")?;
            Ok(())
        })
    }

    /// Sets (or, for a blank title, clears) the title after [`sanitize_title`]. Titles are
    /// unique: one held by another session is [`DbError::TitleTaken`], except that a title held
    /// by a compression ancestor of this session moves to it. Returns whether the session exists.
    ///
    /// [`sanitize_title`]: super::sanitize_title
    pub fn set_title(&mut self, session_id: &str, title: &str) -> Result<bool, DbError> {
        const CTX: &str = "setting a title";
        let title = text::sanitize_title(title)?;
        self.write(CTX, |c| {
            if let Some(t) = &title {
                let holder: Option<String> = c
                    .query_row(
                        "SELECT id FROM sessions WHERE title = ?1 AND id != ?2",
                        [t, session_id],
                        |r| r.get(0),
                    )
                    .optional()
                    .ctx(CTX)?;
                if let Some(holder) = holder {
                    if is_compression_ancestor(c, &holder, session_id).ctx(CTX)? {
                        c.execute("UPDATE sessions SET title = NULL WHERE id = ?1", [&holder])
                            .ctx(CTX)?;
                    } else {
                        return Err(DbError::TitleTaken {
                            title: t.clone(),
                            session_id: holder,
                        });
                    }
                }
            }
            let n = c
                .execute(
                    "UPDATE sessions SET title = ?1 WHERE id = ?2",
                    rusqlite::params![title, session_id],
                )
                .ctx(CTX)?;
            Ok(n > 0)
        })
    }

    /// One session by exact id.
    pub fn get_session(&self, id: &str) -> Result<Option<SessionRow>, DbError> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {SESSION_COLS} FROM sessions WHERE id = ?1"
            ))
            .ctx("reading a session")?
            .query_row([id], session_row)
            .optional()
            .ctx("reading a session")
    }

    /// The exact id when it exists, else the one session whose id starts with the input.
    /// Several matches are [`DbError::Ambiguous`] (newest first); an empty input matches none.
    pub fn resolve_session_id(&self, id_or_prefix: &str) -> Result<Option<String>, DbError> {
        const CTX: &str = "resolving a session id";
        if id_or_prefix.is_empty() {
            return Ok(None);
        }
        let exact: Option<String> = self
            .conn
            .query_row(
                "SELECT id FROM sessions WHERE id = ?1",
                [id_or_prefix],
                |r| r.get(0),
            )
            .optional()
            .ctx(CTX)?;
        if exact.is_some() {
            return Ok(exact);
        }
        let pattern = format!("{}%", sql::like_escape(id_or_prefix));
        let mut candidates: Vec<String> = self
            .conn
            .prepare("SELECT id FROM sessions WHERE id LIKE ?1 ESCAPE '\\' ORDER BY started_at DESC LIMIT 6")
            .ctx(CTX)?
            .query_map([pattern], |r| r.get(0))
            .ctx(CTX)?
            .collect::<Result<_, _>>()
            .ctx(CTX)?;
        match candidates.len() {
            0 => Ok(None),
            1 => Ok(candidates.pop()),
            _ => Err(DbError::Ambiguous {
                prefix: id_or_prefix.to_owned(),
                candidates,
            }),
        }
    }

    /// The title for the next session of a lineage: `"t"` → `"t #2"` → `"t #3"` …, from the
    /// highest number in use (the unnumbered original counts as #1), like the reference.
    pub fn next_title_in_lineage(&self, title: &str) -> Result<String, DbError> {
        const CTX: &str = "numbering a title";
        let base = lineage_base(title);
        let pattern = format!("{} #%", sql::like_escape(base));
        let mut stmt = self
            .conn
            .prepare("SELECT title FROM sessions WHERE title = ?1 OR title LIKE ?2 ESCAPE '\\'")
            .ctx(CTX)?;
        let titles: Vec<String> = stmt
            .query_map([base, pattern.as_str()], |r| r.get(0))
            .ctx(CTX)?
            .collect::<Result<_, _>>()
            .ctx(CTX)?;
        Ok(next_in_lineage(base, &titles))
    }

    /// Resolves a title to a session id, preferring the newest numbered continuation
    /// (`"title #2"`, `"title #3"` …) over the exact title, like the reference.
    pub fn resolve_by_title(&self, title: &str) -> Result<Option<String>, DbError> {
        const CTX: &str = "resolving a title";
        let pattern = format!("{} #%", sql::like_escape(title));
        let numbered: Option<String> = self
            .conn
            .query_row(
                "SELECT id FROM sessions WHERE title LIKE ?1 ESCAPE '\\' ORDER BY started_at DESC LIMIT 1",
                [pattern],
                |r| r.get(0),
            )
            .optional()
            .ctx(CTX)?;
        if numbered.is_some() {
            return Ok(numbered);
        }
        self.conn
            .query_row("SELECT id FROM sessions WHERE title = ?1", [title], |r| {
                r.get(0)
            })
            .optional()
            .ctx(CTX)
    }

    /// The most recently active session (newest message, else start time), optionally from
    /// one source, for `--continue`. Subagent runs are skipped; compression continuations and
    /// branches count (they are where the conversation lives on).
    pub fn most_recent(&self, source: Option<&str>) -> Result<Option<SessionRow>, DbError> {
        let cols = SESSION_COLS
            .split(", ")
            .map(|c| format!("s.{c}"))
            .collect::<Vec<_>>()
            .join(", ");
        let sql = format!(
            "SELECT {cols} FROM sessions s LEFT JOIN (SELECT session_id, MAX(timestamp) AS last_active \
             FROM messages GROUP BY session_id) m ON m.session_id = s.id \
             WHERE (?1 IS NULL OR s.source = ?1) AND NOT {} AND {} IS NULL \
             ORDER BY COALESCE(m.last_active, s.started_at) DESC, s.started_at DESC, s.id DESC LIMIT 1",
            sql::ephemeral_child("s"),
            sql::delegate_from("s.model_config"),
        );
        self.conn
            .query_row(&sql, [source], session_row)
            .optional()
            .ctx("finding the most recent session")
    }

    /// Non-archived sessions, like the reference's `session_count()`.
    pub fn session_count(&self) -> Result<u64, DbError> {
        let n: i64 = self
            .conn
            .query_row(
                "SELECT COUNT(*) FROM sessions s WHERE s.archived = 0",
                [],
                |r| r.get(0),
            )
            .ctx("counting sessions")?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    /// Deletes the session if nothing was ever said in it: no messages (hidden
    /// ones included), no title, no child sessions. Returns whether it went.
    /// A REPL opened and closed leaves no trace, as with the reference.
    pub fn delete_if_empty(&mut self, id: &str) -> Result<bool, DbError> {
        const CTX: &str = "discarding an empty session";
        self.write(CTX, |c| {
            let deleted = c
                .execute(
                    "DELETE FROM sessions WHERE id = ?1 AND title IS NULL \
                     AND NOT EXISTS (SELECT 1 FROM messages WHERE session_id = ?1) \
                     AND NOT EXISTS (SELECT 1 FROM sessions AS child WHERE child.parent_session_id = ?1)",
                    [id],
                )
                .ctx(CTX)?;
            Ok(deleted > 0)
        })
    }

    /// Deletes a session and its messages (usage rows cascade). Delegate subagent children
    /// are deleted with it; other children (branches, continuations) are detached. Returns
    /// whether the session existed.
    pub fn delete_session(&mut self, id: &str) -> Result<bool, DbError> {
        const CTX: &str = "deleting a session";
        self.write(CTX, |c| {
            let exists: i64 = c
                .query_row("SELECT COUNT(*) FROM sessions WHERE id = ?1", [id], |r| {
                    r.get(0)
                })
                .ctx(CTX)?;
            if exists == 0 {
                return Ok(false);
            }
            delete_delegate_children(c, id).ctx(CTX)?;
            remove_session_rows(c, id).ctx(CTX)?;
            Ok(true)
        })
    }

    /// Deletes ended sessions started more than `older_than_days` days ago (optionally from
    /// one source). Children of deleted sessions are detached. Returns how many were deleted.
    pub fn prune_sessions(
        &mut self,
        older_than_days: u32,
        source: Option<&str>,
    ) -> Result<usize, DbError> {
        self.prune_matching(&super::SessionFilter {
            started_before: Some(now() - f64::from(older_than_days) * 86_400.0),
            source: source.map(str::to_owned),
            ..super::SessionFilter::default()
        })
    }
}

/// Deletes one session's row, messages and usage rows; sessions that named it as
/// their parent are detached (kept, with no parent).
pub(crate) fn remove_session_rows(c: &Connection, id: &str) -> rusqlite::Result<()> {
    c.execute(
        "UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ?1",
        [id],
    )?;
    c.execute("DELETE FROM messages WHERE session_id = ?1", [id])?;
    c.execute(
        "DELETE FROM session_model_usage WHERE session_id = ?1",
        [id],
    )?;
    c.execute("DELETE FROM sessions WHERE id = ?1", [id])?;
    Ok(())
}

/// Whether `ancestor` is reached from `descendant` by walking compression-continuation edges.
fn is_compression_ancestor(
    c: &Connection,
    ancestor: &str,
    descendant: &str,
) -> rusqlite::Result<bool> {
    if ancestor.is_empty() || descendant.is_empty() || ancestor == descendant {
        return Ok(false);
    }
    let sql = format!(
        "WITH RECURSIVE ancestors(id) AS (SELECT ?1 UNION SELECT parent.id FROM ancestors a \
         JOIN sessions child ON child.id = a.id JOIN sessions parent ON parent.id = child.parent_session_id \
         WHERE {}) SELECT 1 FROM ancestors WHERE id = ?2 AND id != ?1 LIMIT 1",
        sql::compression_child("child")
    );
    c.query_row(&sql, [descendant, ancestor], |_| Ok(()))
        .optional()
        .map(|r| r.is_some())
}

/// Deletes the delegate subagent sessions (marker chains, recursively) of `parent`.
fn delete_delegate_children(c: &Connection, parent: &str) -> rusqlite::Result<()> {
    let df = sql::delegate_from("model_config");
    let mut found: Vec<String> = vec![parent.to_owned()];
    let mut frontier = vec![parent.to_owned()];
    let mut stmt = c.prepare(&format!(
        "SELECT id FROM sessions WHERE {df} = ?1 OR (parent_session_id = ?1 AND {df} IS NOT NULL)"
    ))?;
    while let Some(id) = frontier.pop() {
        let kids: Vec<String> = stmt
            .query_map([&id], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        for kid in kids {
            if !found.contains(&kid) {
                found.push(kid.clone());
                frontier.push(kid);
            }
        }
    }
    let children = &found[1..];
    for id in children {
        c.execute("DELETE FROM messages WHERE session_id = ?1", [id])?;
        c.execute(
            "UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ?1",
            [id],
        )?;
    }
    for id in children {
        c.execute("DELETE FROM sessions WHERE id = ?1", [id])?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "sessions_tests.rs"]
mod tests;
