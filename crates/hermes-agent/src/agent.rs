//! The agent: a conversation plus the loop that drives one turn.

use std::path::PathBuf;
use std::sync::Arc;

use futures_util::StreamExt;
use hermes_llm::{
    ChatRequest, Completion, ErrorContext, LlmError, Provider, StreamAccumulator, StreamDelta,
    backoff, classify_error,
};
use hermes_protocol::{Event, Message, ToolCall, TurnEnd, Usage};
use hermes_tools::{Homes, Registry, ToolContext};
use tokio_util::sync::CancellationToken;

use crate::budget::{CallKind, TurnBudget};
use crate::compress::{CompressorConfig, ContextCompressor};
use crate::dispatch::run_batch;
use crate::guardrails::{GuardrailConfig, Guardrails};
use crate::plan::PreparedCall;
use crate::repair::repair_arguments;
use crate::resilience::{RetryPolicy, Route, approx_tokens};
use crate::steer::{SteerHandle, steer_marker};
use crate::store::{LimitStore, MessageStore};
use crate::{EventSink, wire};

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
    /// A tool failed in a way the model cannot fix.
    #[error("tool {tool} failed: {message}")]
    Tool {
        /// The tool.
        tool: String,
        /// What happened.
        message: String,
    },
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
    /// Who answers `clarify` questions (the REPL); `None` in one-shot runs.
    clarifier: Option<Arc<dyn hermes_tools::Clarifier>>,
}

