//! Every configured server in one place: started together (concurrently,
//! off the critical path), named together (no collisions), and offered to
//! sessions as one changing set of tools.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use hermes_tools::{DynamicTools, Tool};
use tokio::sync::watch;

use crate::config::{McpConfig, ServerConfig};
use crate::handler::Sampler;
use crate::naming::{NameAllocator, toolset};
use crate::result::MediaCache;
use crate::schema::normalize;
use crate::search::{ToolSearchConfig, bridge, estimate_tokens};
use crate::server::{Link, ServerHandle, Shared};
use crate::tool::{Kind, McpTool, utility_schema};

/// What the hub needs from its host.
#[derive(Debug, Clone)]
pub struct HubOptions {
    /// `HERMES_HOME` (logs and the media cache live under it).
    pub hermes_home: PathBuf,
    /// The process environment (stdio servers get a filtered copy).
    pub env: BTreeMap<String, String>,
    /// Built-in tool names an MCP tool may never shadow.
    pub reserved: Vec<String>,
    /// Where an OAuth login can be completed by a person (none: servers
    /// that need one say which command to run).
    pub oauth_prompt: Option<Arc<dyn crate::oauth::OAuthPrompt>>,
}

/// A server's state for listings (`hermes mcp list`, `/status`).
#[derive(Debug, Clone, PartialEq)]
pub struct ServerStatus {
    /// Config name.
    pub name: String,
    /// `stdio`, `http` or `sse`.
    pub transport: &'static str,
    /// `connecting`, `connected` or `failed: …`.
    pub state: String,
    /// Tools offered.
    pub tools: usize,
}

/// The running MCP client side of a process.
#[derive(Clone)]
pub struct McpHub {
    inner: Arc<Inner>,
}

struct Inner {
    shared: Arc<Shared>,
    servers: Mutex<Vec<Arc<ServerHandle>>>,
    discovery_timeout: Mutex<Duration>,
    reserved: Vec<String>,
    offered: Mutex<(u64, Vec<Arc<McpTool>>)>,
    changed: watch::Receiver<u64>,
}

impl std::fmt::Debug for McpHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHub")
            .field("servers", &self.server_names())
            .finish_non_exhaustive()
    }
}

impl McpHub {
    /// Starts connecting to every enabled server (must run inside a tokio runtime).
    pub fn start(config: &McpConfig, options: HubOptions) -> Self {
        let (tx, changed) = watch::channel(0u64);
        let shared = Arc::new(Shared {
            changed: tx,
            logs: options.hermes_home.join("logs"),
            env: options.env,
            http: std::sync::OnceLock::new(),
            cache: MediaCache::new(crate::result::cache_root(&options.hermes_home)),
            home: options.hermes_home.clone(),
            oauth_prompt: options.oauth_prompt,
            authorizing: tokio::sync::Mutex::new(()),
        });
        let servers = config
            .enabled()
            .map(|c| ServerHandle::start(c.clone(), shared.clone()))
            .collect();
        Self {
            inner: Arc::new(Inner {
                shared,
                servers: Mutex::new(servers),
                discovery_timeout: Mutex::new(config.discovery_timeout),
                reserved: options.reserved,
                offered: Mutex::new((u64::MAX, Vec::new())),
                changed,
            }),
        }
    }

