//! Slack: Socket Mode (a WebSocket opened with the app token through
//! `apps.connections.open`) for what comes in, the Web API for what goes
//! out, in mrkdwn, with Block Kit buttons for approvals. As in the reference,
//! channel messages are answered in a thread and each top-level DM starts a
//! threaded session of its own. An envelope is acknowledged only once its
//! message is in the inbox, so a gateway killed in between gets it again.
//! `base_url` points it at another Web API (an emulator, a proxy).

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message as WsMessage;

use super::config::PlatformSettings;
use super::format::{self, Dialect};
use super::media::{self, OutgoingFile};
use super::platform::{
    Adapter, Attachment, Batch, BotIdentity, Capabilities, ChatKind, ChatRef, Incoming, Outgoing,
    PlatformError, Progress, Sender,
};

/// Biggest file taken from a message.
const MAX_DOWNLOAD: u64 = 50 * 1024 * 1024;

/// How Slack conversations map to sessions (`platforms.slack.extra`).
#[derive(Debug, Clone, Copy)]
struct Threading {
    reply_in_thread: bool,
    dm_threads: bool,
}

/// What the connection task and the adapter both know.
#[derive(Debug, Default)]
struct Shared {
    me: BotIdentity,
    /// User id → display name.
    names: HashMap<String, String>,
    /// `(channel, thread_ts)` the bot is talking in: replies there need no mention.
    threads: HashSet<(String, String)>,
    /// `(channel, user)` → the thread that person last wrote in (where their
    /// slash commands go).
    last_thread: HashMap<(String, String), String>,
}

/// A message from the connection, with the envelope to acknowledge once it is kept.
#[derive(Debug)]
struct Delivery {
    message: Incoming,
    envelope: String,
}

/// The Slack adapter.
pub struct Slack {
    http: reqwest::Client,
    bot_token: String,
    app_token: String,
    api: String,
    caps: Capabilities,
    threading: Threading,
    reactions: bool,
    cache: PathBuf,
    shared: Arc<Mutex<Shared>>,
    events: tokio::sync::Mutex<Option<mpsc::Receiver<Delivery>>>,
    acks: Mutex<Option<mpsc::UnboundedSender<String>>>,
    /// Envelopes of the last batch, acknowledged when the next is asked for.
    unacked: Mutex<Vec<String>>,
}

impl std::fmt::Debug for Slack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slack")
            .field("api", &self.api)
            .finish_non_exhaustive()
    }
}

fn text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

