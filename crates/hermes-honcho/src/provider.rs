//! The `honcho` memory provider: recall before each turn (the session
//! summary, what Honcho holds about the user and the assistant, and a
//! dialectic answer), each exchange kept as Honcho messages, built-in
//! `memory` adds about the user mirrored as conclusions, and the tools.

use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use hermes_protocol::Message;
use hermes_tools::Tool;
use hermes_tools::memory_provider::MemoryProvider;
use serde_json::Value;

use crate::api::card_lines;
use crate::core::{Core, Scope, cut_at_word};
use crate::settings::RecallMode;

/// The longest the first turn waits for its dialectic answer; a later one
/// reaches the next turn.
const FIRST_DIALECTIC_WAIT: Duration = Duration::from_secs(2);
/// The longest the session's end waits for mirrored writes.
const WRITES_WAIT: Duration = Duration::from_secs(10);
/// What the first turn asks the dialectic agent when the message is short.
const WARM_QUESTION: &str = "Summarize what you know about this user. Focus on preferences, current projects, and working style.";

/// Replies that carry nothing to recall for.
const TRIVIAL: [&str; 26] = [
    "yes",
    "no",
    "ok",
    "okay",
    "sure",
    "thanks",
    "thank you",
    "y",
    "n",
    "yep",
    "nope",
    "yeah",
    "nah",
    "continue",
    "go ahead",
    "do it",
    "proceed",
    "got it",
    "cool",
    "nice",
    "great",
    "done",
    "next",
    "lgtm",
    "k",
    "",
];

/// Whether a message is too slight to recall for (an acknowledgement, a
/// slash command).
fn trivial(message: &str) -> bool {
    let m = message.trim();
    m.starts_with('/') || TRIVIAL.iter().any(|t| m.eq_ignore_ascii_case(t))
}

/// The Honcho provider.
pub struct Honcho {
    pub(crate) core: Arc<Core>,
}

impl Honcho {
    /// The base layer: session summary, the user's representation and card
    /// (focused on `query`), the assistant's own.
    async fn base_context(&self, scope: &Scope, query: &str) -> Result<String, String> {
        let core = &self.core;
        let mut parts = Vec::new();
        let mut first_error = None;
        let mut note = |e: String| {
            first_error.get_or_insert(e);
        };
        match core.api.session_context(&scope.session, None).await {
            Ok(ctx) => {
                if let Some(summary) = ctx.pointer("/summary/content").and_then(Value::as_str)
                    && !summary.trim().is_empty()
                {
                    parts.push(format!("## Session Summary\n{summary}"));
                }
            }
            Err(e) => note(e),
        }
        let sides = [
            (
                scope.user.as_str(),
                Some(query),
                "User Representation",
                "User Peer Card",
            ),
            (
                scope.ai.as_str(),
                None,
                "AI Self-Representation",
                "AI Identity Card",
            ),
        ];
        for (peer, search, rep_title, card_title) in sides {
            let view = core.view(scope, peer);
            match core.api.peer_context(&view, search).await {
                Ok(ctx) => {
                    let rep = ctx["representation"].as_str().unwrap_or_default();
                    if !rep.trim().is_empty() {
                        parts.push(format!("## {rep_title}\n{rep}"));
                    }
                    let mut card = card_lines(&ctx["peer_card"]);
                    if card.is_empty() {
                        card = core.api.card(&view).await.unwrap_or_default();
                    }
                    if !card.is_empty() {
                        parts.push(format!("## {card_title}\n{}", card.join("\n")));
                    }
                }
                Err(e) => note(e),
            }
        }
        match (parts.is_empty(), first_error) {
            (true, Some(e)) => Err(e),
            _ => Ok(parts.join("\n\n")),
        }
    }

