//! The agent's side of compression: deciding when (preflight over the threshold, or a
//! provider's overflow error), asking the auxiliary model for the summary (falling back
//! to the main model, then to a local summary), swapping the conversation, re-injecting
//! tool state (the todo list) and continuing the transcript in a child session.

use hermes_tools::hooks::{HookEvent, object};
use serde_json::json;
use std::time::{Duration, Instant};

use hermes_llm::{ChatRequest, LlmError, complete};
use hermes_protocol::{Event, Message, Role};
use tokio_util::sync::CancellationToken;

use super::{Agent, AgentError};
use crate::EventSink;
use crate::compress::fallback_summary;
use crate::overflow::{CANNOT_SHRINK, OverflowState, Recovery, recover};
use crate::resilience::{Route, approx_tokens};

/// How long a failed auxiliary model is skipped before being tried again.
const AUXILIARY_COOLDOWN: Duration = Duration::from_secs(600);

/// Why a compression ran, for the status line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trigger {
    /// The prompt crossed the threshold before a call.
    Preflight,
    /// The provider rejected the request as too large.
    Overflow,
    /// The user asked (`/compress [topic]`).
    Manual,
}

impl Agent {
    /// The tool schemas' rough token cost, kept until the registry changes
    /// (serialising every schema per request cost a busy server ~6% of its CPU).
    fn tool_schema_tokens(&mut self, offer_tools: bool) -> u64 {
        if !offer_tools {
            return 0;
        }
        let generation = self.tools.generation();
        if let Some((seen, tokens)) = self.schema_tokens
            && seen == generation
        {
            return tokens;
        }
        let tokens = self
            .tools
            .schemas()
            .iter()
            .map(|t| (t.name.len() + t.description.len() + t.parameters.to_string().len()) as u64)
            .sum::<u64>()
            / 4;
        self.schema_tokens = Some((generation, tokens));
        tokens
    }

