//! Why a session could not start or an op could not be carried out.

use hermes_agent::AgentError;
use hermes_llm::LlmError;

use crate::endpoint::{Endpoint, SetupError};

/// A failure that stops a session from starting (each says what to fix).
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The home, `.env` or `config.yaml` could not be loaded.
    #[error("{0}")]
    Setup(String),
    /// No usable provider, key or endpoint.
    #[error(transparent)]
    Endpoint(#[from] SetupError),
    /// A provider could not be built or asked for its models.
    #[error("{0}")]
    Provider(String),
    /// The session store failed.
    #[error("{0}")]
    Store(String),
    /// A toolset or skill named in the spec does not exist.
    #[error("{0}")]
    Spec(String),
    /// The session's task has stopped.
    #[error("the session has ended")]
    Closed,
}

impl From<LlmError> for SessionError {
    fn from(e: LlmError) -> Self {
        SessionError::Provider(hermes_llm::redact::redact_secrets(&e.to_string()))
    }
}

/// A failed turn explained, with advice on what to change; secrets masked.
pub fn explain(err: &AgentError, endpoint: &Endpoint) -> String {
    let AgentError::Llm(llm) = err else {
        return hermes_llm::redact::redact_secrets(&err.to_string());
    };
    let advice = match llm {
        LlmError::Http {
            status: 401 | 403, ..
        } => {
            format!(
                "check the API key for provider '{}' (in $HERMES_HOME/.env or config.yaml)",
                endpoint.provider
            )
        }
        LlmError::Http { status: 404, .. } => format!(
            "check the model name ('{}') and base URL ({})",
            endpoint.model.as_deref().unwrap_or("?"),
            endpoint.base_url
        ),
        LlmError::Http { status: 429, .. } => {
            "the provider is rate limiting: wait a moment and try again".into()
        }
        LlmError::Http {
            status: 500..=599, ..
        } => "the provider had a server error: try again shortly".into(),
        LlmError::Transport(_) => {
            format!(
                "could not reach {}: is the server running and the URL right?",
                endpoint.base_url
            )
        }
        LlmError::Timeout(_) => format!(
            "{} did not answer in time: try again, or allow longer with \
             HERMES_STREAM_READ_TIMEOUT / HERMES_API_TIMEOUT (seconds) or \
             providers.{}.request_timeout_seconds in config.yaml",
            endpoint.base_url, endpoint.provider
        ),
        LlmError::StreamEnded(_) => {
            "the connection dropped before the reply was complete: try again".into()
        }
        LlmError::Decode(_) => format!(
            "{} answered with something that is not a model reply: check the base URL \
             (it should end in /v1 for OpenAI-compatible servers)",
            endpoint.base_url
        ),
        _ => String::new(),
    };
    // Provider error bodies often echo the rejected key back.
    let llm = hermes_llm::redact::redact_secrets(&llm.to_string());
    if advice.is_empty() {
        format!("the model call failed: {llm}")
    } else {
        format!("the model call failed: {llm}\n  → {advice}")
    }
}
