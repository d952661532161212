//! Routes (a provider and a model) and the size estimate the classifier's
//! "large session" heuristics use.

use std::sync::Arc;

use hermes_llm::Provider;

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
