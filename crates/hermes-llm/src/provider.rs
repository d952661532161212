//! The provider contract every transport implements.

use std::pin::Pin;

use futures_util::future::BoxFuture;
use futures_util::stream::Stream;
use hermes_protocol::{FinishReason, Message, ToolSchema, Usage};
use tokio_util::sync::CancellationToken;

use crate::LlmError;

/// One request to a model.
#[derive(Debug, Clone, Default)]
pub struct ChatRequest {
    /// Model id as the provider spells it.
    pub model: String,
    /// The conversation, system message first.
    pub messages: Vec<Message>,
    /// Tools offered to the model; empty means none. Shared: every session's
    /// requests point at one copy of the registry's schemas.
    pub tools: std::sync::Arc<[ToolSchema]>,
    /// Output token cap.
    pub max_tokens: Option<u32>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Whether and which tool the model must call.
    pub tool_choice: ToolChoice,
}

/// The `tool_choice` of a request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ToolChoice {
    /// The model decides (the default; nothing is sent on the wire).
    #[default]
    Auto,
    /// The model must not call tools.
    None,
    /// The model must call some tool.
    Required,
    /// The model must call this tool.
    Named(String),
}

/// A piece of a streamed completion, in arrival order.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamDelta {
    /// Answer text.
    Text(String),
    /// Reasoning text (`reasoning_content` / `reasoning`).
    Reasoning(String),
    /// The provider's signature over the reasoning so far (Anthropic
    /// `signature_delta`); the last one received wins.
    ReasoningSignature(String),
    /// A finished opaque reasoning item (OpenAI Responses `reasoning` output
    /// item with `encrypted_content`), to be replayed on the next request.
    ReasoningItem(serde_json::Value),
    /// A fragment of a tool call; fragments with the same `index` belong together.
    ToolCall {
        /// Position of the call in the assistant message.
        index: usize,
        /// The call id, usually only on the first fragment.
        id: Option<String>,
        /// The tool name, usually only on the first fragment.
        name: Option<String>,
        /// A piece of the JSON arguments text.
        arguments: String,
    },
    /// Token counts, usually in the last chunk.
    Usage(Usage),
    /// Why generation stopped.
    Finish(FinishReason),
}

/// A stream of deltas; ends after the provider's end-of-stream marker.
pub type DeltaStream = Pin<Box<dyn Stream<Item = Result<StreamDelta, LlmError>> + Send>>;

/// A model endpoint. Implementations are cheap to share behind an `Arc`.
pub trait Provider: Send + Sync {
    /// Short provider name for messages (`"openrouter"`, `"custom"`, `"local"`).
    fn name(&self) -> &str;

    /// Starts a streamed completion. The returned stream stops early with
    /// [`LlmError::Cancelled`] once `cancel` fires.
    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<DeltaStream, LlmError>>;

    /// Model ids the endpoint offers, for picking one when none is configured.
    /// Providers without a listing return an empty list.
    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, LlmError>> {
        Box::pin(async { Ok(Vec::new()) })
    }

    /// Switches to the next pooled credential after `status` (401, 429 …);
    /// `false` when there is no pool or no other usable key.
    fn rotate_credential(
        &self,
        _status: Option<u16>,
        _retry_after: Option<std::time::Duration>,
    ) -> bool {
        false
    }
}
