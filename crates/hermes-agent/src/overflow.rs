//! Recovering from a request that does not fit the model's window, as the reference
//! does: an error about the *output* cap shrinks `max_tokens` for the retry; an error
//! about the *input* lowers the context length when (and only when) the provider
//! states the real limit, then compacts the conversation and retries; after
//! [`MAX_COMPACTIONS`] tries, or when nothing is left to remove, the turn fails with
//! advice.

use hermes_llm::context_limits::{
    is_output_cap_error, lower_limit_from_error, parse_available_output_tokens,
};
use hermes_protocol::{Message, ToolSchema};

use crate::resilience::approx_tokens;

/// Compaction rounds allowed for one model call.
pub const MAX_COMPACTIONS: u32 = 3;

/// Share of the context window the protected tail may use.
const TAIL_SHARE: f64 = 0.2;

/// What to do about an overflow error.
#[derive(Debug, Clone, PartialEq)]
pub enum Recovery {
    /// Retry the call with this output cap.
    ShrinkOutput {
        /// The new `max_tokens`.
        max_tokens: u32,
        /// What the provider said would fit.
        available: u64,
    },
    /// Compress with this tail budget, then retry; `lowered` when the window was
    /// stepped down (a retry is worth it even if nothing could be compressed).
    Compress {
        /// Tokens the protected tail may keep.
        tail_budget: usize,
        /// Whether the context length was lowered.
        lowered: bool,
    },
    /// Give up with this explanation.
    GiveUp(String),
}

/// The state the decision reads and updates.
#[derive(Debug)]
pub struct OverflowState<'a> {
    /// The context window in force; lowered when the provider reports a smaller one.
    pub context_length: &'a mut u64,
    /// Set to the lowered window, to be remembered once a call succeeds.
    pub confirmed_limit: &'a mut Option<u64>,
    /// Compaction rounds so far for this call.
    pub attempts: &'a mut u32,
}

fn schema_tokens(tools: &[ToolSchema]) -> u64 {
    tools
        .iter()
        .map(|t| (t.name.len() + t.description.len() + t.parameters.to_string().len()) as u64)
        .sum::<u64>()
        / 4
}

/// Why compression cannot rescue the request.
pub const CANNOT_SHRINK: &str = "the conversation does not fit the model's context window and \
cannot be compacted further. Start a new session (hermes chat without --resume), or shorten the \
last message.";

/// Decides how to recover from overflow error text `message` for `messages`.
pub fn recover(
    message: &str,
    messages: &[Message],
    tools: &[ToolSchema],
    state: OverflowState<'_>,
) -> Recovery {
    *state.attempts += 1;
    if *state.attempts > MAX_COMPACTIONS {
        return Recovery::GiveUp(format!(
            "the conversation still does not fit the model's context window after {MAX_COMPACTIONS} \
             compaction attempts. Start a new session (hermes chat without --resume), or pick a \
             model with a larger window."
        ));
    }
    if let Some(available) = parse_available_output_tokens(message) {
        let estimate = approx_tokens(messages) as u64 + schema_tokens(tools);
        let local = state.context_length.saturating_sub(estimate);
        let fit = if local > 0 {
            available.min(local)
        } else {
            available
        };
        let max_tokens = u32::try_from(fit.saturating_sub(64).max(1)).unwrap_or(u32::MAX);
        return Recovery::ShrinkOutput {
            max_tokens,
            available,
        };
    }
    if is_output_cap_error(message) {
        return Recovery::GiveUp(
            "the provider rejected max_tokens as larger than this model's output cap; \
             compressing the conversation cannot fix that. Lower model.max_tokens in config.yaml."
                .to_owned(),
        );
    }
    let lowered = lower_limit_from_error(message, *state.context_length);
    if let Some(limit) = lowered {
        *state.context_length = limit;
        *state.confirmed_limit = Some(limit);
    }
    // The request did not fit, so the tail must be well under both the window and
    // what was just sent.
    let sent = approx_tokens(messages);
    let tail_budget = ((*state.context_length as f64 * TAIL_SHARE) as usize).min(sent / 2);
    Recovery::Compress {
        tail_budget,
        lowered: lowered.is_some(),
    }
}

#[cfg(test)]
#[path = "overflow_tests.rs"]
mod tests;
