//! The `mcp_servers:` section of config.yaml, read as the reference reads it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

/// Seconds a tool call may take before it ends with an error result.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(300);
/// Seconds the initial connection (spawn + initialize + tools/list) may take.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(60);
/// How long start-up waits for discovery before the first model request.
pub const DEFAULT_DISCOVERY_TIMEOUT: Duration = Duration::from_millis(1500);

/// How Hermes reaches one server.
#[derive(Debug, Clone, PartialEq)]
pub enum TransportConfig {
    /// A child process speaking JSON-RPC on stdin/stdout.
    Stdio {
        /// Program to run (looked up on `PATH`).
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment (on top of the filtered safe set).
        env: BTreeMap<String, String>,
        /// Working directory, if set.
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP (`url`).
    Http {
        /// The endpoint, e.g. `http://127.0.0.1:3001/mcp`.
        url: String,
        /// Extra request headers (`Authorization` among them).
        headers: BTreeMap<String, String>,
    },
    /// The legacy HTTP+SSE transport (`transport: sse`).
    Sse {
        /// The SSE endpoint, e.g. `http://127.0.0.1:3002/sse`.
        url: String,
        /// Extra request headers.
        headers: BTreeMap<String, String>,
    },
}

impl TransportConfig {
    /// A short label for listings: `stdio`, `http` or `sse`.
    pub fn kind(&self) -> &'static str {
        match self {
            TransportConfig::Stdio { .. } => "stdio",
            TransportConfig::Http { .. } => "http",
            TransportConfig::Sse { .. } => "sse",
        }
    }

    /// The command line or URL, for listings.
    pub fn target(&self) -> String {
        match self {
            TransportConfig::Stdio { command, args, .. } => std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            TransportConfig::Http { url, .. } | TransportConfig::Sse { url, .. } => url.clone(),
        }
    }
}

/// `sampling:` — whether and how the server may ask our model for completions.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingConfig {
    /// Answer `sampling/createMessage` at all (default on).
    pub enabled: bool,
    /// Model to use instead of the session's.
    pub model: Option<String>,
    /// Cap on `maxTokens` the server may ask for.
    pub max_tokens_cap: u32,
    /// Requests per minute allowed.
    pub max_rpm: u32,
    /// Seconds one sampling request may take.
    pub timeout: Duration,
}

impl Default for SamplingConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            model: None,
            max_tokens_cap: 4096,
            max_rpm: 10,
            timeout: Duration::from_secs(30),
        }
    }
}

impl SamplingConfig {
    /// Reads `sampling:`; absent keys keep their defaults.
    fn parse(s: &serde_json::Map<String, Value>) -> Self {
        let d = SamplingConfig::default();
        SamplingConfig {
            enabled: s.get("enabled").map_or(d.enabled, |v| flag(v, true)),
            model: s
                .get("model")
                .and_then(Value::as_str)
                .filter(|m| !m.is_empty())
                .map(str::to_owned),
            max_tokens_cap: s
                .get("max_tokens_cap")
                .and_then(number)
                .map_or(d.max_tokens_cap, |n| n.max(1.0) as u32),
            max_rpm: s
                .get("max_rpm")
                .and_then(number)
                .map_or(d.max_rpm, |n| n.max(1.0) as u32),
            timeout: s
                .get("timeout")
                .and_then(number)
                .filter(|n| *n > 0.0)
                .map_or(d.timeout, Duration::from_secs_f64),
        }
    }
}

/// One entry under `mcp_servers:`.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    /// The key under `mcp_servers:`.
    pub name: String,
    /// `enabled: false` keeps the entry but never connects.
    pub enabled: bool,
    /// Where the server is.
    pub transport: TransportConfig,
    /// `timeout`: one tool call's limit.
    pub timeout: Duration,
    /// `connect_timeout`: the initial connection's limit.
    pub connect_timeout: Duration,
    /// `tools.include`: only these tools (wins over `exclude`).
    pub include: BTreeSet<String>,
    /// `tools.exclude`: every tool but these.
    pub exclude: BTreeSet<String>,
    /// `tools.resources`: offer `list_resources`/`read_resource` (default on).
    pub resources: bool,
    /// `tools.prompts`: offer `list_prompts`/`get_prompt` (default on).
    pub prompts: bool,
    /// `supports_parallel_tool_calls`: the server's tools may run concurrently.
    pub parallel: bool,
    /// `sampling:`.
    pub sampling: SamplingConfig,
    /// `auth: oauth` (with its `oauth:` settings): the server is reached with
    /// OAuth tokens kept under `HERMES_HOME/mcp-tokens/`.
    pub oauth: Option<OAuthConfig>,
}

