//! Discord: the gateway WebSocket (Hello → Identify → heartbeats →
//! MESSAGE_CREATE / INTERACTION_CREATE, resuming after a drop) for what
//! comes in, REST for what goes out; buttons as message components.
//! `base_url` and `gateway_url` point it at another server (tests).
//! Deliberately ours (see `telegram.rs` for why no SDK crate).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message as WsMessage;

use super::config::PlatformSettings;
use super::media::{self, MediaKind, OutgoingFile};
use super::platform::{
    Adapter, Batch, BotIdentity, Capabilities, ChatKind, ChatRef, Incoming, Outgoing,
    PlatformError, Progress, Sender, json_text,
};

/// Guilds, guild messages, direct messages, message content.
const INTENTS: u64 = 1 | (1 << 9) | (1 << 12) | (1 << 15);

/// The Discord adapter.
pub struct Discord {
    http: reqwest::Client,
    token: String,
    api: String,
    gateway_url: Option<String>,
    caps: Capabilities,
    me: Arc<Mutex<BotIdentity>>,
    events: tokio::sync::Mutex<Option<mpsc::Receiver<Incoming>>>,
    /// 👀 / ✅ reactions on the messages it works on (`DISCORD_REACTIONS`).
    reactions: bool,
}

impl std::fmt::Debug for Discord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Discord")
            .field("api", &self.api)
            .finish_non_exhaustive()
    }
}

fn http_error(what: &str, e: &reqwest::Error) -> PlatformError {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "cannot connect"
    } else {
        "request failed"
    };
    PlatformError::Transient(format!("Discord {what}: {kind}"))
}

/// A MESSAGE_CREATE as an [`Incoming`] (`None` for the bot's own and other bots').
fn parse_message(d: &Value, me: &BotIdentity) -> Option<Incoming> {
    let author = d.get("author")?;
    if author.get("bot").and_then(Value::as_bool) == Some(true)
        || json_text(author.get("id")) == me.id
    {
        return None;
    }
    let content = d.get("content").and_then(Value::as_str).unwrap_or("");
    let mention = format!("<@{}>", me.id);
    let nick_mention = format!("<@!{}>", me.id);
    let mentioned = content.contains(&mention)
        || content.contains(&nick_mention)
        || d.get("mentions")
            .and_then(Value::as_array)
            .is_some_and(|m| m.iter().any(|u| json_text(u.get("id")) == me.id));
    let reply_to_bot = d
        .pointer("/referenced_message/author/id")
        .is_some_and(|id| json_text(Some(id)) == me.id);
    let cleaned = content
        .replace(&mention, "")
        .replace(&nick_mention, "")
        .trim()
        .to_owned();
    let dm = d.get("guild_id").is_none_or(Value::is_null);
    let name = author
        .get("global_name")
        .and_then(Value::as_str)
        .or_else(|| author.get("username").and_then(Value::as_str))
        .unwrap_or("")
        .to_owned();
    let mut body = cleaned;
    for file in d
        .get("attachments")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let url = file.get("url").and_then(Value::as_str).unwrap_or("");
        let file_name = file
            .get("filename")
            .and_then(Value::as_str)
            .unwrap_or("file");
        body.push_str(&format!("\n\n[The user attached {file_name}: {url}]"));
    }
    Some(Incoming {
        key: json_text(d.get("id")),
        chat: ChatRef {
            id: json_text(d.get("channel_id")),
            kind: if dm { ChatKind::Dm } else { ChatKind::Group },
            thread_id: None,
            name: None,
        },
        sender: Sender {
            id: json_text(author.get("id")),
            name,
        },
        text: body.trim().to_owned(),
        addressed: dm || mentioned || reply_to_bot,
        button_press: None,
        attachments: Vec::new(),
    })
}

