//! Model providers: the [`Provider`] trait, the SSE decoder, the OpenAI
//! chat-completions transport and the Anthropic Messages transport.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod accumulate;
pub mod anthropic;
pub mod api_mode;
pub mod backoff;
mod chat_completions;
pub mod classify;
pub mod credentials;
mod error;
mod provider;
pub mod providers;
mod pump;
pub mod sse;
mod wire;

pub use accumulate::{Completion, StreamAccumulator, complete};
pub use anthropic::{AnthropicConfig, AnthropicProvider, CacheTtl};
pub use chat_completions::{ChatCompletionsConfig, ChatCompletionsProvider};
pub use classify::{
    ClassifiedError, ErrorContext, ErrorKind, FailoverReason, classify_error, classify_parts,
};
pub use error::LlmError;
pub use provider::{ChatRequest, DeltaStream, Provider, StreamDelta, ToolChoice};
