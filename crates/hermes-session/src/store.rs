//! Where sessions are recorded. The runtime reaches the store only through
//! [`SessionStore`] (defined in hermes-state, below both implementations):
//! `state.db` (the reference's schema, through [`SessionDb`]) here, and
//! PostgreSQL for several replicas in hermes-postgres.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use hermes_agent::{LimitStore, MessageStore};
use hermes_llm::pricing;
use hermes_protocol::{Message, Role, Usage};
use hermes_state::context_cache::ContextLengthCache;
use hermes_state::session_db::{
    MessageExtra, NewSession, SessionDb, SessionRouting, SessionRow, UsageDelta,
};
pub use hermes_state::store::{SessionStore, StoreError};

/// The sessions' connection appends all day in a server, so its page cache fills to its
/// limit: at the 32 MiB `SessionDb::open` sets (for searches) that was a quarter of
/// the API server's peak memory under 200 concurrent streams (86 → 62 MiB with 2 MiB, same
/// throughput). 8 MiB is twice what one bounded FTS merge touches; appends measured as fast
/// (100 000-message base: 6 041–6 063 appends/s against 5 652–5 887 at 32 MiB). The agent's
/// searches open their own read-only connection, which keeps 32 MiB.
const STORE_PAGE_CACHE_KIB: u32 = 8 * 1024;

/// `state.db` behind one connection that every session of the process shares
/// (SQLite serialises writers anyway; one connection keeps file handles flat).
#[derive(Debug)]
pub struct SqliteStore {
    db: Mutex<SessionDb>,
    path: PathBuf,
}

impl SqliteStore {
    /// Opens (creating or upgrading) the database at `path`.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let db = SessionDb::open(path)?;
        db.limit_page_cache(STORE_PAGE_CACHE_KIB)?;
        Ok(Self {
            db: Mutex::new(db),
            path: path.to_path_buf(),
        })
    }

    fn with<T>(
        &self,
        f: impl FnOnce(&mut SessionDb) -> Result<T, hermes_state::DbError>,
    ) -> Result<T, StoreError> {
        let run = || {
            let mut db = self.db.lock().unwrap_or_else(PoisonError::into_inner);
            f(&mut db).map_err(StoreError::from)
        };
        // A write can wait behind another session's (or an FTS merge): on a
        // multi-threaded runtime, tell it this worker blocks so the other
        // sessions' streams keep moving.
        match tokio::runtime::Handle::try_current() {
            Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(run)
            }
            _ => run(),
        }
    }
}

impl hermes_state::store::HistoryReader for SqliteStore {
    fn session_row(&self, id: &str) -> Result<Option<hermes_state::SessionRow>, StoreError> {
        self.with(|db| db.get_session(id))
    }

    fn messages(&self, id: &str) -> Result<Vec<hermes_state::StoredMessage>, StoreError> {
        self.with(|db| db.messages(id))
    }

    fn messages_around(
        &self,
        id: &str,
        anchor: i64,
        window: usize,
    ) -> Result<Vec<hermes_state::StoredMessage>, StoreError> {
        self.with(|db| db.messages_around(id, anchor, window))
    }

    fn recent_sessions(
        &self,
        limit: usize,
    ) -> Result<Vec<hermes_state::SessionSummary>, StoreError> {
        self.with(|db| {
            db.list_sessions(&hermes_state::ListFilter {
                limit,
                ..hermes_state::ListFilter::default()
            })
        })
    }

    fn search(
        &self,
        query: &hermes_state::SearchQuery,
    ) -> Result<Vec<hermes_state::SearchHit>, StoreError> {
        self.with(|db| db.search(query))
    }
}

impl hermes_state::store::SessionAdmin for SqliteStore {
    fn list_sessions(
        &self,
        filter: &hermes_state::ListFilter,
    ) -> Result<Vec<hermes_state::SessionSummary>, StoreError> {
        self.with(|db| db.list_sessions(filter))
    }

