//! Where a turn meets the external memory provider: recall before the turn
//! rides on the user's message in a `<memory-context>` fence (sent, never
//! stored), the finished exchange is handed over after it, and the whole
//! transcript when the session ends. Provider calls run on the blocking pool
//! with a time limit; one that fails, hangs or panics costs the turn its
//! recall and says so in a status line, nothing more.

use std::sync::Arc;
use std::time::Duration;

use hermes_protocol::{Event, Role, TurnEnd};
use hermes_tools::memory_provider::MemoryProvider;

use super::{Agent, AgentError, TurnResult};
use crate::EventSink;

/// How long recall may hold up a turn.
const PREFETCH_WAIT: Duration = Duration::from_secs(5);
/// How long the end-of-session hand-over may take.
const SESSION_END_WAIT: Duration = Duration::from_secs(10);

impl Agent {
    /// Asks the provider for recall on `input` and puts it, fenced, ahead of
    /// any hook context on this turn's user message.
    pub(super) async fn recall_before_turn(&mut self, input: &str, events: &EventSink) {
        let Some(provider) = self.memory_provider.clone() else {
            return;
        };
        let turn = u32::try_from(
            self.messages
                .iter()
                .filter(|m| m.role == Role::User)
                .count(),
        )
        .unwrap_or(u32::MAX);
        let query = input.to_owned();
        let session = self.options.session_id.clone();
        let name = provider.name().to_owned();
        let call = tokio::task::spawn_blocking(move || {
            provider.on_turn_start(turn, &query);
            provider.prefetch(&query, &session)
        });
        let recall = match tokio::time::timeout(PREFETCH_WAIT, call).await {
            Ok(Ok(Ok(text))) => text,
            Ok(Ok(Err(e))) => return warn(events, &name, &format!("recall failed: {e}")),
            Ok(Err(_)) => return warn(events, &name, "recall failed (the provider crashed)"),
            Err(_) => {
                return warn(
                    events,
                    &name,
                    "recall took too long; this turn goes without it",
                );
            }
        };
        let block = hermes_state::memory::fence::fence_memory_context(&recall);
        if block.is_empty() {
            return;
        }
        let context = match self.turn_context.take() {
            Some((_, hooks)) => format!("{block}\n\n{hooks}"),
            None => block,
        };
        self.turn_context = Some((input.to_owned(), context));
    }

    /// Hands a completed exchange to the provider (in the background; the
    /// session's end waits for it).
    pub(super) fn remember_turn(&mut self, input: &str, outcome: &Result<TurnResult, AgentError>) {
        let Some(provider) = self.memory_provider.clone() else {
            return;
        };
        let Ok(result) = outcome else {
            return;
        };
        if result.reason == TurnEnd::Interrupted {
            return;
        }
        let (user, answer) = (input.to_owned(), result.final_text.clone());
        let session = self.options.session_id.clone();
        let previous = self.memory_sync.take();
        self.memory_sync = Some(tokio::spawn(async move {
            // Exchanges reach the provider in the order they happened.
            if let Some(previous) = previous {
                let _ = previous.await;
            }
            let _ = tokio::task::spawn_blocking(move || {
                let _ = provider.sync_turn(&user, &answer, &session);
                provider.queue_prefetch(&user, &session);
            })
            .await;
        }));
    }

    /// The session is over: the last exchange's hand-over finishes, the
    /// provider gets the transcript, then shuts down.
    pub async fn end_memory(&mut self) {
        let Some(provider) = self.memory_provider.clone() else {
            return;
        };
        if let Some(sync) = self.memory_sync.take() {
            let _ = tokio::time::timeout(SESSION_END_WAIT, sync).await;
        }
        let messages = self.messages.clone();
        let done = tokio::task::spawn_blocking(move || {
            provider.on_session_end(&messages);
            provider.shutdown();
        });
        let _ = tokio::time::timeout(SESSION_END_WAIT, done).await;
    }

    /// What the provider wants the compression summary to keep from `span`
    /// (`on_pre_compress`); empty when it has nothing, fails or is slow.
    pub(super) async fn memory_before_compress(&self, span: &[hermes_protocol::Message]) -> String {
        let Some(provider) = self.memory_provider.clone() else {
            return String::new();
        };
        let span = span.to_vec();
        let call = tokio::task::spawn_blocking(move || provider.on_pre_compress(&span));
        match tokio::time::timeout(PREFETCH_WAIT, call).await {
            Ok(Ok(text)) => text,
            _ => String::new(),
        }
    }

    /// Tells the provider the conversation now runs under `new_session`
    /// (`reset`: a new conversation, not a resumed one), in the background.
    pub fn memory_session_switched(&self, new_session: &str, previous: &str, reset: bool) {
        let Some(provider) = self.memory_provider.clone() else {
            return;
        };
        let (new_session, previous) = (new_session.to_owned(), previous.to_owned());
        tokio::task::spawn_blocking(move || {
            provider.on_session_switch(&new_session, &previous, reset);
        });
    }

    /// The external memory provider, when one is active.
    pub fn memory_provider(&self) -> Option<&Arc<dyn MemoryProvider>> {
        self.memory_provider.as_ref()
    }
}

/// Returns nothing: a status line saying what the provider could not do.
fn warn(events: &EventSink, provider: &str, what: &str) {
    let _ = events.send(Event::Status {
        message: format!("⚠️ Memory provider '{provider}': {what}"),
    });
}