/// Slack's message markup as plain text: `<url|label>` links, `<#C1|name>`
/// channels and the three escaped characters.
fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('>') else {
            out.push_str(&rest[open..]);
            rest = "";
            break;
        };
        let inner = &rest[open + 1..open + close];
        let (target, label) = inner.split_once('|').unwrap_or((inner, ""));
        if let Some(channel) = target.strip_prefix('#') {
            out.push('#');
            out.push_str(if label.is_empty() { channel } else { label });
        } else if target.starts_with('@') || target.starts_with('!') {
            out.push('<');
            out.push_str(inner);
            out.push('>');
        } else if label.is_empty() || label == target {
            out.push_str(target.strip_prefix("mailto:").unwrap_or(target));
        } else {
            out.push_str(&format!("{label} ({target})"));
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// An `events_api` message or app_mention as an [`Incoming`] (its files not
/// yet fetched); `None` for what the bot ignores.
fn parse_event(event: &Value, shared: &Shared, threading: Threading) -> Option<Incoming> {
    let kind = event.get("type").and_then(Value::as_str)?;
    let subtype = event.get("subtype").and_then(Value::as_str);
    if !matches!(kind, "message" | "app_mention")
        || subtype.is_some_and(|s| !matches!(s, "file_share" | "thread_broadcast"))
        || event.get("bot_id").is_some_and(|b| !b.is_null())
    {
        return None;
    }
    let me = &shared.me;
    let user = text(event.get("user"));
    if user.is_empty() || user == me.id {
        return None;
    }
    let channel = text(event.get("channel"));
    let raw = event.get("text").and_then(Value::as_str).unwrap_or("");
    let mention = format!("<@{}>", me.id);
    let mentioned = kind == "app_mention" || !me.id.is_empty() && raw.contains(&mention);
    let channel_type = event
        .get("channel_type")
        .and_then(Value::as_str)
        .unwrap_or(if channel.starts_with('D') { "im" } else { "" });
    let one_to_one = channel_type == "im";
    let dm_like = one_to_one || channel_type == "mpim";
    let ts = text(event.get("ts"));
    let event_thread = event
        .get("thread_ts")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .map(str::to_owned);
    let thread = if dm_like {
        event_thread
            .clone()
            .or_else(|| threading.dm_threads.then(|| ts.clone()))
    } else {
        match &event_thread {
            Some(t) if *t != ts => Some(t.clone()),
            _ => threading.reply_in_thread.then(|| ts.clone()),
        }
    };
    let in_our_thread = event_thread
        .as_ref()
        .is_some_and(|t| shared.threads.contains(&(channel.clone(), t.clone())));
    let name = shared
        .names
        .get(&user)
        .cloned()
        .unwrap_or_else(|| user.clone());
    Some(Incoming {
        key: format!("{channel}:{ts}"),
        chat: ChatRef {
            id: channel,
            kind: if one_to_one {
                ChatKind::Dm
            } else {
                ChatKind::Group
            },
            thread_id: thread,
            name: None,
        },
        sender: Sender { id: user, name },
        text: unescape(raw.replace(&mention, "").trim()),
        addressed: one_to_one || mentioned || in_our_thread,
        button_press: None,
        attachments: Vec::new(),
    })
}

/// A `block_actions` button press as an [`Incoming`].
fn parse_action(payload: &Value) -> Option<Incoming> {
    if payload.get("type").and_then(Value::as_str) != Some("block_actions") {
        return None;
    }
    let action = payload.get("actions")?.as_array()?.first()?;
    let channel = text(payload.pointer("/channel/id"));
    let thread = payload
        .pointer("/message/thread_ts")
        .or_else(|| payload.pointer("/container/thread_ts"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let user = payload.get("user")?;
    let trigger = text(payload.get("trigger_id"));
    Some(Incoming {
        key: format!(
            "a:{}:{}:{trigger}",
            text(payload.pointer("/container/message_ts")),
            text(action.get("action_ts"))
        ),
        chat: ChatRef {
            kind: if channel.starts_with('D') {
                ChatKind::Dm
            } else {
                ChatKind::Group
            },
            id: channel,
            thread_id: thread,
            name: None,
        },
        sender: Sender {
            id: text(user.get("id")),
            name: user
                .get("username")
                .or_else(|| user.get("name"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
        },
        text: text(action.get("value")),
        addressed: true,
        button_press: Some(trigger),
        attachments: Vec::new(),
    })
}

/// A slash command (`/hermes stop`, or a native `/stop`) as a message in the
/// thread its sender last wrote in.
fn parse_slash(payload: &Value, envelope: &str, shared: &Shared) -> Option<Incoming> {
    let command = text(payload.get("command"));
    let args = text(payload.get("text")).trim().to_owned();
    let name = command.trim_start_matches('/');
    let line = if name.is_empty() || name == "hermes" {
        match args.split_whitespace().next() {
            None => "/help".to_owned(),
            Some(first)
                if first
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_".contains(c))
                    && super::commands::is_command(first) =>
            {
                format!("/{args}")
            }
            Some(_) => args,
        }
    } else {
        format!("/{name} {args}").trim().to_owned()
    };
    let channel = text(payload.get("channel_id"));
    let user = text(payload.get("user_id"));
    if channel.is_empty() || user.is_empty() {
        return None;
    }
    let thread = shared
        .last_thread
        .get(&(channel.clone(), user.clone()))
        .cloned();
    let name = shared
        .names
        .get(&user)
        .cloned()
        .or_else(|| {
            payload
                .get("user_name")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_else(|| user.clone());
    Some(Incoming {
        key: format!("slash:{envelope}"),
        chat: ChatRef {
            kind: if channel.starts_with('D') {
                ChatKind::Dm
            } else {
                ChatKind::Group
            },
            id: channel,
            thread_id: thread,
            name: None,
        },
        sender: Sender { id: user, name },
        text: line,
        addressed: true,
        button_press: None,
        attachments: Vec::new(),
    })
}

/// A Web API error as a [`PlatformError`].
fn api_error(method: &str, status: u16, error: &str) -> PlatformError {
    let text = format!("Slack {method}: {status} {error}");
    if status == 429 || status >= 500 || error == "ratelimited" {
        PlatformError::Transient(text)
    } else if status == 404 || error == "unknown_method" {
        PlatformError::Unsupported(text)
    } else {
        PlatformError::Rejected(text)
    }
}

/// The Web API client the adapter and its connection task share.
#[derive(Clone)]
struct Api {
    http: reqwest::Client,
    base: String,
}

impl Api {
    async fn call(&self, token: &str, method: &str, body: &Value) -> Result<Value, PlatformError> {
        let request = self
            .http
            .post(format!("{}/{method}", self.base))
            .bearer_auth(token)
            .json(body);
        self.finish(method, request).await
    }

    /// A call with a form body (the methods that take no JSON).
    async fn call_form(
        &self,
        token: &str,
        method: &str,
        form: &[(&str, String)],
    ) -> Result<Value, PlatformError> {
        let request = self
            .http
            .post(format!("{}/{method}", self.base))
            .bearer_auth(token)
            .form(form);
        self.finish(method, request).await
    }

    async fn finish(
        &self,
        method: &str,
        request: reqwest::RequestBuilder,
    ) -> Result<Value, PlatformError> {
        let response = request
            .timeout(Duration::from_secs(30))
            .send()
            .await
            .map_err(|e| {
                PlatformError::Transient(format!(
                    "Slack {method}: {}",
                    if e.is_timeout() {
                        "timed out"
                    } else {
                        "cannot connect"
                    }
                ))
            })?;
        let status = response.status().as_u16();
        let payload: Value = response.json().await.unwrap_or(Value::Null);
        if payload.get("ok").and_then(Value::as_bool) == Some(true) {
            return Ok(payload);
        }
        let error = payload
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("no error given");
        Err(api_error(method, status, error))
    }
}

/// What the connection task needs.
struct Connection {
    api: Api,
    bot_token: String,
    app_token: String,
    threading: Threading,
    cache: PathBuf,
    shared: Arc<Mutex<Shared>>,
    tx: mpsc::Sender<Delivery>,
}

impl Connection {
    /// Keeps a Socket Mode connection up (a fresh URL each time), with backoff.
    async fn run(self, mut acks: mpsc::UnboundedReceiver<String>) {
        let mut failures: u32 = 0;
        while !self.tx.is_closed() {
            match self.once(&mut acks).await {
                Ok(()) => failures = 0,
                Err(_) => failures += 1,
            }
            let wait =
                Duration::from_millis(500 * (1u64 << failures.min(7))).min(Duration::from_secs(60));
            tokio::time::sleep(wait).await;
        }
    }

    async fn once(&self, acks: &mut mpsc::UnboundedReceiver<String>) -> Result<(), String> {
        let opened = self
            .api
            .call(&self.app_token, "apps.connections.open", &json!({}))
            .await
            .map_err(|e| e.to_string())?;
        let url = opened
            .get("url")
            .and_then(Value::as_str)
            .ok_or("no Socket Mode url")?;
        let tls = hermes_llm::SharedHttp::websocket_tls().map_err(|e| e.to_string())?;
        let (mut ws, _) = tokio_tungstenite::connect_async_tls_with_config(
            url,
            None,
            false,
            Some(tokio_tungstenite::Connector::Rustls(Arc::new(tls))),
        )
        .await
        .map_err(|e| format!("cannot open Socket Mode: {e}"))?;
        loop {
            let frame = tokio::select! {
                frame = ws.next() => frame,
                Some(id) = acks.recv() => {
                    let ack = json!({"envelope_id": id}).to_string();
                    ws.send(WsMessage::text(ack)).await.map_err(|e| e.to_string())?;
                    continue;
                }
            };
            let Some(frame) = frame else {
                return Ok(());
            };
            let envelope: Value = match frame.map_err(|e| e.to_string())? {
                WsMessage::Text(t) => serde_json::from_str(t.as_str()).unwrap_or(Value::Null),
                WsMessage::Ping(p) => {
                    ws.send(WsMessage::Pong(p))
                        .await
                        .map_err(|e| e.to_string())?;
                    continue;
                }
                WsMessage::Close(_) => return Ok(()),
                _ => continue,
            };
            let id = text(envelope.get("envelope_id"));
            let incoming = match envelope.get("type").and_then(Value::as_str) {
                Some("events_api") => match envelope.pointer("/payload/event") {
                    Some(event) => self.event(event).await,
                    None => None,
                },
                Some("interactive") => envelope.get("payload").and_then(parse_action),
                Some("slash_commands") => envelope.get("payload").and_then(|p| {
                    let shared = self.shared.lock().ok()?;
                    parse_slash(p, &id, &shared)
                }),
                Some("disconnect") => return Ok(()),
                _ => None,
            };
            match incoming {
                Some(message) => {
                    let delivery = Delivery {
                        message,
                        envelope: id,
                    };
                    if self.tx.send(delivery).await.is_err() {
                        return Ok(());
                    }
                }
                None if !id.is_empty() => {
                    let ack = json!({"envelope_id": id}).to_string();
                    ws.send(WsMessage::text(ack))
                        .await
                        .map_err(|e| e.to_string())?;
                }
                None => {}
            }
        }
    }

    /// A message event with its sender's name and its files.
    async fn event(&self, event: &Value) -> Option<Incoming> {
        if let Some(user) = event.get("user").and_then(Value::as_str) {
            self.learn_name(user).await;
        }
        let mut message = {
            let shared = self.shared.lock().ok()?;
            parse_event(event, &shared, self.threading)?
        };
        if let Ok(mut shared) = self.shared.lock()
            && let Some(thread) = &message.chat.thread_id
        {
            shared.last_thread.insert(
                (message.chat.id.clone(), message.sender.id.clone()),
                thread.clone(),
            );
            if message.addressed {
                shared
                    .threads
                    .insert((message.chat.id.clone(), thread.clone()));
            }
        }
        for file in event
            .get("files")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            match self.download(file).await {
                Ok(attachment) => message.attachments.push(attachment),
                Err(e) => message.text = format!("{}\n\n[{e}]", message.text).trim().to_owned(),
            }
        }
        Some(message)
    }

    /// Looks up a person's display name once.
    async fn learn_name(&self, user: &str) {
        let known = self
            .shared
            .lock()
            .map(|s| s.names.contains_key(user))
            .unwrap_or(true);
        if known {
            return;
        }
        let Ok(info) = self
            .api
            .call_form(&self.bot_token, "users.info", &[("user", user.to_owned())])
            .await
        else {
            return;
        };
        let name = [
            "/user/profile/display_name",
            "/user/real_name",
            "/user/name",
        ]
        .iter()
        .map(|p| text(info.pointer(p)))
        .find(|n| !n.trim().is_empty());
        if let (Some(name), Ok(mut shared)) = (name, self.shared.lock()) {
            shared.names.insert(user.to_owned(), name);
        }
    }

    async fn download(&self, file: &Value) -> Result<Attachment, String> {
        let name = text(file.get("name"));
        if file.get("size").and_then(Value::as_u64).unwrap_or(0) > MAX_DOWNLOAD {
            return Err(format!(
                "The file {name} is too large to download (over 50 MB)."
            ));
        }
        let url = file
            .get("url_private_download")
            .or_else(|| file.get("url_private"))
            .and_then(Value::as_str)
            .ok_or_else(|| format!("The file {name} has no download address."))?;
        let bytes = self
            .api
            .http
            .get(url)
            .bearer_auth(&self.bot_token)
            .timeout(Duration::from_secs(60))
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|_| format!("The file {name} could not be downloaded."))?
            .bytes()
            .await
            .map_err(|_| format!("The file {name} could not be downloaded."))?;
        let mime = text(file.get("mimetype"));
        let kind = if mime.starts_with("image/") {
            "image"
        } else if mime.starts_with("audio/") || text(file.get("subtype")) == "slack_audio" {
            "voice"
        } else {
            "document"
        };
        let ext = std::path::Path::new(&name)
            .extension()
            .map(|e| format!(".{}", e.to_string_lossy()))
            .unwrap_or_default();
        let path = media::save_incoming(&self.cache, kind, Some(&name), &ext, &bytes)
            .map_err(|e| format!("The file {name} could not be saved: {e}"))?;
        Ok(Attachment {
            kind: kind.to_owned(),
            path: path.display().to_string(),
        })
    }
}

/// The mrkdwn (or escaped plain) text of a message.
fn rendered(message: &Outgoing) -> String {
    if message.plain {
        message
            .text
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    } else {
        format::convert(&message.text, Dialect::Slack)
    }
}

/// Block Kit for a message with buttons: the text, then the buttons.
fn blocks(text: &str, message: &Outgoing) -> Value {
    let buttons: Vec<Value> = message
        .buttons
        .iter()
        .flatten()
        .map(|b| {
            let choice = b.data.split(':').nth(1).unwrap_or("deny");
            let action = if choice == "deny" {
                "hermes_deny".to_owned()
            } else {
                format!("hermes_approve_{choice}")
            };
            let mut button = json!({"type": "button", "action_id": action, "value": b.data,
                                    "text": {"type": "plain_text", "text": b.label, "emoji": true}});
            match choice {
                "once" => button["style"] = json!("primary"),
                "deny" => button["style"] = json!("danger"),
                _ => {}
            }
            button
        })
        .collect();
    // A section's text is capped at 3000 characters.
    let section: String = text.chars().take(3000).collect();
    json!([
        {"type": "section", "text": {"type": "mrkdwn", "text": section}},
        {"type": "actions", "elements": buttons}
    ])
}

impl Slack {
    /// An adapter for `settings` (the app token is required for Socket Mode);
    /// files people send are saved under `hermes_home/cache`.
    pub fn new(
        settings: &PlatformSettings,
        http: reqwest::Client,
        hermes_home: &std::path::Path,
    ) -> Result<Self, String> {
        let app_token = settings.app_token.clone().ok_or_else(|| {
            "Slack needs SLACK_APP_TOKEN (an xapp- token with connections:write) for Socket Mode"
                .to_owned()
        })?;
        Ok(Self {
            http,
            bot_token: settings.token.clone(),
            app_token,
            api: settings
                .base_url
                .clone()
                .unwrap_or_else(|| "https://slack.com/api".to_owned())
                .trim_end_matches('/')
                .to_owned(),
            caps: Capabilities {
                max_len: 39_000,
                edit_interval: Duration::from_millis(800),
                buttons: true,
            },
            threading: Threading {
                reply_in_thread: settings.reply_in_thread,
                dm_threads: settings.dm_threads,
            },
            reactions: settings.reactions,
            cache: hermes_home.join("cache"),
            shared: Arc::new(Mutex::new(Shared::default())),
            events: tokio::sync::Mutex::new(None),
            acks: Mutex::new(None),
            unacked: Mutex::new(Vec::new()),
        })
    }

    fn api(&self) -> Api {
        Api {
            http: self.http.clone(),
            base: self.api.clone(),
        }
    }

    async fn call(&self, method: &str, body: &Value) -> Result<Value, PlatformError> {
        self.api().call(&self.bot_token, method, body).await
    }

    /// The bot now talks in `chat`'s thread: replies there need no mention.
    fn note_thread(&self, chat: &ChatRef) {
        if let (Some(thread), Ok(mut shared)) = (&chat.thread_id, self.shared.lock()) {
            shared.threads.insert((chat.id.clone(), thread.clone()));
        }
    }

    async fn react(&self, message: &Incoming, name: &str, add: bool) {
        // Only plain messages carry their ts in the key (`channel:ts`).
        let Some((channel, ts)) = message.key.split_once(':') else {
            return;
        };
        if channel != message.chat.id {
            return;
        }
        let method = if add {
            "reactions.add"
        } else {
            "reactions.remove"
        };
        let body = json!({"channel": channel, "timestamp": ts, "name": name});
        let _ = self.call(method, &body).await;
    }
}

impl Adapter for Slack {
    fn name(&self) -> &'static str {
        "slack"
    }

    fn capabilities(&self) -> &Capabilities {
        &self.caps
    }

    fn connect(&self) -> BoxFuture<'_, Result<BotIdentity, PlatformError>> {
        Box::pin(async move {
            let auth = self.call("auth.test", &json!({})).await?;
            let identity = BotIdentity {
                id: text(auth.get("user_id")),
                username: text(auth.get("user")),
            };
            if let Ok(mut shared) = self.shared.lock() {
                shared.me = identity.clone();
            }
            let mut events = self.events.lock().await;
            if events.is_none() {
                let (tx, rx) = mpsc::channel(256);
                let (ack_tx, ack_rx) = mpsc::unbounded_channel();
                let connection = Connection {
                    api: self.api(),
                    bot_token: self.bot_token.clone(),
                    app_token: self.app_token.clone(),
                    threading: self.threading,
                    cache: self.cache.clone(),
                    shared: self.shared.clone(),
                    tx,
                };
                tokio::spawn(connection.run(ack_rx));
                if let Ok(mut acks) = self.acks.lock() {
                    *acks = Some(ack_tx);
                }
                *events = Some(rx);
            }
            Ok(identity)
        })
    }

    fn receive<'a>(
        &'a self,
        _cursor: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Batch, PlatformError>> {
        Box::pin(async move {
            // Asking for more means the last batch is safely in the inbox.
            let kept: Vec<String> = self
                .unacked
                .lock()
                .map(|mut u| std::mem::take(&mut *u))
                .unwrap_or_default();
            if let Ok(acks) = self.acks.lock()
                && let Some(acks) = acks.as_ref()
            {
                for id in kept.into_iter().filter(|id| !id.is_empty()) {
                    let _ = acks.send(id);
                }
            }
            let mut events = self.events.lock().await;
            let Some(rx) = events.as_mut() else {
                return Err(PlatformError::Transient("not connected".into()));
            };
            let Some(first) = rx.recv().await else {
                return Err(PlatformError::Transient(
                    "the Socket Mode connection ended".into(),
                ));
            };
            let mut deliveries = vec![first];
            while let Ok(more) = rx.try_recv() {
                deliveries.push(more);
            }
            let mut messages = Vec::with_capacity(deliveries.len());
            let mut envelopes = Vec::with_capacity(deliveries.len());
            for delivery in deliveries {
                messages.push(delivery.message);
                envelopes.push(delivery.envelope);
            }
            if let Ok(mut unacked) = self.unacked.lock() {
                *unacked = envelopes;
            }
            Ok(Batch {
                messages,
                cursor: None,
            })
        })
    }

    fn send<'a>(
        &'a self,
        chat: &'a ChatRef,
        message: &'a Outgoing,
    ) -> BoxFuture<'a, Result<String, PlatformError>> {
        Box::pin(async move {
            let text = rendered(message);
            let mut body = json!({"channel": chat.id, "text": text, "mrkdwn": true});
            if let Some(thread) = &chat.thread_id {
                body["thread_ts"] = json!(thread);
            }
            if !message.buttons.is_empty() {
                body["blocks"] = blocks(&text, message);
            }
            let sent = self.call("chat.postMessage", &body).await?;
            self.note_thread(chat);
            Ok(text_of(&sent, "ts"))
        })
    }

    fn edit<'a>(
        &'a self,
        chat: &'a ChatRef,
        message_id: &'a str,
        message: &'a Outgoing,
    ) -> BoxFuture<'a, Result<(), PlatformError>> {
        Box::pin(async move {
            let text = rendered(message);
            let blocks = if message.buttons.is_empty() {
                // Replacing the blocks with none takes old buttons away.
                json!([])
            } else {
                blocks(&text, message)
            };
            let body = json!({"channel": chat.id, "ts": message_id, "text": text,
                              "mrkdwn": true, "blocks": blocks});
            self.call("chat.update", &body).await.map(|_| ())
        })
    }

    fn typing<'a>(&'a self, chat: &'a ChatRef) -> BoxFuture<'a, Result<(), PlatformError>> {
        Box::pin(async move {
            // Bots show "is thinking…" only in threads (assistant.threads.setStatus);
            // where that is refused, stop asking for this chat.
            let Some(thread) = &chat.thread_id else {
                return Err(PlatformError::Unsupported(
                    "Slack typing outside threads".into(),
                ));
            };
            let body =
                json!({"channel_id": chat.id, "thread_ts": thread, "status": "is thinking..."});
            match self.call("assistant.threads.setStatus", &body).await {
                Ok(_) | Err(PlatformError::Transient(_)) => Ok(()),
                Err(e) => Err(PlatformError::Unsupported(e.to_string())),
            }
        })
    }

    fn answer_press<'a>(
        &'a self,
        _press_id: &'a str,
        _note: &'a str,
    ) -> BoxFuture<'a, Result<(), PlatformError>> {
        // The envelope acknowledgement answers the press.
        Box::pin(async { Ok(()) })
    }

    fn send_file<'a>(
        &'a self,
        chat: &'a ChatRef,
        file: &'a OutgoingFile,
        caption: &'a str,
    ) -> BoxFuture<'a, Result<String, PlatformError>> {
        Box::pin(async move {
            let bytes = tokio::fs::read(&file.path).await.map_err(|e| {
                PlatformError::Rejected(format!("cannot read {}: {e}", file.name()))
            })?;
            let api = self.api();
            let slot = api
                .call_form(
                    &self.bot_token,
                    "files.getUploadURLExternal",
                    &[
                        ("filename", file.name()),
                        ("length", bytes.len().to_string()),
                    ],
                )
                .await?;
            let (Some(url), Some(id)) = (
                slot.get("upload_url").and_then(Value::as_str),
                slot.get("file_id").and_then(Value::as_str),
            ) else {
                return Err(PlatformError::Rejected(
                    "Slack files.getUploadURLExternal: no upload address".into(),
                ));
            };
            self.http
                .post(url)
                .header("Content-Type", media::MediaKind::mime(&file.path))
                .body(bytes)
                .timeout(Duration::from_secs(120))
                .send()
                .await
                .and_then(reqwest::Response::error_for_status)
                .map_err(|e| {
                    PlatformError::Transient(format!(
                        "Slack file upload: {}",
                        e.status()
                            .map_or("cannot connect".into(), |s| s.to_string())
                    ))
                })?;
            let mut form = vec![
                (
                    "files",
                    json!([{"id": id, "title": file.name()}]).to_string(),
                ),
                ("channel_id", chat.id.clone()),
            ];
            if let Some(thread) = &chat.thread_id {
                form.push(("thread_ts", thread.clone()));
            }
            if !caption.trim().is_empty() {
                form.push(("initial_comment", caption.to_owned()));
            }
            api.call_form(&self.bot_token, "files.completeUploadExternal", &form)
                .await?;
            Ok(id.to_owned())
        })
    }

    fn mark<'a>(
        &'a self,
        message: &'a Incoming,
        progress: Progress,
    ) -> BoxFuture<'a, Result<(), PlatformError>> {
        Box::pin(async move {
            if !self.reactions || message.button_press.is_some() {
                return Ok(());
            }
            match progress {
                Progress::Working => self.react(message, "eyes", true).await,
                Progress::Done | Progress::Failed => {
                    self.react(message, "eyes", false).await;
                    let done = if progress == Progress::Done {
                        "white_check_mark"
                    } else {
                        "x"
                    };
                    self.react(message, done, true).await;
                }
            }
            Ok(())
        })
    }
}

