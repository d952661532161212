//! Surviving provider failures: retry with jittered backoff, then fall back
//! through other providers. Decisions read only the classifier's flags.

use std::sync::Arc;
use std::time::Duration;

use hermes_llm::Provider;

/// Retry settings (`agent.api_max_retries` and the backoff curve).
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Retries of one call before giving up on a provider.
    pub max_retries: u32,
    /// Delay before the first retry (doubles each time).
    pub base_delay: Duration,
    /// Longest delay, also the cap on a provider's `Retry-After`.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            base_delay: Duration::from_secs(5),
            max_delay: Duration::from_secs(120),
        }
    }
}

/// A provider and the model to ask it for.
#[derive(Clone)]
pub struct Route {
    /// The endpoint.
    pub provider: Arc<dyn Provider>,
    /// The model id there.
    pub model: String,
}

impl std::fmt::Debug for Route {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.provider.name(), self.model)
    }
}

/// Rough token count of a conversation (chars / 4), for the classifier's
/// "large session" heuristics.
pub fn approx_tokens(messages: &[hermes_protocol::Message]) -> usize {
    messages
        .iter()
        .map(|m| {
            m.text().len()
                + m.tool_calls
                    .iter()
                    .map(|c| c.function.arguments.len() + c.function.name.len())
                    .sum::<usize>()
        })
        .sum::<usize>()
        / 4
}
