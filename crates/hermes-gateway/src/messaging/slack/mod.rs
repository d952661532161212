//! Slack: Socket Mode (a WebSocket opened with the app token through
//! `apps.connections.open`) for what comes in, the Web API for what goes
//! out, in mrkdwn, with Block Kit buttons for approvals. As in the reference,
//! channel messages are answered in a thread and each top-level DM starts a
//! threaded session of its own. An envelope is acknowledged only once its
//! message is in the inbox, so a gateway killed in between gets it again.
//! `base_url` points it at another Web API (an emulator, a proxy).

mod parse;
mod socket;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use self::parse::{Shared, Threading};
use self::socket::{Api, Connection, Delivery};
use super::config::PlatformSettings;
use super::format::{self, Dialect};
use super::media::{self, OutgoingFile};
use super::platform::{
    Adapter, Batch, BotIdentity, Capabilities, ChatRef, Incoming, Outgoing, PlatformError,
    Progress, json_text,
};

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

    /// Opens the Socket Mode connection when none is open.
    fn open_connection(&self, events: &mut Option<mpsc::Receiver<Delivery>>) {
        if events.is_some() {
            return;
        }
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
                id: json_text(auth.get("user_id")),
                username: json_text(auth.get("user")),
            };
            if let Ok(mut shared) = self.shared.lock() {
                shared.me = identity.clone();
            }
            // The Socket Mode connection opens on the first receive: a
            // standby replica holds none.
            Ok(identity)
        })
    }

    fn stand_by(&self) {
        // Slack gives each event to one open connection; a replica that
        // does not hold the lease keeps none, so every event (an approval
        // press above all) reaches the replica running that chat's turns.
        // Envelopes not acknowledged yet are sent again by Slack.
        if let Ok(mut events) = self.events.try_lock() {
            *events = None;
        }
        if let Ok(mut acks) = self.acks.lock() {
            *acks = None;
        }
        if let Ok(mut unacked) = self.unacked.lock() {
            unacked.clear();
        }
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
            self.open_connection(&mut events);
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
            Ok(json_text(sent.get("ts")))
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
            let bytes = file.bytes().await?;
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