fn text_of(v: &Value, key: &str) -> String {
    text(v.get(key))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn shared() -> Shared {
        Shared {
            me: BotIdentity {
                id: "UBOT".into(),
                username: "hermes".into(),
            },
            ..Shared::default()
        }
    }

    const THREADS: Threading = Threading {
        reply_in_thread: true,
        dm_threads: true,
    };

    #[test]
    fn channel_messages_are_threaded_and_mentions_stripped() {
        let me = shared();
        let e = json!({"type": "app_mention", "channel": "C1", "user": "U1", "text": "<@UBOT> hi &amp; <https://x.io|x>", "ts": "1.2"});
        let m = parse_event(&e, &me, THREADS).unwrap();
        assert_eq!(m.text, "hi & x (https://x.io)");
        assert_eq!(m.chat.thread_id.as_deref(), Some("1.2"));
        assert!(m.addressed);
        let bot = json!({"type": "message", "channel": "C1", "user": "U2", "bot_id": "B1", "text": "x", "ts": "1.4"});
        assert!(parse_event(&bot, &me, THREADS).is_none());
        let flat = Threading {
            reply_in_thread: false,
            dm_threads: true,
        };
        let plain =
            json!({"type": "message", "channel": "C1", "user": "U1", "text": "chat", "ts": "1.5"});
        let m = parse_event(&plain, &me, flat).unwrap();
        assert_eq!(m.chat.thread_id, None);
        assert!(!m.addressed);
    }

    #[test]
    fn each_top_level_dm_is_its_own_thread_unless_configured() {
        let me = shared();
        let dm = json!({"type": "message", "channel": "D1", "channel_type": "im", "user": "U1", "text": "yo", "ts": "1.3"});
        let m = parse_event(&dm, &me, THREADS).unwrap();
        assert_eq!(m.chat.kind, ChatKind::Dm);
        assert_eq!(m.chat.thread_id.as_deref(), Some("1.3"));
        let one = Threading {
            reply_in_thread: true,
            dm_threads: false,
        };
        assert_eq!(parse_event(&dm, &me, one).unwrap().chat.thread_id, None);
        let group_dm = json!({"type": "message", "channel": "G1", "channel_type": "mpim", "user": "U1", "text": "hey", "ts": "1.6"});
        let m = parse_event(&group_dm, &me, THREADS).unwrap();
        assert_eq!(m.chat.kind, ChatKind::Group);
        assert!(!m.addressed, "a group DM needs a mention");
    }

    #[test]
    fn replies_in_a_thread_the_bot_is_in_need_no_mention() {
        let mut me = shared();
        me.threads.insert(("C1".into(), "1.2".into()));
        let reply = json!({"type": "message", "channel": "C1", "user": "U1", "text": "and then?", "ts": "1.9", "thread_ts": "1.2"});
        let m = parse_event(&reply, &me, THREADS).unwrap();
        assert!(m.addressed);
        assert_eq!(m.chat.thread_id.as_deref(), Some("1.2"));
        let elsewhere = json!({"type": "message", "channel": "C1", "user": "U1", "text": "x", "ts": "2.1", "thread_ts": "2.0"});
        assert!(!parse_event(&elsewhere, &me, THREADS).unwrap().addressed);
    }

    #[test]
    fn slash_commands_go_to_the_senders_thread() {
        let mut me = shared();
        me.last_thread
            .insert(("D1".into(), "U1".into()), "5.5".into());
        let p = json!({"command": "/hermes", "text": "stop", "channel_id": "D1", "user_id": "U1", "user_name": "ann"});
        let m = parse_slash(&p, "env1", &me).unwrap();
        assert_eq!(m.text, "/stop");
        assert_eq!(m.chat.thread_id.as_deref(), Some("5.5"));
        assert_eq!(m.key, "slash:env1");
        let q = json!({"command": "/hermes", "text": "what is up", "channel_id": "C9", "user_id": "U1"});
        assert_eq!(parse_slash(&q, "e", &me).unwrap().text, "what is up");
        let native =
            json!({"command": "/approve", "text": "session", "channel_id": "D1", "user_id": "U1"});
        assert_eq!(
            parse_slash(&native, "e", &me).unwrap().text,
            "/approve session"
        );
    }
}
