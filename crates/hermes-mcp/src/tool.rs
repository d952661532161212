//! MCP tools as Hermes tools: one adapter per server tool, plus the four
//! utility tools (`list_resources`, `read_resource`, `list_prompts`,
//! `get_prompt`) for servers that offer resources or prompts.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use hermes_protocol::ToolSchema;
use hermes_tools::{ParallelClass, Tool, ToolContext, ToolResult, require_str};
use serde_json::{Map, Value, json};

use crate::handler::{CallScope, Sampler};
use crate::server::{Request, ServerHandle};

/// What an adapter does when called.
#[derive(Debug, Clone)]
pub(crate) enum Kind {
    /// A server tool, by its own name.
    Server(String),
    ListResources,
    ReadResource,
    ListPrompts,
    GetPrompt,
}

/// One MCP tool offered to the model.
pub struct McpTool {
    pub(crate) wire: String,
    pub(crate) toolset: String,
    pub(crate) schema: ToolSchema,
    pub(crate) kind: Kind,
    pub(crate) server: Arc<ServerHandle>,
    pub(crate) sampler: Option<Arc<dyn Sampler>>,
}

impl McpTool {
    /// The same tool answering sampling requests with `sampler`.
    pub(crate) fn with_sampler(&self, sampler: Option<Arc<dyn Sampler>>) -> Self {
        Self {
            wire: self.wire.clone(),
            toolset: self.toolset.clone(),
            schema: self.schema.clone(),
            kind: self.kind.clone(),
            server: self.server.clone(),
            sampler,
        }
    }

    /// The configured server it belongs to.
    pub fn server_name(&self) -> &str {
        &self.server.config().name
    }
}

/// The utility tools' schemas, as the reference words them.
pub(crate) fn utility_schema(server: &str, kind: &Kind, wire: &str) -> ToolSchema {
    let (description, parameters) = match kind {
        Kind::ListResources => (
            format!("List available resources from MCP server '{server}'"),
            json!({"type": "object", "properties": {}}),
        ),
        Kind::ReadResource => (
            format!("Read a resource by URI from MCP server '{server}'"),
            json!({
                "type": "object",
                "properties": {"uri": {"type": "string", "description": "URI of the resource to read"}},
                "required": ["uri"]
            }),
        ),
        Kind::ListPrompts => (
            format!("List available prompts from MCP server '{server}'"),
            json!({"type": "object", "properties": {}}),
        ),
        Kind::GetPrompt | Kind::Server(_) => (
            format!("Get a prompt by name from MCP server '{server}'"),
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "Name of the prompt to retrieve"},
                    "arguments": {
                        "type": "object",
                        "description": "Optional arguments to pass to the prompt",
                        "properties": {},
                        "additionalProperties": true
                    }
                },
                "required": ["name"]
            }),
        ),
    };
    ToolSchema {
        name: wire.to_owned(),
        description,
        parameters,
    }
}

fn object_arg(args: &Value, key: &str) -> Map<String, Value> {
    args.get(key)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.wire
    }

    fn toolset(&self) -> &str {
        &self.toolset
    }

    fn emoji(&self) -> &str {
        "🔌"
    }

    fn schema(&self) -> ToolSchema {
        self.schema.clone()
    }

    fn parallel_class(&self) -> ParallelClass {
        if self.server.config().parallel {
            ParallelClass::ReadOnly
        } else {
            ParallelClass::Exclusive
        }
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let request = match &self.kind {
                Kind::Server(name) => Request::Tool {
                    name: name.clone(),
                    args: args.as_object().cloned().unwrap_or_default(),
                },
                Kind::ListResources => Request::ListResources,
                Kind::ReadResource => Request::ReadResource {
                    uri: require_str(&args, &self.wire, "uri")?.to_owned(),
                },
                Kind::ListPrompts => Request::ListPrompts,
                Kind::GetPrompt => Request::GetPrompt {
                    name: require_str(&args, &self.wire, "name")?.to_owned(),
                    args: object_arg(&args, "arguments"),
                },
            };
            let scope = CallScope {
                clarifier: ctx.clarifier.clone(),
                sampler: self.sampler.clone(),
            };
            Ok(self.server.request(request, scope, &ctx.cancel).await)
        })
    }
}
