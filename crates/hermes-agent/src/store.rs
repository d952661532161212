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
}

/// Remembers context windows that providers confirmed (the reference's
/// `context_length_cache.yaml`), so later sessions start with the right limit.
pub trait LimitStore: Send {
    /// Records that `model` on this agent's endpoint accepts `tokens` of context.
    fn save_context_length(&mut self, model: &str, tokens: u64) -> Result<(), String>;
}
