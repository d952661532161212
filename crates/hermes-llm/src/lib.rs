//! Model providers: the [`Provider`] trait, the SSE decoder and the OpenAI
//! chat-completions transport.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod accumulate;
mod chat_completions;
mod error;
mod provider;
pub mod providers;
pub mod sse;
mod wire;

pub use accumulate::{Completion, StreamAccumulator, complete};
pub use chat_completions::{ChatCompletionsConfig, ChatCompletionsProvider};
pub use error::LlmError;
pub use provider::{ChatRequest, DeltaStream, Provider, StreamDelta, ToolChoice};
