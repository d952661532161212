//! Slack's side of the wire: Web API calls, and the Socket Mode connection
//! that turns envelopes into messages (names looked up, files fetched).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message as WsMessage;

use super::super::media;
use super::super::platform::{Attachment, Incoming, PlatformError, json_text};
use super::parse::{Shared, Threading, parse_action, parse_event, parse_slash};

/// Biggest file taken from a message.
pub(super) const MAX_DOWNLOAD: u64 = 50 * 1024 * 1024;

/// A message from the connection, with the envelope to acknowledge once it is kept.
#[derive(Debug)]
pub(super) struct Delivery {
    pub(super) message: Incoming,
    pub(super) envelope: String,
}

/// A Web API error as a [`PlatformError`].
pub(super) fn api_error(method: &str, status: u16, error: &str) -> PlatformError {
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
pub(super) struct Api {
    pub(super) http: reqwest::Client,
    pub(super) base: String,
}

impl Api {
    pub(super) async fn call(
        &self,
        token: &str,
        method: &str,
        body: &Value,
    ) -> Result<Value, PlatformError> {
        let request = self
            .http
            .post(format!("{}/{method}", self.base))
            .bearer_auth(token)
            .json(body);
        self.finish(method, request).await
    }

    /// A call with a form body (the methods that take no JSON).
    pub(super) async fn call_form(
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

    pub(super) async fn finish(
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
pub(super) struct Connection {
    pub(super) api: Api,
    pub(super) bot_token: String,
    pub(super) app_token: String,
    pub(super) threading: Threading,
    pub(super) cache: PathBuf,
    pub(super) shared: Arc<Mutex<Shared>>,
    pub(super) tx: mpsc::Sender<Delivery>,
}

impl Connection {
    /// Keeps a Socket Mode connection up (a fresh URL each time), with backoff.
    pub(super) async fn run(self, mut acks: mpsc::UnboundedReceiver<String>) {
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

    pub(super) async fn once(
        &self,
        acks: &mut mpsc::UnboundedReceiver<String>,
    ) -> Result<(), String> {
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
                // No one receives any more (this replica stands by): leave.
                _ = self.tx.closed() => {
                    let _ = ws.close(None).await;
                    return Ok(());
                }
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
            let id = json_text(envelope.get("envelope_id"));
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
    pub(super) async fn event(&self, event: &Value) -> Option<Incoming> {
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
    pub(super) async fn learn_name(&self, user: &str) {
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
        .map(|p| json_text(info.pointer(p)))
        .find(|n| !n.trim().is_empty());
        if let (Some(name), Ok(mut shared)) = (name, self.shared.lock()) {
            shared.names.insert(user.to_owned(), name);
        }
    }

    pub(super) async fn download(&self, file: &Value) -> Result<Attachment, String> {
        let name = json_text(file.get("name"));
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
        let mime = json_text(file.get("mimetype"));
        let kind = if mime.starts_with("image/") {
            "image"
        } else if mime.starts_with("audio/") || json_text(file.get("subtype")) == "slack_audio" {
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