/// `oauth:` — how Hermes authorizes itself with an OAuth-protected server
/// (every key optional, as in the reference).
#[derive(Clone, PartialEq, Default)]
pub struct OAuthConfig {
    /// A client registered ahead of time (skips dynamic registration).
    pub client_id: Option<String>,
    /// That client's secret (`client_secret_basic`/`_post` at the token endpoint).
    pub client_secret: Option<String>,
    /// Space-separated scopes to ask for instead of the server's.
    pub scope: Option<String>,
    /// Port of the loopback redirect listener (0 or absent: any free one).
    pub redirect_port: u16,
    /// Host of the redirect URI (default `127.0.0.1`).
    pub redirect_host: Option<String>,
    /// A full redirect URI, when the client was registered with one.
    pub redirect_uri: Option<String>,
    /// The name dynamic registration gives the client.
    pub client_name: Option<String>,
    /// An https URL where the user hosts Hermes' client metadata document:
    /// used as the client id where the server accepts such documents (ours).
    pub client_metadata_url: Option<String>,
    /// How long a login waits for the browser to come back.
    pub timeout: Duration,
}

impl std::fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[REDACTED]"),
            )
            .field("scope", &self.scope)
            .field("redirect_port", &self.redirect_port)
            .finish_non_exhaustive()
    }
}

impl OAuthConfig {
    /// Reads `auth:`/`oauth:` of one entry; `None` unless `auth: oauth`.
    fn parse(map: &serde_json::Map<String, Value>) -> Option<Self> {
        let auth = map.get("auth").and_then(Value::as_str)?;
        if !auth.trim().eq_ignore_ascii_case("oauth") {
            return None;
        }
        let o = map.get("oauth").and_then(Value::as_object);
        let text = |key: &str| {
            o.and_then(|o| o.get(key))
                .filter(|v| !v.is_null())
                .map(scalar_text)
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty() && !s.starts_with("${"))
        };
        Some(Self {
            client_id: text("client_id"),
            client_secret: text("client_secret"),
            scope: text("scope"),
            redirect_port: o
                .and_then(|o| o.get("redirect_port"))
                .and_then(number)
                .filter(|n| (0.0..=65535.0).contains(n))
                .map_or(0, |n| n as u16),
            redirect_host: text("redirect_host"),
            redirect_uri: text("redirect_uri"),
            client_name: text("client_name"),
            client_metadata_url: text("client_metadata_url").filter(|u| u.starts_with("https://")),
            timeout: seconds(o.and_then(|o| o.get("timeout")), Duration::from_secs(300)),
        })
    }
}

impl ServerConfig {
    /// Whether a tool the server lists passes `tools.include`/`tools.exclude`.
    pub fn offers(&self, tool: &str) -> bool {
        if !self.include.is_empty() {
            return self.include.contains(tool);
        }
        !self.exclude.contains(tool)
    }
}

/// Every configured server plus the start-up wait.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct McpConfig {
    /// The servers in config order (enabled or not).
    pub servers: Vec<ServerConfig>,
    /// `mcp_discovery_timeout` (top level).
    pub discovery_timeout: Duration,
    /// Entries that could not be read, each with what to fix.
    pub problems: Vec<String>,
}

impl McpConfig {
    /// Reads `mcp_servers:` and `mcp_discovery_timeout` from the merged config
    /// tree; `${VAR}` (and `${env:VAR}`) placeholders resolve through `lookup`,
    /// unset ones stay as written.
    pub fn from_tree(tree: &Value, lookup: &dyn Fn(&str) -> Option<String>) -> Self {
        let discovery_timeout = tree
            .get("mcp_discovery_timeout")
            .and_then(number)
            .filter(|s| *s > 0.0)
            .map(Duration::from_secs_f64)
            .unwrap_or(DEFAULT_DISCOVERY_TIMEOUT);
        let mut out = McpConfig {
            discovery_timeout,
            ..Default::default()
        };
        let Some(servers) = tree.get("mcp_servers").and_then(Value::as_object) else {
            return out;
        };
        for (name, entry) in servers {
            let entry = interpolate(entry, lookup);
            match ServerConfig::parse(name, &entry) {
                Ok(server) => out.servers.push(server),
                Err(problem) => out.problems.push(problem),
            }
        }
        out
    }

    /// The enabled servers.
    pub fn enabled(&self) -> impl Iterator<Item = &ServerConfig> {
        self.servers.iter().filter(|s| s.enabled)
    }

