//! Where Hermes keeps its state and how it is configured: [`HermesHome`],
//! the [`Env`] snapshot (process environment + `.env`), the layered [`Config`], and the
//! session database [`SessionDb`] (`state.db`), and the persistent [`memory`] files.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod config;
pub mod config_edit;
mod config_keys;
pub mod config_set;
pub mod context_cache;
pub mod coordination;
pub mod documents;
mod env;
pub mod env_file;
mod home;
pub mod memory;
pub mod numfmt;
pub mod responses;
pub mod runs;
pub mod session_db;
pub mod settings;
pub mod skills;
pub mod store;
pub mod time;
pub mod transcript;

pub use config::{AgentConfig, Config, ConfigError, ModelConfig};
pub use env::Env;
pub use home::HermesHome;
pub use session_db::{
    BulkCandidate, DbError, GatewaySession, ListFilter, MessageExtra, NewSession, SearchHit,
    SearchQuery, SearchSort, SessionDb, SessionFilter, SessionRouting, SessionRow, SessionSummary,
    StoredMessage, UsageDelta,
};
