//! Home Assistant as a platform, as the reference has it: state changes of
//! watched entities (its WebSocket API, `state_changed` events) come in as
//! messages in one "Home Assistant Events" chat; the agent's answers go out
//! as persistent notifications. Nothing is watched unless configured
//! (`watch_domains`, `watch_entities`, or `watch_all`), and each entity is
//! heard at most once per `cooldown_seconds`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::{Mutex, mpsc};
use tokio_tungstenite::tungstenite::Message as WsMessage;

use super::config::PlatformSettings;
use super::platform::{
    Adapter, Batch, BotIdentity, Capabilities, ChatKind, ChatRef, Incoming, Outgoing,
    PlatformError, Sender,
};

/// The one chat Home Assistant's events arrive in.
pub const CHAT_ID: &str = "ha_events";

/// Which entities are heard.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Watch {
    /// `watch_domains`.
    pub domains: Vec<String>,
    /// `watch_entities`.
    pub entities: Vec<String>,
    /// `ignore_entities`.
    pub ignore: Vec<String>,
    /// `watch_all`.
    pub all: bool,
    /// `cooldown_seconds` (30).
    pub cooldown: Duration,
}

fn list(v: &Value) -> Vec<String> {
    match v {
        Value::Array(items) => items
            .iter()
            .filter_map(Value::as_str)
            .map(|s| s.trim().to_owned())
            .collect(),
        Value::String(s) => s
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

impl Watch {
    /// From the platform's `extra` block.
    pub fn read(extra: &Value) -> Self {
        Self {
            domains: list(&extra["watch_domains"]),
            entities: list(&extra["watch_entities"]),
            ignore: list(&extra["ignore_entities"]),
            all: extra["watch_all"].as_bool().unwrap_or(false),
            cooldown: Duration::from_secs(extra["cooldown_seconds"].as_u64().unwrap_or(30)),
        }
    }

    /// Whether `entity`'s changes are heard.
    pub fn hears(&self, entity: &str) -> bool {
        if self.ignore.iter().any(|e| e == entity) {
            return false;
        }
        if !self.domains.is_empty() || !self.entities.is_empty() {
            let domain = entity.split('.').next().unwrap_or_default();
            return self.entities.iter().any(|e| e == entity)
                || self.domains.iter().any(|d| d == domain);
        }
        self.all
    }
}

/// A state change in words; `None` when the state did not change.
pub fn describe(event: &Value) -> Option<String> {
    let data = &event["data"];
    let entity = data["entity_id"].as_str()?;
    let new = &data["new_state"];
    let new_state = new["state"].as_str()?;
    let old_state = data["old_state"]["state"].as_str().unwrap_or("unknown");
    if new_state == old_state {
        return None;
    }
    let name = new["attributes"]["friendly_name"]
        .as_str()
        .unwrap_or(entity);
    let domain = entity.split('.').next().unwrap_or_default();
    let unit = new["attributes"]["unit_of_measurement"]
        .as_str()
        .unwrap_or("");
    let text = match domain {
        "binary_sensor" => format!(
            "{name} {} ({entity})",
            if new_state == "on" {
                "triggered"
            } else {
                "cleared"
            }
        ),
        "sensor" => {
            format!("{name} changed from {old_state}{unit} to {new_state}{unit} ({entity})")
        }
        "light" | "switch" | "fan" | "input_boolean" => {
            format!("{name} turned {new_state} ({entity})")
        }
        "climate" => format!("{name} HVAC mode changed from {old_state} to {new_state} ({entity})"),
        "alarm_control_panel" => {
            format!("{name} alarm changed from {old_state} to {new_state} ({entity})")
        }
        _ => format!("{name} ({entity}): changed from '{old_state}' to '{new_state}'"),
    };
    Some(format!("[Home Assistant] {text}"))
}

/// The Home Assistant adapter.
pub struct HomeAssistant {
    http: reqwest::Client,
    url: String,
    token: String,
    watch: Watch,
    caps: Capabilities,
    events_tx: mpsc::UnboundedSender<Incoming>,
    events: Mutex<mpsc::UnboundedReceiver<Incoming>>,
    listening: std::sync::atomic::AtomicBool,
    /// Signalled once Home Assistant confirmed the subscription.
    subscribed: tokio::sync::Notify,
    /// The event stream is open and subscribed now.
    live: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for HomeAssistant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HomeAssistant")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl HomeAssistant {
    /// An adapter for `settings` (`HASS_URL`, `HASS_TOKEN`, the watch list in `extra`).
    pub fn new(settings: &PlatformSettings, http: reqwest::Client) -> Self {
        let (events_tx, events) = mpsc::unbounded_channel();
        Self {
            http,
            url: settings
                .base_url
                .clone()
                .unwrap_or_else(|| "http://homeassistant.local:8123".to_owned())
                .trim_end_matches('/')
                .to_owned(),
            token: settings.token.clone(),
            watch: Watch::read(&settings.extra),
            caps: Capabilities {
                max_len: 4096,
                edit_interval: Duration::from_secs(3600),
                buttons: false,
            },
            events_tx,
            events: Mutex::new(events),
            listening: std::sync::atomic::AtomicBool::new(false),
            subscribed: tokio::sync::Notify::new(),
            live: std::sync::atomic::AtomicBool::new(false),
        }
    }

    fn websocket_url(&self) -> String {
        let base = if let Some(rest) = self.url.strip_prefix("https://") {
            format!("wss://{rest}")
        } else if let Some(rest) = self.url.strip_prefix("http://") {
            format!("ws://{rest}")
        } else {
            self.url.clone()
        };
        format!("{base}/api/websocket")
    }

    /// Listens for state changes until the connection drops, then again
    /// (5, 10, 30, 60 s apart).
    fn listen(self: &Arc<Self>) {
        if self
            .listening
            .swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            return;
        }
        let me = Arc::downgrade(self);
        tokio::spawn(async move {
            let waits = [5u64, 10, 30, 60];
            let mut failures = 0usize;
            loop {
                let Some(ha) = me.upgrade() else {
                    return;
                };
                let started = Instant::now();
                let _ = ha.stream_events().await;
                ha.live.store(false, std::sync::atomic::Ordering::Relaxed);
                if started.elapsed() > Duration::from_secs(60) {
                    failures = 0;
                }
                let wait = waits[failures.min(waits.len() - 1)];
                failures += 1;
                drop(ha);
                tokio::time::sleep(Duration::from_secs(wait)).await;
            }
        });
    }

    async fn stream_events(&self) -> Result<(), String> {
        let tls = hermes_llm::SharedHttp::websocket_tls().map_err(|e| e.to_string())?;
        let (mut ws, _) = tokio_tungstenite::connect_async_tls_with_config(
            self.websocket_url().as_str(),
            None,
            false,
            Some(tokio_tungstenite::Connector::Rustls(Arc::new(tls))),
        )
        .await
        .map_err(|e| format!("cannot connect to Home Assistant: {e}"))?;
        let mut last_heard: HashMap<String, Instant> = HashMap::new();
        while let Some(frame) = ws.next().await {
            let WsMessage::Text(text) = frame.map_err(|e| e.to_string())? else {
                continue;
            };
            let msg: Value = serde_json::from_str(text.as_str()).unwrap_or(Value::Null);
            match msg["type"].as_str() {
                Some("auth_required") => {
                    let auth = json!({"type": "auth", "access_token": self.token});
                    ws.send(WsMessage::text(auth.to_string()))
                        .await
                        .map_err(|e| e.to_string())?;
                }
                Some("auth_ok") => {
                    let sub =
                        json!({"id": 1, "type": "subscribe_events", "event_type": "state_changed"});
                    ws.send(WsMessage::text(sub.to_string()))
                        .await
                        .map_err(|e| e.to_string())?;
                }
                Some("auth_invalid") => return Err("Home Assistant refused HASS_TOKEN".into()),
                Some("result") if msg["id"] == 1 && msg["success"] == true => {
                    self.live.store(true, std::sync::atomic::Ordering::Relaxed);
                    self.subscribed.notify_one();
                }
                Some("event") => {
                    let event = &msg["event"];
                    let entity = event["data"]["entity_id"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned();
                    if !self.watch.hears(&entity) {
                        continue;
                    }
                    if last_heard
                        .get(&entity)
                        .is_some_and(|t| t.elapsed() < self.watch.cooldown)
                    {
                        continue;
                    }
                    let Some(text) = describe(event) else {
                        continue;
                    };
                    last_heard.insert(entity.clone(), Instant::now());
                    let stamp = event["time_fired"].as_str().unwrap_or_default().to_owned();
                    let _ = self.events_tx.send(Incoming {
                        key: format!("ha_{entity}_{stamp}"),
                        chat: ChatRef {
                            id: CHAT_ID.to_owned(),
                            kind: ChatKind::Channel,
                            thread_id: None,
                            name: Some("Home Assistant Events".to_owned()),
                        },
                        sender: Sender {
                            id: "homeassistant".to_owned(),
                            name: "Home Assistant".to_owned(),
                        },
                        text,
                        addressed: true,
                        button_press: None,
                        attachments: Vec::new(),
                    });
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// The adapter behind an `Arc` (its listener holds a weak reference).
#[derive(Debug)]
pub struct HomeAssistantPlatform(pub Arc<HomeAssistant>);

impl Adapter for HomeAssistantPlatform {
    fn name(&self) -> &'static str {
        "homeassistant"
    }

    fn capabilities(&self) -> &Capabilities {
        &self.0.caps
    }

    fn connect(&self) -> BoxFuture<'_, Result<BotIdentity, PlatformError>> {
        Box::pin(async move {
            let response = self
                .0
                .http
                .get(format!("{}/api/", self.0.url))
                .bearer_auth(&self.0.token)
                .timeout(Duration::from_secs(15))
                .send()
                .await
                .map_err(|e| {
                    PlatformError::Transient(format!("Home Assistant: {}", e.without_url()))
                })?;
            match response.status().as_u16() {
                200 => {
                    // Connected means listening: changes from now on are heard.
                    self.0.listen();
                    if !self.0.live.load(std::sync::atomic::Ordering::Relaxed) {
                        tokio::time::timeout(Duration::from_secs(15), self.0.subscribed.notified())
                            .await
                            .map_err(|_| {
                                PlatformError::Transient(
                                    "Home Assistant's event stream did not open".to_owned(),
                                )
                            })?;
                    }
                    Ok(BotIdentity {
                        id: "homeassistant".to_owned(),
                        username: "homeassistant".to_owned(),
                    })
                }
                401 | 403 => Err(PlatformError::Rejected(
                    "Home Assistant refused HASS_TOKEN".to_owned(),
                )),
                code => Err(PlatformError::Transient(format!(
                    "Home Assistant: HTTP {code}"
                ))),
            }
        })
    }

    fn receive<'a>(
        &'a self,
        _cursor: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Batch, PlatformError>> {
        Box::pin(async move {
            let mut events = self.0.events.lock().await;
            let mut batch = Batch::default();
            if let Ok(Some(first)) =
                tokio::time::timeout(Duration::from_secs(25), events.recv()).await
            {
                batch.messages.push(first);
                while let Ok(next) = events.try_recv() {
                    batch.messages.push(next);
                }
            }
            Ok(batch)
        })
    }

    fn send<'a>(
        &'a self,
        _chat: &'a ChatRef,
        message: &'a Outgoing,
    ) -> BoxFuture<'a, Result<String, PlatformError>> {
        Box::pin(async move {
            let text: String = message.text.chars().take(4096).collect();
            let response = self
                .0
                .http
                .post(format!(
                    "{}/api/services/persistent_notification/create",
                    self.0.url
                ))
                .bearer_auth(&self.0.token)
                .json(&json!({"title": "Hermes Agent", "message": text}))
                .timeout(Duration::from_secs(10))
                .send()
                .await
                .map_err(|e| {
                    PlatformError::Transient(format!("Home Assistant: {}", e.without_url()))
                })?;
            let status = response.status().as_u16();
            if status < 300 {
                Ok(uuid::Uuid::new_v4().simple().to_string()[..12].to_owned())
            } else {
                let body = response.text().await.unwrap_or_default();
                Err(PlatformError::Rejected(format!("HTTP {status}: {body}")))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_heard_unless_watched() {
        let none = Watch::read(&json!({}));
        assert!(!none.hears("light.kitchen"));
        let some = Watch::read(&json!({"watch_domains": ["light"], "ignore_entities": "light.x"}));
        assert!(some.hears("light.kitchen"));
        assert!(!some.hears("light.x"));
        assert!(!some.hears("switch.fan"));
        assert!(Watch::read(&json!({"watch_all": true})).hears("switch.fan"));
    }

    #[test]
    fn changes_read_as_sentences() {
        let event = json!({"data": {"entity_id": "binary_sensor.door",
            "old_state": {"state": "off"},
            "new_state": {"state": "on", "attributes": {"friendly_name": "Front door"}}}});
        assert_eq!(
            describe(&event).unwrap(),
            "[Home Assistant] Front door triggered (binary_sensor.door)"
        );
        let same = json!({"data": {"entity_id": "light.a", "old_state": {"state": "on"},
            "new_state": {"state": "on", "attributes": {}}}});
        assert_eq!(describe(&same), None);
    }
}