    /// Compresses before a call whose prompt would cross the threshold.
    pub(super) async fn preflight(
        &mut self,
        offer_tools: bool,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<(), AgentError> {
        let tokens = approx_tokens(&self.messages) as u64 + self.tool_schema_tokens(offer_tools);
        if !self.compressor.should_compress(tokens) {
            return Ok(());
        }
        self.compress_with(Trigger::Preflight, None, None, events, cancel)
            .await
            .map(|_| ())
    }

    /// Compresses the conversation now (`/compress [focus]`). `Ok(false)` when there
    /// was nothing to compress. Asked for by a person, it keeps only the last
    /// exchange verbatim (not the automatic trigger's token budget of recent
    /// messages), so a short conversation can be compressed too.
    pub async fn compress(
        &mut self,
        focus: Option<&str>,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<bool, AgentError> {
        self.compress_with(Trigger::Manual, focus, Some(0), events, cancel)
            .await
    }

    /// The five phases plus the session bookkeeping. `Ok(false)` when nothing changed.
    async fn compress_with(
        &mut self,
        trigger: Trigger,
        focus: Option<&str>,
        tail_budget: Option<usize>,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<bool, AgentError> {
        let Some(plan) = self.compressor.plan(&self.messages, tail_budget) else {
            if matches!(trigger, Trigger::Manual) {
                let _ = events.send(Event::Status {
                    message: "Nothing to compress: the first and the latest exchanges are kept \
                              as they are."
                        .to_owned(),
                });
            }
            return Ok(false);
        };
        let before_tokens = approx_tokens(&self.messages);
        let before_len = self.messages.len();
        let trigger_name = match trigger {
            Trigger::Preflight => "threshold",
            Trigger::Overflow => "overflow",
            Trigger::Manual => "manual",
        };
        self.compression_hook(
            HookEvent::PreCompress,
            [
                ("trigger", json!(trigger_name)),
                ("message_count", json!(before_len)),
                ("approx_tokens", json!(before_tokens)),
            ],
            events,
        )
        .await;
        let memory_context = self.memory_before_compress(plan.span()).await;
        let by_engine = self
            .compress_by_engine(trigger_name, focus, &memory_context, before_tokens, events)
            .await;
        let mut compressed = match by_engine {
            Some(messages) => messages,
            None => {
                self.built_in_compression(plan, focus, &memory_context, events, cancel)
                    .await?
            }
        };
        self.reinject_tool_state(&mut compressed);
        let after_tokens = approx_tokens(&compressed);
        let effective = self.compressor.record_savings(before_tokens, after_tokens);
        let grew = after_tokens >= before_tokens;
        if grew && !matches!(trigger, Trigger::Manual) {
            // An automatic compression that saves nothing would only cost more
            // on every later call: keep the original.
            let _ = events.send(Event::Status {
                message: format!(
                    "Not compressed: the summary (~{after_tokens} tokens) would not be smaller \
                     than the conversation it replaces (~{before_tokens} tokens); kept it as it is."
                ),
            });
            return Ok(false);
        }
        let after_len = compressed.len();
        self.messages = compressed;
        // The summary absorbed any recovery scaffolding of this turn.
        self.scaffolding.clear();
        announce(
            trigger,
            (before_len, after_len),
            (before_tokens, after_tokens),
            events,
        );
        if !effective && self.compressor.thrashing() {
            let _ = events.send(Event::Status {
                message: "Compression is saving little; automatic compression is paused for this \
                          session. Start a new session, or compress with a focus topic."
                    .to_owned(),
            });
        }
        let old_session = self.options.session_id.clone();
        self.continue_in_child_session(events);
        let new_session = self.options.session_id.clone();
        self.compression_hook(
            HookEvent::PostCompress,
            [
                ("trigger", json!(trigger_name)),
                ("message_count_before", json!(before_len)),
                ("message_count_after", json!(after_len)),
                ("approx_tokens_before", json!(before_tokens)),
                ("approx_tokens_after", json!(after_tokens)),
                ("old_session_id", json!(old_session)),
                ("new_session_id", json!(new_session)),
            ],
            events,
        )
        .await;
        Ok(true)
    }

    /// The built-in compressor's result: the summary of the plan's span
    /// between its head and tail.
    async fn built_in_compression(
        &mut self,
        plan: crate::compress::Plan,
        focus: Option<&str>,
        memory_context: &str,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<Vec<Message>, AgentError> {
        let (prompt, budget) = self
            .compressor
            .summary_request_with(&plan, focus, memory_context);
        let summary = match self.summarize(prompt, budget, events, cancel).await {
            Ok(text) => text,
            Err(LlmError::Cancelled) => return Err(LlmError::Cancelled.into()),
            Err(e) => {
                let _ = events.send(Event::Status {
                    message: format!(
                        "Compression summary failed ({e}); inserted a locally built summary instead."
                    ),
                });
                fallback_summary(plan.span(), Some(&e.to_string()))
            }
        };
        Ok(self.compressor.assemble(plan, &summary))
    }

    /// The configured context engine's replacement, when there is an engine
    /// and its answer keeps the invariants; otherwise `None` (and a status
    /// line saying why the built-in compressor runs instead).
    async fn compress_by_engine(
        &self,
        trigger: &str,
        focus: Option<&str>,
        memory_context: &str,
        current_tokens: usize,
        events: &EventSink,
    ) -> Option<Vec<Message>> {
        let engine = self.context_engine.clone()?;
        let request = crate::compress::engine::EngineRequest {
            messages: &self.messages,
            trigger,
            focus,
            memory_context,
            session_id: &self.options.session_id,
            current_tokens: u64::try_from(current_tokens).unwrap_or(u64::MAX),
            context_length: self.compressor.context_length(),
        };
        let outcome = engine.compress(request).await.and_then(|after| {
            crate::compress::engine::check_replacement(&self.messages, &after).map(|()| after)
        });
        match outcome {
            Ok(after) => Some(after),
            Err(why) => {
                let _ = events.send(Event::Status {
                    message: format!(
                        "Context engine '{}' could not compress ({why}); the built-in compressor did.",
                        engine.name()
                    ),
                });
                None
            }
        }
    }

    /// `pre_compress` / `post_compress` observers.
    async fn compression_hook<const N: usize>(
        &self,
        event: HookEvent,
        fields: [(&str, serde_json::Value); N],
        events: &EventSink,
    ) {
        if !self.hooks.wants(event, None) {
            return;
        }
        self.hooks
            .fire(event, self.hook_site(Some(events)), None, object(fields))
            .await;
    }

    /// Appends what tools want carried across a compaction (the todo list) as a user
    /// turn, merged into a trailing user message so roles keep alternating.
    fn reinject_tool_state(&self, messages: &mut Vec<Message>) {
        let notes: Vec<String> = self
            .tools
            .names()
            .filter_map(|n| self.tools.get(n))
            .filter_map(|t| t.compaction_note())
            .collect();
        if notes.is_empty() {
            return;
        }
        let note = notes.join("\n\n");
        match messages.last_mut() {
            Some(last) if last.role == Role::User => {
                last.content = Some(format!("{}\n\n{note}", last.text()));
            }
            _ => messages.push(Message::user(note)),
        }
    }

    /// Moves the transcript to a child session (the reference's lineage on compression).
    fn continue_in_child_session(&mut self, events: &EventSink) {
        let Some(store) = self.store.as_mut().map(|m| {
            m.get_mut()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        }) else {
            return;
        };
        let message = match store.fork(&self.messages) {
            Ok(Some(id)) => {
                let parent = std::mem::replace(&mut self.options.session_id, id.clone());
                self.memory_session_switched(&id, &parent, false);
                format!("Session continues as {id} (compacted from {parent}).")
            }
            Ok(None) => return,
            Err(e) => format!("Could not start the compacted session in the store: {e}"),
        };
        let _ = events.send(Event::Status { message });
    }

    /// Asks the auxiliary model (then the main model) for the summary text.
    async fn summarize(
        &mut self,
        prompt: String,
        budget: usize,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<String, LlmError> {
        let main = self.routes[self.active].clone();
        let cooling = self
            .auxiliary_failed
            .is_some_and(|t| t.elapsed() < AUXILIARY_COOLDOWN);
        let mut routes: Vec<Route> = Vec::with_capacity(2);
        if let Some(aux) = self.auxiliary.clone().filter(|_| !cooling) {
            routes.push(aux);
        }
        routes.push(main);
        let max_tokens = u32::try_from(budget + budget / 2).unwrap_or(u32::MAX);
        let mut last = LlmError::Decode("no summarizer".into());
        for (i, route) in routes.iter().enumerate() {
            let request = ChatRequest {
                model: route.model.clone(),
                messages: vec![Message::user(prompt.clone())],
                max_tokens: Some(max_tokens),
                ..ChatRequest::default()
            };
            match complete(route.provider.as_ref(), &request, cancel).await {
                Ok(done) if !done.message.text().trim().is_empty() => {
                    return Ok(done.message.text().trim().to_owned());
                }
                Ok(_) => last = LlmError::Decode("the summarizer returned no text".into()),
                Err(LlmError::Cancelled) => return Err(LlmError::Cancelled),
                Err(e) => last = e,
            }
            if i + 1 < routes.len() {
                self.auxiliary_failed = Some(Instant::now());
                let _ = events.send(Event::Status {
                    message: format!(
                        "Compression model {} failed ({last}); summarizing with the main model. \
                         Check auxiliary.compression in config.yaml.",
                        route.model
                    ),
                });
            }
        }
        Err(last)
    }

    /// Applies [`recover`]'s decision for an overflow error; `Err` ends the turn.
    pub(super) async fn recover_overflow(
        &mut self,
        message: &str,
        offer_tools: bool,
        attempts: &mut u32,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<(), AgentError> {
        let tools = if offer_tools {
            self.tools.schemas()
        } else {
            Vec::new()
        };
        let before = self.compressor.context_length();
        let mut window = before;
        let decision = recover(
            message,
            &self.messages,
            &tools,
            OverflowState {
                context_length: &mut window,
                confirmed_limit: &mut self.confirmed_limit,
                attempts,
            },
        );
        if window < before {
            self.compressor.set_context_length(window);
            let _ = events.send(Event::Status {
                message: format!(
                    "Context window reported by the provider: {window} tokens (was {before})."
                ),
            });
        }
        match decision {
            Recovery::ShrinkOutput {
                max_tokens,
                available,
            } => {
                self.output_cap = Some(max_tokens);
                let _ = events.send(Event::Status {
                    message: format!(
                        "Output cap too large for this prompt: retrying with max_tokens={max_tokens} \
                         (the provider has room for {available})."
                    ),
                });
                Ok(())
            }
            Recovery::Compress {
                tail_budget,
                lowered,
            } => {
                let changed = self
                    .compress_with(Trigger::Overflow, None, Some(tail_budget), events, cancel)
                    .await?;
                if !changed && !lowered {
                    return Err(AgentError::ContextExhausted(CANNOT_SHRINK.to_owned()));
                }
                Ok(())
            }
            Recovery::GiveUp(why) => Err(AgentError::ContextExhausted(why)),
        }
    }

    /// Saves a provider-confirmed window once a call with it succeeded.
    pub(super) fn remember_confirmed_limit(&mut self, events: &EventSink) {
        let Some(limit) = self.confirmed_limit.take() else {
            return;
        };
        let model = self.routes[self.active].model.clone();
        if let Some(store) = self.limits.as_mut().map(|m| {
            m.get_mut()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        }) {
            let message = match store.save_context_length(&model, limit) {
                Ok(()) => format!("Remembered the context window of {model}: {limit} tokens."),
                Err(e) => format!("Could not remember the context window of {model}: {e}"),
            };
            let _ = events.send(Event::Status { message });
        }
    }
}

/// Says what a compression did (and, asked for by a person, that the context
/// grew when it did: it is done as asked, as the reference does).
fn announce(
    trigger: Trigger,
    (before_len, after_len): (usize, usize),
    (before_tokens, after_tokens): (usize, usize),
    events: &EventSink,
) {
    let what = match trigger {
        Trigger::Preflight => "Context over the compression threshold",
        Trigger::Overflow => "Context too large for the model",
        Trigger::Manual => "Compression requested",
    };
    let note = if after_tokens >= before_tokens {
        " Note: the context grew — the summary is longer than the short conversation \
         it replaced; compression pays off on long conversations."
    } else {
        ""
    };
    let _ = events.send(Event::Status {
        message: format!(
            "{what}: compressed {before_len} → {after_len} messages (~{before_tokens} → ~{after_tokens} tokens).{note}"
        ),
    });
}
