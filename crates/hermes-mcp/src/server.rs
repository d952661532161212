//! One configured server: a supervisor task that connects, lists the tools,
//! follows `list_changed`, and reconnects with backoff when the connection
//! drops; and the requests tool calls make through it.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, GetPromptRequestParams, ReadResourceRequestParams};
use rmcp::service::{Peer, RoleClient};
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, watch};

use crate::config::ServerConfig;
use crate::config::TransportConfig;
use crate::connect::{Dial, Failure, Running, connect};
use crate::handler::{CallScope, Handler, Scopes, Signal};
use crate::result::{MediaCache, render_call, resource_contents};

/// Failed connection attempts in a row before the supervisor parks and
/// waits for a call (or `/reload-mcp`) to ask again.
const MAX_ATTEMPTS: u32 = 5;
/// First wait between attempts; doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// How long a call waits for a reconnect already under way.
const RECONNECT_GRACE: Duration = Duration::from_secs(5);

/// A tool as the server lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedTool {
    /// The server's own name for it.
    pub name: String,
    /// Its description (may be empty).
    pub description: String,
    /// `inputSchema` as sent.
    pub input_schema: Value,
}

/// A connected server.
#[derive(Debug)]
pub struct Live {
    peer: Peer<RoleClient>,
    /// Tools after `tools.include`/`exclude`.
    pub tools: Vec<ListedTool>,
    /// The server offers resources.
    pub resources: bool,
    /// The server offers prompts.
    pub prompts: bool,
    /// `serverInfo` name and version.
    pub server_info: String,
}

/// Where a server's connection stands.
#[derive(Debug, Clone)]
pub enum Link {
    /// The first connection (or a reconnect) is under way.
    Connecting,
    /// Connected.
    Ready(Arc<Live>),
    /// Not connected; the text says why.
    Down(String),
}

/// What the hub shares with every server: where to report tool-list changes.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) changed: watch::Sender<u64>,
    pub(crate) logs: std::path::PathBuf,
    pub(crate) env: std::collections::BTreeMap<String, String>,
    pub(crate) http: std::sync::OnceLock<reqwest::Client>,
    pub(crate) cache: MediaCache,
    /// `HERMES_HOME` (OAuth token files live under it).
    pub(crate) home: std::path::PathBuf,
    /// Where a person can complete an OAuth login, when one is present.
    pub(crate) oauth_prompt: Option<Arc<dyn crate::oauth::OAuthPrompt>>,
    /// One login at a time (one browser, one loopback listener).
    pub(crate) authorizing: tokio::sync::Mutex<()>,
}

impl Shared {
    /// The HTTP client, built on first use (stdio-only setups never pay for
    /// loading TLS roots).
    pub(crate) fn http(&self) -> &reqwest::Client {
        self.http.get_or_init(|| {
            // Err means another provider is installed already, which is fine.
            let _ = rustls::crypto::ring::default_provider().install_default();
            reqwest::Client::builder()
                .user_agent(concat!("hermes-rs/", env!("CARGO_PKG_VERSION")))
                .build()
                .unwrap_or_default()
        })
    }

    pub(crate) fn bump(&self) {
        self.changed.send_modify(|g| *g += 1);
    }
}

/// One configured server and its connection.
pub struct ServerHandle {
    config: ServerConfig,
    link: watch::Sender<Link>,
    /// The last successful listing, kept while reconnecting so the tools
    /// stay offered and a call says why it cannot run.
    known: std::sync::Mutex<Option<Arc<Live>>>,
    signals: mpsc::UnboundedSender<Signal>,
    scopes: Arc<Scopes>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerHandle")
            .field("name", &self.config.name)
            .finish_non_exhaustive()
    }
}

/// A request a tool call makes.
#[derive(Debug, Clone)]
pub(crate) enum Request {
    Tool {
        name: String,
        args: Map<String, Value>,
    },
    ListResources,
    ReadResource {
        uri: String,
    },
    ListPrompts,
    GetPrompt {
        name: String,
        args: Map<String, Value>,
    },
}

impl ServerHandle {
    /// Starts the supervisor; the first connection begins at once.
    pub(crate) fn start(config: ServerConfig, shared: Arc<Shared>) -> Arc<Self> {
        let (link, _) = watch::channel(Link::Connecting);
        let (signals, rx) = mpsc::unbounded_channel();
        let handle = Arc::new(Self {
            config,
            link,
            known: std::sync::Mutex::default(),
            signals,
            scopes: Arc::default(),
            shared,
        });
        tokio::spawn(supervise(Arc::downgrade(&handle), rx));
        handle
    }