    /// Starts a dialectic question about the user on the runtime (where an
    /// exit simply drops it); the answer waits in the state for the next
    /// recall, and the receiver hears when it is there.
    fn start_dialectic(&self, scope: Scope, question: String) -> mpsc::Receiver<()> {
        let (done, finished) = mpsc::channel();
        let core = self.core.clone();
        drop(self.core.spawn(async move {
            let answer = core
                .dialectic(&scope, &scope.user, &question, None, true)
                .await;
            if let Ok(answer) = answer
                && !answer.trim().is_empty()
            {
                core.state().pending = Some(answer);
            }
            let _ = done.send(());
        }));
        finished
    }

    /// Cuts recall to `contextTokens` (about four characters a token).
    fn within_budget(&self, text: String) -> String {
        match self.core.settings.context_tokens {
            Some(tokens) => cut_at_word(&text, tokens * 4, " …"),
            None => text,
        }
    }
}

impl MemoryProvider for Honcho {
    fn name(&self) -> &str {
        "honcho"
    }

    fn system_prompt_block(&self) -> String {
        let tools = "honcho_profile gives the short card of standing facts about a peer, \
            honcho_search finds what was actually said in past sessions, honcho_context \
            shows the session's summary and recent messages, honcho_reasoning asks Honcho \
            for a synthesized answer (reasoning_level minimal, low, medium, high or max), \
            and honcho_conclude records a durable fact about the user.";
        match self.core.settings.recall_mode {
            RecallMode::Context => "# Honcho Memory\nActive, context mode: what Honcho knows \
                about the user arrives with each message; there are no memory tools."
                .to_owned(),
            RecallMode::Tools => format!(
                "# Honcho Memory\nActive, tools mode: nothing is recalled automatically; \
                 use the tools. {tools}"
            ),
            RecallMode::Hybrid => format!(
                "# Honcho Memory\nActive, hybrid mode: relevant context arrives with each \
                 message, and the tools reach further. {tools}"
            ),
        }
    }

    fn prefetch(&self, query: &str, session_id: &str) -> Result<String, String> {
        let settings = &self.core.settings;
        if !session_id.is_empty() {
            // Hooks without a session id (mirrored memory writes) use this one.
            self.core.state().last_session = Some(session_id.to_owned());
        }
        if settings.recall_mode == RecallMode::Tools {
            return Ok(String::new());
        }
        if trivial(query) {
            let pending = self.core.state().pending.take().unwrap_or_default();
            return Ok(self.within_budget(pending));
        }
        let scope = self.core.block(self.core.scope(session_id))?;
        let (turn, first_dialectic) = {
            let mut state = self.core.state();
            let first = !state.dialectic_started;
            state.dialectic_started = true;
            (state.turn, first)
        };
        // The first turn's dialectic runs beside the base layer, waited for briefly.
        let dialectic = first_dialectic.then(|| {
            let question = if query.split_whitespace().count() < 3 {
                WARM_QUESTION
            } else {
                query
            };
            self.start_dialectic(scope.clone(), question.to_owned())
        });
        let mut parts = Vec::new();
        if !(settings.first_turn_only && turn > 1) {
            let base = self.core.block(self.base_context(&scope, query))?;
            if !base.is_empty() {
                parts.push(base);
            }
        }
        if let Some(finished) = dialectic {
            let _ = finished.recv_timeout(FIRST_DIALECTIC_WAIT.min(settings.timeout));
        }
        if let Some(answer) = self.core.state().pending.take() {
            parts.push(answer);
        }
        Ok(self.within_budget(parts.join("\n\n")))
    }

    fn queue_prefetch(&self, query: &str, session_id: &str) {
        if self.core.settings.recall_mode == RecallMode::Tools || trivial(query) {
            return;
        }
        let Ok(scope) = self.core.block(self.core.scope(session_id)) else {
            return;
        };
        drop(self.start_dialectic(scope, query.to_owned()));
    }