    fn export_session(&self, id: &str) -> Result<Option<serde_json::Value>, StoreError> {
        self.with(|db| db.export_session(id))
    }

    fn delete_session(&self, id: &str) -> Result<bool, StoreError> {
        self.with(|db| db.delete_session(id))
    }

    fn bulk_candidates(
        &self,
        filter: &hermes_state::SessionFilter,
    ) -> Result<Vec<hermes_state::BulkCandidate>, StoreError> {
        self.with(|db| db.bulk_candidates(filter))
    }

    fn prune_matching(&self, filter: &hermes_state::SessionFilter) -> Result<usize, StoreError> {
        self.with(|db| db.prune_matching(filter))
    }

    fn archive_matching(&self, filter: &hermes_state::SessionFilter) -> Result<usize, StoreError> {
        self.with(|db| db.archive_matching(filter))
    }

    fn gateway_sessions(
        &self,
        active_only: bool,
    ) -> Result<Vec<hermes_state::GatewaySession>, StoreError> {
        self.with(|db| db.gateway_sessions(active_only))
    }

    fn usage_report(
        &self,
        since: f64,
        busiest: usize,
    ) -> Result<hermes_state::session_db::UsageReport, StoreError> {
        self.with(|db| db.usage_report(since, busiest))
    }
}

impl SessionStore for SqliteStore {
    fn create_session(&self, session: &NewSession) -> Result<(), StoreError> {
        self.with(|db| db.create_session(session))
    }

    fn reopen_session(&self, id: &str) -> Result<(), StoreError> {
        self.with(|db| db.reopen_session(id))
    }

    fn end_session(&self, id: &str, reason: &str) -> Result<(), StoreError> {
        self.with(|db| db.end_session(id, reason))
    }

    fn discard_if_empty(&self, id: &str) -> Result<bool, StoreError> {
        self.with(|db| db.delete_if_empty(id))
    }

    fn append_message(
        &self,
        id: &str,
        message: &Message,
        extra: &MessageExtra,
    ) -> Result<(), StoreError> {
        self.with(|db| db.append_message(id, message, extra).map(|_| ()))
    }

    fn add_usage(&self, id: &str, usage: &UsageDelta) -> Result<(), StoreError> {
        self.with(|db| db.add_usage(id, usage))
    }

    fn deactivate_last_messages(&self, id: &str, count: usize) -> Result<(), StoreError> {
        self.with(|db| db.deactivate_last_messages(id, count).map(|_| ()))
    }

    fn session(&self, id: &str) -> Result<Option<SessionRow>, StoreError> {
        self.with(|db| db.get_session(id))
    }

    fn conversation(&self, id: &str) -> Result<Vec<Message>, StoreError> {
        self.with(|db| db.conversation(id))
    }

    fn resolve(&self, key: &str) -> Result<Option<String>, StoreError> {
        let key = key.trim();
        self.with(|db| match db.resolve_session_id(key)? {
            Some(id) => Ok(Some(id)),
            None => db.resolve_by_title(key),
        })
    }

    fn most_recent(&self, source: Option<&str>) -> Result<Option<String>, StoreError> {
        self.with(|db| db.most_recent(source).map(|row| row.map(|r| r.id)))
    }

    fn set_title(&self, id: &str, title: &str) -> Result<(), StoreError> {
        self.with(|db| db.set_title(id, title).map(|_| ()))
    }

    fn next_title_in_lineage(&self, title: &str) -> Result<String, StoreError> {
        self.with(|db| db.next_title_in_lineage(title))
    }

    fn location(&self) -> Option<&Path> {
        Some(&self.path)
    }

    fn set_routing(&self, id: &str, routing: &SessionRouting) -> Result<(), StoreError> {
        self.with(|db| db.set_routing(id, routing))
    }

    fn copy_routing(&self, from: &str, to: &str) -> Result<(), StoreError> {
        self.with(|db| db.copy_routing(from, to))
    }

