//! The `session_search` tool's reads on the shared database.

use hermes_state::session_db::{
    MSG_COLS, SearchHit, SearchQuery, SessionRow, SessionSummary, StoredMessage,
};
use hermes_state::store::{HistoryReader, SessionStore, StoreError};

use crate::error::Ctx;
use crate::store::{PgStore, stored_message};
use crate::text::enc;

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
        // As state.db lists them: children hidden, compressed chains as their tip.
        hermes_state::store::SessionAdmin::list_sessions(
            self,
            &hermes_state::session_db::ListFilter {
                limit,
                ..hermes_state::session_db::ListFilter::default()
            },
        )
    }

    fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>, StoreError> {
        Ok(PgStore::search(self, query)?)
    }
}
