//! Plain data passed into and out of [`SessionDb`](super::SessionDb).

use serde::Serialize;

/// A session to create (see [`SessionDb::create_session`](super::SessionDb::create_session)).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NewSession {
    /// Session id (the reference uses `YYYYMMDD_HHMMSS_<hex>`).
    pub id: String,
    /// Where it runs: `"cli"`, `"telegram"`, `"tui"` …
    pub source: String,
    /// Model slug.
    pub model: Option<String>,
    /// Model configuration snapshot; stored as JSON text (an empty object is stored as NULL).
    pub model_config: Option<serde_json::Value>,
    /// The assembled system prompt.
    pub system_prompt: Option<String>,
    /// Parent session (compression continuation, branch or subagent).
    pub parent_session_id: Option<String>,
    /// Working directory the session was started in.
    pub cwd: Option<String>,
    /// Start time in Unix seconds.
    pub started_at: f64,
}

/// Per-message metadata stored next to a [`hermes_protocol::Message`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MessageExtra {
    /// Unix seconds.
    pub timestamp: f64,
    /// Token count of the message, when known.
    pub token_count: Option<i64>,
    /// Why the model stopped (`"stop"`, `"tool_calls"` …), for assistant messages.
    pub finish_reason: Option<String>,
}

/// Usage of one (or more) API calls, added to a session's counters.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UsageDelta {
    /// Model that served the calls (empty: use the session's).
    pub model: String,
    /// Billing provider (empty: use the session's).
    pub billing_provider: String,
    /// Billing base URL (empty: use the session's).
    pub billing_base_url: String,
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Prompt tokens read from the provider cache.
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider cache.
    pub cache_write_tokens: u64,
    /// Hidden reasoning tokens.
    pub reasoning_tokens: u64,
    /// Number of API calls.
    pub api_calls: u64,
    /// Estimated cost in USD.
    pub estimated_cost_usd: Option<f64>,
    /// `estimated`, `included` or `unknown` (kept when `None`).
    pub cost_status: Option<String>,
    /// Where the price came from, e.g. `official_docs_snapshot` (kept when `None`).
    pub cost_source: Option<String>,
    /// The price snapshot's version (kept when `None`).
    pub pricing_version: Option<String>,
    /// Billing mode, e.g. `subscription_included` (set only when the session has none).
    pub billing_mode: Option<String>,
}

/// One row of `sessions` (the columns this port uses; all others are kept untouched).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct SessionRow {
    /// Session id.
    pub id: String,
    /// Source (`"cli"` …).
    pub source: String,
    /// Platform user id (gateway sessions).
    pub user_id: Option<String>,
    /// Model slug.
    pub model: Option<String>,
    /// Model configuration as JSON text.
    pub model_config: Option<String>,
    /// Title (unique when set).
    pub title: Option<String>,
    /// Stored system prompt.
    pub system_prompt: Option<String>,
    /// Parent session.
    pub parent_session_id: Option<String>,
    /// Working directory.
    pub cwd: Option<String>,
    /// Git branch at start.
    pub git_branch: Option<String>,
    /// Git repository root at start.
    pub git_repo_root: Option<String>,
    /// Unix seconds.
    pub started_at: f64,
    /// Unix seconds, when ended.
    pub ended_at: Option<f64>,
    /// Why it ended (`"user_exit"`, `"compression"` …).
    pub end_reason: Option<String>,
    /// Stored messages counter.
    pub message_count: i64,
    /// Tool calls counter.
    pub tool_call_count: i64,
    /// API calls counter.
    pub api_call_count: i64,
    /// Prompt tokens.
    pub input_tokens: i64,
    /// Completion tokens.
    pub output_tokens: i64,
    /// Cache-read tokens.
    pub cache_read_tokens: i64,
    /// Cache-write tokens.
    pub cache_write_tokens: i64,
    /// Reasoning tokens.
    pub reasoning_tokens: i64,
    /// Billing provider.
    pub billing_provider: Option<String>,
    /// Billing base URL.
    pub billing_base_url: Option<String>,
    /// Estimated cost in USD.
    pub estimated_cost_usd: Option<f64>,
    /// Actual cost in USD, when the provider reported it.
    pub actual_cost_usd: Option<f64>,
    /// Hidden from default listings.
    pub archived: bool,
}

