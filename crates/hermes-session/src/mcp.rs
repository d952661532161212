//! MCP servers for the sessions of a process: one hub (connections are
//! shared), one filtered view per session, sampling through the session's model.

use std::sync::Arc;

use futures_util::StreamExt as _;
use futures_util::future::BoxFuture;
use hermes_llm::{ChatRequest, Provider, StreamDelta};
use hermes_mcp::{HubOptions, McpConfig, McpHub, Sampler, SamplingReply, SamplingRequest};
use hermes_protocol::Message;
use hermes_tools::{DynamicTools, Registry};
use tokio_util::sync::CancellationToken;

use crate::setup::Setup;

/// Names MCP tools never take, whatever a session's toolsets: every tool
/// Hermes itself can offer.
fn reserved_names() -> Vec<String> {
    let mut names: Vec<String> = Registry::with_builtins()
        .names()
        .map(str::to_owned)
        .collect();
    names.extend(
        ["session_search", "delegate_task", "memory", "execute_code"]
            .iter()
            .chain(hermes_mcp::search::BRIDGE_NAMES.iter())
            .map(|n| (*n).to_owned()),
    );
    names
}

/// The `mcp_servers:` section with `${VAR}` resolved from the environment
/// (which already holds `HERMES_HOME/.env`).
pub fn config_of(setup: &Setup) -> McpConfig {
    McpConfig::from_tree(&setup.config.raw, &|name| {
        setup.env.get(name).map(str::to_owned)
    })
}

/// Starts the hub when any server is enabled (`HERMES_SAFE_MODE` turns MCP off,
/// as in the reference).
pub(crate) fn start(
    setup: &Setup,
    oauth_prompt: Option<Arc<dyn hermes_mcp::oauth::OAuthPrompt>>,
) -> Option<McpHub> {
    let safe_mode = setup.env_flag("HERMES_SAFE_MODE");
    let config = config_of(setup);
    if safe_mode || config.enabled().next().is_none() {
        return None;
    }
    let mut options = hub_options(setup);
    options.oauth_prompt = oauth_prompt;
    Some(McpHub::start(&config, options))
}

/// What a hub needs from this setup: the home, the environment, and the
/// names MCP tools may not take.
pub fn hub_options(setup: &Setup) -> HubOptions {
    HubOptions {
        hermes_home: setup.home.root().to_path_buf(),
        env: setup
            .env
            .iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
        reserved: reserved_names(),
        oauth_prompt: None,
    }
}

/// A session's MCP tools for `toolsets`; returns the view (if any server is
/// configured) and the toolsets left for the built-in registry.
pub(crate) fn session_tools(
    setup: &Setup,
    hub: Option<&McpHub>,
    toolsets: &[String],
    sampler: Arc<dyn Sampler>,
) -> (Option<Arc<dyn DynamicTools>>, Vec<String>) {
    let Some(hub) = hub else {
        let rest = toolsets
            .iter()
            .filter(|t| *t != "no_mcp")
            .cloned()
            .collect();
        return (None, rest);
    };
    let (filter, rest) = hermes_mcp::ServerFilter::from_toolsets(toolsets, &hub.server_names());
    let search = hermes_mcp::search::ToolSearchConfig::from_tree(&setup.config.raw);
    let view: Arc<dyn DynamicTools> = Arc::new(hub.view(filter, Some(sampler), search));
    (Some(view), rest)
}

/// Answers MCP sampling requests with a session's model.
pub(crate) struct ModelSampler {
    pub(crate) provider: Arc<dyn Provider>,
    pub(crate) model: String,
}

impl Sampler for ModelSampler {
    fn sample(&self, request: SamplingRequest) -> BoxFuture<'_, Result<SamplingReply, String>> {
        Box::pin(async move {
            let mut messages = Vec::new();
            if let Some(system) = request.system.filter(|s| !s.trim().is_empty()) {
                messages.push(Message::system(system));
            }
            for (role, text) in request.messages {
                messages.push(if role == "assistant" {
                    Message::assistant(text)
                } else {
                    Message::user(text)
                });
            }
            let model = request.model.unwrap_or_else(|| self.model.clone());
            let chat = ChatRequest {
                model: model.clone(),
                messages,
                max_tokens: Some(request.max_tokens),
                ..ChatRequest::default()
            };
            let cancel = CancellationToken::new();
            let mut stream = self
                .provider
                .stream(&chat, &cancel)
                .await
                .map_err(|e| e.to_string())?;
            let mut text = String::new();
            while let Some(delta) = stream.next().await {
                if let StreamDelta::Text(t) = delta.map_err(|e| e.to_string())? {
                    text.push_str(&t);
                }
            }
            Ok(SamplingReply { text, model })
        })
    }
}
