//! The memory provider interface (the reference's `MemoryProvider`): a
//! store of recall beside the built-in MEMORY.md/USER.md, at most one per
//! session (`memory.provider`). The agent asks it for recall before each
//! turn (the `<memory-context>` block on the user's message), tells it each
//! finished turn, offers its tools, and calls its hooks; every method has a
//! do-nothing default, so a provider implements what it uses.
//!
//! Calls may block (a local database, an HTTP service): the agent runs them
//! off its task, with a time limit, and a provider that fails or panics costs
//! the turn its recall, never the turn.

use std::sync::Arc;

use hermes_protocol::Message;

use crate::Tool;

/// Where the session runs, as a provider is told at start.
#[derive(Debug, Clone, Default)]
pub struct ProviderContext {
    /// The session id.
    pub session_id: String,
    /// `cli`, `telegram`, `api_server`, `cron` ….
    pub platform: String,
    /// `primary`, `subagent` or `cron`: providers write only for `primary`.
    pub agent_context: String,
}

/// A memory provider.
pub trait MemoryProvider: Send + Sync {
    /// Short id (`holographic`, `honcho`).
    fn name(&self) -> &str;

    /// Static text for the system prompt (instructions, status); empty for none.
    fn system_prompt_block(&self) -> String {
        String::new()
    }

    /// Recall for the turn about to run on `query` (the user's message);
    /// empty when nothing is relevant.
    fn prefetch(&self, _query: &str, _session_id: &str) -> Result<String, String> {
        Ok(String::new())
    }

    /// Starts recall for the next turn in the background (after a turn ends).
    fn queue_prefetch(&self, _query: &str, _session_id: &str) {}

    /// Keeps one finished exchange.
    fn sync_turn(&self, _user: &str, _assistant: &str, _session_id: &str) -> Result<(), String> {
        Ok(())
    }

    /// Tools the model gets while this provider is active.
    fn tools(self: Arc<Self>) -> Vec<Arc<dyn Tool>> {
        Vec::new()
    }

    /// A turn starts (`turn` counts from 1).
    fn on_turn_start(&self, _turn: u32, _message: &str) {}

    /// The session ends: its whole transcript.
    fn on_session_end(&self, _messages: &[Message]) {}

    /// The session id changed mid-process (compression, `/new`, `/resume`).
    fn on_session_switch(&self, _new_session_id: &str, _parent_session_id: &str, _reset: bool) {}

    /// Messages about to be compressed away; text for the summary to keep.
    fn on_pre_compress(&self, _messages: &[Message]) -> String {
        String::new()
    }

    /// The built-in memory tool wrote an entry (`add`, `replace`, `remove`;
    /// target `memory` or `user`).
    fn on_memory_write(&self, _action: &str, _target: &str, _content: &str) {}

    /// A subagent finished a delegated task.
    fn on_delegation(&self, _task: &str, _result: &str, _child_session_id: &str) {}

    /// The process is done with the provider: flush and close.
    fn shutdown(&self) {}
}

/// A provider as tool calls carry it (printable, cheap to clone).
#[derive(Clone)]
pub struct ProviderHandle(pub Arc<dyn MemoryProvider>);

impl std::fmt::Debug for ProviderHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MemoryProvider({})", self.0.name())
    }
}
