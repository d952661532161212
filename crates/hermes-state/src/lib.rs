//! Where Hermes keeps its state and how it is configured: [`HermesHome`],
//! the [`Env`] snapshot (process environment + `.env`) and the layered [`Config`].
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod config;
mod env;
mod home;

pub use config::{AgentConfig, Config, ConfigError, ModelConfig};
pub use env::Env;
pub use home::HermesHome;
