//! MCP for Hermes: the client that offers every configured server's tools to
//! the agent as `mcp__<server>__<tool>`, and the server behind `hermes mcp serve`.

pub mod config;
mod connect;
mod handler;
mod hub;
pub mod naming;
pub mod oauth;
pub mod result;
pub mod schema;
pub mod search;
pub mod serve;
mod server;
mod sse;
mod tool;

pub use config::{McpConfig, OAuthConfig, ServerConfig, TransportConfig};
pub use connect::safe_env;
pub use handler::{CallScope, Sampler, SamplingReply, SamplingRequest};
pub use hub::{HubOptions, McpHub, McpTools, ServerFilter, ServerStatus};
pub use server::{Link, ListedTool, Live, ServerHandle};
pub use tool::McpTool;
