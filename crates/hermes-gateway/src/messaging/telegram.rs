//! Telegram through the Bot API: long polling with `getUpdates`, answers
//! in MarkdownV2 (plain text when Telegram cannot parse it), inline
//! keyboards for approvals. `platforms.telegram.extra.base_url` points it
//! at another Bot API server (an emulator, a self-hosted one) the way
//! python-telegram-bot's `base_url` does.
//!
//! Deliberately ours, as every chat platform's client here: the SDK crates
//! each bring their own HTTP/WebSocket stack and runtime choices for the
//! dozen calls a gateway makes, and none lets the gateway's inbox decide
//! what was delivered.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::config::PlatformSettings;
use super::format::{self, Dialect};
use super::media::{self, MediaKind, OutgoingFile};
use super::platform::{
    Adapter, Attachment, Batch, BotIdentity, Capabilities, ChatKind, ChatRef, Incoming, Outgoing,
    PlatformError, Sender, json_text,
};

/// Seconds a `getUpdates` long poll waits.
const POLL_SECS: u64 = 25;
/// Biggest file the Bot API lets a bot download.
const MAX_DOWNLOAD: u64 = 20 * 1024 * 1024;

/// The Telegram adapter.
pub struct Telegram {
    http: reqwest::Client,
    /// `https://api.telegram.org/bot<TOKEN>/`.
    api: String,
    /// `https://api.telegram.org/file/bot<TOKEN>/`.
    files: String,
    caps: Capabilities,
    me: Mutex<BotIdentity>,
    cache: PathBuf,
    /// Seconds a long poll may wait (shorter under a replica lease).
    poll_secs: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for Telegram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URLs hold the token.
        f.debug_struct("Telegram").finish_non_exhaustive()
    }
}

/// The method prefix for `token` under `base` (python-telegram-bot's rule:
/// the token follows the base, which normally ends in `/bot`).
fn api_prefix(base: Option<&str>, token: &str, kind: &str) -> String {
    let base = base
        .unwrap_or("https://api.telegram.org/bot")
        .trim_end_matches('/');
    let base = if kind == "file" {
        match base.strip_suffix("/bot") {
            Some(root) => format!("{root}/file/bot"),
            None => format!("{base}/file/bot"),
        }
    } else if base.ends_with("/bot") {
        base.to_owned()
    } else {
        format!("{base}/bot")
    };
    format!("{base}{token}/")
}

fn chat_id_value(id: &str) -> Value {
    id.parse::<i64>().map_or_else(|_| json!(id), |n| json!(n))
}

impl Telegram {
    /// An adapter for `settings`; downloads go under `hermes_home/cache`.
    pub fn new(settings: &PlatformSettings, http: reqwest::Client, hermes_home: &Path) -> Self {
        Self {
            http,
            api: api_prefix(settings.base_url.as_deref(), &settings.token, "api"),
            files: api_prefix(settings.base_url.as_deref(), &settings.token, "file"),
            caps: Capabilities {
                max_len: 4096,
                edit_interval: Duration::from_millis(800),
                buttons: true,
            },
            me: Mutex::new(BotIdentity::default()),
            cache: hermes_home.join("cache"),
            poll_secs: std::sync::atomic::AtomicU64::new(POLL_SECS),
        }
    }

    /// Calls `method`; the `result` on success.
    async fn call(
        &self,
        method: &str,
        body: &Value,
        timeout: Duration,
    ) -> Result<Value, PlatformError> {
        let request = self.http.post(format!("{}{method}", self.api)).json(body);
        self.finish(method, request, timeout).await
    }

    /// Sends a prepared call; the `result` on success.
    async fn finish(
        &self,
        method: &str,
        request: reqwest::RequestBuilder,
        timeout: Duration,
    ) -> Result<Value, PlatformError> {
        let response = request.timeout(timeout).send().await.map_err(|e| {
            PlatformError::Transient(format!("Telegram {method}: {}", without_url(&e)))
        })?;
        let status = response.status();
        let payload: Value = response.json().await.unwrap_or(Value::Null);
        if status.is_success() && payload.get("ok").and_then(Value::as_bool) != Some(false) {
            return Ok(payload.get("result").cloned().unwrap_or(Value::Null));
        }
        let description = payload
            .get("description")
            .or_else(|| payload.get("message"))
            .and_then(Value::as_str)
            .unwrap_or("no description")
            .to_owned();
        let text = format!("Telegram {method}: {} {description}", status.as_u16());
        Err(if description.contains("not supported") {
            PlatformError::Unsupported(text)
        } else if status.as_u16() == 429 || status.is_server_error() {
            PlatformError::Transient(text)
        } else {
            PlatformError::Rejected(text)
        })
    }

