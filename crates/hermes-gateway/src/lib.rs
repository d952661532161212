//! The gateway process (`hermes gateway run`): today the OpenAI-compatible
//! API server on the session runtime; messaging platforms and cron join it later.

pub mod api;
pub mod config;
pub mod lock;
pub mod log;
pub mod messaging;
pub mod serve;
pub mod status;
pub mod webhook;

pub use webhook::is_loopback_host;

pub use config::ApiServerConfig;
