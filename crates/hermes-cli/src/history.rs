//! The CLI's use of the session store: creating, resuming and recording sessions.

use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use hermes_agent::{LimitStore, MessageStore};
use hermes_llm::pricing;
use hermes_protocol::{Message, Usage};
use hermes_state::context_cache::ContextLengthCache;
use hermes_state::session_db::{MessageExtra, NewSession, SessionDb, UsageDelta};

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
    /// `--continue [NAME]`; `None` means the most recent CLI session.
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

/// Finds the session a resume request names.
pub fn find(db: &SessionDb, request: &ResumeRequest) -> Result<Resumed> {
    let id = match request {
        ResumeRequest::Resume(key) => by_id_or_title(db, key)?,
        ResumeRequest::Continue(Some(name)) if !name.trim().is_empty() => by_id_or_title(db, name)?,
        ResumeRequest::Continue(_) => match db.most_recent(Some("cli"))? {
            Some(row) => row.id,
            None => bail!("there is no earlier session to continue: start one with hermes chat"),
        },
    };
    let row = db
        .get_session(&id)?
        .with_context(|| format!("session {id} vanished while resuming"))?;
    let history = db.conversation(&id)?;
    Ok(Resumed {
        id,
        system_prompt: row.system_prompt,
        history,
    })
}

fn by_id_or_title(db: &SessionDb, key: &str) -> Result<String> {
    let key = key.trim();
    if let Some(id) = db.resolve_session_id(key)? {
        return Ok(id);
    }
    if let Some(id) = db.resolve_by_title(key)? {
        return Ok(id);
    }
    bail!(
        "no session matches '{key}' (by id, id prefix or title). List them with: hermes sessions list"
    )
}

/// Creates the row for a new CLI session.
pub fn create(
    db: &mut SessionDb,
    id: &str,
    model: &str,
    system_prompt: &str,
    cwd: &str,
    max_turns: u32,
) -> Result<()> {
    db.create_session(&NewSession {
        id: id.to_owned(),
        source: "cli".into(),
        model: Some(model.to_owned()),
        model_config: Some(serde_json::json!({"max_iterations": max_turns, "reasoning_config": null, "max_tokens": null})),
        system_prompt: Some(system_prompt.to_owned()),
        parent_session_id: None,
        cwd: Some(cwd.to_owned()),
        started_at: now(),
    })?;
    Ok(())
}

/// Writes the agent's messages and usage into `state.db` as they happen.
pub struct DbStore {
    db: SessionDb,
    session_id: String,
    model: String,
    provider: String,
    base_url: String,
}

impl DbStore {
    /// A store appending to `session_id`.
    pub fn new(
        db: SessionDb,
        session_id: String,
        model: String,
        provider: String,
        base_url: String,
    ) -> Self {
        Self {
            db,
            session_id,
            model,
            provider,
            base_url,
        }
    }
}

impl MessageStore for DbStore {
    fn end(&mut self, reason: &str) -> Result<(), String> {
        self.db
            .end_session(&self.session_id, reason)
            .map_err(|e| e.to_string())
    }

    fn append(&mut self, message: &Message) -> Result<(), String> {
        let extra = MessageExtra {
            timestamp: now(),
            ..MessageExtra::default()
        };
        self.db
            .append_message(&self.session_id, message, &extra)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    fn record_usage(&mut self, usage: &Usage) -> Result<(), String> {
        let delta = usage_delta(&self.model, &self.provider, &self.base_url, usage);
        self.db
            .add_usage(&self.session_id, &delta)
            .map_err(|e| e.to_string())
    }

    fn rewind(&mut self, count: usize) -> Result<(), String> {
        self.db
            .deactivate_last_messages(&self.session_id, count)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    fn fork(&mut self, messages: &[Message]) -> Result<Option<String>, String> {
        let err = |e: hermes_state::DbError| e.to_string();
        let parent = self.session_id.clone();
        let row = self.db.get_session(&parent).map_err(err)?;
        let child = crate::session_id::new_session_id();
        let system_prompt = messages
            .first()
            .filter(|m| m.role == hermes_protocol::Role::System)
            .map(|m| m.text().to_owned())
            .or_else(|| row.as_ref().and_then(|r| r.system_prompt.clone()));
        self.db.end_session(&parent, "compression").map_err(err)?;
        self.db
            .create_session(&NewSession {
                id: child.clone(),
                source: row
                    .as_ref()
                    .map_or_else(|| "cli".to_owned(), |r| r.source.clone()),
                model: Some(self.model.clone()),
                model_config: None,
                system_prompt,
                parent_session_id: Some(parent),
                cwd: row.as_ref().and_then(|r| r.cwd.clone()),
                started_at: now(),
            })
            .map_err(err)?;
        if let Some(title) = row.as_ref().and_then(|r| r.title.clone()) {
            let next = self.db.next_title_in_lineage(&title).map_err(err)?;
            self.db.set_title(&child, &next).map_err(err)?;
        }
        self.session_id = child.clone();
        for m in messages
            .iter()
            .filter(|m| m.role != hermes_protocol::Role::System)
        {
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
