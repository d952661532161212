//! Gateway conversations: sessions a messaging platform routes by
//! `session_key` (what `hermes mcp serve` exposes).

use super::SessionDb;
use super::error::{Ctx, DbError};

/// The newest session row of one routing key.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GatewaySession {
    /// Session id.
    pub id: String,
    /// The gateway's routing key (platform + chat + thread/user).
    pub session_key: String,
    /// `source` (the platform).
    pub source: String,
    /// `chat_type` (dm, group, channel, thread).
    pub chat_type: Option<String>,
    /// `display_name`.
    pub display_name: Option<String>,
    /// `origin_json` as stored.
    pub origin_json: Option<String>,
    /// `chat_id`.
    pub chat_id: Option<String>,
    /// `thread_id`.
    pub thread_id: Option<String>,
    /// `user_id`.
    pub user_id: Option<String>,
    /// When it started (epoch seconds).
    pub started_at: f64,
    /// Its newest message's time, or `started_at`.
    pub last_active: f64,
    /// Input tokens so far.
    pub input_tokens: i64,
    /// Output tokens so far.
    pub output_tokens: i64,
}

/// Where a gateway session's messages come from, stored on its row so a
/// restarted gateway (and `hermes sessions`) finds the conversation again.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SessionRouting {
    /// The routing key (`agent:main:telegram:dm:42`).
    pub session_key: String,
    /// The platform's chat id.
    pub chat_id: Option<String>,
    /// `dm`, `group`, `channel` or `thread`.
    pub chat_type: Option<String>,
    /// A thread inside the chat.
    pub thread_id: Option<String>,
    /// The person's platform id.
    pub user_id: Option<String>,
    /// The chat's name.
    pub display_name: Option<String>,
    /// The message source as JSON (the reference's `origin_json`).
    pub origin_json: Option<String>,
}

impl SessionDb {
    /// Stores `routing` on a session's row.
    pub fn set_routing(&mut self, id: &str, routing: &SessionRouting) -> Result<(), DbError> {
        const CTX: &str = "storing a session's routing";
        self.write(CTX, |c| {
            c.execute(
                "UPDATE sessions SET session_key = ?2, chat_id = ?3, chat_type = ?4, thread_id = ?5, \
                 user_id = ?6, display_name = ?7, origin_json = ?8 WHERE id = ?1",
                rusqlite::params![
                    id,
                    routing.session_key,
                    routing.chat_id,
                    routing.chat_type,
                    routing.thread_id,
                    routing.user_id,
                    routing.display_name,
                    routing.origin_json
                ],
            )
            .ctx(CTX)?;
            Ok(())
        })
    }

    /// Copies the routing columns of `from` onto `to` (a continuation).
    pub fn copy_routing(&mut self, from: &str, to: &str) -> Result<(), DbError> {
        const CTX: &str = "copying a session's routing";
        self.write(CTX, |c| {
            c.execute(
                "UPDATE sessions SET (session_key, chat_id, chat_type, thread_id, user_id, \
                 display_name, origin_json) = (SELECT session_key, chat_id, chat_type, thread_id, \
                 user_id, display_name, origin_json FROM sessions WHERE id = ?1) WHERE id = ?2",
                [from, to],
            )
            .ctx(CTX)?;
            Ok(())
        })
    }

    /// Where a gateway session's messages come from (`origin_json`), when it
    /// is one.
    pub fn origin_json(&self, id: &str) -> Result<Option<String>, DbError> {
        const CTX: &str = "reading a session's origin";
        use rusqlite::OptionalExtension;
        self.conn
            .query_row(
                "SELECT origin_json FROM sessions WHERE id = ?1",
                [id],
                |r| r.get::<_, Option<String>>(0),
            )
            .optional()
            .map(Option::flatten)
            .ctx(CTX)
    }