/// One stored message row.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct StoredMessage {
    /// Row id (insertion order).
    pub id: i64,
    /// Owning session.
    pub session_id: String,
    /// `"user"`, `"assistant"`, `"tool"`, `"system"` (other roles may appear in old files).
    pub role: String,
    /// Content as stored. Structured (multimodal) content written by the reference keeps its
    /// `"\u{0}json:"` prefix here; [`SessionDb::conversation`](super::SessionDb::conversation)
    /// decodes it.
    pub content: Option<String>,
    /// For tool messages: the call answered.
    pub tool_call_id: Option<String>,
    /// For assistant messages: the OpenAI `tool_calls` list as JSON text.
    pub tool_calls: Option<String>,
    /// For tool messages: the tool's name.
    pub tool_name: Option<String>,
    /// Unix seconds.
    pub timestamp: f64,
    /// Token count, when known.
    pub token_count: Option<i64>,
    /// Finish reason, for assistant messages.
    pub finish_reason: Option<String>,
    /// Reasoning text, for assistant messages.
    pub reasoning: Option<String>,
}

/// One entry of [`SessionDb::list_sessions`](super::SessionDb::list_sessions).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionSummary {
    /// Session id (for a compressed conversation: its newest continuation).
    pub id: String,
    /// Source.
    pub source: String,
    /// Model slug.
    pub model: Option<String>,
    /// Title.
    pub title: Option<String>,
    /// Unix seconds (for a compressed conversation: the root's start).
    pub started_at: f64,
    /// Unix seconds, when ended.
    pub ended_at: Option<f64>,
    /// Stored messages counter.
    pub message_count: i64,
    /// First user message, newlines flattened, at most 60 characters plus `"..."`.
    pub preview: String,
    /// Newest message timestamp, else `started_at`.
    pub last_active: f64,
    /// Parent session.
    pub parent_session_id: Option<String>,
}

/// Filters for [`SessionDb::list_sessions`](super::SessionDb::list_sessions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListFilter {
    /// Only this source.
    pub source: Option<String>,
    /// Page size (default 20).
    pub limit: usize,
    /// Rows to skip.
    pub offset: usize,
    /// Include archived sessions.
    pub include_archived: bool,
    /// Include subagent runs and compression continuations as their own rows.
    pub include_children: bool,
}

impl Default for ListFilter {
    fn default() -> Self {
        Self {
            source: None,
            limit: 20,
            offset: 0,
            include_archived: false,
            include_children: false,
        }
    }
}

/// Result order of [`SessionDb::search`](super::SessionDb::search).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SearchSort {
    /// BM25 relevance (best first).
    #[default]
    Relevance,
    /// Newest message first, relevance breaking ties.
    Newest,
    /// Oldest message first, relevance breaking ties.
    Oldest,
}

/// A full-text search (see [`SessionDb::search`](super::SessionDb::search)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchQuery {
    /// FTS5-style query: words, `"phrases"`, `prefix*`, `AND`/`OR`/`NOT`. Anything else is
    /// sanitised.
    pub query: String,
    /// Page size (default 20).
    pub limit: usize,
    /// Rows to skip.
    pub offset: usize,
    /// Ordering.
    pub sort: SearchSort,
    /// Only these roles (empty: all).
    pub role_filter: Vec<String>,
    /// Only this session.
    pub session_id: Option<String>,
    /// Only sessions from these sources (empty: all).
    pub source_filter: Vec<String>,
}

impl Default for SearchQuery {
    fn default() -> Self {
        Self {
            query: String::new(),
            limit: 20,
            offset: 0,
            sort: SearchSort::Relevance,
            role_filter: Vec::new(),
            session_id: None,
            source_filter: Vec::new(),
        }
    }
}

impl SearchQuery {
    /// A query with default paging and no filters.
    pub fn new(query: impl Into<String>) -> Self {
        Self {
            query: query.into(),
            ..Self::default()
        }
    }
}

/// One search match.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchHit {
    /// The matching message.
    pub message_id: i64,
    /// Its session.
    pub session_id: String,
    /// Its role.
    pub role: String,
    /// Excerpt with the match between `>>>` and `<<<`.
    pub snippet: String,
    /// Unix seconds.
    pub timestamp: f64,
    /// The session's title.
    pub session_title: Option<String>,
    /// The session's source.
    pub session_source: String,
    /// The session's model.
    pub model: Option<String>,
    /// BM25 rank (lower is better; 0 for the substring fallback).
    pub rank: f64,
    /// The message before the match, the match itself and the message after (when they exist),
    /// with content cut to 200 characters, as the reference's search results carry.
    pub context: Vec<StoredMessage>,
}
