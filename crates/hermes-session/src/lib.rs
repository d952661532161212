//! The session runtime every front-end shares. [`Setup`] loads the home and
//! configuration; a [`SessionManager`] turns a [`SessionSpec`] into a running
//! [`Conversation`] — provider resolution and fallbacks, the credential pool,
//! tools and toolsets, the approval gate, the prompt and memory snapshot,
//! compression and its auxiliary model, delegation, the session store — and
//! runs many of them at once, sharing one HTTP pool, one provider per
//! endpoint and one store. Front-ends send [`hermes_protocol::Op`]s and read
//! [`hermes_protocol::SessionEvent`]s; questions to a person (approvals,
//! `clarify`) are events answered with ops.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod assemble;
pub mod auxiliary;
mod checkpoints;
pub use checkpoints::{checkpoint_upkeep, checkpoints, checkpoints_in};
pub mod bundled_skills;
mod context_engines;
mod conversation;
pub mod cron;
mod delegation;
pub mod endpoint;
pub mod environment;
mod error;
pub mod hooks;
pub mod images;
mod manager;
pub mod mcp;
mod memory_plugin;
mod memory_providers;
pub mod offer;
pub mod personality;
pub mod plugins;
mod prompt;
mod questions;
pub mod secrets;
mod services;
pub mod session_id;
mod setup;
pub mod skills;
mod spec;
pub mod store;
pub mod stores;
pub mod timeouts;
mod title;
mod turn_lease;

pub use conversation::{
    BackgroundInfo, Conversation, EVENT_BUFFER, SessionInfo, Submitter, ToolInfo,
};
pub use endpoint::{Endpoint, SetupError};
pub use error::{SessionError, explain};
pub use manager::SessionManager;
pub use questions::{CLARIFY_TIMEOUT_TEXT, DEFAULT_CLARIFY_TIMEOUT, approval_gate};
pub use services::{EventTap, Services, TappedSession};
pub use setup::Setup;
pub use spec::{Notice, Seed, SessionHooks, SessionSpec};
pub use store::{ResumeRequest, SessionStore, SqliteStore, StoreError};

/// File name of the default embedded model in `$HERMES_HOME/models` (kept
/// here so builds without the `local` feature still recognise it).
pub const DEFAULT_LOCAL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

pub use conversation::resolve_model_target;
