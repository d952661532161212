//! The agent loop: one turn is user message → model call → tool calls → results →
//! model call … until the model answers. Everything observable leaves as [`Event`]s.
//!
//! [`Event`]: hermes_protocol::Event
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod agent;
pub mod budget;
pub mod code_exec;
pub mod compress;
pub mod delegate;
pub mod dispatch;
pub mod guardrails;
pub mod overflow;
pub mod plan;
pub mod prompt;
pub mod repair;
mod resilience;
pub mod steer;
mod store;
pub mod wire;

pub use agent::{Agent, AgentError, AgentOptions, SUMMARY_REQUEST, TurnResult};
pub use guardrails::GuardrailConfig;
pub use resilience::{RetryPolicy, Route};
pub use steer::SteerHandle;
pub use store::{LimitStore, MessageStore};

/// Where the agent sends its events.
pub type EventSink = tokio::sync::mpsc::UnboundedSender<hermes_protocol::Event>;