    fn servers(&self) -> Vec<Arc<ServerHandle>> {
        self.inner
            .servers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The configured (enabled) servers' names.
    pub fn server_names(&self) -> Vec<String> {
        self.servers()
            .iter()
            .map(|s| s.config().name.clone())
            .collect()
    }

    /// Whether any server is configured.
    pub fn is_empty(&self) -> bool {
        self.servers().is_empty()
    }

    /// Moves on whenever the offered tools change.
    pub fn generation(&self) -> u64 {
        *self.inner.changed.borrow()
    }

    /// Waits until every server has connected or failed, at most
    /// `mcp_discovery_timeout`; slower servers' tools arrive later.
    pub async fn wait_for_discovery(&self) {
        let limit = *self
            .inner
            .discovery_timeout
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        self.wait_settled(limit).await;
    }

    /// Waits until every server has connected or failed, at most `limit`.
    pub async fn wait_settled(&self, limit: Duration) {
        let servers = self.servers();
        let all = futures_util::future::join_all(servers.iter().map(|s| s.settled()));
        let _ = tokio::time::timeout(limit, all).await;
    }

    /// One server's connection state (`Link::Down` when it is not configured).
    pub fn servers_link(&self, name: &str) -> Link {
        self.servers()
            .iter()
            .find(|s| s.config().name == name)
            .map_or_else(|| Link::Down("not configured".into()), |s| s.link())
    }

    /// Each server's state.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        let offered = self.tools();
        self.servers()
            .iter()
            .map(|s| {
                let name = s.config().name.clone();
                let state = match s.link() {
                    Link::Connecting => "connecting".to_owned(),
                    Link::Ready(_) => "connected".to_owned(),
                    Link::Down(why) => format!("failed: {why}"),
                };
                ServerStatus {
                    tools: offered.iter().filter(|t| t.server_name() == name).count(),
                    transport: s.config().transport.kind(),
                    state,
                    name,
                }
            })
            .collect()
    }

    /// The tools every server offers now, named without collisions.
    pub fn tools(&self) -> Vec<Arc<McpTool>> {
        let generation = self.generation();
        let mut offered = self.inner.offered.lock().unwrap_or_else(|e| e.into_inner());
        if offered.0 != generation {
            *offered = (generation, self.build_tools());
        }
        offered.1.clone()
    }

    fn build_tools(&self) -> Vec<Arc<McpTool>> {
        let mut names = NameAllocator::new(self.inner.reserved.iter().cloned());
        let mut out = Vec::new();
        for server in self.servers() {
            let Some(live) = server.known() else { continue };
            let config = server.config();
            let set = toolset(&config.name);
            let make = |wire: String, schema, kind| {
                Arc::new(McpTool {
                    wire,
                    toolset: set.clone(),
                    schema,
                    kind,
                    server: server.clone(),
                    sampler: None,
                })
            };
            for tool in &live.tools {
                let Some(wire) = names.allocate(&config.name, &tool.name) else {
                    continue;
                };
                let description = if tool.description.is_empty() {
                    format!("MCP tool {} from {}", tool.name, config.name)
                } else {
                    tool.description.clone()
                };
                let schema = hermes_protocol::ToolSchema {
                    name: wire.clone(),
                    description,
                    parameters: normalize(Some(&tool.input_schema)),
                };
                out.push(make(wire, schema, Kind::Server(tool.name.clone())));
            }
            let mut utilities = Vec::new();
            if live.resources && config.resources {
                utilities.push(("list_resources", Kind::ListResources));
                utilities.push(("read_resource", Kind::ReadResource));
            }
            if live.prompts && config.prompts {
                utilities.push(("list_prompts", Kind::ListPrompts));
                utilities.push(("get_prompt", Kind::GetPrompt));
            }
            for (suffix, kind) in utilities {
                let Some(wire) = names.allocate(&config.name, suffix) else {
                    continue;
                };
                let schema = utility_schema(&config.name, &kind, &wire);
                out.push(make(wire, schema, kind));
            }
        }
        out
    }

    /// Applies a new `mcp_servers:` section (`/reload-mcp`): servers whose
    /// entry changed or vanished are closed, new ones start, and unchanged
    /// ones reconnect so a restarted server is picked up.
    pub fn reload(&self, config: &McpConfig) {
        let mut servers = self.inner.servers.lock().unwrap_or_else(|e| e.into_inner());
        let mut kept = Vec::new();
        for server in servers.drain(..) {
            match config.enabled().find(|c| c.name == server.config().name) {
                Some(c) if c == server.config() => {
                    server.reconnect();
                    kept.push(server);
                }
                _ => server.shutdown(),
            }
        }
        for entry in config.enabled() {
            if !kept.iter().any(|s| s.config().name == entry.name) {
                kept.push(ServerHandle::start(
                    entry.clone(),
                    self.inner.shared.clone(),
                ));
            }
        }
        let order: Vec<&ServerConfig> = config.enabled().collect();
        kept.sort_by_key(|s| order.iter().position(|c| c.name == s.config().name));
        *servers = kept;
        *self
            .inner
            .discovery_timeout
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = config.discovery_timeout;
        drop(servers);
        self.inner.shared.bump();
    }