    /// The server's config entry.
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// Where the connection stands now.
    pub fn link(&self) -> Link {
        self.link.borrow().clone()
    }

    /// What the server offered when last connected.
    pub fn known(&self) -> Option<Arc<Live>> {
        self.known.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn set_ready(&self, live: Live) {
        let live = Arc::new(live);
        *self.known.lock().unwrap_or_else(|e| e.into_inner()) = Some(live.clone());
        self.link.send_replace(Link::Ready(live));
        self.shared.bump();
    }

    /// Waits until the first attempt has settled (connected or failed).
    pub async fn settled(&self) {
        let mut rx = self.link.subscribe();
        let _ = rx.wait_for(|l| !matches!(l, Link::Connecting)).await;
    }

    /// Drops the connection and builds a new one.
    /// Runs an OAuth login for this server through the front-end's prompt;
    /// without one (nobody to open a browser) says which command to run.
    pub(crate) async fn authorize(&self, challenge: Option<&str>) -> Result<(), String> {
        let name = &self.config.name;
        let (Some(oauth), Some(prompt)) = (&self.config.oauth, &self.shared.oauth_prompt) else {
            return Err(crate::oauth::login_needed(name));
        };
        let (TransportConfig::Http { url, .. } | TransportConfig::Sse { url, .. }) =
            &self.config.transport
        else {
            return Err(crate::oauth::login_needed(name));
        };
        let _one_at_a_time = self.shared.authorizing.lock().await;
        let login = crate::oauth::Login {
            name,
            url,
            oauth,
            hermes_home: &self.shared.home,
            challenge,
        };
        crate::oauth::authorize(login, prompt.as_ref())
            .await
            .map_err(|e| format!("OAuth login for MCP server '{name}' failed: {e}"))
    }

    pub fn reconnect(&self) {
        let _ = self.signals.send(Signal::Reconnect);
    }

    /// Cuts a reconnect backoff short (no effect while connected).
    fn retry(&self) {
        let _ = self.signals.send(Signal::Retry);
    }

    /// Closes the connection for good (the child process is killed).
    pub fn shutdown(&self) {
        let _ = self.signals.send(Signal::Shutdown);
    }

    pub(crate) fn set_fallback_sampler(&self, sampler: Option<Arc<dyn crate::Sampler>>) {
        self.scopes.set_fallback_sampler(sampler);
    }

    /// Runs one request and renders its result as model-facing JSON text;
    /// never fails: problems become `{"error": …}`.
    pub(crate) async fn request(
        &self,
        request: Request,
        scope: CallScope,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> String {
        let name = &self.config.name;
        let live = match self.live_or_wait().await {
            Ok(live) => live,
            Err(message) => return json!({ "error": message }).to_string(),
        };
        let _guard = self.scopes.enter(scope);
        let limit = self.config.timeout;
        let work = async {
            match run(&live.peer, request.clone(), name, &self.shared.cache).await {
                Err(RequestError::Auth(challenge)) => {
                    self.authorize(challenge.as_deref())
                        .await
                        .map_err(RequestError::Server)?;
                    run(&live.peer, request.clone(), name, &self.shared.cache).await
                }
                other => other,
            }
        };
        tokio::select! {
            outcome = tokio::time::timeout(limit, work) => match outcome {
                Ok(Ok(text)) => text,
                // The supervisor sees the closed connection and reconnects.
                Ok(Err(RequestError::Transport(detail))) => {
                    json!({ "error": format!(
                        "MCP call failed: {detail}. The connection to MCP server '{name}' was lost; \
                         reconnecting — try again in a few seconds."
                    ) }).to_string()
                }
                Ok(Err(RequestError::Auth(_))) => json!({ "error": crate::oauth::login_needed(name) }).to_string(),
                Ok(Err(RequestError::Server(detail))) => {
                    json!({ "error": format!("MCP call failed: {detail}") }).to_string()
                }
                Err(_) => json!({ "error": format!(
                    "MCP call to '{}' on server '{name}' timed out after {}s",
                    request_label(&request),
                    limit.as_secs_f64()
                ) }).to_string(),
            },
            _ = cancel.cancelled() => json!({ "error": "MCP call interrupted by the user" }).to_string(),
        }
    }

    /// The live connection, waiting briefly for one being (re)built.
    async fn live_or_wait(&self) -> Result<Arc<Live>, String> {
        let name = &self.config.name;
        let usable = |l: &Link| matches!(l, Link::Ready(live) if !live.peer.is_transport_closed());
        if let Link::Ready(live) = self.link()
            && !live.peer.is_transport_closed()
        {
            return Ok(live);
        }
        if matches!(self.link(), Link::Down(_)) {
            self.retry();
        }
        // A connection that just died (its supervisor has not noticed yet) or
        // one being rebuilt: wait briefly for the new one.
        let grace = RECONNECT_GRACE.min(self.config.timeout);
        let mut rx = self.link.subscribe();
        let waited = tokio::time::timeout(grace, rx.wait_for(usable)).await;
        if let Ok(Ok(link)) = waited
            && let Link::Ready(live) = &*link
        {
            return Ok(live.clone());
        }
        Err(match self.link() {
            Link::Down(why) => format!(
                "MCP server '{name}' is not connected ({why}); reconnect requested. \
                 Do NOT retry this tool immediately — give it a few seconds to come back."
            ),
            _ => format!("MCP server '{name}' is not connected"),
        })
    }
}

enum RequestError {
    /// The server wants an OAuth login (its challenge, if any).
    Auth(Option<String>),
    /// The connection is gone.
    Transport(String),
    /// The server answered with an error.
    Server(String),
}

fn classify(e: rmcp::ServiceError) -> RequestError {
    if let Some(challenge) = crate::connect::login_wanted(&e) {
        return RequestError::Auth(challenge);
    }
    match e {
        rmcp::ServiceError::McpError(data) => RequestError::Server(data.message.to_string()),
        rmcp::ServiceError::TransportClosed | rmcp::ServiceError::TransportSend(_) => {
            RequestError::Transport(e.to_string())
        }
        other => RequestError::Server(other.to_string()),
    }
}

fn request_label(request: &Request) -> String {
    match request {
        Request::Tool { name, .. } => name.clone(),
        Request::ListResources => "list_resources".into(),
        Request::ReadResource { .. } => "read_resource".into(),
        Request::ListPrompts => "list_prompts".into(),
        Request::GetPrompt { .. } => "get_prompt".into(),
    }
}

async fn run(
    peer: &Peer<RoleClient>,
    request: Request,
    server: &str,
    cache: &MediaCache,
) -> Result<String, RequestError> {
    let to_json = |v: &dyn erased::Ser| v.value();
    match request {
        Request::Tool { name, args } => {
            let mut params = CallToolRequestParams::new(name);
            params.arguments = Some(args);
            let result = peer.call_tool(params).await.map_err(classify)?;
            Ok(render_call(&to_json(&result), server, cache))
        }
        Request::ListResources => {
            let items = peer.list_all_resources().await.map_err(classify)?;
            let resources: Vec<Value> = items
                .iter()
                .map(|r| {
                    let raw = to_json(r);
                    pick(&raw, &["uri", "name", "description", "mimeType"])
                })
                .collect();
            Ok(json!({ "resources": resources }).to_string())
        }
        Request::ReadResource { uri } => {
            let params: ReadResourceRequestParams =
                serde_json::from_value(json!({ "uri": uri }))
                    .map_err(|e| RequestError::Server(e.to_string()))?;
            let result = to_json(&peer.read_resource(params).await.map_err(classify)?);
            Ok(json!({ "result": resource_text(&result, cache) }).to_string())
        }
        Request::ListPrompts => {
            let items = peer.list_all_prompts().await.map_err(classify)?;
            let prompts: Vec<Value> = items.iter().map(|p| prompt_entry(&to_json(p))).collect();
            Ok(json!({ "prompts": prompts }).to_string())
        }
        Request::GetPrompt { name, args } => {
            let arguments: Map<String, Value> = args
                .into_iter()
                .map(|(k, v)| match v {
                    Value::String(s) => (k, Value::String(s)),
                    other => (k, Value::String(other.to_string())),
                })
                .collect();
            let params: GetPromptRequestParams =
                serde_json::from_value(json!({ "name": name, "arguments": arguments }))
                    .map_err(|e| RequestError::Server(e.to_string()))?;
            let result = to_json(&peer.get_prompt(params).await.map_err(classify)?);
            Ok(prompt_reply(&result).to_string())
        }
    }
}

/// A read resource as text: each content's text, binary parts saved (or
/// summarised when they cannot be).
fn resource_text(result: &Value, cache: &MediaCache) -> String {
    let parts: Vec<String> = result
        .get("contents")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .map(|c| {
                    let text = resource_contents(c, cache);
                    if text.is_empty() && c.get("blob").is_some() {
                        let len = c["blob"].as_str().map_or(0, str::len);
                        format!("[binary data, {len} bytes]")
                    } else {
                        text
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    parts.join("\n")
}

/// One listed prompt: name, description and its arguments.
fn prompt_entry(raw: &Value) -> Value {
    let mut entry = pick(raw, &["name", "description"]);
    if let Some(args) = raw.get("arguments").and_then(Value::as_array)
        && !args.is_empty()
    {
        let args: Vec<Value> = args
            .iter()
            .map(|a| {
                let mut e = pick(a, &["name", "description"]);
                e["required"] = a.get("required").cloned().unwrap_or(Value::Null);
                e
            })
            .collect();
        entry["arguments"] = Value::Array(args);
    }
    entry
}

/// A fetched prompt: its messages as role and text, and its description.
fn prompt_reply(result: &Value) -> Value {
    let messages: Vec<Value> = result
        .get("messages")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .map(|m| {
                    let content = m.get("content").cloned().unwrap_or(Value::Null);
                    let text = match &content {
                        Value::String(s) => s.clone(),
                        c => c
                            .get("text")
                            .and_then(Value::as_str)
                            .map_or_else(|| c.to_string(), str::to_owned),
                    };
                    json!({ "role": m.get("role").cloned().unwrap_or(Value::Null), "content": text })
                })
                .collect()
        })
        .unwrap_or_default();
    let mut out = json!({ "messages": messages });
    if let Some(d) = result
        .get("description")
        .filter(|d| d.as_str().is_some_and(|s| !s.is_empty()))
    {
        out["description"] = d.clone();
    }
    out
}

/// The listed keys of `raw` that are present and not empty.
fn pick(raw: &Value, keys: &[&str]) -> Value {
    let mut out = Map::new();
    for key in keys {
        if let Some(v) = raw
            .get(*key)
            .filter(|v| !v.is_null() && v.as_str() != Some(""))
        {
            out.insert((*key).to_owned(), v.clone());
        }
    }
    Value::Object(out)
}

/// rmcp's model types as JSON, one way for all of them.
mod erased {
    pub(super) trait Ser {
        fn value(&self) -> serde_json::Value;
    }
    impl<T: serde::Serialize> Ser for T {
        fn value(&self) -> serde_json::Value {
            serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
        }
    }
}

/// Connects, then follows the connection until shutdown.
async fn supervise(
    handle: std::sync::Weak<ServerHandle>,
    mut signals: mpsc::UnboundedReceiver<Signal>,
) {
    let mut failures = 0u32;
    loop {
        let Some(server) = handle.upgrade() else {
            return;
        };
        server.link.send_replace(Link::Connecting);
        let attempt = attach(&server).await;
        let running = match attempt {
            Ok((running, live)) => {
                failures = 0;
                server.set_ready(live);
                running
            }
            Err(why) => {
                server.link.send_replace(Link::Down(why));
                server.shared.bump();
                failures += 1;
                drop(server);
                if !backoff(failures, &mut signals).await {
                    return;
                }
                continue;
            }
        };
        let token = running.cancellation_token();
        let mut ended = Box::pin(running.waiting());
        drop(server);
        let closed = loop {
            tokio::select! {
                _ = &mut ended => break "the connection closed".to_owned(),
                signal = signals.recv() => match signal {
                    None | Some(Signal::Shutdown) => {
                        token.cancel();
                        let _ = ended.await;
                        return;
                    }
                    Some(Signal::Reconnect) => {
                        token.cancel();
                        let _ = (&mut ended).await;
                        break "reconnecting".to_owned();
                    }
                    Some(Signal::Retry) => {}
                    Some(Signal::ListChanged) => {
                        let Some(server) = handle.upgrade() else { return };
                        refresh(&server).await;
                    }
                },
            }
        };
        let Some(server) = handle.upgrade() else {
            return;
        };
        server.link.send_replace(Link::Down(closed));
    }
}

/// Waits before the next attempt; parks after [`MAX_ATTEMPTS`] failures
/// until asked to reconnect. `false` means shut down.
async fn backoff(failures: u32, signals: &mut mpsc::UnboundedReceiver<Signal>) -> bool {
    let parked = failures >= MAX_ATTEMPTS;
    let wait = FIRST_BACKOFF
        .saturating_mul(1 << failures.saturating_sub(1).min(6))
        .min(MAX_BACKOFF);
    let sleep = tokio::time::sleep(wait);
    tokio::pin!(sleep);
    loop {
        tokio::select! {
            _ = &mut sleep, if !parked => return true,
            signal = signals.recv() => match signal {
                None | Some(Signal::Shutdown) => return false,
                Some(Signal::Reconnect | Signal::Retry) => return true,
                Some(Signal::ListChanged) => {}
            },
        }
    }
}

/// Connects; a server that asks for an OAuth login gets one (where a person
/// can give it) and one more attempt.
async fn attach(server: &ServerHandle) -> Result<(Running, Live), String> {
    let mut logged_in = false;
    loop {
        match attach_once(server).await {
            Ok(attached) => return Ok(attached),
            Err(Failure::Other(why)) => return Err(why),
            Err(Failure::NeedsAuth(_)) if logged_in => {
                return Err(crate::oauth::login_needed(&server.config.name));
            }
            Err(Failure::NeedsAuth(challenge)) => {
                server.authorize(challenge.as_deref()).await?;
                logged_in = true;
            }
        }
    }
}

/// One connection attempt within `connect_timeout`.
async fn attach_once(server: &ServerHandle) -> Result<(Running, Live), Failure> {
    let handler = Handler {
        server: server.config.name.clone(),
        signals: server.signals.clone(),
        scopes: server.scopes.clone(),
        sampling: server.config.sampling.clone(),
    };
    let dial = Dial {
        name: &server.config.name,
        transport: &server.config.transport,
        oauth: server.config.oauth.as_ref(),
        env: &server.shared.env,
        logs: &server.shared.logs,
        http: &server.shared,
    };
    let limit = server.config.connect_timeout;
    let work = async {
        let running = connect(dial, handler).await?;
        let live = describe(&server.config, running.peer()).await?;
        Ok::<_, Failure>((running, live))
    };
    match tokio::time::timeout(limit, work).await {
        Ok(result) => result,
        Err(_) => Err(Failure::Other(format!(
            "no answer within connect_timeout ({}s)",
            limit.as_secs_f64()
        ))),
    }
}

/// Lists what a connected server offers.
async fn describe(config: &ServerConfig, peer: &Peer<RoleClient>) -> Result<Live, Failure> {
    let info = peer
        .peer_info()
        .map(|i| serde_json::to_value(&*i).unwrap_or(Value::Null))
        .unwrap_or(Value::Null);
    let caps = info.get("capabilities").cloned().unwrap_or(Value::Null);
    let has = |key: &str| caps.get(key).is_some_and(|v| !v.is_null());
    let tools = if has("tools") {
        peer.list_all_tools()
            .await
            .map_err(|e| Failure::of_request(&e, "tools/list"))?
    } else {
        Vec::new()
    };
    let tools = tools
        .iter()
        .map(|t| serde_json::to_value(t).unwrap_or(Value::Null))
        .filter_map(|t| {
            let name = t.get("name")?.as_str()?.to_owned();
            Some(ListedTool {
                description: t
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
                input_schema: t.get("inputSchema").cloned().unwrap_or(Value::Null),
                name,
            })
        })
        .filter(|t| config.offers(&t.name))
        .collect();
    let server_info = info
        .get("serverInfo")
        .map(|s| {
            format!(
                "{} {}",
                s.get("name").and_then(Value::as_str).unwrap_or("?"),
                s.get("version").and_then(Value::as_str).unwrap_or("")
            )
            .trim()
            .to_owned()
        })
        .unwrap_or_default();
    Ok(Live {
        peer: peer.clone(),
        tools,
        resources: has("resources"),
        prompts: has("prompts"),
        server_info,
    })
}

/// Re-lists after `list_changed`; the hub's generation moves on so the
/// next model request carries the new list.
async fn refresh(server: &ServerHandle) {
    let Link::Ready(live) = server.link() else {
        return;
    };
    if let Ok(fresh) = describe(&server.config, &live.peer).await
        && (fresh.tools != live.tools
            || fresh.resources != live.resources
            || fresh.prompts != live.prompts)
    {
        server.set_ready(fresh);
    }
}
