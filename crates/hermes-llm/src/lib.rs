//! Model providers: the [`Provider`] trait, the SSE decoder and the OpenAI
//! chat-completions transport.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod accumulate;
pub mod backoff;
mod chat_completions;
pub mod classify;
mod error;
mod provider;
pub mod providers;
pub mod sse;
mod wire;

pub use accumulate::{Completion, StreamAccumulator, complete};
pub use chat_completions::{ChatCompletionsConfig, ChatCompletionsProvider};
pub use classify::{
    ClassifiedError, ErrorContext, ErrorKind, FailoverReason, classify_error, classify_parts,
};
pub use error::LlmError;
pub use provider::{ChatRequest, DeltaStream, Provider, StreamDelta, ToolChoice};
