//! Where a turn meets the lifecycle hooks: session start, context for the
//! user's message, the final answer, the end of the turn, each model call.

use hermes_protocol::{Message, Role, TurnEnd};
use hermes_tools::hooks::{HookEvent, HookSite, object};
use serde_json::{Map, Value, json};

use super::{Agent, AgentError, TurnResult};
use crate::EventSink;

impl Agent {
    /// Where this agent's hooks run; their warnings go to `events`.
    pub(super) fn hook_site<'a>(&'a self, events: Option<&'a EventSink>) -> HookSite<'a> {
        HookSite {
            session_id: &self.options.session_id,
            cwd: &self.options.cwd,
            events,
        }
    }

    fn hook_basics(&self) -> Map<String, Value> {
        object([
            ("model", json!(self.active_route().model)),
            ("platform", json!(self.platform)),
        ])
    }

    /// `on_session_start` (first turn only) and `pre_llm_call`, whose context
    /// rides on this turn's user message.
    pub(super) async fn hooks_before_turn(
        &mut self,
        input: &str,
        first_turn: bool,
        events: &EventSink,
    ) {
        self.turn_context = None;
        if self.hooks.is_empty() {
            return;
        }
        let hooks = self.hooks.clone();
        let site = self.hook_site(Some(events));
        if first_turn {
            hooks
                .fire(HookEvent::OnSessionStart, site, None, self.hook_basics())
                .await;
        }
        if hooks.wants(HookEvent::PreLlmCall, None) {
            let mut extra = self.hook_basics();
            extra.insert("user_message".into(), json!(input));
            extra.insert("conversation_history".into(), history(&self.messages));
            extra.insert("is_first_turn".into(), json!(first_turn));
            let context = hooks.turn_context(site, extra).await;
            self.turn_context = context.map(|c| (input.to_owned(), c));
        }
    }

    /// `transform_llm_output` (may replace the answer shown), `post_llm_call`
    /// and `on_session_end`.
    pub(super) async fn hooks_after_turn(
        &mut self,
        input: &str,
        outcome: Result<TurnResult, AgentError>,
        events: &EventSink,
    ) -> Result<TurnResult, AgentError> {
        self.turn_context = None;
        if self.hooks.is_empty() {
            return outcome;
        }
        let hooks = self.hooks.clone();
        let site = self.hook_site(Some(events));
        let mut outcome = outcome;
        if let Ok(result) = &mut outcome
            && result.reason != TurnEnd::Interrupted
            && !result.final_text.trim().is_empty()
        {
            let mut extra = self.hook_basics();
            extra.insert("response_text".into(), json!(result.final_text));
            if let Some(text) = hooks.transform_answer(site, extra).await {
                result.final_text = text;
            }
            let mut extra = self.hook_basics();
            extra.insert("user_message".into(), json!(input));
            extra.insert("assistant_response".into(), json!(result.final_text));
            extra.insert("conversation_history".into(), history(&self.messages));
            hooks.fire(HookEvent::PostLlmCall, site, None, extra).await;
        }
        let mut extra = self.hook_basics();
        let interrupted = matches!(&outcome, Ok(r) if r.reason == TurnEnd::Interrupted);
        extra.insert("completed".into(), json!(outcome.is_ok() && !interrupted));
        extra.insert("interrupted".into(), json!(interrupted));
        hooks.fire(HookEvent::OnSessionEnd, site, None, extra).await;
        outcome
    }

    /// The request's messages with this turn's hook context on the user's message.
    pub(super) fn with_turn_context(&self, mut messages: Vec<Message>) -> Vec<Message> {
        let Some((input, context)) = &self.turn_context else {
            return messages;
        };
        if let Some(m) = messages
            .iter_mut()
            .rev()
            .find(|m| m.role == Role::User && m.text() == input)
        {
            m.content = Some(format!("{input}\n\n{context}"));
        }
        messages
    }

    /// `pre_api_request` observers.
    pub(super) async fn hooks_before_call(
        &self,
        messages: usize,
        tools: usize,
        events: &EventSink,
    ) {
        if !self.hooks.wants(HookEvent::PreApiRequest, None) {
            return;
        }
        let route = self.active_route();
        let mut extra = self.hook_basics();
        extra.insert("provider".into(), json!(route.provider.name()));
        extra.insert("message_count".into(), json!(messages));
        extra.insert("tool_count".into(), json!(tools));
        self.hooks
            .fire(
                HookEvent::PreApiRequest,
                self.hook_site(Some(events)),
                None,
                extra,
            )
            .await;
    }