    fn open_session_for_key(&self, key: &str, source: &str) -> Result<Option<String>, StoreError> {
        self.with(|db| db.open_session_for_key(key, source))
    }

    fn origin(&self, id: &str) -> Result<Option<String>, StoreError> {
        self.with(|db| db.origin_json(id))
    }
}

/// Seconds since the Unix epoch, as the reference stores timestamps.
pub fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Which earlier session to pick up, from `--resume` / `--continue`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResumeRequest {
    /// `--resume ID|TITLE`.
    Resume(String),
    /// `--continue [NAME]`; `None` means the most recent session of the front-end's source.
    Continue(Option<String>),
}

/// A session found for resuming: its id, stored system prompt and conversation.
#[derive(Debug)]
pub struct Resumed {
    /// Session id.
    pub id: String,
    /// The system prompt it started with (reused so the provider's prefix cache holds).
    pub system_prompt: Option<String>,
    /// Its messages, ready for the agent.
    pub history: Vec<Message>,
}

/// Finds the session a resume request names; `source` is the front-end's, for `--continue`.
pub fn find(
    store: &dyn SessionStore,
    request: &ResumeRequest,
    source: &str,
) -> Result<Resumed, StoreError> {
    let named = |key: &str| {
        store.resolve(key)?.ok_or_else(|| {
            StoreError(format!(
                "no session matches '{}' (by id, id prefix or title). List them with: hermes sessions list",
                key.trim()
            ))
        })
    };
    let id = match request {
        ResumeRequest::Resume(key) => named(key)?,
        ResumeRequest::Continue(Some(name)) if !name.trim().is_empty() => named(name)?,
        ResumeRequest::Continue(_) => store.most_recent(Some(source))?.ok_or_else(|| {
            StoreError("there is no earlier session to continue: start one with hermes chat".into())
        })?,
    };
    let row = store
        .session(&id)?
        .ok_or_else(|| StoreError(format!("session {id} vanished while resuming")))?;
    let history = store.conversation(&id)?;
    Ok(Resumed {
        id,
        system_prompt: row.system_prompt,
        history,
    })
}

/// The row of a new top-level session.
pub fn new_session_row(
    id: &str,
    source: &str,
    model: &str,
    system_prompt: &str,
    cwd: &str,
    max_turns: u32,
) -> NewSession {
    NewSession {
        id: id.to_owned(),
        source: source.to_owned(),
        model: Some(model.to_owned()),
        model_config: Some(
            serde_json::json!({"max_iterations": max_turns, "reasoning_config": null, "max_tokens": null}),
        ),
        system_prompt: Some(system_prompt.to_owned()),
        parent_session_id: None,
        cwd: Some(cwd.to_owned()),
        started_at: now(),
    }
}

/// The agent's [`MessageStore`] for one session: every message and usage record
/// goes to the shared store as it happens.
pub struct SessionRecorder {
    store: Arc<dyn SessionStore>,
    session_id: String,
    model: String,
    provider: String,
    base_url: String,
}

impl std::fmt::Debug for SessionRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionRecorder")
            .field("session_id", &self.session_id)
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl SessionRecorder {
    /// Records into `session_id`; usage is priced as `model` on `provider`/`base_url`.
    pub fn new(
        store: Arc<dyn SessionStore>,
        session_id: &str,
        model: &str,
        provider: &str,
        base_url: &str,
    ) -> Self {
        Self {
            store,
            session_id: session_id.to_owned(),
            model: model.to_owned(),
            provider: provider.to_owned(),
            base_url: base_url.to_owned(),
        }
    }
}

impl MessageStore for SessionRecorder {
    fn end(&mut self, reason: &str) -> Result<(), String> {
        self.store
            .end_session(&self.session_id, reason)
            .map_err(|e| e.0)
    }

    fn append(&mut self, message: &Message) -> Result<(), String> {
        let extra = MessageExtra {
            timestamp: now(),
            ..MessageExtra::default()
        };
        self.store
            .append_message(&self.session_id, message, &extra)
            .map_err(|e| e.0)
    }

