//! Matrix through the client-server API: `/sync` long polls (the
//! `next_batch` token saved with the messages, so a restart neither loses
//! nor repeats one), rooms as chats (two members: a DM), threads, typing,
//! 👀/✅ reactions, answers as HTML, streaming by `m.replace` edits, media
//! up and down. No end-to-end encryption: encrypted rooms are not read.

mod events;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::access::{AccessRules, StrangerDm};
use super::config::PlatformSettings;
use super::media::{MediaKind, OutgoingFile};
use super::platform::{
    Adapter, Batch, BotIdentity, Capabilities, ChatRef, Incoming, Outgoing, PlatformError, Progress,
};

/// Milliseconds a `/sync` long poll waits.
const POLL_MS: u64 = 30_000;
/// Biggest file downloaded from a message.
const MAX_DOWNLOAD: u64 = 100 * 1024 * 1024;

/// The Matrix adapter.
pub struct Matrix {
    http: reqwest::Client,
    /// The homeserver's base URL.
    base: String,
    token: Mutex<String>,
    login: Option<(String, String)>,
    caps: Capabilities,
    me: Mutex<BotIdentity>,
    cache: PathBuf,
    poll_ms: AtomicU64,
    /// Per-process prefix of transaction ids (one id per logical send).
    txn_prefix: String,
    txn: AtomicU64,
    /// Joined member counts by room (two or fewer: a DM).
    members: Mutex<HashMap<String, u64>>,
    reactions: bool,
    auto_thread: bool,
    access: AccessRules,
    /// The 👀 reaction's event id on each message being worked on.
    working: Mutex<HashMap<String, String>>,
}

impl std::fmt::Debug for Matrix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Matrix")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

/// Percent-encodes a path segment (room ids hold `!` and `:`).
fn segment(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A reqwest error without its URL.
fn without_url(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        "timed out".to_owned()
    } else if e.is_connect() {
        "cannot connect to the homeserver".to_owned()
    } else {
        e.to_string()
    }
}

impl Matrix {
    /// An adapter for `settings`; downloads go under `hermes_home/cache`.
    pub fn new(settings: &PlatformSettings, http: reqwest::Client, hermes_home: &Path) -> Self {
        let base = settings
            .base_url
            .clone()
            .unwrap_or_else(|| "https://matrix.org".to_owned())
            .trim_end_matches('/')
            .to_owned();
        Self {
            http,
            base,
            token: Mutex::new(settings.token.clone()),
            login: settings.login.clone(),
            caps: Capabilities {
                max_len: 16_000,
                edit_interval: Duration::from_millis(800),
                buttons: false,
            },
            me: Mutex::new(BotIdentity::default()),
            cache: hermes_home.join("cache"),
            poll_ms: AtomicU64::new(POLL_MS),
            txn_prefix: uuid::Uuid::new_v4().simple().to_string()[..8].to_owned(),
            txn: AtomicU64::new(0),
            members: Mutex::new(HashMap::new()),
            reactions: settings.reactions,
            auto_thread: settings.reply_in_thread,
            access: settings.access.clone(),
            working: Mutex::new(HashMap::new()),
        }
    }

    fn token(&self) -> String {
        self.token.lock().map(|t| t.clone()).unwrap_or_default()
    }

    fn me(&self) -> BotIdentity {
        self.me.lock().map(|m| m.clone()).unwrap_or_default()
    }