    /// Closes every connection (stdio children are killed).
    pub fn shutdown(&self) {
        for server in self.servers() {
            server.shutdown();
        }
    }

    /// The model that answers sampling requests arriving outside any call.
    pub fn set_sampler(&self, sampler: Option<Arc<dyn Sampler>>) {
        for server in self.servers() {
            server.set_fallback_sampler(sampler.clone());
        }
    }

    /// A session's view: the servers its toolsets allow, sampling through its model.
    pub fn view(
        &self,
        filter: ServerFilter,
        sampler: Option<Arc<dyn Sampler>>,
        search: ToolSearchConfig,
    ) -> McpTools {
        McpTools {
            hub: self.clone(),
            filter,
            sampler,
            search,
        }
    }
}

/// Which servers a session offers, from its toolset list as the reference
/// reads it: every enabled server by default; naming servers (or their
/// `mcp-<name>` toolsets) makes an allowlist; `no_mcp` turns them all off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerFilter {
    /// Every enabled server.
    All,
    /// Only these.
    Only(Vec<String>),
}

impl ServerFilter {
    /// Reads `toolsets` against the configured server names; returns the
    /// filter and the toolsets left for the built-in registry.
    pub fn from_toolsets(toolsets: &[String], servers: &[String]) -> (Self, Vec<String>) {
        let mut named = Vec::new();
        let mut rest = Vec::new();
        let mut none = false;
        for ts in toolsets {
            if ts == "no_mcp" {
                none = true;
            } else if let Some(server) = servers.iter().find(|s| *s == ts || toolset(s) == *ts) {
                named.push(server.clone());
            } else if ts.starts_with("mcp-") {
                // A server that is not configured (or disabled): nothing to offer.
            } else {
                rest.push(ts.clone());
            }
        }
        let filter = if none {
            ServerFilter::Only(Vec::new())
        } else if named.is_empty() {
            ServerFilter::All
        } else {
            ServerFilter::Only(named)
        };
        (filter, rest)
    }

    fn allows(&self, server: &str) -> bool {
        match self {
            ServerFilter::All => true,
            ServerFilter::Only(names) => names.iter().any(|n| n == server),
        }
    }
}

/// One session's MCP tools (what the agent asks for before each model call).
pub struct McpTools {
    hub: McpHub,
    filter: ServerFilter,
    sampler: Option<Arc<dyn Sampler>>,
    search: ToolSearchConfig,
}

impl std::fmt::Debug for McpTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTools")
            .field("filter", &self.filter)
            .finish_non_exhaustive()
    }
}

impl DynamicTools for McpTools {
    fn generation(&self) -> u64 {
        self.hub.generation()
    }

    fn tools(&self, context_length: u64) -> Vec<Arc<dyn Tool>> {
        let tools: Vec<Arc<dyn Tool>> = self
            .hub
            .tools()
            .iter()
            .filter(|t| self.filter.allows(t.server_name()))
            .map(|t| Arc::new(t.with_sampler(self.sampler.clone())) as Arc<dyn Tool>)
            .collect();
        if self
            .search
            .activates(estimate_tokens(&tools), context_length)
        {
            return bridge(tools, self.search.clone());
        }
        tools
    }

    fn ready(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.hub.wait_for_discovery())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_owned()).collect()
    }

    #[test]
    fn toolsets_pick_servers_as_the_reference_does() {
        let servers = s(&["fs", "docs"]);
        let (filter, rest) = ServerFilter::from_toolsets(&s(&["hermes-cli"]), &servers);
        assert_eq!((filter, rest), (ServerFilter::All, s(&["hermes-cli"])));
        let (filter, rest) = ServerFilter::from_toolsets(&s(&["file", "mcp-fs"]), &servers);
        assert_eq!(
            (filter, rest),
            (ServerFilter::Only(s(&["fs"])), s(&["file"]))
        );
        let (filter, _) = ServerFilter::from_toolsets(&s(&["docs", "terminal"]), &servers);
        assert_eq!(filter, ServerFilter::Only(s(&["docs"])));
        let (filter, rest) = ServerFilter::from_toolsets(&s(&["no_mcp", "file"]), &servers);
        assert_eq!((filter, rest), (ServerFilter::Only(vec![]), s(&["file"])));
    }
}