    fn parse_update(&self, update: &Value, me: &BotIdentity) -> Option<Incoming> {
        if let Some(press) = update.get("callback_query") {
            let from = press.get("from")?;
            let message = press.get("message");
            let chat = message.and_then(|m| m.get("chat"));
            return Some(Incoming {
                key: format!("cb:{}", json_text(press.get("id"))),
                chat: chat_ref(chat?, message?),
                sender: sender(from),
                text: press
                    .get("data")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
                addressed: true,
                button_press: Some(json_text(press.get("id"))),
                attachments: Vec::new(),
            });
        }
        let message = update.get("message")?;
        let from = message.get("from")?;
        if from.get("is_bot").and_then(Value::as_bool) == Some(true) {
            return None;
        }
        let chat = chat_ref(message.get("chat")?, message);
        let raw = message
            .get("text")
            .or_else(|| message.get("caption"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let (text, mentioned) = strip_mention(raw, &me.username);
        let reply_to_bot = message
            .pointer("/reply_to_message/from/id")
            .is_some_and(|id| json_text(Some(id)) == me.id);
        Some(Incoming {
            key: format!("{}:{}", chat.id, json_text(message.get("message_id"))),
            addressed: chat.kind == ChatKind::Dm || mentioned || reply_to_bot,
            chat,
            sender: sender(from),
            text,
            button_press: None,
            attachments: Vec::new(),
        })
    }

    /// Downloads the message's file (photo, voice, document) into the cache.
    async fn download(&self, message: &Value) -> Option<Result<Attachment, String>> {
        let (kind, file, name) = if let Some(sizes) = message.get("photo").and_then(Value::as_array)
        {
            ("image", sizes.last()?, None)
        } else if let Some(voice) = message.get("voice") {
            ("voice", voice, None)
        } else if let Some(audio) = message.get("audio") {
            (
                "audio",
                audio,
                audio.get("file_name").and_then(Value::as_str),
            )
        } else if let Some(doc) = message.get("document") {
            (
                "document",
                doc,
                doc.get("file_name").and_then(Value::as_str),
            )
        } else {
            return None;
        };
        Some(self.fetch_file(kind, file, name).await)
    }

    async fn fetch_file(
        &self,
        kind: &str,
        file: &Value,
        name: Option<&str>,
    ) -> Result<Attachment, String> {
        if file.get("file_size").and_then(Value::as_u64).unwrap_or(0) > MAX_DOWNLOAD {
            return Err(format!(
                "The {kind} is too large to download (Telegram allows bots 20 MB)."
            ));
        }
        let id = file.get("file_id").and_then(Value::as_str).unwrap_or("");
        let info = self
            .call("getFile", &json!({"file_id": id}), Duration::from_secs(30))
            .await
            .map_err(|e| e.to_string())?;
        let remote = info
            .get("file_path")
            .and_then(Value::as_str)
            .ok_or("no file_path")?;
        let bytes = self
            .http
            .get(format!("{}{remote}", self.files))
            .timeout(Duration::from_secs(60))
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|e| without_url(&e))?
            .bytes()
            .await
            .map_err(|e| without_url(&e))?;
        let ext = Path::new(remote)
            .extension()
            .map(|e| format!(".{}", e.to_string_lossy()))
            .unwrap_or_else(|| {
                if kind == "voice" {
                    ".ogg".into()
                } else {
                    String::new()
                }
            });
        let path = super::media::save_incoming(&self.cache, kind, name, &ext, &bytes)
            .map_err(|e| e.to_string())?;
        Ok(Attachment {
            kind: kind.to_owned(),
            path: path.display().to_string(),
        })
    }

    fn body(&self, chat: &ChatRef, message: &Outgoing) -> Value {
        let mut body = json!({"chat_id": chat_id_value(&chat.id)});
        if message.plain {
            body["text"] = json!(message.text);
        } else {
            body["text"] = json!(format::convert(&message.text, Dialect::TelegramV2));
            body["parse_mode"] = json!("MarkdownV2");
        }
        if let Some(thread) = &chat.thread_id {
            body["message_thread_id"] = chat_id_value(thread);
        }
        if !message.buttons.is_empty() {
            let rows: Vec<Vec<Value>> = message
                .buttons
                .iter()
                .map(|row| {
                    row.iter()
                        .map(|b| json!({"text": b.label, "callback_data": b.data}))
                        .collect()
                })
                .collect();
            body["reply_markup"] = json!({"inline_keyboard": rows});
        }
        body
    }

    /// Calls `method` with the formatted body; when Telegram cannot parse the
    /// formatting, again as plain text.
    async fn formatted(
        &self,
        method: &str,
        body: Value,
        original: &Outgoing,
    ) -> Result<Value, PlatformError> {
        match self.call(method, &body, Duration::from_secs(30)).await {
            Err(PlatformError::Rejected(e))
                if !original.plain
                    && (e.contains("parse") || e.to_lowercase().contains("markdown")) =>
            {
                let mut plain = body;
                plain["text"] = json!(format::plain(&original.text));
                if let Some(obj) = plain.as_object_mut() {
                    obj.remove("parse_mode");
                }
                self.call(method, &plain, Duration::from_secs(30)).await
            }
            other => other,
        }
    }
}

/// A reqwest error without its URL (which holds the bot token).
fn without_url(e: &reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "cannot connect"
    } else if e.is_decode() {
        "unreadable response"
    } else {
        "request failed"
    };
    match std::error::Error::source(e) {
        Some(source) => format!("{kind}: {source}"),
        None => kind.to_owned(),
    }
}

