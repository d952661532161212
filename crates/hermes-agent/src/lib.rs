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
pub mod recovery;
pub mod redaction;
pub mod repair;
mod resilience;
pub mod steer;
pub mod step;
mod store;
pub mod timing;
pub mod wire;

pub use agent::{
    Agent, AgentBuilder, AgentError, AgentOptions, ModelSwitch, SUMMARY_REQUEST, TurnResult,
};
pub use guardrails::GuardrailConfig;
pub use recovery::RetryPolicy;
pub use resilience::Route;
pub use steer::SteerHandle;
pub use store::{LimitStore, MessageStore};
pub use timing::{SystemTiming, Timing};

/// Where the agent sends its events.
pub type EventSink = tokio::sync::mpsc::UnboundedSender<hermes_protocol::Event>;
