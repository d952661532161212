//! The agent: a conversation with a model and its tools. Built with
//! [`AgentBuilder`]; one turn is driven by `turn.rs` (decisions in
//! [`crate::step`]), each model call by `sampling.rs` (decisions in
//! [`crate::recovery`]), compression by `compression.rs`.

mod builder;
mod compression;
mod dynamic;
mod hooks;
mod recall;
mod sampling;
mod turn;

use std::path::PathBuf;
use std::sync::Arc;

use hermes_llm::{LlmError, Provider};
use hermes_protocol::{Event, Message, Role, TurnEnd, Usage};
use hermes_tools::{Homes, Registry};

pub use builder::AgentBuilder;

use crate::EventSink;
use crate::compress::ContextCompressor;
use crate::guardrails::Guardrails;
use crate::recovery::RetryPolicy;
use crate::resilience::Route;
use crate::steer::SteerHandle;
use crate::store::{LimitStore, MessageStore};
use crate::timing::Timing;

/// The message sent when the model keeps calling tools after its budget is spent.
pub const SUMMARY_REQUEST: &str =
    "You have reached your iteration limit. Please summarize what you have accomplished so far.";

/// Settings for one agent.
#[derive(Debug, Clone)]
pub struct AgentOptions {
    /// Model id sent to the provider.
    pub model: String,
    /// API calls allowed per turn before the grace call.
    pub max_turns: u32,
    /// Output token cap per call.
    pub max_tokens: Option<u32>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Working directory for tools.
    pub cwd: PathBuf,
    /// Session id, passed to tools.
    pub session_id: String,
    /// Home directories for `~` expansion and protected paths.
    pub homes: Homes,
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnResult {
    /// The final assistant text (the forced summary when the budget ran out).
    pub final_text: String,
    /// Why it ended.
    pub reason: TurnEnd,
    /// Tokens used by the turn.
    pub usage: Usage,
    /// API calls made.
    pub api_calls: u32,
}

/// Why a turn failed.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The provider failed for good.
    #[error(transparent)]
    Llm(#[from] LlmError),
    /// The conversation cannot be made to fit the model's window; says what to do.
    #[error("context window exceeded: {0}")]
    ContextExhausted(String),
    /// The provider refused the request's size (HTTP 413) and nothing is left
    /// to compact: a body limit, not the model's context window.
    #[error(
        "the provider refused the request as too large ({0}); nothing is left to compact. \
         Shorten the last message or ask for smaller tool output, or start a new session \
         (hermes chat without --resume)"
    )]
    PayloadTooLarge(String),
    /// A tool failed in a way the model cannot fix.
    #[error("tool {tool} failed: {message}")]
    Tool {
        /// The tool.
        tool: String,
        /// What happened.
        message: String,
    },
    /// `continue_turn` found no tool calls left to run.
    #[error("there is no unfinished turn to continue: the last reply has no tool calls waiting")]
    NothingToContinue,
    /// The model kept answering with nothing (no text, no tool calls).
    #[error(
        "the model returned an empty reply {attempts} times in a row ({model}); try again, or switch models with -m / --provider"
    )]
    EmptyReply {
        /// Calls that came back empty.
        attempts: u32,
        /// The model that did it.
        model: String,
    },
    /// A message could not be written to a store other processes share (its
    /// history must not diverge from theirs).
    #[error("the session store failed during this turn: {0}")]
    Store(String),
}

