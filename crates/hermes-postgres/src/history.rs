//! The `session_search` tool's reads on the shared database.

use hermes_state::session_db::{
    MSG_COLS, SearchHit, SearchQuery, SessionRow, SessionSummary, StoredMessage,
};
use hermes_state::store::{HistoryReader, SessionStore, StoreError};

use crate::error::Ctx;
use crate::store::{PgStore, stored_message};
use crate::text::{dec, dec_opt, enc};

/// A first user message as a one-line preview (60 characters and "...").
fn preview(text: Option<String>) -> String {
    let flat = text.unwrap_or_default().replace(['\n', '\r'], " ");
    let flat = flat.trim();
    if flat.chars().count() > 60 {
        format!("{}...", flat.chars().take(60).collect::<String>())
    } else {
        flat.to_owned()
    }
}

impl HistoryReader for PgStore {
    fn session_row(&self, id: &str) -> Result<Option<SessionRow>, StoreError> {
        self.session(id)
    }

    fn messages(&self, id: &str) -> Result<Vec<StoredMessage>, StoreError> {
        Ok(PgStore::messages(self, id)?)
    }

    fn messages_around(
        &self,
        id: &str,
        anchor: i64,
        window: usize,
    ) -> Result<Vec<StoredMessage>, StoreError> {
        let id = id.to_owned();
        let w = i64::try_from(window).unwrap_or(i64::MAX - 1);
        Ok(self.with(move |c| {
            const CTX: &str = "reading messages around one";
            let sid = enc(&id);
            let mut before: Vec<StoredMessage> = c
                .query(
                    &format!(
                        "SELECT {MSG_COLS} FROM messages WHERE session_id = $1 AND id <= $2 \
                         AND EXISTS (SELECT 1 FROM messages WHERE id = $2 AND session_id = $1) \
                         ORDER BY id DESC LIMIT $3"
                    ),
                    &[&sid, &anchor, &(w + 1)],
                )
                .ctx(CTX)?
                .iter()
                .map(stored_message)
                .collect();
            if before.is_empty() {
                return Ok(before);
            }
            before.reverse();
            before.extend(
                c.query(
                    &format!(
                        "SELECT {MSG_COLS} FROM messages WHERE session_id = $1 AND id > $2 \
                         ORDER BY id ASC LIMIT $3"
                    ),
                    &[&sid, &anchor, &w],
                )
                .ctx(CTX)?
                .iter()
                .map(stored_message),
            );
            Ok(before)
        })?)
    }

    fn recent_sessions(&self, limit: usize) -> Result<Vec<SessionSummary>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        Ok(self.with(move |c| {
            Ok(c.query(
                "SELECT s.id, s.source, s.model, s.title, s.started_at, s.ended_at, \
                 COALESCE(s.message_count, 0), \
                 (SELECT content FROM messages m WHERE m.session_id = s.id AND m.role = 'user' \
                  ORDER BY m.id LIMIT 1), \
                 COALESCE((SELECT MAX(timestamp) FROM messages m WHERE m.session_id = s.id), \
                  s.started_at), s.parent_session_id \
                 FROM sessions s WHERE s.archived = 0 ORDER BY s.started_at DESC LIMIT $1",
                &[&limit],
            )
            .ctx("listing sessions")?
            .iter()
            .map(|r| SessionSummary {
                id: dec(r.get(0)),
                source: dec(r.get(1)),
                model: dec_opt(r.get(2)),
                title: dec_opt(r.get(3)),
                started_at: r.get(4),
                ended_at: r.get(5),
                message_count: r.get(6),
                preview: preview(dec_opt(r.get(7))),
                last_active: r.get(8),
                parent_session_id: dec_opt(r.get(9)),
            })
            .collect())
        })?)
    }

    fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>, StoreError> {
        Ok(PgStore::search(self, query)?)
    }
}