    /// The newest open session of `session_key` on `source` that has
    /// messages: the one a restarted gateway continues.
    pub fn open_session_for_key(
        &self,
        session_key: &str,
        source: &str,
    ) -> Result<Option<String>, DbError> {
        const CTX: &str = "finding a chat's session";
        use rusqlite::OptionalExtension;
        self.conn
            .query_row(
                "SELECT id FROM sessions WHERE session_key = ?1 AND source = ?2 \
                 AND (ended_at IS NULL OR end_reason IN ('agent_close', 'ws_orphan_reap')) \
                 AND EXISTS (SELECT 1 FROM messages m WHERE m.session_id = sessions.id) \
                 ORDER BY started_at DESC LIMIT 1",
                [session_key, source],
                |r| r.get(0),
            )
            .optional()
            .ctx(CTX)
    }

    /// The newest row per `session_key`, most recently active first; with
    /// `active_only`, sessions that have ended are left out.
    pub fn gateway_sessions(&self, active_only: bool) -> Result<Vec<GatewaySession>, DbError> {
        const CTX: &str = "listing gateway sessions";
        let mut sql = String::from(
            "SELECT id, session_key, source, chat_type, display_name, origin_json, chat_id, \
             thread_id, user_id, started_at, \
             COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = sessions.id), \
                      started_at) AS last_active, \
             COALESCE(input_tokens, 0), COALESCE(output_tokens, 0) \
             FROM sessions WHERE session_key IS NOT NULL \
             AND started_at = (SELECT MAX(s2.started_at) FROM sessions s2 \
                               WHERE s2.session_key = sessions.session_key)",
        );
        if active_only {
            sql.push_str(" AND ended_at IS NULL");
        }
        sql.push_str(" ORDER BY last_active DESC");
        let mut stmt = self.conn.prepare(&sql).ctx(CTX)?;
        let rows = stmt
            .query_map([], |r| {
                Ok(GatewaySession {
                    id: r.get(0)?,
                    session_key: r.get(1)?,
                    source: r.get::<_, Option<String>>(2)?.unwrap_or_default(),
                    chat_type: r.get(3)?,
                    display_name: r.get(4)?,
                    origin_json: r.get(5)?,
                    chat_id: text(r, 6)?,
                    thread_id: text(r, 7)?,
                    user_id: text(r, 8)?,
                    started_at: r.get::<_, Option<f64>>(9)?.unwrap_or_default(),
                    last_active: r.get::<_, Option<f64>>(10)?.unwrap_or_default(),
                    input_tokens: r.get(11)?,
                    output_tokens: r.get(12)?,
                })
            })
            .ctx(CTX)?;
        rows.collect::<Result<Vec<_>, _>>().ctx(CTX)
    }
}

/// A column that may hold text or a number (ids written by other tools).
fn text(row: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Option<String>> {
    use rusqlite::types::ValueRef;
    Ok(match row.get_ref(i)? {
        ValueRef::Null => None,
        ValueRef::Integer(n) => Some(n.to_string()),
        ValueRef::Real(f) => Some(f.to_string()),
        ValueRef::Text(t) | ValueRef::Blob(t) => Some(String::from_utf8_lossy(t).into_owned()),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;
    use crate::session_db::NewSession;

    #[test]
    fn newest_row_per_key_most_recent_first() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = SessionDb::open(&dir.path().join("state.db")).unwrap();
        for (id, source) in [("a", "telegram"), ("b", "telegram"), ("c", "cli")] {
            db.create_session(&NewSession {
                id: id.into(),
                source: source.into(),
                ..NewSession::default()
            })
            .unwrap();
        }
        db.conn
            .execute_batch(
                "UPDATE sessions SET session_key = 'tg:1', chat_id = 42, started_at = 10 WHERE id = 'a';
                 UPDATE sessions SET session_key = 'tg:1', chat_id = 42, started_at = 20, display_name = 'Ann' WHERE id = 'b';",
            )
            .unwrap();
        let rows = db.gateway_sessions(true).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].id, "b");
        assert_eq!(rows[0].chat_id.as_deref(), Some("42"));
        assert_eq!(rows[0].display_name.as_deref(), Some("Ann"));
        db.end_session("b", "done").unwrap();
        assert!(db.gateway_sessions(true).unwrap().is_empty());
        assert_eq!(db.gateway_sessions(false).unwrap().len(), 1);
    }
}