/// A conversation with a model and its tools.
pub struct Agent {
    /// The primary route first, then `fallback_providers` in order.
    routes: Vec<Route>,
    /// Index of the route in use; a fallback lasts for the rest of the session.
    active: usize,
    retry: RetryPolicy,
    tools: Registry,
    options: AgentOptions,
    messages: Vec<Message>,
    /// Positions in `messages` of this turn's recovery scaffolding (an empty
    /// reply and its nudge, a reasoning-only prefill): sent to the model, never
    /// stored, and dropped when the turn ends.
    scaffolding: Vec<usize>,
    /// Behind a mutex only so the agent is `Sync` (a subagent's turn runs inside a
    /// tool future, which must be `Send`); access is always through `&mut self`.
    store: Option<std::sync::Mutex<Box<dyn MessageStore>>>,
    /// Thresholds, the window as currently known, and state across compressions.
    compressor: ContextCompressor,
    /// A window the provider reported, to be remembered after the next success.
    confirmed_limit: Option<u64>,
    /// `max_tokens` for the next call only, after an output-cap rejection.
    output_cap: Option<u32>,
    limits: Option<std::sync::Mutex<Box<dyn LimitStore>>>,
    /// The auxiliary model that writes compression summaries (the main route if unset).
    auxiliary: Option<Route>,
    /// When the auxiliary model last failed; it is skipped for a while after.
    auxiliary_failed: Option<std::time::Instant>,
    /// Tool-loop detection, reset at each user turn.
    guardrails: Guardrails,
    /// Dangerous-command policy handed to every tool call (refuse-by-default until set).
    approvals: Arc<hermes_tools::approval::ApprovalGate>,
    /// Text the user sent mid-turn, appended to the next tool result.
    steer: SteerHandle,
    /// Who answers `clarify` questions; `None` where nobody can.
    clarifier: Option<Arc<dyn hermes_tools::Clarifier>>,
    /// Clock, sleep and jitter.
    timing: Arc<dyn Timing>,
    /// Variables the processes tools start never inherit (credentials).
    hidden_env: Arc<[String]>,
    /// A store write that fails ends the turn with an error (a store other
    /// processes share); otherwise it is a status line and the turn goes on.
    strict_store: bool,
    /// The first store write that failed in this turn.
    store_failure: Option<String>,
    /// Where commands and file tools run.
    environment: Arc<dyn hermes_env::Environment>,
    /// The background processes this agent's tools started.
    processes: Arc<hermes_tools::processes::ProcessTable>,
    /// Snapshots of project trees before tools change them (`/rollback`).
    checkpoints: Option<Arc<hermes_tools::checkpoints::Checkpoints>>,
    /// Tools that come and go (MCP servers), merged into `tools` before each request.
    dynamic: Option<dynamic::DynamicState>,
    /// The tool schemas' token estimate and the registry generation it is for.
    schema_tokens: Option<(u64, u64)>,
    /// Lifecycle hooks.
    hooks: Arc<hermes_tools::hooks::Hooks>,
    /// The platform hooks are told about.
    platform: String,
    /// What `pre_llm_call` hooks added to this turn's user message: sent to
    /// the model with it, never stored. The message's text identifies it.
    turn_context: Option<(String, String)>,
    /// The editor's files, for `read_file`/`write_file` (ACP).
    client_files: Option<Arc<dyn hermes_tools::ClientFiles>>,
    /// The external memory provider (`memory.provider`), if any.
    memory_provider: Option<Arc<dyn hermes_tools::memory_provider::MemoryProvider>>,
    /// The memory provider's hand-over of the last exchange, still running.
    memory_sync: Option<tokio::task::JoinHandle<()>>,
    /// The engine that replaces the built-in compressor (`context.engine`), if any.
    context_engine: Option<Arc<dyn crate::compress::engine::ContextEngine>>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("routes", &self.routes)
            .field("active", &self.active)
            .field("tools", &self.tools)
            .field("options", &self.options)
            .field("messages", &self.messages.len())
            .finish()
    }
}

impl Agent {
    /// Starts building an agent that talks to `provider` with `tools`.
    pub fn builder(
        provider: Arc<dyn Provider>,
        tools: Registry,
        options: AgentOptions,
    ) -> AgentBuilder {
        AgentBuilder::new(provider, tools, options)
    }

    /// The slot for mid-turn steering: text put there while a turn runs is
    /// appended to the next tool result (or stays pending until there is one).
    pub fn steer_handle(&self) -> SteerHandle {
        self.steer.clone()
    }

    /// The approval policy in use (a subagent derives its own from it).
    pub fn approvals(&self) -> &Arc<hermes_tools::approval::ApprovalGate> {
        &self.approvals
    }

    /// The context window as currently known (lowered when a provider reports less).
    pub fn context_length(&self) -> u64 {
        self.compressor.context_length()
    }

    /// The provider and model in use now.
    pub fn active_route(&self) -> &Route {
        &self.routes[self.active]
    }

    /// The conversation so far.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The checkpoints taken before file changes, where the files are.
    pub fn checkpoints(&self) -> Option<Arc<hermes_tools::checkpoints::Checkpoints>> {
        self.checkpoints.clone()
    }

    /// The tools this agent offers.
    pub fn tools(&self) -> &Registry {
        &self.tools
    }

    /// The options it runs with.
    pub fn options(&self) -> &AgentOptions {
        &self.options
    }

    /// Backs up `n` user turns (at least one): drops the `n`th-from-last user
    /// message and everything after it, and asks the store to hide those rows
    /// (they stay on disk for audit, as the reference's rewind keeps them).
    /// Returns the text of the dropped user message and how many messages went,
    /// or `None` when there is no user turn to undo.
    pub fn undo_turns(&mut self, n: usize) -> Result<Option<(String, usize)>, String> {
        let mut seen = 0;
        let mut cut = None;
        for (i, m) in self.messages.iter().enumerate().rev() {
            if m.role == Role::User {
                seen += 1;
                cut = Some(i);
                if seen >= n.max(1) {
                    break;
                }
            }
        }
        let Some(cut) = cut else {
            return Ok(None);
        };
        let removed = self.messages.len() - cut;
        let text = self.messages[cut].text().to_owned();
        self.messages.truncate(cut);
        if let Some(store) = self.store_mut() {
            store.rewind(removed)?;
        }
        Ok(Some((text, removed)))
    }

    /// Starts a fresh conversation under `session_id`, persisted through
    /// `store`: the system prompt stays, the history goes.
    pub fn start_new_session(&mut self, session_id: String, store: Option<Box<dyn MessageStore>>) {
        self.messages.retain(|m| m.role == Role::System);
        self.options.session_id = session_id;
        self.store = store.map(std::sync::Mutex::new);
    }

