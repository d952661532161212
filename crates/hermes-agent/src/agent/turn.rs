//! The driver of one turn: it performs what [`TurnMachine`] decides (call the
//! model, run tools, finish) and reports back what came of it.

use std::sync::Arc;

use hermes_llm::{Completion, LlmError};
use hermes_protocol::{Event, Message, Role, ToolCall, TurnEnd, Usage};
use hermes_tools::ToolContext;
use tokio_util::sync::CancellationToken;

use super::{Agent, AgentError, SUMMARY_REQUEST, TurnResult};
use crate::EventSink;
use crate::budget::CallKind;
use crate::dispatch::run_batch;
use crate::plan::PreparedCall;
use crate::repair::repair_arguments;
use crate::steer::steer_marker;
use crate::step::{Before, EMPTY_RETRIES, PREFILL_CONTINUATIONS, ReplyShape, Step, TurnMachine};

/// Most times `pre_verify` hooks may send a finished answer back for more work
/// in one turn (the reference's `agent.max_verify_nudges` default).
const MAX_VERIFY_NUDGES: u32 = 3;

/// Stands in for an empty reply in the scaffolding, as the reference writes it.
const EMPTY_PLACEHOLDER: &str = "(empty)";

/// The user-side nudge after the model went silent following tool results.
const NUDGE: &str = "You just executed tool calls but returned an empty response. \
                     Please process the tool results above and continue with the task.";

/// Counters of a turn in progress.
#[derive(Debug, Default)]
struct Tally {
    usage: Usage,
    api_calls: u32,
    empty_replies: u32,
}

impl Tally {
    fn result(&self, final_text: String, reason: TurnEnd) -> TurnResult {
        TurnResult {
            final_text,
            reason,
            usage: self.usage,
            api_calls: self.api_calls,
        }
    }
}

