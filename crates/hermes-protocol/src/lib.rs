//! Plain data types shared by every hermes crate. No I/O, no async.
//!
//! `Message` is the OpenAI chat shape that Hermes persists; providers with other
//! wire formats convert at their boundary.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod event;
pub mod iso_time;
mod message;
mod op;
mod usage;

pub use event::{Event, SessionEvent, ToolOutcome, TurnEnd};
pub use message::{FunctionCall, Message, Role, ToolCall, ToolSchema};
pub use op::{ApprovalChoice, Op};
pub use usage::{FinishReason, Usage};