    fn record_usage(&mut self, usage: &Usage) -> Result<(), String> {
        let delta = usage_delta(&self.model, &self.provider, &self.base_url, usage);
        self.store
            .add_usage(&self.session_id, &delta)
            .map_err(|e| e.0)
    }

    fn rewind(&mut self, count: usize) -> Result<(), String> {
        self.store
            .deactivate_last_messages(&self.session_id, count)
            .map_err(|e| e.0)
    }

    fn fork(&mut self, messages: &[Message]) -> Result<Option<String>, String> {
        let parent = self.session_id.clone();
        let row = self.store.session(&parent).map_err(|e| e.0)?;
        let child = crate::session_id::new_session_id();
        let system_prompt = messages
            .first()
            .filter(|m| m.role == Role::System)
            .map(|m| m.text().to_owned())
            .or_else(|| row.as_ref().and_then(|r| r.system_prompt.clone()));
        self.store
            .end_session(&parent, "compression")
            .map_err(|e| e.0)?;
        self.store
            .create_session(&NewSession {
                id: child.clone(),
                source: row
                    .as_ref()
                    .map_or_else(|| "cli".to_owned(), |r| r.source.clone()),
                model: Some(self.model.clone()),
                model_config: None,
                system_prompt,
                parent_session_id: Some(parent.clone()),
                cwd: row.as_ref().and_then(|r| r.cwd.clone()),
                started_at: now(),
            })
            .map_err(|e| e.0)?;
        self.store.copy_routing(&parent, &child).map_err(|e| e.0)?;
        if let Some(title) = row.as_ref().and_then(|r| r.title.clone()) {
            let next = self.store.next_title_in_lineage(&title).map_err(|e| e.0)?;
            self.store.set_title(&child, &next).map_err(|e| e.0)?;
        }
        self.session_id = child.clone();
        for m in messages.iter().filter(|m| m.role != Role::System) {
            self.append(m)?;
        }
        Ok(Some(child))
    }
}

/// One API call's usage as the reference records it: canonical buckets (input without
/// cache reads/writes) priced on the call's billing route.
pub fn usage_delta(model: &str, provider: &str, base_url: &str, usage: &Usage) -> UsageDelta {
    let route = pricing::resolve_billing_route(model, provider, base_url);
    let cost = pricing::estimate_cost(&route, usage);
    UsageDelta {
        model: model.to_owned(),
        billing_provider: provider.to_owned(),
        billing_base_url: base_url.to_owned(),
        input_tokens: pricing::canonical_input_tokens(usage),
        output_tokens: usage.output_tokens,
        cache_read_tokens: usage.cache_read_tokens,
        cache_write_tokens: usage.cache_write_tokens,
        reasoning_tokens: usage.reasoning_tokens,
        api_calls: 1,
        estimated_cost_usd: cost.amount_usd,
        cost_status: Some(cost.status.as_str().to_owned()),
        cost_source: Some(cost.source.to_owned()),
        pricing_version: cost.pricing_version.map(str::to_owned),
        billing_mode: (cost.status == pricing::CostStatus::Included)
            .then(|| "subscription_included".to_owned()),
    }
}

/// The agent's [`LimitStore`] over `context_length_cache.yaml`, for one endpoint.
#[derive(Debug)]
pub struct CachedLimits {
    cache: ContextLengthCache,
    base_url: String,
}

impl CachedLimits {
    /// Limits for models served at `base_url`.
    pub fn new(cache: ContextLengthCache, base_url: String) -> Self {
        Self { cache, base_url }
    }
}

impl LimitStore for CachedLimits {
    fn save_context_length(&mut self, model: &str, tokens: u64) -> Result<(), String> {
        self.cache
            .save(model, &self.base_url, tokens)
            .map_err(|e| format!("{}: {e}", self.cache.path().display()))
    }
}