    /// Continues another stored session (`/resume`): its id, its system prompt
    /// when it kept one (so the provider's prefix cache still matches), its
    /// history, and the store that appends to it.
    pub fn replace_conversation(
        &mut self,
        session_id: String,
        system_prompt: Option<String>,
        history: Vec<Message>,
        store: Option<Box<dyn MessageStore>>,
    ) {
        self.set_conversation(session_id, system_prompt, history);
        self.store = store.map(std::sync::Mutex::new);
    }

    /// Replaces the history after the system prompt with `history` (what
    /// another process added to the same session meanwhile, read back from
    /// the store); the session and its store stay.
    pub fn refresh_history(&mut self, history: Vec<Message>) {
        self.messages.retain(|m| m.role == Role::System);
        self.messages
            .extend(history.into_iter().filter(|m| m.role != Role::System));
    }

    /// Replaces the system prompt for the rest of the session (a personality
    /// overlay); the history and the store stay.
    pub fn replace_system_prompt(&mut self, system_prompt: String) {
        let history: Vec<Message> = self
            .messages
            .iter()
            .filter(|m| m.role != Role::System)
            .cloned()
            .collect();
        let id = self.options.session_id.clone();
        self.set_conversation(id, Some(system_prompt), history);
    }

    fn set_conversation(
        &mut self,
        session_id: String,
        system_prompt: Option<String>,
        history: Vec<Message>,
    ) {
        let system = system_prompt
            .filter(|p| !p.trim().is_empty())
            .map(Message::system)
            .or_else(|| {
                self.messages
                    .first()
                    .filter(|m| m.role == Role::System)
                    .cloned()
            });
        self.messages = system.into_iter().collect();
        self.messages
            .extend(history.into_iter().filter(|m| m.role != Role::System));
        self.options.session_id = session_id;
    }

    /// Switches the primary model for the rest of the session (`/model`):
    /// fallbacks stay behind it; `context_length` is the new model's window when
    /// known, `limits` where a window it confirms is remembered, and `store`
    /// records usage under the new model.
    pub fn switch_model(&mut self, switch: ModelSwitch) {
        self.options.model = switch.model.clone();
        self.routes[0] = Route {
            provider: switch.provider,
            model: switch.model,
        };
        self.active = 0;
        if let Some(tokens) = switch.context_length {
            self.compressor.set_context_length(tokens.max(1));
        }
        self.limits = switch.limits.map(std::sync::Mutex::new);
        if let Some(store) = switch.store {
            self.store = Some(std::sync::Mutex::new(store));
        }
    }

    /// Ends the stored session with `reason`; the agent is done with it.
    pub fn end_session(&mut self, reason: &str) -> Result<(), String> {
        self.store_mut().map_or(Ok(()), |store| store.end(reason))
    }

    /// The background processes started in this session.
    pub fn processes(&self) -> &Arc<hermes_tools::processes::ProcessTable> {
        &self.processes
    }

    /// The session store, if one is set.
    fn store_mut(&mut self) -> Option<&mut Box<dyn MessageStore>> {
        self.store.as_mut().map(|m| {
            m.get_mut()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        })
    }

    fn push(&mut self, message: Message, events: &EventSink) {
        if let Some(store) = self.store_mut()
            && let Err(e) = store.append(&message)
        {
            let _ = events.send(Event::Status {
                message: format!("Could not save a message to the session store: {e}"),
            });
            if self.strict_store && self.store_failure.is_none() {
                self.store_failure = Some(e);
            }
        }
        let _ = events.send(Event::MessageAppended {
            message: message.clone(),
        });
        self.messages.push(message);
    }

    /// Adds a message the model sees for the rest of this turn but that is
    /// never stored (recovery scaffolding).
    fn push_scaffolding(&mut self, message: Message) {
        self.scaffolding.push(self.messages.len());
        self.messages.push(message);
    }

    /// Drops this turn's scaffolding, so the conversation matches the store.
    fn drop_scaffolding(&mut self) {
        for i in std::mem::take(&mut self.scaffolding).into_iter().rev() {
            if i < self.messages.len() {
                self.messages.remove(i);
            }
        }
    }

    fn record_usage(&mut self, usage: &Usage, events: &EventSink) {
        if let Some(store) = self.store_mut()
            && let Err(e) = store.record_usage(usage)
        {
            let _ = events.send(Event::Status {
                message: format!("Could not save token usage: {e}"),
            });
        }
    }
}

/// What [`Agent::switch_model`] switches to.
pub struct ModelSwitch {
    /// The new primary provider.
    pub provider: Arc<dyn Provider>,
    /// The model there.
    pub model: String,
    /// Its context window, when known.
    pub context_length: Option<u64>,
    /// Where a window it confirms is remembered.
    pub limits: Option<Box<dyn LimitStore>>,
    /// A store recording usage under the new model (the session's rows stay).
    pub store: Option<Box<dyn MessageStore>>,
}

impl std::fmt::Debug for ModelSwitch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelSwitch")
            .field("provider", &self.provider.name())
            .field("model", &self.model)
            .field("context_length", &self.context_length)
            .finish_non_exhaustive()
    }
}