/// An INTERACTION_CREATE for a button as an [`Incoming`].
fn parse_press(d: &Value) -> Option<Incoming> {
    if d.get("type").and_then(Value::as_u64) != Some(3) {
        return None;
    }
    let user = d.pointer("/member/user").or_else(|| d.get("user"))?;
    let dm = d.get("guild_id").is_none_or(Value::is_null);
    Some(Incoming {
        key: format!("i:{}", json_text(d.get("id"))),
        chat: ChatRef {
            id: json_text(d.get("channel_id")),
            kind: if dm { ChatKind::Dm } else { ChatKind::Group },
            thread_id: None,
            name: None,
        },
        sender: Sender {
            id: json_text(user.get("id")),
            name: user
                .get("global_name")
                .and_then(Value::as_str)
                .or_else(|| user.get("username").and_then(Value::as_str))
                .unwrap_or("")
                .to_owned(),
        },
        text: d
            .pointer("/data/custom_id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        addressed: true,
        button_press: Some(format!(
            "{}:{}",
            json_text(d.get("id")),
            json_text(d.get("token"))
        )),
        attachments: Vec::new(),
    })
}

/// What the connection keeps across reconnects.
#[derive(Debug, Default)]
struct GatewaySession {
    session_id: Option<String>,
    resume_url: Option<String>,
    seq: Option<u64>,
}

impl Discord {
    /// An adapter for `settings`.
    pub fn new(settings: &PlatformSettings, http: reqwest::Client) -> Self {
        Self {
            http,
            token: settings.token.clone(),
            api: settings
                .base_url
                .clone()
                .unwrap_or_else(|| "https://discord.com/api/v10".to_owned())
                .trim_end_matches('/')
                .to_owned(),
            gateway_url: settings.gateway_url.clone(),
            caps: Capabilities {
                max_len: 2000,
                edit_interval: Duration::from_millis(800),
                buttons: true,
            },
            me: Arc::new(Mutex::new(BotIdentity::default())),
            events: tokio::sync::Mutex::new(None),
            reactions: settings.reactions,
        }
    }

    async fn rest(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, PlatformError> {
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.api))
            .header("Authorization", format!("Bot {}", self.token))
            .timeout(Duration::from_secs(30));
        if let Some(body) = body {
            request = request.json(body);
        }
        self.finish(path, request).await
    }

    /// Sends a prepared request; its JSON answer on success.
    async fn finish(
        &self,
        path: &str,
        request: reqwest::RequestBuilder,
    ) -> Result<Value, PlatformError> {
        let response = request.send().await.map_err(|e| http_error(path, &e))?;
        let status = response.status();
        let payload: Value = response.json().await.unwrap_or(Value::Null);
        if status.is_success() {
            return Ok(payload);
        }
        let message = payload.get("message").and_then(Value::as_str).unwrap_or("");
        let text = format!("Discord {path}: {} {message}", status.as_u16());
        Err(if status.as_u16() == 429 || status.is_server_error() {
            PlatformError::Transient(text)
        } else {
            PlatformError::Rejected(text)
        })
    }

    fn body(message: &Outgoing) -> Value {
        let mut body = json!({"content": message.text, "allowed_mentions": {"parse": ["users"]}});
        if !message.buttons.is_empty() {
            let rows: Vec<Value> = message
                .buttons
                .iter()
                .map(|row| {
                    let buttons: Vec<Value> = row
                        .iter()
                        .map(|b| {
                            let style = if b.data.starts_with("ea:deny") {
                                4
                            } else if b.data.starts_with("ea:once") {
                                3
                            } else {
                                2
                            };
                            json!({"type": 2, "style": style, "label": b.label, "custom_id": b.data})
                        })
                        .collect();
                    json!({"type": 1, "components": buttons})
                })
                .collect();
            body["components"] = json!(rows);
        } else {
            body["components"] = json!([]);
        }
        body
    }

    async fn gateway_address(&self) -> Result<String, PlatformError> {
        if let Some(url) = &self.gateway_url {
            return Ok(url.clone());
        }
        let info = self
            .rest(reqwest::Method::GET, "/gateway/bot", None)
            .await?;
        info.get("url")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| PlatformError::Transient("Discord /gateway/bot: no url".into()))
    }

    /// Keeps a gateway connection up, reconnecting (and resuming) after drops.
    async fn connection(
        token: String,
        base: String,
        me: Arc<Mutex<BotIdentity>>,
        tx: mpsc::Sender<Incoming>,
    ) {
        let mut session = GatewaySession::default();
        let mut failures: u32 = 0;
        while !tx.is_closed() {
            let url = session.resume_url.clone().unwrap_or_else(|| base.clone());
            match Self::one_connection(&token, &url, &me, &tx, &mut session).await {
                Ok(()) => failures = 0,
                Err(_) => failures += 1,
            }
            let wait =
                Duration::from_millis(500 * (1u64 << failures.min(7))).min(Duration::from_secs(60));
            tokio::time::sleep(wait).await;
        }
    }

    async fn one_connection(
        token: &str,
        url: &str,
        me: &Mutex<BotIdentity>,
        tx: &mpsc::Sender<Incoming>,
        session: &mut GatewaySession,
    ) -> Result<(), String> {
        let address = format!("{}/?v=10&encoding=json", url.trim_end_matches('/'));
        let tls = hermes_llm::SharedHttp::websocket_tls().map_err(|e| e.to_string())?;
        let (mut ws, _) = tokio_tungstenite::connect_async_tls_with_config(
            address.as_str(),
            None,
            false,
            Some(tokio_tungstenite::Connector::Rustls(Arc::new(tls))),
        )
        .await
        .map_err(|e| format!("cannot connect to the Discord gateway: {e}"))?;
        let mut heartbeat: Option<tokio::time::Interval> = None;
        let mut acked = true;
        loop {
            let tick = async {
                match heartbeat.as_mut() {
                    Some(h) => {
                        h.tick().await;
                    }
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                // No one receives any more (this replica stands by): leave.
                _ = tx.closed() => {
                    let _ = ws.close(None).await;
                    return Ok(());
                }
                _ = tick => {
                    if !acked {
                        return Err("heartbeat not acknowledged".into());
                    }
                    acked = false;
                    let beat = json!({"op": 1, "d": session.seq});
                    ws.send(WsMessage::text(beat.to_string())).await.map_err(|e| e.to_string())?;
                }
                frame = ws.next() => {
                    let Some(frame) = frame else { return Err("closed".into()) };
                    let frame = frame.map_err(|e| e.to_string())?;
                    let payload: Value = match frame {
                        WsMessage::Text(t) => serde_json::from_str(t.as_str()).unwrap_or(Value::Null),
                        WsMessage::Close(c) => {
                            // 4004: bad token; anything else: reconnect.
                            if c.as_ref().is_some_and(|c| u16::from(c.code) == 4004) {
                                session.session_id = None;
                            }
                            return Err("closed by Discord".into());
                        }
                        _ => continue,
                    };
                    if let Some(s) = payload.get("s").and_then(Value::as_u64) {
                        session.seq = Some(s);
                    }
                    match payload.get("op").and_then(Value::as_u64) {
                        Some(10) => {
                            let every = payload.pointer("/d/heartbeat_interval").and_then(Value::as_u64).unwrap_or(41_250);
                            let mut interval = tokio::time::interval_at(
                                tokio::time::Instant::now() + Duration::from_millis(every),
                                Duration::from_millis(every),
                            );
                            interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                            heartbeat = Some(interval);
                            let hello = match &session.session_id {
                                Some(id) => json!({"op": 6, "d": {"token": token, "session_id": id, "seq": session.seq}}),
                                None => json!({"op": 2, "d": {"token": token, "intents": INTENTS,
                                    "properties": {"os": std::env::consts::OS, "browser": "hermes-rs", "device": "hermes-rs"}}}),
                            };
                            ws.send(WsMessage::text(hello.to_string())).await.map_err(|e| e.to_string())?;
                        }
                        Some(11) => acked = true,
                        Some(1) => {
                            let beat = json!({"op": 1, "d": session.seq});
                            ws.send(WsMessage::text(beat.to_string())).await.map_err(|e| e.to_string())?;
                        }
                        Some(7) => return Ok(()),
                        Some(9) => {
                            if payload.get("d").and_then(Value::as_bool) != Some(true) {
                                *session = GatewaySession::default();
                            }
                            return Ok(());
                        }
                        Some(0) => {
                            let d = payload.get("d").cloned().unwrap_or(Value::Null);
                            match payload.get("t").and_then(Value::as_str) {
                                Some("READY") => {
                                    session.session_id = d.get("session_id").and_then(Value::as_str).map(str::to_owned);
                                    session.resume_url = d.get("resume_gateway_url").and_then(Value::as_str).map(str::to_owned);
                                    if let Ok(mut slot) = me.lock() {
                                        slot.id = json_text(d.pointer("/user/id"));
                                        slot.username = json_text(d.pointer("/user/username"));
                                    }
                                }
                                Some("MESSAGE_CREATE") => {
                                    let identity = me.lock().map(|m| m.clone()).unwrap_or_default();
                                    if let Some(message) = parse_message(&d, &identity)
                                        && tx.send(message).await.is_err()
                                    {
                                        return Ok(());
                                    }
                                }
                                Some("INTERACTION_CREATE") => {
                                    if let Some(press) = parse_press(&d)
                                        && tx.send(press).await.is_err()
                                    {
                                        return Ok(());
                                    }
                                }
                                _ => {}
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
    }
}

impl Adapter for Discord {
    fn name(&self) -> &'static str {
        "discord"
    }

    fn capabilities(&self) -> &Capabilities {
        &self.caps
    }

    fn connect(&self) -> BoxFuture<'_, Result<BotIdentity, PlatformError>> {
        Box::pin(async move {
            let user = self.rest(reqwest::Method::GET, "/users/@me", None).await?;
            let identity = BotIdentity {
                id: json_text(user.get("id")),
                username: json_text(user.get("username")),
            };
            if let Ok(mut slot) = self.me.lock() {
                *slot = identity.clone();
            }
            // The shard connects on the first receive: a standby replica
            // never opens one.
            Ok(identity)
        })
    }

    fn stand_by(&self) {
        // Dropping the receiver ends the connection task (it closes the
        // websocket as soon as it sees no one listens).
        if let Ok(mut events) = self.events.try_lock() {
            *events = None;
        }
    }

    fn receive<'a>(
        &'a self,
        _cursor: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Batch, PlatformError>> {
        Box::pin(async move {
            let mut events = self.events.lock().await;
            if events.is_none() {
                let url = self.gateway_address().await?;
                let (tx, rx) = mpsc::channel(256);
                tokio::spawn(Self::connection(
                    self.token.clone(),
                    url,
                    self.me.clone(),
                    tx,
                ));
                *events = Some(rx);
            }
            let Some(rx) = events.as_mut() else {
                return Err(PlatformError::Transient("not connected".into()));
            };
            let Some(first) = rx.recv().await else {
                return Err(PlatformError::Transient(
                    "the gateway connection ended".into(),
                ));
            };
            let mut messages = vec![first];
            while let Ok(more) = rx.try_recv() {
                messages.push(more);
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
            let body = Self::body(message);
            let sent = self
                .rest(
                    reqwest::Method::POST,
                    &format!("/channels/{}/messages", chat.id),
                    Some(&body),
                )
                .await?;
            Ok(json_text(sent.get("id")))
        })
    }

    fn edit<'a>(
        &'a self,
        chat: &'a ChatRef,
        message_id: &'a str,
        message: &'a Outgoing,
    ) -> BoxFuture<'a, Result<(), PlatformError>> {
        Box::pin(async move {
            let body = Self::body(message);
            self.rest(
                reqwest::Method::PATCH,
                &format!("/channels/{}/messages/{message_id}", chat.id),
                Some(&body),
            )
            .await
            .map(|_| ())
        })
    }

    fn typing<'a>(&'a self, chat: &'a ChatRef) -> BoxFuture<'a, Result<(), PlatformError>> {
        Box::pin(async move {
            self.rest(
                reqwest::Method::POST,
                &format!("/channels/{}/typing", chat.id),
                None,
            )
            .await
            .map(|_| ())
        })
    }

    fn send_file<'a>(
        &'a self,
        chat: &'a ChatRef,
        file: &'a OutgoingFile,
        caption: &'a str,
    ) -> BoxFuture<'a, Result<String, PlatformError>> {
        Box::pin(async move {
            let bytes = file.bytes().await?;
            let payload = json!({"content": caption, "allowed_mentions": {"parse": []}});
            let (content_type, body) = media::multipart(
                &[("payload_json", payload.to_string())],
                "files[0]",
                &file.name(),
                MediaKind::mime(&file.path),
                &bytes,
            );
            let path = format!("/channels/{}/messages", chat.id);
            let request = self
                .http
                .post(format!("{}{path}", self.api))
                .header("Authorization", format!("Bot {}", self.token))
                .header("Content-Type", content_type)
                .body(body)
                .timeout(Duration::from_secs(120));
            let sent = self.finish(&path, request).await?;
            Ok(json_text(sent.get("id")))
        })
    }

    fn mark<'a>(
        &'a self,
        message: &'a Incoming,
        progress: Progress,
    ) -> BoxFuture<'a, Result<(), PlatformError>> {
        Box::pin(async move {
            if !self.reactions || message.button_press.is_some() || message.key.is_empty() {
                return Ok(());
            }
            // 👀 while working, then ✅ or ❌ (URL-encoded emoji).
            let base = format!(
                "/channels/{}/messages/{}/reactions",
                message.chat.id, message.key
            );
            let eyes = format!("{base}/%F0%9F%91%80/@me");
            match progress {
                Progress::Working => {
                    self.rest(reqwest::Method::PUT, &eyes, None).await?;
                }
                Progress::Done | Progress::Failed => {
                    let _ = self.rest(reqwest::Method::DELETE, &eyes, None).await;
                    let done = if progress == Progress::Done {
                        "%E2%9C%85"
                    } else {
                        "%E2%9D%8C"
                    };
                    self.rest(reqwest::Method::PUT, &format!("{base}/{done}/@me"), None)
                        .await?;
                }
            }
            Ok(())
        })
    }

    fn answer_press<'a>(
        &'a self,
        press_id: &'a str,
        _note: &'a str,
    ) -> BoxFuture<'a, Result<(), PlatformError>> {
        Box::pin(async move {
            let Some((id, token)) = press_id.split_once(':') else {
                return Ok(());
            };
            // Deferred update: the message is edited separately.
            self.rest(
                reqwest::Method::POST,
                &format!("/interactions/{id}/{token}/callback"),
                Some(&json!({"type": 6})),
            )
            .await
            .map(|_| ())
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn messages_and_mentions() {
        let me = BotIdentity {
            id: "99".into(),
            username: "hermes".into(),
        };
        let d = json!({"id": "1", "channel_id": "c", "guild_id": "g", "content": "<@99> hi there",
                       "author": {"id": "5", "username": "ann"}, "mentions": [{"id": "99"}]});
        let m = parse_message(&d, &me).unwrap();
        assert_eq!(m.text, "hi there");
        assert!(m.addressed);
        assert_eq!(m.chat.kind, ChatKind::Group);
        let dm = json!({"id": "2", "channel_id": "d", "content": "yo", "author": {"id": "5", "username": "ann"}});
        assert_eq!(parse_message(&dm, &me).unwrap().chat.kind, ChatKind::Dm);
        let own = json!({"id": "3", "channel_id": "d", "content": "yo", "author": {"id": "99", "bot": true}});
        assert!(parse_message(&own, &me).is_none());
    }
}