mod compression;

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
    /// An agent with an optional system prompt and an existing history (empty for a new session).
    pub fn new(
        provider: Arc<dyn Provider>,
        tools: Registry,
        options: AgentOptions,
        system_prompt: Option<String>,
        history: Vec<Message>,
    ) -> Self {
        let mut messages = Vec::with_capacity(history.len() + 1);
        if let Some(prompt) = system_prompt.filter(|p| !p.trim().is_empty()) {
            messages.push(Message::system(prompt));
        }
        messages.extend(
            history
                .into_iter()
                .filter(|m| m.role != hermes_protocol::Role::System),
        );
        let primary = Route {
            provider,
            model: options.model.clone(),
        };
        let options_max_tokens = options.max_tokens;
        Self {
            routes: vec![primary],
            active: 0,
            retry: RetryPolicy::default(),
            tools,
            options,
            messages,
            store: None,
            compressor: ContextCompressor::new(
                CompressorConfig::default(),
                hermes_llm::context_limits::DEFAULT_CONTEXT_LENGTH,
                options_max_tokens,
            ),
            confirmed_limit: None,
            output_cap: None,
            limits: None,
            auxiliary: None,
            auxiliary_failed: None,
            guardrails: Guardrails::default(),
            approvals: Arc::default(),
            steer: SteerHandle::default(),
            clarifier: None,
        }
    }

    /// The slot for mid-turn steering: text put there while a turn runs is
    /// appended to the next tool result (or stays pending until there is one).
    pub fn steer_handle(&self) -> SteerHandle {
        self.steer.clone()
    }

    /// Sets the dangerous-command approval policy (`--yolo`, allowlists, who to ask).
    pub fn set_approvals(&mut self, gate: Arc<hermes_tools::approval::ApprovalGate>) {
        self.approvals = gate;
    }

    /// The approval policy in use (a subagent derives its own from it).
    pub fn approvals(&self) -> &Arc<hermes_tools::approval::ApprovalGate> {
        &self.approvals
    }

    /// Sets who answers the `clarify` tool (the interactive front-end).
    pub fn set_clarifier(&mut self, clarifier: Arc<dyn hermes_tools::Clarifier>) {
        self.clarifier = Some(clarifier);
    }

    /// Sets the `tool_loop_guardrails:` thresholds.
    pub fn set_guardrails(&mut self, config: GuardrailConfig) {
        self.guardrails = Guardrails::new(config);
    }

    /// Sets the `compression:` settings (thresholds recomputed for the current window).
    pub fn set_compressor_config(&mut self, config: CompressorConfig) {
        self.compressor = ContextCompressor::new(
            config,
            self.compressor.context_length(),
            self.options.max_tokens,
        );
    }

    /// The model that writes compression summaries (`auxiliary.compression`).
    pub fn set_auxiliary(&mut self, provider: Arc<dyn Provider>, model: impl Into<String>) {
        self.auxiliary = Some(Route {
            provider,
            model: model.into(),
        });
    }

    /// Sets the model's context window (config `model.context_length` or a cached limit).
    pub fn set_context_length(&mut self, tokens: u64) {
        self.compressor.set_context_length(tokens.max(1));
    }

    /// The context window as currently known (lowered when a provider reports less).
    pub fn context_length(&self) -> u64 {
        self.compressor.context_length()
    }

    /// Where windows that providers confirm are remembered for later sessions.
    pub fn set_limit_store(&mut self, store: Box<dyn LimitStore>) {
        self.limits = Some(std::sync::Mutex::new(store));
    }

    /// Adds a provider to fall back to, after the primary and earlier fallbacks.
    pub fn add_fallback(&mut self, provider: Arc<dyn Provider>, model: impl Into<String>) {
        self.routes.push(Route {
            provider,
            model: model.into(),
        });
    }

    /// Sets how failed calls are retried.
    pub fn set_retry_policy(&mut self, policy: RetryPolicy) {
        self.retry = policy;
    }

    /// The provider and model in use now.
    pub fn active_route(&self) -> &Route {
        &self.routes[self.active]
    }

    /// The conversation so far.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The tools this agent offers.
    pub fn tools(&self) -> &Registry {
        &self.tools
    }

    /// The options it runs with.
    pub fn options(&self) -> &AgentOptions {
        &self.options
    }

    /// Persists every later message and usage record through `store`.
    pub fn set_store(&mut self, store: Box<dyn MessageStore>) {
        self.store = Some(std::sync::Mutex::new(store));
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
            if m.role == hermes_protocol::Role::User {
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

    /// Starts a fresh conversation under `session_id`: the system prompt stays,
    /// the history goes. The caller points the store at the new session.
    pub fn start_new_session(&mut self, session_id: String) {
        self.messages
            .retain(|m| m.role == hermes_protocol::Role::System);
        self.options.session_id = session_id;
    }

    /// Continues another stored session (`/resume` inside the REPL): its id, its
    /// system prompt when it kept one (so the provider's prefix cache still
    /// matches), and its history. The caller points the store at that session.
    pub fn replace_conversation(
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
                    .filter(|m| m.role == hermes_protocol::Role::System)
                    .cloned()
            });
        self.messages = system.into_iter().collect();
        self.messages.extend(
            history
                .into_iter()
                .filter(|m| m.role != hermes_protocol::Role::System),
        );
        self.options.session_id = session_id;
    }

    /// Switches the primary provider and model for the rest of the session
    /// (`/model`); fallbacks stay configured behind it.
    pub fn set_primary_route(&mut self, provider: Arc<dyn Provider>, model: impl Into<String>) {
        let model = model.into();
        self.options.model = model.clone();
        self.routes[0] = Route { provider, model };
        self.active = 0;
    }

    /// Ends the stored session with `reason`; the agent is done with it.
    pub fn end_session(&mut self, reason: &str) -> Result<(), String> {
        self.store_mut().map_or(Ok(()), |store| store.end(reason))
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
        }
        let _ = events.send(Event::MessageAppended {
            message: message.clone(),
        });
        self.messages.push(message);
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

    /// Runs one turn: the user's message, model calls and tool rounds until the
    /// model answers, the budget forces a summary, or `cancel` fires.
    pub async fn run_turn(
        &mut self,
        input: &str,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<TurnResult, AgentError> {
        self.push(Message::user(input), events);
        let turn_start = self.messages.len();
        self.guardrails.reset();
        let mut budget = TurnBudget::new(self.options.max_turns);
        let mut usage = Usage::default();
        let mut api_calls = 0u32;
        let result = loop {
            if cancel.is_cancelled() {
                break interrupted(usage, api_calls);
            }
            let kind = budget.next_call();
            if kind == CallKind::Summary {
                let _ = events.send(Event::Status {
                    message: format!(
                        "Iteration budget of {} calls spent; asking for a summary.",
                        budget.used()
                    ),
                });
                self.push(Message::user(SUMMARY_REQUEST), events);
            }
            match self
                .preflight(kind != CallKind::Summary, events, cancel)
                .await
            {
                Ok(()) => {}
                Err(AgentError::Llm(LlmError::Cancelled)) => break interrupted(usage, api_calls),
                Err(e) => return Err(e),
            }
            self.drain_steer_before_call(turn_start, events);
            let completion = match self
                .call_with_retry(kind != CallKind::Summary, events, cancel)
                .await
            {
                Ok(c) => c,
                Err(AgentError::Llm(LlmError::Cancelled)) => break interrupted(usage, api_calls),
                Err(e) => return Err(e),
            };
            api_calls += 1;
            // Every call is recorded, even when the provider reports no usage, so
            // api_call_count stays right.
            let call_usage = completion.usage.unwrap_or_default();
            usage.add(&call_usage);
            self.record_usage(&call_usage, events);
            let mut reply = completion.message;
            if reply.tool_calls.is_empty() || kind == CallKind::Summary {
                reply.tool_calls.clear();
                let text = reply.content.clone().unwrap_or_default();
                reply.content = Some(text.clone());
                self.push(reply, events);
                let reason = if kind == CallKind::Normal {
                    TurnEnd::Completed
                } else {
                    TurnEnd::BudgetExhausted
                };
                break TurnResult {
                    final_text: text,
                    reason,
                    usage,
                    api_calls,
                };
            }
            if kind == CallKind::Grace {
                // The grace call exists to let the model answer; its tool calls are not run.
                continue;
            }
            let prepared = self.prepare_calls(&mut reply, events);
            self.push(reply, events);
            let ctx = ToolContext {
                cwd: self.options.cwd.clone(),
                cancel: cancel.child_token(),
                session_id: self.options.session_id.clone(),
                homes: self.options.homes.clone(),
                approvals: self.approvals.clone(),
                events: Some(events.clone()),
                clarifier: self.clarifier.clone(),
                registry: Some(self.tools.clone()),
            };
            // A round that only ran scripts does not count against the budget:
            // execute_code exists to do many steps in one call.
            if prepared.iter().all(|c| c.name == "execute_code") {
                budget.refund();
            }
            let (runnable, blocked) = self.guardrails.screen(&prepared);
            let ran = run_batch(&runnable, &self.tools, &ctx, events).await;
            let (results, halt) = self.guardrails.review(&prepared, ran, blocked, events);
            let mut fatal = None;
            let mut results = results;
            if let Some(last) = results.last_mut()
                && let Some(text) = self.steer.take()
            {
                last.content.push_str(&steer_marker(&text));
                let _ = events.send(Event::Status {
                    message: "Steer delivered with the latest tool result.".into(),
                });
            }
            for r in results {
                if let (None, Some(msg)) = (&fatal, r.fatal.clone()) {
                    fatal = Some((r.name.clone(), msg));
                }
                self.push(Message::tool_result(r.id, r.name, r.content), events);
            }
            if let Some((tool, message)) = fatal {
                return Err(AgentError::Tool { tool, message });
            }
            if let Some(halt) = halt {
                break self.halt_turn(&halt, usage, api_calls, events);
            }
        };
        let _ = events.send(Event::TurnComplete {
            final_text: result.final_text.clone(),
            reason: result.reason,
            usage: result.usage,
            api_calls: result.api_calls,
        });
        Ok(result)
    }

    /// Repairs names and arguments in place (so history carries what was run)
    /// and returns the calls ready to dispatch.
    fn prepare_calls(&self, reply: &mut Message, events: &EventSink) -> Vec<PreparedCall> {
        let mut prepared = Vec::with_capacity(reply.tool_calls.len());
        for (index, call) in reply.tool_calls.iter_mut().enumerate() {
            if call.id.trim().is_empty() {
                call.id = format!("call_{index}");
            }
            self.repair_name(call, events);
            let repaired = repair_arguments(&call.function.arguments);
            if let Some(fix) = repaired.fix {
                let _ = events.send(Event::Status {
                    message: format!("Repaired arguments of {} ({fix}).", call.function.name),
                });
                call.function.arguments = repaired.json.clone();
            }
            let args =
                serde_json::from_str(&repaired.json).unwrap_or_else(|_| serde_json::json!({}));
            prepared.push(PreparedCall {
                index,
                id: call.id.clone(),
                name: call.function.name.clone(),
                args,
                args_text: call.function.arguments.clone(),
            });
        }
        prepared
    }

    fn repair_name(&self, call: &mut ToolCall, events: &EventSink) {
        if self.tools.get(&call.function.name).is_some() {
            return;
        }
        if let Some(fixed) = self.tools.closest(&call.function.name) {
            let _ = events.send(Event::Status {
                message: format!("Repaired tool name '{}' to '{fixed}'.", call.function.name),
            });
            call.function.name = fixed.to_owned();
        }
    }

    /// One model call, retried, compacted and failed over as the classifier says.
    async fn call_with_retry(
        &mut self,
        offer_tools: bool,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<Completion, AgentError> {
        let mut attempt = 0u32;
        let mut compactions = 0u32;
        loop {
            let err = match self.call_model(offer_tools, events, cancel).await {
                Ok(done) => {
                    self.output_cap = None;
                    self.remember_confirmed_limit(events);
                    return Ok(done);
                }
                Err(LlmError::Cancelled) => return Err(LlmError::Cancelled.into()),
                Err(e) => e,
            };
            let route = &self.routes[self.active];
            let verdict = classify_error(
                &err,
                &ErrorContext {
                    provider: route.provider.name(),
                    model: &route.model,
                    approx_tokens: approx_tokens(&self.messages),
                    context_length: usize::try_from(self.compressor.context_length()).ok(),
                    num_messages: self.messages.len(),
                },
            );
            let reason = verdict.reason.as_str();
            if verdict.should_compress {
                self.recover_overflow(
                    &err.to_string(),
                    offer_tools,
                    &mut compactions,
                    events,
                    cancel,
                )
                .await?;
                continue;
            }
            if verdict.should_rotate_credential
                && route
                    .provider
                    .rotate_credential(verdict.status, verdict.retry_after)
            {
                let _ = events.send(Event::Status {
                    message: format!(
                        "{reason}: {} — switched to the next pooled API key",
                        verdict.message
                    ),
                });
                continue;
            }
            if verdict.retryable && attempt < self.retry.max_retries {
                attempt += 1;
                let delay = verdict
                    .retry_after
                    .unwrap_or_else(|| {
                        backoff::jittered(
                            attempt,
                            self.retry.base_delay,
                            self.retry.max_delay,
                            0.5,
                            backoff::unit_random(),
                        )
                    })
                    .min(self.retry.max_delay);
                let _ = events.send(Event::Status {
                    message: format!(
                        "{reason}: {} — retrying in {:.1}s (attempt {attempt}/{})",
                        verdict.message,
                        delay.as_secs_f64(),
                        self.retry.max_retries
                    ),
                });
                tokio::select! {
                    () = tokio::time::sleep(delay) => {}
                    () = cancel.cancelled() => return Err(LlmError::Cancelled.into()),
                }
                continue;
            }
            if (verdict.should_fallback || verdict.retryable) && self.active + 1 < self.routes.len()
            {
                self.active += 1;
                attempt = 0;
                let next = &self.routes[self.active];
                let _ = events.send(Event::Status {
                    message: format!(
                        "{reason}: {} — falling back to {} ({})",
                        verdict.message,
                        next.provider.name(),
                        next.model
                    ),
                });
                continue;
            }
            return Err(err.into());
        }
    }

    async fn call_model(
        &self,
        offer_tools: bool,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<Completion, LlmError> {
        let route = &self.routes[self.active];
        let request = ChatRequest {
            model: route.model.clone(),
            messages: wire::sanitize(&self.messages),
            tools: if offer_tools {
                self.tools.schemas()
            } else {
                Vec::new()
            },
            max_tokens: self.output_cap.or(self.options.max_tokens),
            temperature: self.options.temperature,
            tool_choice: Default::default(),
        };
        let mut stream = route.provider.stream(&request, cancel).await?;
        let mut acc = StreamAccumulator::new();
        while let Some(delta) = stream.next().await {
            let delta = delta?;
            match &delta {
                StreamDelta::Text(text) => {
                    let _ = events.send(Event::TextDelta { text: text.clone() });
                }
                StreamDelta::Reasoning(text) => {
                    let _ = events.send(Event::ReasoningDelta { text: text.clone() });
                }
                _ => {}
            }
            acc.push(&delta);
        }
        Ok(acc.finish())
    }
}

impl Agent {
    /// Before a model call: pending steer text goes onto the last tool message
    /// of this turn, if there is one and it is the newest message (so the
    /// stored copy can be replaced); otherwise it stays pending for the next
    /// tool batch rather than becoming a user message mid-turn.
    fn drain_steer_before_call(&mut self, turn_start: usize, events: &EventSink) {
        let Some(text) = self.steer.take() else {
            return;
        };
        let start = turn_start.min(self.messages.len());
        let last_is_tool = self.messages.len() > start
            && self
                .messages
                .last()
                .is_some_and(|m| m.role == hermes_protocol::Role::Tool);
        if !last_is_tool {
            self.steer.restore(text);
            return;
        }
        let Some(message) = self.messages.last_mut() else {
            return;
        };
        let mut content = message.content.take().unwrap_or_default();
        content.push_str(&steer_marker(&text));
        message.content = Some(content);
        let message = message.clone();
        if let Some(store) = self.store_mut()
            && let Err(e) = store.rewind(1).and_then(|()| store.append(&message))
        {
            let _ = events.send(Event::Status {
                message: format!("Could not update a stored tool result with the steer: {e}"),
            });
        }
        let _ = events.send(Event::Status {
            message: "Steer delivered with the latest tool result.".into(),
        });
    }

    /// Ends the turn on a guardrail hard stop, explaining why in the final answer.
    fn halt_turn(
        &mut self,
        halt: &crate::guardrails::Decision,
        usage: Usage,
        api_calls: u32,
        events: &EventSink,
    ) -> TurnResult {
        let _ = events.send(Event::Status {
            message: format!("Tool guardrail halted {}: {}", halt.tool, halt.code),
        });
        let text = halt.halt_text();
        self.push(Message::assistant(text.clone()), events);
        TurnResult {
            final_text: text,
            reason: TurnEnd::Completed,
            usage,
            api_calls,
        }
    }
}

fn interrupted(usage: Usage, api_calls: u32) -> TurnResult {
    TurnResult {
        final_text: String::new(),
        reason: TurnEnd::Interrupted,
        usage,
        api_calls,
    }
}