    /// `post_api_request` or `api_request_error` observers.
    pub(super) async fn hooks_after_call(
        &self,
        outcome: Result<&hermes_llm::Completion, &hermes_llm::LlmError>,
        events: &EventSink,
    ) {
        let event = match outcome {
            Ok(_) => HookEvent::PostApiRequest,
            Err(_) => HookEvent::ApiRequestError,
        };
        if !self.hooks.wants(event, None) {
            return;
        }
        let mut extra = self.hook_basics();
        extra.insert(
            "provider".into(),
            json!(self.active_route().provider.name()),
        );
        match outcome {
            Ok(done) => {
                extra.insert("usage".into(), json!(done.usage));
                extra.insert(
                    "assistant_tool_call_count".into(),
                    json!(done.message.tool_calls.len()),
                );
                extra.insert(
                    "assistant_content_chars".into(),
                    json!(done.message.text().chars().count()),
                );
            }
            Err(e) => {
                extra.insert(
                    "error".into(),
                    json!({"message": hermes_llm::redact::redact_secrets(&e.to_string())}),
                );
            }
        }
        self.hooks
            .fire(event, self.hook_site(Some(events)), None, extra)
            .await;
    }
}

fn history(messages: &[Message]) -> Value {
    serde_json::to_value(
        messages
            .iter()
            .filter(|m| m.role != Role::System)
            .collect::<Vec<_>>(),
    )
    .unwrap_or(Value::Null)
}

impl Agent {
    /// `pre_verify`: when this turn changed files and the model is about to
    /// finish, a hook may answer `{"action":"continue","message":…}` to keep
    /// it working; the message, if any.
    pub(super) async fn verify_hook(
        &self,
        reply: &Message,
        turn_start: usize,
        attempt: u32,
        events: &EventSink,
    ) -> Option<String> {
        if !self.hooks.wants(HookEvent::PreVerify, None) {
            return None;
        }
        let changed = changed_paths(&self.messages[turn_start.min(self.messages.len())..]);
        if changed.is_empty() {
            return None;
        }
        let mut extra = self.hook_basics();
        extra.insert("coding".into(), json!(true));
        extra.insert("attempt".into(), json!(attempt));
        extra.insert("final_response".into(), json!(reply.text()));
        extra.insert("changed_paths".into(), json!(changed));
        let answers = self
            .hooks
            .fire(
                HookEvent::PreVerify,
                self.hook_site(Some(events)),
                None,
                extra,
            )
            .await;
        answers.iter().find_map(|a| {
            let action = a.get("action").or_else(|| a.get("decision"))?.as_str()?;
            let message = a
                .get("message")
                .or_else(|| a.get("reason"))?
                .as_str()?
                .trim();
            (matches!(action, "continue" | "block") && !message.is_empty())
                .then(|| message.to_owned())
        })
    }
}

/// Files that `write_file` and `patch` calls among `messages` changed (calls
/// whose result is not an error), in order, without repeats.
fn changed_paths(messages: &[Message]) -> Vec<String> {
    let failed: std::collections::HashSet<&str> = messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .filter(|m| {
            serde_json::from_str::<Value>(m.text())
                .ok()
                .and_then(|v| v.get("error").cloned())
                .is_some_and(|e| !e.is_null())
        })
        .filter_map(|m| m.tool_call_id.as_deref())
        .collect();
    let mut paths = Vec::new();
    for call in messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .flat_map(|m| &m.tool_calls)
        .filter(|c| matches!(c.function.name.as_str(), "write_file" | "patch"))
        .filter(|c| !failed.contains(c.id.as_str()))
    {
        let path = serde_json::from_str::<Value>(&call.function.arguments)
            .ok()
            .and_then(|a| a.get("path").and_then(Value::as_str).map(str::to_owned));
        if let Some(path) = path
            && !paths.contains(&path)
        {
            paths.push(path);
        }
    }
    paths
}

impl Agent {
    /// `on_session_finalize` (the session ends: shutdown, `/new`) or
    /// `on_session_reset` (a fresh one began), with `reason`.
    pub async fn session_boundary_hooks(&self, event: HookEvent, reason: &str) {
        if self.hooks.is_empty() {
            return;
        }
        let mut extra = self.hook_basics();
        extra.insert("reason".into(), json!(reason));
        self.hooks
            .fire(event, self.hook_site(None), None, extra)
            .await;
    }
}
