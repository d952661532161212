//! `hermes mcp serve`: Hermes as an MCP server over stdio, exposing the
//! messaging conversations in state.db as the reference does (ten tools:
//! conversations, messages, attachments, events, channels, permissions).

mod bridge;
mod framing;
mod http;
mod index;
mod tools;

use std::path::PathBuf;
use std::sync::Arc;

use rmcp::ServiceExt as _;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorData, ListToolsResult,
    PaginatedRequestParams, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::json;

pub use bridge::{Bridge, Event};
pub use http::HttpServe;
pub use index::{Entry, Index};

/// What `initialize` tells clients.
const INSTRUCTIONS: &str = "Hermes Agent messaging bridge. Use these tools to interact with \
conversations across Telegram, Discord, Slack, WhatsApp, Signal, Matrix, and other connected \
platforms.";

/// The server's state: the state.db index, the event bridge and `HERMES_HOME`.
#[derive(Clone)]
pub struct HermesServer {
    pub(crate) index: Index,
    pub(crate) bridge: Bridge,
    pub(crate) hermes_home: PathBuf,
}

impl HermesServer {
    /// A server over `HERMES_HOME` (its state.db and channel directory).
    pub fn new(hermes_home: impl Into<PathBuf>) -> Self {
        let hermes_home = hermes_home.into();
        let index = Index::new(hermes_home.join("state.db"));
        Self {
            bridge: Bridge::new(index.clone()),
            index,
            hermes_home,
        }
    }

    /// A server whose conversations live in a store replicas share.
    pub fn with_store(
        hermes_home: impl Into<PathBuf>,
        store: std::sync::Arc<dyn hermes_state::store::SessionAdmin>,
    ) -> Self {
        let index = Index::shared(store);
        Self {
            bridge: Bridge::new(index.clone()),
            index,
            hermes_home: hermes_home.into(),
        }
    }

    /// Serves on stdin/stdout until the client disconnects.
    pub async fn serve_stdio(self) -> Result<(), String> {
        let poller = tokio::spawn(self.bridge.clone().run());
        let framed = framing::frame(tokio::io::stdin(), tokio::io::stdout());
        let service = self
            .serve((framed.read, framed.write))
            .await
            .map_err(|e| format!("MCP handshake failed: {e}"))?;
        let _ = service.waiting().await;
        poller.abort();
        // The last replies still on their way to stdout.
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), framed.done).await;
        Ok(())
    }
}

impl ServerHandler for HermesServer {
    fn get_info(&self) -> ServerConfig {
        let info = json!({
            "protocolVersion": "2025-06-18",
            "capabilities": { "tools": { "listChanged": false } },
            "serverInfo": { "name": "hermes", "version": env!("CARGO_PKG_VERSION") },
            "instructions": INSTRUCTIONS,
        });
        serde_json::from_value(info).unwrap_or_default()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        serde_json::from_value(json!({ "tools": tools::definitions() }))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = serde_json::Value::Object(request.arguments.unwrap_or_default());
        let server = Arc::new(self.clone());
        let text = tools::call(&server, &request.name, &args).await?;
        let result: CallToolResult =
            // Text for the model, and the same as structured output, as the
            // reference's FastMCP tools (which return `str`) answer.
            serde_json::from_value(json!({
                "content": [{ "type": "text", "text": text }],
                "structuredContent": { "result": text },
            }))
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(result.into())
    }
}
