//! The store seam: what the runtime needs from wherever sessions are kept.
//! `state.db` ([`crate::session_db::SessionDb`], wrapped by hermes-session)
//! and PostgreSQL (hermes-postgres) implement it; the runtime picks one from
//! `sessiondb.provider`.

use std::path::Path;

use hermes_protocol::Message;

use crate::session_db::{
    BulkCandidate, GatewaySession, ListFilter, MessageExtra, NewSession, SearchHit, SearchQuery,
    SessionFilter, SessionRouting, SessionRow, SessionSummary, StoredMessage, UsageDelta,
};

/// A store operation that failed; the message says what and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StoreError(pub String);

impl From<crate::DbError> for StoreError {
    fn from(e: crate::DbError) -> Self {
        StoreError(e.to_string())
    }
}

/// Sessions and their messages, shared by every conversation in a process.
pub trait SessionStore: Send + Sync {
    /// Creates a session row.
    fn create_session(&self, session: &NewSession) -> Result<(), StoreError>;
    /// Clears the end of a session being continued.
    fn reopen_session(&self, id: &str) -> Result<(), StoreError>;
    /// Marks a session ended (the first reason wins).
    fn end_session(&self, id: &str, reason: &str) -> Result<(), StoreError>;
    /// Deletes the session if nothing was said in it (no messages, no title,
    /// no children); returns whether it went.
    fn discard_if_empty(&self, id: &str) -> Result<bool, StoreError> {
        let _ = id;
        Ok(false)
    }
    /// Appends one message.
    fn append_message(
        &self,
        id: &str,
        message: &Message,
        extra: &MessageExtra,
    ) -> Result<(), StoreError>;
    /// Adds one model call's usage.
    fn add_usage(&self, id: &str, usage: &UsageDelta) -> Result<(), StoreError>;
    /// Hides the last `count` messages (`/undo`); they stay for audit.
    fn deactivate_last_messages(&self, id: &str, count: usize) -> Result<(), StoreError>;
    /// One session by exact id.
    fn session(&self, id: &str) -> Result<Option<SessionRow>, StoreError>;
    /// A session's active messages, ready for the agent.
    fn conversation(&self, id: &str) -> Result<Vec<Message>, StoreError>;
    /// The session an id, unique id prefix or title names.
    fn resolve(&self, key: &str) -> Result<Option<String>, StoreError>;
    /// The most recent session, of `source` when given.
    fn most_recent(&self, source: Option<&str>) -> Result<Option<String>, StoreError>;
    /// Sets a session's title (blank clears it).
    fn set_title(&self, id: &str, title: &str) -> Result<(), StoreError>;
    /// The title a compression child of a session titled `title` gets.
    fn next_title_in_lineage(&self, title: &str) -> Result<String, StoreError>;
    /// Titles a session that has no title yet (automatic titles never replace
    /// one set by hand); a title another session holds gets a ` #N` suffix.
    /// Returns whether it was set.
    fn set_title_if_empty(&self, id: &str, title: &str) -> Result<bool, StoreError> {
        if self.session(id)?.is_none_or(|row| row.title.is_some()) {
            return Ok(false);
        }
        let title = self.next_title_in_lineage(title)?;
        self.set_title(id, &title).map(|()| true)
    }
    /// Where it lives, for messages (`state.db`'s path).
    fn location(&self) -> Option<&Path> {
        None
    }
    /// Stores where a gateway session's messages come from.
    fn set_routing(&self, _id: &str, _routing: &SessionRouting) -> Result<(), StoreError> {
        Ok(())
    }
    /// Gives a continuation the routing of the session it continues.
    fn copy_routing(&self, _from: &str, _to: &str) -> Result<(), StoreError> {
        Ok(())
    }
    /// The open session (with messages) a chat's key on `source` continues.
    fn open_session_for_key(
        &self,
        _key: &str,
        _source: &str,
    ) -> Result<Option<String>, StoreError> {
        Ok(None)
    }
    /// Where a gateway session's messages come from (its `origin_json`).
    fn origin(&self, _id: &str) -> Result<Option<String>, StoreError> {
        Ok(None)
    }
}