    /// One client-server API call; the JSON answer.
    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
        timeout: Duration,
    ) -> Result<Value, PlatformError> {
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(self.token())
            .timeout(timeout);
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request
            .send()
            .await
            .map_err(|e| PlatformError::Transient(format!("Matrix: {}", without_url(&e))))?;
        Self::answer(response).await
    }

    async fn answer(response: reqwest::Response) -> Result<Value, PlatformError> {
        let status = response.status();
        let payload: Value = response.json().await.unwrap_or(Value::Null);
        if status.is_success() {
            return Ok(payload);
        }
        let code = payload["errcode"].as_str().unwrap_or("").to_owned();
        let text = format!(
            "Matrix: {} {code} {}",
            status.as_u16(),
            payload["error"].as_str().unwrap_or("")
        );
        Err(match (status.as_u16(), code.as_str()) {
            (429, _) | (500..=599, _) => PlatformError::Transient(text),
            (_, "M_UNRECOGNIZED") => PlatformError::Unsupported(text),
            _ => PlatformError::Rejected(text),
        })
    }

    /// A new transaction id.
    fn txn_id(&self) -> String {
        let n = self.txn.fetch_add(1, Ordering::Relaxed);
        format!("hermes_{}_{n}", self.txn_prefix)
    }

    /// Sends an event of `kind` into `room`; its event id.
    async fn send_event(
        &self,
        room: &str,
        kind: &str,
        content: &Value,
    ) -> Result<String, PlatformError> {
        let txn = self.txn_id();
        let path = format!(
            "/_matrix/client/v3/rooms/{}/send/{kind}/{txn}",
            segment(room)
        );
        // A retry of one send keeps its transaction id: the server keeps one event.
        let mut last = None;
        for attempt in 0..3 {
            match self
                .call(
                    reqwest::Method::PUT,
                    &path,
                    Some(content),
                    Duration::from_secs(45),
                )
                .await
            {
                Ok(v) => return Ok(v["event_id"].as_str().unwrap_or_default().to_owned()),
                Err(PlatformError::Transient(e)) => {
                    last = Some(PlatformError::Transient(e));
                    tokio::time::sleep(Duration::from_millis(500 << attempt)).await;
                }
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| PlatformError::Transient("Matrix: send failed".into())))
    }

    /// Whether an invite from `inviter` is accepted: the same rules as
    /// messages (allowlisted users, everyone, or pairing for strangers).
    fn accepts_invite(&self, inviter: &str) -> bool {
        let rules = &self.access;
        rules.allow_all_platform
            || rules.allow_all_gateway
            || rules
                .users
                .iter()
                .chain(&rules.gateway_users)
                .any(|u| u == "*" || u == inviter)
            || rules.stranger_dm() == StrangerDm::Pair
    }

    /// Joins the rooms the bot was invited to by people it may talk to.
    async fn join_invites(&self, rooms: &serde_json::Map<String, Value>) {
        let me = self.me().id;
        for (room, invite) in rooms {
            let inviter = invite["invite_state"]["events"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|e| e["type"] == "m.room.member" && e["state_key"] == me.as_str())
                .and_then(|e| e["sender"].as_str())
                .unwrap_or_default();
            let path = if self.accepts_invite(inviter) {
                format!("/_matrix/client/v3/join/{}", segment(room))
            } else {
                format!("/_matrix/client/v3/rooms/{}/leave", segment(room))
            };
            let _ = self
                .call(
                    reqwest::Method::POST,
                    &path,
                    Some(&json!({})),
                    Duration::from_secs(45),
                )
                .await;
        }
    }

    /// A room's joined member count (from the sync summary, else asked).
    async fn member_count(&self, room: &str) -> u64 {
        if let Some(n) = self.members.lock().ok().and_then(|m| m.get(room).copied()) {
            return n;
        }
        let path = format!("/_matrix/client/v3/rooms/{}/joined_members", segment(room));
        let n = self
            .call(reqwest::Method::GET, &path, None, Duration::from_secs(15))
            .await
            .ok()
            .and_then(|v| v["joined"].as_object().map(|m| m.len() as u64))
            .unwrap_or(3);
        if let Ok(mut m) = self.members.lock() {
            m.insert(room.to_owned(), n);
        }
        n
    }

    /// Downloads an `mxc://` file into the cache.
    async fn download(
        &self,
        kind: &str,
        content: &Value,
    ) -> Result<super::platform::Attachment, String> {
        let url = content["url"].as_str().unwrap_or_default();
        let Some((server, media)) = url.strip_prefix("mxc://").and_then(|r| r.split_once('/'))
        else {
            return Err("the file has no mxc:// address (encrypted files are not read)".to_owned());
        };
        if content["info"]["size"].as_u64().unwrap_or(0) > MAX_DOWNLOAD {
            return Err("The file is too large to download (100 MB at most).".to_owned());
        }
        let path = format!(
            "/_matrix/client/v1/media/download/{}/{}",
            segment(server),
            segment(media)
        );
        let response = self
            .http
            .get(format!("{}{path}", self.base))
            .bearer_auth(self.token())
            .timeout(Duration::from_secs(120))
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|e| without_url(&e))?;
        let bytes = response.bytes().await.map_err(|e| without_url(&e))?;
        let name = content["filename"]
            .as_str()
            .or_else(|| content["body"].as_str())
            .filter(|n| !n.trim().is_empty());
        let ext = name
            .and_then(|n| Path::new(n).extension())
            .map(|e| format!(".{}", e.to_string_lossy()))
            .unwrap_or_default();
        let saved = super::media::save_incoming(&self.cache, kind, name, &ext, &bytes)
            .map_err(|e| e.to_string())?;
        Ok(super::platform::Attachment {
            kind: kind.to_owned(),
            path: saved.display().to_string(),
        })
    }

    /// The content of a text message (markdown as HTML unless plain).
    fn text_content(&self, chat: &ChatRef, message: &Outgoing) -> Value {
        let mut content = json!({"msgtype": "m.text", "body": message.text});
        if !message.plain {
            let html = super::format::matrix_html(&message.text);
            if html.trim() != message.text.trim() {
                content["format"] = json!("org.matrix.custom.html");
                content["formatted_body"] = json!(html);
            }
        }
        events::relate_to_thread(&mut content, chat);
        content
    }

    fn react_path_key(message: &Incoming) -> String {
        format!("{}|{}", message.chat.id, message.key)
    }

    async fn react(&self, message: &Incoming, key: &str) -> Option<String> {
        let content = json!({"m.relates_to": {"rel_type": "m.annotation",
                             "event_id": message.key, "key": key}});
        self.send_event(&message.chat.id, "m.reaction", &content)
            .await
            .ok()
    }

    async fn redact(&self, room: &str, event: &str) {
        let path = format!(
            "/_matrix/client/v3/rooms/{}/redact/{}/{}",
            segment(room),
            segment(event),
            self.txn_id()
        );
        let _ = self
            .call(
                reqwest::Method::PUT,
                &path,
                Some(&json!({})),
                Duration::from_secs(30),
            )
            .await;
    }
}

