//! Where the agent writes its transcript as it goes.

use hermes_protocol::{Message, Usage};

/// Receives each message the moment it joins the conversation, and each call's
/// usage, so a crash mid-turn leaves everything up to the last completed
/// message on disk. Errors are reported as status events; the turn goes on.
pub trait MessageStore: Send {
    /// Persists one appended message.
    fn append(&mut self, message: &Message) -> Result<(), String>;
    /// Records the usage of one model call.
    fn record_usage(&mut self, usage: &Usage) -> Result<(), String>;
    /// Hides the last `count` persisted messages of the session (`/undo`): they
    /// stay on disk but no longer load on resume. Stores without rows do nothing.
    fn rewind(&mut self, count: usize) -> Result<(), String> {
        let _ = count;
        Ok(())
    }
    /// Continues the transcript in a new session after compression: ends the current
    /// one (reason `compression`), opens a child whose `parent_session_id` points at it,
    /// writes `messages` (the compressed conversation, system prompt first) there and
    /// returns the new id. Stores without sessions keep going as they are (`Ok(None)`).
    fn fork(&mut self, messages: &[Message]) -> Result<Option<String>, String> {
        let _ = messages;
        Ok(None)
    }
    /// Marks the session ended with `reason` (a finished subagent: `agent_close`).
    /// The first reason wins; stores without sessions do nothing.
    fn end(&mut self, reason: &str) -> Result<(), String> {
        let _ = reason;
        Ok(())
    }
}

/// Remembers context windows that providers confirmed (the reference's
/// `context_length_cache.yaml`), so later sessions start with the right limit.
pub trait LimitStore: Send {
    /// Records that `model` on this agent's endpoint accepts `tokens` of context.
    fn save_context_length(&mut self, model: &str, tokens: u64) -> Result<(), String>;
}