/// Reading past sessions, as the `session_search` tool does: from state.db
/// or from the shared database replicas use.
pub trait HistoryReader {
    /// One session by exact id.
    fn session_row(&self, id: &str) -> Result<Option<SessionRow>, StoreError>;
    /// A session's active messages in insertion order.
    fn messages(&self, id: &str) -> Result<Vec<StoredMessage>, StoreError>;
    /// Up to `window` messages before `anchor`, the anchor and up to
    /// `window` after (all rows); empty when the anchor is not in the session.
    fn messages_around(
        &self,
        id: &str,
        anchor: i64,
        window: usize,
    ) -> Result<Vec<StoredMessage>, StoreError>;
    /// The most recently started sessions, newest first.
    fn recent_sessions(&self, limit: usize) -> Result<Vec<SessionSummary>, StoreError>;
    /// Full-text search (FTS5's syntax and results).
    fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>, StoreError>;
}

/// Managing stored sessions (`hermes sessions`, `/api/sessions`): pages of
/// the list, exports, deletion, on state.db and the shared database alike.
pub trait SessionAdmin: HistoryReader + Send + Sync {
    /// Sessions, newest start first, as `SessionDb::list_sessions` pages them.
    fn list_sessions(&self, filter: &ListFilter) -> Result<Vec<SessionSummary>, StoreError>;
    /// A session's row and active messages as one JSON object (every column).
    fn export_session(&self, id: &str) -> Result<Option<serde_json::Value>, StoreError>;
    /// Deletes a session, its messages and its subagent runs (other children
    /// are detached); whether it existed.
    fn delete_session(&self, id: &str) -> Result<bool, StoreError>;
    /// The ended sessions `filter` selects, oldest first; changes nothing.
    fn bulk_candidates(&self, filter: &SessionFilter) -> Result<Vec<BulkCandidate>, StoreError>;
    /// Deletes the sessions `filter` selects (children detached); how many.
    fn prune_matching(&self, filter: &SessionFilter) -> Result<usize, StoreError>;
    /// Archives the sessions `filter` selects, each with its compression
    /// lineage; how many matched.
    fn archive_matching(&self, filter: &SessionFilter) -> Result<usize, StoreError>;
    /// The newest session per messaging chat (`session_key`), most recently
    /// active first; with `active_only`, ended ones are left out.
    fn gateway_sessions(&self, active_only: bool) -> Result<Vec<GatewaySession>, StoreError>;
    /// Tokens and cost per day and model of the sessions started at or after
    /// `since` (Unix seconds), with the `busiest` sessions by tokens.
    fn usage_report(
        &self,
        since: f64,
        busiest: usize,
    ) -> Result<crate::session_db::UsageReport, StoreError>;
}

impl HistoryReader for crate::session_db::SessionDb {
    fn session_row(&self, id: &str) -> Result<Option<SessionRow>, StoreError> {
        Ok(self.get_session(id)?)
    }

    fn messages(&self, id: &str) -> Result<Vec<StoredMessage>, StoreError> {
        Ok(crate::session_db::SessionDb::messages(self, id)?)
    }

    fn messages_around(
        &self,
        id: &str,
        anchor: i64,
        window: usize,
    ) -> Result<Vec<StoredMessage>, StoreError> {
        Ok(crate::session_db::SessionDb::messages_around(
            self, id, anchor, window,
        )?)
    }

    fn recent_sessions(&self, limit: usize) -> Result<Vec<SessionSummary>, StoreError> {
        Ok(self.list_sessions(&crate::session_db::ListFilter {
            limit,
            ..crate::session_db::ListFilter::default()
        })?)
    }

    fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>, StoreError> {
        Ok(crate::session_db::SessionDb::search(self, query)?)
    }
}