impl Adapter for Matrix {
    fn name(&self) -> &'static str {
        "matrix"
    }

    fn capabilities(&self) -> &Capabilities {
        &self.caps
    }

    fn connect(&self) -> BoxFuture<'_, Result<BotIdentity, PlatformError>> {
        Box::pin(async move {
            if self.token().is_empty()
                && let Some((user, password)) = &self.login
            {
                let body = json!({"type": "m.login.password",
                                  "identifier": {"type": "m.id.user", "user": user},
                                  "password": password,
                                  "initial_device_display_name": "Hermes Agent"});
                let response = self
                    .http
                    .post(format!("{}/_matrix/client/v3/login", self.base))
                    .json(&body)
                    .timeout(Duration::from_secs(30))
                    .send()
                    .await
                    .map_err(|e| {
                        PlatformError::Transient(format!("Matrix login: {}", without_url(&e)))
                    })?;
                let v = Self::answer(response).await?;
                if let Ok(mut t) = self.token.lock() {
                    *t = v["access_token"].as_str().unwrap_or_default().to_owned();
                }
            }
            let who = self
                .call(
                    reqwest::Method::GET,
                    "/_matrix/client/v3/account/whoami",
                    None,
                    Duration::from_secs(30),
                )
                .await?;
            let id = who["user_id"].as_str().unwrap_or_default().to_owned();
            let localpart = id
                .trim_start_matches('@')
                .split(':')
                .next()
                .unwrap_or_default()
                .to_owned();
            let identity = BotIdentity {
                id,
                username: localpart,
            };
            if let Ok(mut me) = self.me.lock() {
                *me = identity.clone();
            }
            Ok(identity)
        })
    }

    fn account(&self) -> String {
        super::platform::digest(&format!("{}|{}", self.base, self.token()))
    }

    fn limit_poll(&self, max: Duration) {
        let ms = u64::try_from(max.as_millis())
            .unwrap_or(POLL_MS)
            .clamp(1000, POLL_MS);
        self.poll_ms.store(ms, Ordering::Relaxed);
    }

    fn receive<'a>(
        &'a self,
        cursor: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Batch, PlatformError>> {
        Box::pin(async move {
            let wait = if cursor.is_some() {
                self.poll_ms.load(Ordering::Relaxed)
            } else {
                0
            };
            let mut path = format!("/_matrix/client/v3/sync?timeout={wait}");
            if let Some(since) = cursor {
                path.push_str(&format!("&since={}", segment(since)));
            }
            let sync = self
                .call(
                    reqwest::Method::GET,
                    &path,
                    None,
                    Duration::from_millis(wait + 15_000),
                )
                .await?;
            let next = sync["next_batch"].as_str().map(str::to_owned);
            if let Some(invites) = sync["rooms"]["invite"].as_object() {
                self.join_invites(invites).await;
            }
            let mut messages = Vec::new();
            // The first sync only finds where "now" is: history is not answered.
            if cursor.is_some()
                && let Some(rooms) = sync["rooms"]["join"].as_object()
            {
                for (room, joined) in rooms {
                    if let Some(n) = joined["summary"]["m.joined_member_count"].as_u64()
                        && let Ok(mut m) = self.members.lock()
                    {
                        m.insert(room.clone(), n);
                    }
                    for event in joined["timeline"]["events"]
                        .as_array()
                        .into_iter()
                        .flatten()
                    {
                        if let Some(message) = self.incoming(room, event).await {
                            messages.push(message);
                        }
                    }
                }
            }
            Ok(Batch {
                messages,
                cursor: next,
            })
        })
    }

    fn send<'a>(
        &'a self,
        chat: &'a ChatRef,
        message: &'a Outgoing,
    ) -> BoxFuture<'a, Result<String, PlatformError>> {
        Box::pin(async move {
            let content = self.text_content(chat, message);
            self.send_event(&chat.id, "m.room.message", &content).await
        })
    }

    fn edit<'a>(
        &'a self,
        chat: &'a ChatRef,
        message_id: &'a str,
        message: &'a Outgoing,
    ) -> BoxFuture<'a, Result<(), PlatformError>> {
        Box::pin(async move {
            let mut new = self.text_content(chat, message);
            if let Some(obj) = new.as_object_mut() {
                obj.remove("m.relates_to");
            }
            let mut content = json!({
                "msgtype": "m.text",
                "body": format!("* {}", message.text),
                "m.new_content": new,
                "m.relates_to": {"rel_type": "m.replace", "event_id": message_id},
            });
            if let Some(html) = new["formatted_body"].as_str() {
                content["format"] = json!("org.matrix.custom.html");
                content["formatted_body"] = json!(format!("* {html}"));
            }
            self.send_event(&chat.id, "m.room.message", &content)
                .await
                .map(|_| ())
        })
    }

    fn typing<'a>(&'a self, chat: &'a ChatRef) -> BoxFuture<'a, Result<(), PlatformError>> {
        Box::pin(async move {
            let me = self.me().id;
            let path = format!(
                "/_matrix/client/v3/rooms/{}/typing/{}",
                segment(&chat.id),
                segment(&me)
            );
            self.call(
                reqwest::Method::PUT,
                &path,
                Some(&json!({"typing": true, "timeout": 30_000})),
                Duration::from_secs(15),
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
            let size = bytes.len();
            let mime = MediaKind::mime(&file.path);
            let name = file.name();
            let response = self
                .http
                .post(format!(
                    "{}/_matrix/media/v3/upload?filename={}",
                    self.base,
                    segment(&name)
                ))
                .bearer_auth(self.token())
                .header(reqwest::header::CONTENT_TYPE, mime)
                .body(bytes)
                .timeout(Duration::from_secs(120))
                .send()
                .await
                .map_err(|e| {
                    PlatformError::Transient(format!("Matrix upload: {}", without_url(&e)))
                })?;
            let uploaded = Self::answer(response).await?;
            let uri = uploaded["content_uri"].as_str().unwrap_or_default();
            let mut content = events::file_content(file.kind, &name, caption, uri, mime, size);
            events::relate_to_thread(&mut content, chat);
            self.send_event(&chat.id, "m.room.message", &content).await
        })
    }

    fn mark<'a>(
        &'a self,
        message: &'a Incoming,
        progress: Progress,
    ) -> BoxFuture<'a, Result<(), PlatformError>> {
        Box::pin(async move {
            if !self.reactions || message.key.is_empty() {
                return Ok(());
            }
            let key = Self::react_path_key(message);
            match progress {
                Progress::Working => {
                    if let Some(id) = self.react(message, "👀").await
                        && let Ok(mut w) = self.working.lock()
                    {
                        w.insert(key, id);
                    }
                }
                Progress::Done | Progress::Failed => {
                    let eyes = self.working.lock().ok().and_then(|mut w| w.remove(&key));
                    if let Some(eyes) = eyes {
                        self.redact(&message.chat.id, &eyes).await;
                    }
                    let done = if progress == Progress::Done {
                        "✅"
                    } else {
                        "❌"
                    };
                    self.react(message, done).await;
                }
            }
            Ok(())
        })
    }
}