impl Agent {
    /// Runs one turn: the user's message, model calls and tool rounds until the
    /// model answers, the budget forces a summary, or `cancel` fires.
    pub async fn run_turn(
        &mut self,
        input: &str,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<TurnResult, AgentError> {
        self.run_turn_with_images(input, Vec::new(), events, cancel)
            .await
    }

    /// [`Agent::run_turn`] with images sent along with the message.
    pub async fn run_turn_with_images(
        &mut self,
        input: &str,
        images: Vec<String>,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<TurnResult, AgentError> {
        let first_turn = !self.messages.iter().any(|m| m.role == Role::User);
        self.push(Message::user_with_images(input, images), events);
        self.guardrails.reset();
        self.hooks_before_turn(input, first_turn, events).await;
        self.recall_before_turn(input, events).await;
        let outcome = self.drive(None, events, cancel).await;
        self.remember_turn(input, &outcome);
        let outcome = self.hooks_after_turn(input, outcome, events).await;
        self.finish_turn(outcome, events)
    }

    /// Tool calls of the last reply that never ran: a turn cut short after the
    /// model asked for tools (a crash while an approval was pending) and resumed.
    pub fn pending_tool_calls(&self) -> usize {
        self.messages
            .last()
            .filter(|m| m.role == Role::Assistant)
            .map_or(0, |m| m.tool_calls.len())
    }

    /// Finishes a turn that was cut short after the model asked for tools: runs
    /// those calls (through the approval gate again) and carries on as the turn
    /// would have. The reply is already stored, so it is not written again.
    pub async fn continue_turn(
        &mut self,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<TurnResult, AgentError> {
        if self.pending_tool_calls() == 0 {
            return Err(AgentError::NothingToContinue);
        }
        let reply = self.messages.pop();
        self.guardrails.reset();
        let outcome = self.drive(reply, events, cancel).await;
        self.finish_turn(outcome, events)
    }

    fn finish_turn(
        &mut self,
        outcome: Result<TurnResult, AgentError>,
        events: &EventSink,
    ) -> Result<TurnResult, AgentError> {
        self.drop_scaffolding();
        let store_failure = self.store_failure.take();
        let result = outcome?;
        if let Some(e) = store_failure {
            return Err(AgentError::Store(e));
        }
        let _ = events.send(Event::TurnComplete {
            final_text: result.final_text.clone(),
            reason: result.reason,
            usage: result.usage,
            api_calls: result.api_calls,
        });
        Ok(result)
    }

    /// Drives the turn from a fresh model call, or from `resumed` (a stored
    /// reply whose tool calls never ran).
    async fn drive(
        &mut self,
        resumed: Option<Message>,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<TurnResult, AgentError> {
        let turn_start = self.messages.len();
        let mut machine = TurnMachine::new(self.options.max_turns);
        let mut tally = Tally::default();
        let mut reply_stored = resumed.is_some();
        let (mut step, mut reply) = match resumed {
            Some(reply) => (machine.resume(), reply),
            None => (machine.start(), Message::assistant(String::new())),
        };
        let mut halt = None;
        let mut verify_nudges = 0u32;
        loop {
            match step {
                Step::CallModel { kind, before } => {
                    if cancel.is_cancelled() {
                        return Ok(tally.result(String::new(), TurnEnd::Interrupted));
                    }
                    self.sync_dynamic_tools().await;
                    self.prepare_call(kind, before, &reply, machine.calls_used(), events);
                    let completion = match self.sample(kind, turn_start, events, cancel).await {
                        Ok(c) => c,
                        Err(AgentError::Llm(LlmError::Cancelled)) => {
                            return Ok(tally.result(String::new(), TurnEnd::Interrupted));
                        }
                        Err(e) => return Err(e),
                    };
                    reply = self.account(completion, &mut tally, events);
                    let shape = shape_of(&reply);
                    if !(shape.text || shape.tool_calls && kind != CallKind::Summary) {
                        tally.empty_replies += 1;
                    }
                    let can_fall_back = self.active + 1 < self.routes.len();
                    step = machine.after_reply(shape, can_fall_back);
                }
                Step::RunTools => {
                    self.sync_dynamic_tools().await;
                    halt = self
                        .run_tools(&mut reply, reply_stored, &mut machine, events, cancel)
                        .await?;
                    reply_stored = false;
                    step = machine.after_tools(halt.is_some());
                }
                Step::Finish(reason) => {
                    if reason == TurnEnd::Completed
                        && verify_nudges < MAX_VERIFY_NUDGES
                        && let Some(follow_up) = self
                            .verify_hook(&reply, turn_start, verify_nudges, events)
                            .await
                    {
                        // The answer stands in the transcript; the hook's
                        // follow-up comes as the user's next word.
                        verify_nudges += 1;
                        reply.tool_calls.clear();
                        let answer =
                            std::mem::replace(&mut reply, Message::assistant(String::new()));
                        self.push(answer, events);
                        self.push(Message::user(follow_up), events);
                        step = machine.keep_going();
                        continue;
                    }
                    reply.tool_calls.clear();
                    let text = reply.content.clone().unwrap_or_default();
                    reply.content = Some(text.clone());
                    self.push(reply, events);
                    return Ok(tally.result(text, reason));
                }
                Step::Halt => {
                    let text = halt
                        .take()
                        .map(|h| self.halt_turn(&h, events))
                        .unwrap_or_default();
                    return Ok(tally.result(text, TurnEnd::Completed));
                }
                Step::GiveUp => {
                    let _ = events.send(Event::Status {
                        message: format!(
                            "❌ The model returned no content after {} attempts{}.",
                            tally.empty_replies,
                            if self.routes.len() > 1 {
                                " and the fallback providers"
                            } else {
                                "; no fallback providers are configured"
                            }
                        ),
                    });
                    return Err(AgentError::EmptyReply {
                        attempts: tally.empty_replies,
                        model: self.active_route().model.clone(),
                    });
                }
            }
        }
    }

    /// What happens before a call: the summary request, the empty-reply
    /// recovery the machine chose, a fallback switch.
    fn prepare_call(
        &mut self,
        kind: CallKind,
        before: Before,
        last: &Message,
        calls_used: u32,
        events: &EventSink,
    ) {
        let status = |message: String| {
            let _ = events.send(Event::Status { message });
        };
        match before {
            Before::Nothing => {}
            Before::RetryEmpty(n) => status(format!(
                "⚠️ Empty response from model — retrying ({n}/{EMPTY_RETRIES})"
            )),
            Before::Nudge => {
                status("⚠️ Model returned empty after tool calls — nudging to continue".into());
                let mut empty = last.clone();
                empty.tool_calls.clear();
                empty.content = Some(EMPTY_PLACEHOLDER.into());
                self.push_scaffolding(empty);
                self.push_scaffolding(Message::user(NUDGE));
            }
            Before::Prefill(n) => {
                status(format!(
                    "↻ Thinking-only response — prefilling to continue ({n}/{PREFILL_CONTINUATIONS})"
                ));
                let mut thinking = last.clone();
                thinking.tool_calls.clear();
                self.push_scaffolding(thinking);
            }
            Before::FallBack => {
                if self.active + 1 < self.routes.len() {
                    self.active += 1;
                    let next = &self.routes[self.active];
                    status(format!(
                        "⚠️ Model returning empty responses — switched to fallback {} ({})",
                        next.model,
                        next.provider.name()
                    ));
                }
            }
        }
        if kind == CallKind::Summary && !self.summary_requested() {
            status(format!(
                "Iteration budget of {calls_used} calls spent; asking for a summary."
            ));
            self.push(Message::user(SUMMARY_REQUEST), events);
        }
    }

    /// Whether the summary request is already the last user message.
    fn summary_requested(&self) -> bool {
        self.messages
            .iter()
            .rev()
            .find(|m| m.role == Role::User)
            .is_some_and(|m| m.text() == SUMMARY_REQUEST)
    }

    /// Counts the call and its usage; returns the reply.
    fn account(
        &mut self,
        completion: Completion,
        tally: &mut Tally,
        events: &EventSink,
    ) -> Message {
        tally.api_calls += 1;
        // Every call is recorded, even when the provider reports no usage, so
        // api_call_count stays right.
        let usage = completion.usage.unwrap_or_default();
        tally.usage.add(&usage);
        self.record_usage(&usage, events);
        let mut message = completion.message;
        // A key the model repeats must not reach state.db or the next request.
        if let Some(text) = message.content.as_mut() {
            *text = crate::redaction::assistant_text(text);
        }
        // Signed thinking must go back byte for byte, or the provider rejects it.
        if message.reasoning_signature.is_none()
            && let Some(text) = message.reasoning.as_mut()
        {
            *text = crate::redaction::assistant_text(text);
        }
        message
    }

    /// Runs the reply's tool calls and appends their results; the guardrail's
    /// decision when it halted the turn.
    async fn run_tools(
        &mut self,
        reply: &mut Message,
        reply_stored: bool,
        machine: &mut TurnMachine,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<Option<crate::guardrails::Decision>, AgentError> {
        {
            let prepared = self.prepare_calls(reply, events);
            let reply = std::mem::replace(reply, Message::assistant(String::new()));
            if reply_stored {
                self.messages.push(reply);
            } else {
                self.push(reply, events);
            }
            let ctx = ToolContext {
                cwd: self.options.cwd.clone(),
                cancel: cancel.child_token(),
                session_id: self.options.session_id.clone(),
                homes: self.options.homes.clone(),
                approvals: self.approvals.clone(),
                events: Some(events.clone()),
                clarifier: self.clarifier.clone(),
                registry: Some(self.tools.clone()),
                hidden_env: self.hidden_env.clone(),
                processes: self.processes.clone(),
                hooks: self.hooks.clone(),
                client_files: self.client_files.clone(),
                memory: self
                    .memory_provider
                    .clone()
                    .map(hermes_tools::memory_provider::ProviderHandle),
                env: self.environment.clone(),
            };
            // A round that only ran scripts does not count against the budget:
            // execute_code exists to do many steps in one call.
            if prepared.iter().all(|c| c.name == "execute_code") {
                machine.refund();
            }
            let (runnable, blocked) = self.guardrails.screen(&prepared);
            if let Some(checkpoints) = &self.checkpoints {
                checkpoint_before(checkpoints, &runnable, &ctx).await;
            }
            let ran = run_batch(&runnable, &self.tools, &ctx, events).await;
            let (mut results, halt) = self.guardrails.review(&prepared, ran, blocked, events);
            if let Some(last) = results.last_mut()
                && let Some(text) = self.steer.take()
            {
                last.content.push_str(&steer_marker(&text));
                let _ = events.send(Event::Status {
                    message: "Steer delivered with the latest tool result.".into(),
                });
            }
            let mut fatal = None;
            for r in results {
                if let (None, Some(msg)) = (&fatal, r.fatal.clone()) {
                    fatal = Some((r.name.clone(), msg));
                }
                self.push(Message::tool_result(r.id, r.name, r.content), events);
            }
            if let Some((tool, message)) = fatal {
                return Err(AgentError::Tool { tool, message });
            }
            Ok(halt)
        }
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

    /// Before a model call: pending steer text goes onto the last tool message
    /// of this turn, if there is one and it is the newest message (so the
    /// stored copy can be replaced); otherwise it stays pending for the next
    /// tool batch rather than becoming a user message mid-turn.
    pub(super) fn drain_steer_before_call(&mut self, turn_start: usize, events: &EventSink) {
        let Some(text) = self.steer.take() else {
            return;
        };
        let start = turn_start.min(self.messages.len());
        let last_is_tool = self.messages.len() > start
            && self.messages.last().is_some_and(|m| m.role == Role::Tool);
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
    fn halt_turn(&mut self, halt: &crate::guardrails::Decision, events: &EventSink) -> String {
        let _ = events.send(Event::Status {
            message: format!("Tool guardrail halted {}: {}", halt.tool, halt.code),
        });
        let text = halt.halt_text();
        self.push(Message::assistant(text.clone()), events);
        text
    }
}

/// What a reply holds, for the turn's decisions.
fn shape_of(reply: &Message) -> ReplyShape {
    ReplyShape {
        tool_calls: !reply.tool_calls.is_empty(),
        text: !reply.text().trim().is_empty(),
        reasoning: reply
            .reasoning
            .as_deref()
            .is_some_and(|r| !r.trim().is_empty())
            || !reply.codex_reasoning_items.is_empty(),
    }
}

/// Saves the project trees the calls are about to change (once per
/// directory per model iteration): the file's project for `write_file` and
/// `patch`, the working directory for a destructive `terminal` command.
/// `git` runs on a blocking thread (a first snapshot of a large tree takes
/// seconds), and is awaited: the snapshot is complete before a tool changes
/// a file.
async fn checkpoint_before(
    checkpoints: &Arc<hermes_tools::checkpoints::Checkpoints>,
    calls: &[crate::plan::PreparedCall],
    ctx: &ToolContext,
) {
    use hermes_tools::checkpoints::is_destructive;
    if !checkpoints.enabled() {
        return;
    }
    checkpoints.new_turn();
    let mut saves = Vec::new();
    for call in calls {
        let arg = |key: &str| call.args.get(key).and_then(serde_json::Value::as_str);
        match call.name.as_str() {
            "write_file" | "patch" => {
                if let Some(path) = arg("path").filter(|p| !p.trim().is_empty()) {
                    saves.push((ctx.resolve(path), format!("before {}", call.name), true));
                }
            }
            "terminal" => {
                let Some(command) = arg("command").filter(|c| is_destructive(c)) else {
                    continue;
                };
                let dir = arg("workdir")
                    .filter(|w| !w.trim().is_empty())
                    .map_or_else(|| ctx.cwd.clone(), |w| ctx.resolve(w));
                let short: String = command.chars().take(60).collect();
                saves.push((dir, format!("before terminal: {short}"), false));
            }
            _ => {}
        }
    }
    if saves.is_empty() {
        return;
    }
    let checkpoints = Arc::clone(checkpoints);
    let home = ctx.homes.home.clone();
    // A panic in the snapshot costs only the checkpoint, as a git failure does.
    let _ = tokio::task::spawn_blocking(move || {
        for (path, reason, of_file) in saves {
            // Finding a file's project root looks where the files are.
            let dir = if of_file {
                checkpoints.project_of(&path)
            } else {
                path
            };
            checkpoints.ensure(&dir, &reason, home.as_deref());
        }
    })
    .await;
}
