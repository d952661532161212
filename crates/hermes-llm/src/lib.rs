//! Model providers: the [`Provider`] trait, the SSE decoder, the OpenAI
//! chat-completions transport, the Anthropic Messages transport, the
//! OpenAI Responses transport and the AWS Bedrock Converse transport.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod accumulate;
pub mod anthropic;
pub mod api_mode;
pub mod backoff;
pub mod bedrock;
mod chat_completions;
pub mod classify;
pub mod context_limits;
pub mod credentials;
mod error;
mod open;
pub mod pricing;
mod provider;
pub mod providers;
mod pump;
pub mod redact;
pub mod responses;
pub mod sse;
mod tls;
mod wire;

pub use accumulate::{Completion, StreamAccumulator, complete};
pub use anthropic::{AnthropicConfig, AnthropicProvider, CacheTtl};
pub use bedrock::{BedrockAuth, BedrockConfig, BedrockProvider};
pub use chat_completions::{ChatCompletionsConfig, ChatCompletionsProvider};
pub use classify::{
    ClassifiedError, ErrorContext, ErrorKind, FailoverReason, classify_error, classify_parts,
};
pub use error::LlmError;
pub use open::{DEFAULT_READ_TIMEOUT, DEFAULT_REQUEST_TIMEOUT, SharedHttp};
pub use provider::{ChatRequest, DeltaStream, Provider, StreamDelta, ToolChoice};
pub use responses::{ResponsesConfig, ResponsesProvider};