fn sender(from: &Value) -> Sender {
    let first = from.get("first_name").and_then(Value::as_str).unwrap_or("");
    let last = from.get("last_name").and_then(Value::as_str).unwrap_or("");
    let name = format!("{first} {last}").trim().to_owned();
    Sender {
        id: json_text(from.get("id")),
        name: if name.is_empty() {
            from.get("username")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        } else {
            name
        },
    }
}

fn chat_ref(chat: &Value, message: &Value) -> ChatRef {
    let kind = match chat.get("type").and_then(Value::as_str) {
        Some("private") | None => ChatKind::Dm,
        Some("channel") => ChatKind::Channel,
        _ => ChatKind::Group,
    };
    let topic = message.get("is_topic_message").and_then(Value::as_bool) == Some(true);
    ChatRef {
        id: json_text(chat.get("id")),
        kind,
        thread_id: topic
            .then(|| json_text(message.get("message_thread_id")))
            .filter(|t| !t.is_empty()),
        name: chat
            .get("title")
            .or_else(|| chat.get("first_name"))
            .and_then(Value::as_str)
            .map(str::to_owned),
    }
}

/// Removes `@bot` mentions; says whether there was one.
fn strip_mention(text: &str, username: &str) -> (String, bool) {
    if username.is_empty() {
        return (text.to_owned(), false);
    }
    let needle = format!("@{}", username.to_lowercase());
    let lower = text.to_lowercase();
    if !lower.contains(&needle) {
        return (text.to_owned(), false);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.to_lowercase().find(&needle) {
        out.push_str(&rest[..at]);
        rest = &rest[at + needle.len()..];
        rest = rest.trim_start_matches([',', ':', '-']).trim_start();
        // `/cmd@bot args` keeps a space before its arguments.
        if out.ends_with(|c: char| !c.is_whitespace()) && !rest.is_empty() && out.starts_with('/') {
            out.push(' ');
        }
    }
    out.push_str(rest);
    let stripped = out.trim().to_owned();
    if stripped.is_empty() {
        (text.to_owned(), true)
    } else {
        (stripped, true)
    }
}

impl Adapter for Telegram {
    fn name(&self) -> &'static str {
        "telegram"
    }

    fn capabilities(&self) -> &Capabilities {
        &self.caps
    }

    fn connect(&self) -> BoxFuture<'_, Result<BotIdentity, PlatformError>> {
        Box::pin(async move {
            let me = self
                .call("getMe", &json!({}), Duration::from_secs(30))
                .await?;
            let identity = BotIdentity {
                id: json_text(me.get("id")),
                username: me
                    .get("username")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
            };
            if let Ok(mut slot) = self.me.lock() {
                *slot = identity.clone();
            }
            Ok(identity)
        })
    }

    fn account(&self) -> String {
        // The token picks the bot; only a digest of it goes into lease names.
        super::platform::digest(&self.api)
    }

    fn limit_poll(&self, max: Duration) {
        let secs = max.as_secs().clamp(1, POLL_SECS);
        self.poll_secs
            .store(secs, std::sync::atomic::Ordering::Relaxed);
    }

    fn receive<'a>(
        &'a self,
        cursor: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Batch, PlatformError>> {
        Box::pin(async move {
            let offset: i64 = cursor.and_then(|c| c.parse().ok()).unwrap_or(0);
            let started = Instant::now();
            let wait = self.poll_secs.load(std::sync::atomic::Ordering::Relaxed);
            let updates = self
                .call(
                    "getUpdates",
                    &json!({"offset": offset, "timeout": wait,
                            "allowed_updates": ["message", "callback_query"]}),
                    Duration::from_secs(wait + 15),
                )
                .await?;
            let updates = updates.as_array().cloned().unwrap_or_default();
            let me = self.me.lock().map(|m| m.clone()).unwrap_or_default();
            let mut next = offset;
            let mut messages = Vec::new();
            for update in &updates {
                let Some(id) = update.get("update_id").and_then(Value::as_i64) else {
                    continue;
                };
                // A server that ignores `offset` repeats updates: skip them.
                if id < offset {
                    continue;
                }
                next = next.max(id + 1);
                if let Some(mut message) = self.parse_update(update, &me) {
                    if let Some(raw) = update.get("message")
                        && let Some(download) = self.download(raw).await
                    {
                        match download {
                            Ok(file) => message.attachments.push(file),
                            Err(e) => {
                                message.text =
                                    format!("{}\n\n[{e}]", message.text).trim().to_owned()
                            }
                        }
                    }
                    messages.push(message);
                }
            }
            if updates.is_empty() && started.elapsed() < Duration::from_secs(1) {
                // The server did not hold the poll open: pace the next one.
                tokio::time::sleep(Duration::from_millis(150)).await;
            }
            Ok(Batch {
                messages,
                cursor: (next != offset).then(|| next.to_string()),
            })
        })
    }

    fn send<'a>(
        &'a self,
        chat: &'a ChatRef,
        message: &'a Outgoing,
    ) -> BoxFuture<'a, Result<String, PlatformError>> {
        Box::pin(async move {
            let result = self
                .formatted("sendMessage", self.body(chat, message), message)
                .await?;
            Ok(json_text(result.get("message_id")))
        })
    }

    fn edit<'a>(
        &'a self,
        chat: &'a ChatRef,
        message_id: &'a str,
        message: &'a Outgoing,
    ) -> BoxFuture<'a, Result<(), PlatformError>> {
        Box::pin(async move {
            let mut body = self.body(chat, message);
            body["message_id"] = chat_id_value(message_id);
            if let Some(obj) = body.as_object_mut() {
                obj.remove("message_thread_id");
            }
            match self.formatted("editMessageText", body, message).await {
                Ok(_) => Ok(()),
                Err(PlatformError::Rejected(e)) if e.contains("not modified") => Ok(()),
                Err(e) => Err(e),
            }
        })
    }

    fn typing<'a>(&'a self, chat: &'a ChatRef) -> BoxFuture<'a, Result<(), PlatformError>> {
        Box::pin(async move {
            let mut body = json!({"chat_id": chat_id_value(&chat.id), "action": "typing"});
            if let Some(thread) = &chat.thread_id {
                body["message_thread_id"] = chat_id_value(thread);
            }
            self.call("sendChatAction", &body, Duration::from_secs(10))
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
            let (method, field) = match file.kind {
                MediaKind::Image => ("sendPhoto", "photo"),
                MediaKind::Video => ("sendVideo", "video"),
                MediaKind::Voice => ("sendVoice", "voice"),
                MediaKind::Audio => ("sendAudio", "audio"),
                MediaKind::Document => ("sendDocument", "document"),
            };
            let mut fields = vec![("chat_id", chat.id.clone())];
            if let Some(thread) = &chat.thread_id {
                fields.push(("message_thread_id", thread.clone()));
            }
            if !caption.trim().is_empty() {
                fields.push(("caption", caption.chars().take(1024).collect()));
            }
            let (content_type, body) = media::multipart(
                &fields,
                field,
                &file.name(),
                MediaKind::mime(&file.path),
                &bytes,
            );
            let request = self
                .http
                .post(format!("{}{method}", self.api))
                .header("Content-Type", content_type)
                .body(body);
            let sent = self
                .finish(method, request, Duration::from_secs(120))
                .await?;
            Ok(json_text(sent.get("message_id")))
        })
    }

    fn answer_press<'a>(
        &'a self,
        press_id: &'a str,
        note: &'a str,
    ) -> BoxFuture<'a, Result<(), PlatformError>> {
        Box::pin(async move {
            let mut body = json!({"callback_query_id": press_id});
            if !note.is_empty() {
                body["text"] = json!(note);
            }
            self.call("answerCallbackQuery", &body, Duration::from_secs(10))
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
    fn base_urls_follow_python_telegram_bot() {
        assert_eq!(
            api_prefix(None, "1:A", "api"),
            "https://api.telegram.org/bot1:A/"
        );
        assert_eq!(
            api_prefix(None, "1:A", "file"),
            "https://api.telegram.org/file/bot1:A/"
        );
        assert_eq!(
            api_prefix(Some("http://127.0.0.1:9000/bot"), "1:A", "api"),
            "http://127.0.0.1:9000/bot1:A/"
        );
        assert_eq!(
            api_prefix(Some("http://127.0.0.1:9000"), "1:A", "api"),
            "http://127.0.0.1:9000/bot1:A/"
        );
    }

    #[test]
    fn mentions_are_stripped() {
        assert_eq!(
            strip_mention("@HermesBot what time is it", "hermesbot"),
            ("what time is it".into(), true)
        );
        assert_eq!(
            strip_mention("/status@HermesBot", "HermesBot"),
            ("/status".into(), true)
        );
        assert_eq!(strip_mention("hello", "HermesBot"), ("hello".into(), false));
    }
}