    fn sync_turn(&self, user: &str, assistant: &str, session_id: &str) -> Result<(), String> {
        if !self.core.settings.save_messages {
            return Ok(());
        }
        let scope = self.core.block(self.core.scope(session_id))?;
        let limit = self.core.settings.message_max_chars;
        let mut messages = Vec::new();
        for (peer, text) in [(&scope.user, user), (&scope.ai, assistant)] {
            for piece in chunk(text.trim(), limit) {
                messages.push((peer.as_str(), piece));
            }
        }
        if messages.is_empty() {
            return Ok(());
        }
        self.core
            .block(self.core.api.add_messages(&scope.session, &messages))
    }

    fn tools(self: Arc<Self>) -> Vec<Arc<dyn Tool>> {
        if self.core.settings.recall_mode == RecallMode::Context {
            return Vec::new();
        }
        crate::tools::all(&self.core)
    }

    fn on_turn_start(&self, turn: u32, _message: &str) {
        self.core.state().turn = turn;
    }

    fn on_session_switch(&self, new_session_id: &str, _parent: &str, _reset: bool) {
        let mut state = self.core.state();
        state.last_session = Some(new_session_id.to_owned());
        state.pending = None;
    }

    fn on_memory_write(&self, action: &str, target: &str, content: &str) {
        if action != "add" || target != "user" || content.trim().is_empty() {
            return;
        }
        let core = self.core.clone();
        let content = content.trim().to_owned();
        let write = self.core.spawn(async move {
            if let Some(scope) = core.last_scope().await {
                let (observer, observed) = core.conclusion_pair(&scope, &scope.user);
                let _ = core
                    .api
                    .create_conclusion(&observer, &observed, &content, &scope.session)
                    .await;
            }
        });
        let mut state = self.core.state();
        state.writes.retain(|w| !w.is_finished());
        state.writes.push(write);
    }

    fn on_session_end(&self, _messages: &[Message]) {
        self.shutdown();
    }

    fn shutdown(&self) {
        let writes = std::mem::take(&mut self.core.state().writes);
        if writes.is_empty() {
            return;
        }
        let _ = self
            .core
            .block(tokio::time::timeout(WRITES_WAIT, futures_join(writes)));
    }
}

/// Waits for every handle.
async fn futures_join(handles: Vec<tokio::task::JoinHandle<()>>) {
    for handle in handles {
        let _ = handle.await;
    }
}

/// A message in pieces of at most `limit` characters, cut at a paragraph,
/// sentence or word where one falls late enough; pieces after the first
/// start `[continued] `.
pub(crate) fn chunk(text: &str, limit: usize) -> Vec<String> {
    const PREFIX: &str = "[continued] ";
    if text.is_empty() {
        return Vec::new();
    }
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= limit {
        return vec![text.to_owned()];
    }
    let mut pieces = Vec::new();
    let mut rest: &[char] = &chars;
    while !rest.is_empty() {
        let room = if pieces.is_empty() {
            limit
        } else {
            limit - PREFIX.len()
        };
        let prefix = if pieces.is_empty() { "" } else { PREFIX };
        if rest.len() <= room {
            pieces.push(format!("{prefix}{}", rest.iter().collect::<String>()));
            break;
        }
        let window: String = rest[..room].iter().collect();
        let floor = room * 3 / 10;
        let at_char = |byte: usize| window[..byte].chars().count();
        let cut = [
            window.rfind("\n\n").map(at_char),
            window.rfind(". ").map(|b| at_char(b) + 2),
            window.rfind(' ').map(at_char),
        ]
        .into_iter()
        .flatten()
        .find(|c| *c >= floor && *c > 0)
        .unwrap_or(room);
        let piece: String = rest[..cut].iter().collect();
        pieces.push(format!("{prefix}{}", piece.trim_end()));
        rest = &rest[cut..];
        while rest.first().is_some_and(|c| c.is_whitespace()) {
            rest = &rest[1..];
        }
    }
    pieces
}