    /// The server with this config name.
    pub fn get(&self, name: &str) -> Option<&ServerConfig> {
        self.servers.iter().find(|s| s.name == name)
    }
}

impl ServerConfig {
    /// Reads one entry; `Err` says what is wrong and how to fix it.
    pub fn parse(name: &str, entry: &Value) -> Result<Self, String> {
        let Some(map) = entry.as_object() else {
            return Err(format!(
                "mcp_servers.{name} must be a mapping with `command` or `url`"
            ));
        };
        let headers = string_map(map.get("headers"));
        let transport_key = map
            .get("transport")
            .and_then(Value::as_str)
            .map(|t| t.trim().to_ascii_lowercase());
        let transport = if let Some(url) = map.get("url").and_then(Value::as_str) {
            let url = url.trim().to_owned();
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(format!(
                    "mcp_servers.{name}.url must start with http:// or https:// (got {url:?})"
                ));
            }
            match transport_key.as_deref() {
                Some("sse") => TransportConfig::Sse { url, headers },
                _ => TransportConfig::Http { url, headers },
            }
        } else if let Some(command) = map.get("command").and_then(Value::as_str) {
            let args = map
                .get("args")
                .and_then(Value::as_array)
                .map(|a| a.iter().map(scalar_text).collect())
                .unwrap_or_default();
            TransportConfig::Stdio {
                command: command.trim().to_owned(),
                args,
                env: string_map(map.get("env")),
                cwd: map
                    .get("cwd")
                    .and_then(Value::as_str)
                    .filter(|c| !c.trim().is_empty())
                    .map(PathBuf::from),
            }
        } else {
            return Err(format!(
                "mcp_servers.{name} needs `command` (a stdio server) or `url` (an HTTP server)"
            ));
        };
        let tools = map.get("tools").and_then(Value::as_object);
        let names = |key: &str| -> BTreeSet<String> {
            match tools.and_then(|t| t.get(key)) {
                Some(Value::String(s)) => [s.clone()].into_iter().collect(),
                Some(Value::Array(items)) => items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect(),
                _ => BTreeSet::new(),
            }
        };
        let toggle = |key: &str| tools.and_then(|t| t.get(key)).is_none_or(|v| flag(v, true));
        let sampling = map
            .get("sampling")
            .and_then(Value::as_object)
            .map(SamplingConfig::parse)
            .unwrap_or_default();
        let oauth = match &transport {
            TransportConfig::Stdio { .. } => None,
            _ => OAuthConfig::parse(map),
        };
        Ok(ServerConfig {
            name: name.to_owned(),
            enabled: map.get("enabled").is_none_or(|v| flag(v, true)),
            transport,
            timeout: seconds(map.get("timeout"), DEFAULT_CALL_TIMEOUT),
            connect_timeout: seconds(map.get("connect_timeout"), DEFAULT_CONNECT_TIMEOUT),
            include: names("include"),
            exclude: names("exclude"),
            resources: toggle("resources"),
            prompts: toggle("prompts"),
            parallel: map
                .get("supports_parallel_tool_calls")
                .is_some_and(|v| flag(v, false)),
            sampling,
            oauth,
        })
    }
}

fn seconds(value: Option<&Value>, default: Duration) -> Duration {
    value
        .and_then(number)
        .filter(|n| *n > 0.0 && n.is_finite())
        .map_or(default, Duration::from_secs_f64)
}

fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// YAML booleans as the reference reads them: false/0/no/off are off, other
/// unrecognised values take `default`.
fn flag(value: &Value, default: bool) -> bool {
    match value {
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_none_or(|f| f != 0.0),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "false" | "0" | "no" | "off" => false,
            "true" | "1" | "yes" | "on" => true,
            _ => default,
        },
        Value::Null => default,
        _ => default,
    }
}

fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn string_map(value: Option<&Value>) -> BTreeMap<String, String> {
    value
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), scalar_text(v)))
                .collect()
        })
        .unwrap_or_default()
}

/// Replaces `${VAR}` and `${env:VAR}` in every string leaf.
fn interpolate(value: &Value, lookup: &dyn Fn(&str) -> Option<String>) -> Value {
    match value {
        Value::String(s) => Value::String(expand(s, lookup)),
        Value::Array(items) => Value::Array(items.iter().map(|v| interpolate(v, lookup)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), interpolate(v, lookup)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn expand(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let reference = &after[..end];
        let name = reference.strip_prefix("env:").unwrap_or(reference).trim();
        match lookup(name).filter(|v| !v.is_empty()) {
            Some(value) if !name.is_empty() => out.push_str(&value),
            _ => out.push_str(&rest[start..start + 3 + end]),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
