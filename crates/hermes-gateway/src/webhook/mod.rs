//! The webhook platform: `POST /webhooks/<route>` on its own port (8644, as
//! the reference), a signed JSON body turned into a prompt, the agent's
//! answer sent to a chat, the log, or back in the HTTP reply.

pub mod routes;
mod run;
pub mod signature;
pub mod template;

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use hermes_session::SessionManager;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use self::routes::{Deliver, INSECURE_NO_AUTH, Route, Subscriptions, WebhookConfig};
use self::run::Job;
use crate::log::{LogFn, LogLevel};

/// The logger name of webhook lines in `gateway.log`.
pub const LOGGER: &str = "gateway.platforms.webhook";

/// How long a delivery id is remembered (a sender's retry of one event is
/// not run twice).
const SEEN_FOR: Duration = Duration::from_secs(3600);

/// The window of the per-route rate limit.
const RATE_WINDOW: Duration = Duration::from_secs(60);

/// Whether `host` names this machine only.
pub fn is_loopback_host(host: &str) -> bool {
    let host = host.trim().trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The routes of the running listener and what it remembers.
pub struct Webhooks {
    config: WebhookConfig,
    subscriptions: Subscriptions,
    dynamic: Mutex<(Option<SystemTime>, BTreeMap<String, Route>)>,
    seen: Mutex<HashMap<String, Instant>>,
    hits: Mutex<HashMap<String, VecDeque<Instant>>>,
    manager: SessionManager,
    cwd: PathBuf,
    log: LogFn,
    inflight: Arc<AtomicUsize>,
    /// Accepted deliveries until answered (the gateway's inbox): a crash
    /// between the 202 and the answer runs them again at the next start,
    /// and a sender's retry after a restart is still known.
    inbox: Option<crate::messaging::inbox::Inbox>,
}

/// The inbox's name for webhook deliveries.
const INBOX_PLATFORM: &str = "webhook";

impl std::fmt::Debug for Webhooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhooks")
            .field("port", &self.config.port)
            .finish_non_exhaustive()
    }
}

fn reply(status: u16, body: Value) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, axum::Json(body)).into_response()
}

fn error(status: u16, message: &str) -> Response {
    reply(status, json!({ "error": message }))
}

/// The event type: GitHub's or GitLab's header, else the body's own field.
fn event_type(headers: &HeaderMap, payload: &Value) -> String {
    ["x-github-event", "x-gitlab-event"]
        .iter()
        .find_map(|h| headers.get(*h).and_then(|v| v.to_str().ok()))
        .map(str::to_owned)
        .or_else(|| payload["event_type"].as_str().map(str::to_owned))
        .or_else(|| payload["type"].as_str().map(str::to_owned))
        .unwrap_or_else(|| "unknown".to_owned())
}

/// The sender's id for this delivery (the same on its retries).
fn delivery_id(headers: &HeaderMap) -> String {
    ["x-github-delivery", "svix-id", "x-request-id"]
        .iter()
        .find_map(|h| headers.get(*h).and_then(|v| v.to_str().ok()))
        .map(str::to_owned)
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis())
                .to_string()
        })
}

/// A JSON body, else a form body as an object of strings.
fn parse_body(body: &[u8]) -> Option<Value> {
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        return Some(v);
    }
    let text = std::str::from_utf8(body).ok()?;
    if text.trim().is_empty() || !text.contains('=') {
        return None;
    }
    let pairs: serde_json::Map<String, Value> = text
        .split('&')
        .filter_map(|pair| {
            let (k, v) = pair.split_once('=')?;
            Some((form_decode(k)?, Value::String(form_decode(v)?)))
        })
        .collect();
    (!pairs.is_empty()).then_some(Value::Object(pairs))
}

fn form_decode(text: &str) -> Option<String> {
    let bytes = text.replace('+', " ").into_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

impl Webhooks {
    /// The listener's state for `config`, running agents on `manager`.
    pub fn new(
        config: WebhookConfig,
        home: &std::path::Path,
        manager: SessionManager,
        cwd: PathBuf,
        log: LogFn,
    ) -> Self {
        Self {
            config,
            subscriptions: Subscriptions::in_home(home),
            dynamic: Mutex::new((None, BTreeMap::new())),
            seen: Mutex::new(HashMap::new()),
            hits: Mutex::new(HashMap::new()),
            manager,
            cwd,
            log,
            inflight: Arc::new(AtomicUsize::new(0)),
            inbox: crate::messaging::inbox::Inbox::open(&home.join("gateway/inbox.db")).ok(),
        }
    }

    /// The inbox entry of `job`.
    fn entry(job: &Job) -> crate::messaging::platform::Incoming {
        use crate::messaging::platform::{ChatKind, ChatRef, Incoming, Sender};
        Incoming {
            key: format!("{}:{}", job.route_name, job.delivery_id),
            chat: ChatRef {
                id: job.route_name.clone(),
                kind: ChatKind::Channel,
                thread_id: None,
                name: None,
            },
            sender: Sender {
                id: format!("webhook:{}", job.route_name),
                name: job.route_name.clone(),
            },
            text: serde_json::to_string(job).unwrap_or_default(),
            addressed: true,
            button_press: None,
            attachments: Vec::new(),
        }
    }

    /// Records `job` as taken; `false` when the inbox already had it.
    fn persist(&self, job: &Job) -> bool {
        let Some(inbox) = &self.inbox else {
            return true;
        };
        match inbox.accept(INBOX_PLATFORM, vec![Self::entry(job)], None, None) {
            Ok(Some(fresh)) => !fresh.is_empty(),
            _ => true,
        }
    }

    /// Marks `job` answered.
    fn finished(&self, job: &Job) {
        if let Some(inbox) = &self.inbox {
            let _ = inbox.done(INBOX_PLATFORM, &Self::entry(job).key);
        }
    }

    /// Runs again the deliveries a previous gateway took but never answered.
    fn replay(self: &Arc<Self>) {
        let Some(pending) = self
            .inbox
            .as_ref()
            .and_then(|i| i.pending(INBOX_PLATFORM).ok())
        else {
            return;
        };
        for entry in pending {
            let Ok(mut job) = serde_json::from_str::<Job>(&entry.text) else {
                continue;
            };
            let Some(route) = self.route(&job.route_name) else {
                self.finished(&job);
                continue;
            };
            job.route = route;
            self.log(
                LogLevel::Info,
                &format!(
                    "[webhook] '{}': delivery {} was taken before a restart and not answered; running it now",
                    job.route_name, job.delivery_id
                ),
            );
            let me = self.clone();
            let running = Running::enter(&self.inflight);
            tokio::spawn(async move {
                let _running = running;
                me.run_in_background(job).await;
            });
        }
    }

    /// Agent runs in flight.
    pub fn inflight(&self) -> Arc<AtomicUsize> {
        self.inflight.clone()
    }

    fn log(&self, level: LogLevel, line: &str) {
        (self.log)(level, LOGGER, line);
    }

    /// A route by name: config.yaml's first, then the subscriptions file
    /// (re-read when it changed), skipping file routes without a secret.
    fn route(&self, name: &str) -> Option<Route> {
        if let Some(route) = self.config.routes.get(name) {
            return Some(route.clone());
        }
        let modified = self.subscriptions.modified();
        let mut dynamic = self.dynamic.lock().ok()?;
        if dynamic.0 != modified || modified.is_none() {
            *dynamic = (modified, self.subscriptions.load());
        }
        dynamic
            .1
            .get(name)
            .filter(|r| !r.secret.is_empty())
            .cloned()
    }

    /// Whether `route` may take another request now (and counts it).
    fn within_rate(&self, route: &str) -> bool {
        let Ok(mut hits) = self.hits.lock() else {
            return true;
        };
        let now = Instant::now();
        let log = hits.entry(route.to_owned()).or_default();
        while log
            .front()
            .is_some_and(|t| now.duration_since(*t) > RATE_WINDOW)
        {
            log.pop_front();
        }
        if log.len() >= self.config.rate_limit.max(1) {
            return false;
        }
        log.push_back(now);
        true
    }

    /// Notes `id` as taken; `false` when it was taken within the hour.
    fn first_delivery(&self, id: &str) -> bool {
        let Ok(mut seen) = self.seen.lock() else {
            return true;
        };
        let now = Instant::now();
        seen.retain(|_, at| now.duration_since(*at) < SEEN_FOR);
        if seen.contains_key(id) {
            return false;
        }
        seen.insert(id.to_owned(), now);
        true
    }

    /// Forgets `id` (its delivery failed: the sender's retry must run).
    fn forget(&self, id: &str) {
        if let Ok(mut seen) = self.seen.lock() {
            seen.remove(id);
        }
    }

    /// Reads the body within the size limit.
    async fn read_body(&self, headers: &HeaderMap, body: Body) -> Result<Bytes, Response> {
        let limit = self.config.max_body_bytes;
        let declared = headers
            .get(axum::http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok());
        if declared.is_some_and(|n| n > limit) {
            return Err(error(413, "Payload too large"));
        }
        match axum::body::to_bytes(body, limit).await {
            Ok(bytes) => Ok(bytes),
            Err(e) if e.to_string().contains("length limit") => {
                Err(error(413, "Payload too large"))
            }
            Err(_) => Err(error(400, "Bad request")),
        }
    }

    /// Checks the route's signature on `body`.
    fn authenticate(&self, route: &Route, headers: &HeaderMap, body: &[u8]) -> Option<Response> {
        let secret = self.config.secret_of(route);
        if secret.is_empty() {
            return Some(error(403, "Webhook route is missing an HMAC secret"));
        }
        if secret == INSECURE_NO_AUTH && is_loopback_host(&self.config.host) {
            return None;
        }
        match signature::verify(headers, body, secret, unix_now()) {
            Ok(()) => None,
            Err(_) => {
                self.log(
                    LogLevel::Warning,
                    &format!(
                        "[webhook] refused a request to '{}': bad signature",
                        route.name
                    ),
                );
                Some(error(401, "Invalid signature"))
            }
        }
    }

    /// Handles `POST /webhooks/<name>`.
    async fn handle(self: Arc<Self>, name: String, headers: HeaderMap, body: Body) -> Response {
        let Some(route) = self.route(&name) else {
            return error(404, &format!("Unknown route: {name}"));
        };
        if !route.enabled {
            return error(403, &format!("Route disabled: {name}"));
        }
        let body = match self.read_body(&headers, body).await {
            Ok(b) => b,
            Err(r) => return r,
        };
        if let Some(refused) = self.authenticate(&route, &headers, &body) {
            return refused;
        }
        if !self.within_rate(&name) {
            return error(429, "Rate limit exceeded");
        }
        let Some(payload) = parse_body(&body) else {
            return error(400, "Cannot parse body");
        };
        let event = event_type(&headers, &payload);
        if !route.events.is_empty() && !route.events.iter().any(|e| e == &event) {
            return reply(200, json!({"status": "ignored", "event": event}));
        }
        if let Some(option) = route.unsupported {
            self.log(
                LogLevel::Warning,
                &format!(
                    "[webhook] route '{name}' uses '{option}', which hermes-rs does not carry out"
                ),
            );
            return error(
                501,
                &format!(
                    "Route '{name}' uses '{option}', which this gateway (hermes-rs) does not support yet"
                ),
            );
        }
        let prompt = template::render(&route.prompt, &payload, &event, &name);
        let id = delivery_id(&headers);
        if !self.first_delivery(&id) {
            self.log(
                LogLevel::Info,
                &format!("[webhook] '{name}': delivery {id} was already taken; ignored"),
            );
            return reply(200, json!({"status": "duplicate", "delivery_id": id}));
        }
        self.log(
            LogLevel::Info,
            &format!("[webhook] '{name}': event={event} delivery={id}"),
        );
        let job = Job {
            route_name: route.name.clone(),
            route,
            event,
            delivery_id: id,
            prompt,
            payload,
        };
        self.dispatch(job).await
    }

    /// Delivers, runs and answers or accepts `job` as its route says.
    async fn dispatch(self: Arc<Self>, job: Job) -> Response {
        let deliver = Deliver::parse(&job.route.deliver);
        if job.route.deliver_only {
            return match run::deliver(&self.manager, &job.route, &job.payload, &job.prompt).await {
                Ok(target) => reply(
                    200,
                    json!({"status": "delivered", "route": job.route.name,
                           "target": target, "delivery_id": job.delivery_id}),
                ),
                Err(e) => {
                    self.log(
                        LogLevel::Warning,
                        &format!("[webhook] '{}': {e}", job.route.name),
                    );
                    self.forget(&job.delivery_id);
                    reply(
                        502,
                        json!({"status": "error", "error": "Delivery failed",
                               "detail": e, "delivery_id": job.delivery_id}),
                    )
                }
            };
        }
        if deliver == Ok(Deliver::Http) {
            let _running = Running::enter(&self.inflight);
            let answer = run::answer(&self.manager, &self.cwd, &job).await;
            if answer.text.is_err() {
                self.forget(&job.delivery_id);
            }
            self.note_answer(&job, &answer);
            let (status, body) = run::http_reply(&job, &answer);
            return reply(status, body);
        }
        if !self.persist(&job) {
            return reply(
                200,
                json!({"status": "duplicate", "delivery_id": job.delivery_id}),
            );
        }
        let accepted = json!({"status": "accepted", "route": job.route.name,
                              "event": job.event, "delivery_id": job.delivery_id});
        let me = self.clone();
        let running = Running::enter(&self.inflight);
        tokio::spawn(async move {
            let _running = running;
            me.run_in_background(job).await;
        });
        reply(202, accepted)
    }

    async fn run_in_background(&self, job: Job) {
        let answer = run::answer(&self.manager, &self.cwd, &job).await;
        self.note_answer(&job, &answer);
        let Ok(text) = &answer.text else {
            self.finished(&job);
            return;
        };
        match Deliver::parse(&job.route.deliver) {
            Ok(Deliver::Platform(_)) => {
                match run::deliver(&self.manager, &job.route, &job.payload, text).await {
                    Ok(target) => self.log(
                        LogLevel::Info,
                        &format!(
                            "[webhook] '{}': answer delivered to {target}",
                            job.route.name
                        ),
                    ),
                    Err(e) => self.log(
                        LogLevel::Warning,
                        &format!(
                            "[webhook] '{}': the answer was not delivered: {e}",
                            job.route.name
                        ),
                    ),
                }
            }
            Ok(Deliver::Log | Deliver::Http) | Err(_) => {}
        }
        self.finished(&job);
    }

    fn note_answer(&self, job: &Job, answer: &run::Answer) {
        match &answer.text {
            Ok(text) => {
                let head: String = text.chars().take(200).collect();
                self.log(
                    LogLevel::Info,
                    &format!(
                        "[webhook] '{}' answered (session {}): {head}",
                        job.route.name, answer.session_id
                    ),
                );
            }
            Err(e) => self.log(
                LogLevel::Warning,
                &format!("[webhook] '{}' run failed: {e}", job.route.name),
            ),
        }
    }

    /// The routes: health and the webhook posts.
    pub fn router(self: Arc<Self>) -> Router {
        Router::new()
            .route(
                "/health",
                get(|| async { axum::Json(json!({"status": "ok", "platform": "webhook"})) }),
            )
            .route(
                "/webhooks/{name}",
                post(
                    |State(me): State<Arc<Self>>,
                     Path(name): Path<String>,
                     headers: HeaderMap,
                     body: Body| async move { me.handle(name, headers, body).await },
                ),
            )
            .with_state(self)
    }

    /// Binds the configured address and serves until `stop`, then waits
    /// for runs in flight (up to the drain timeout).
    pub async fn serve(self: Arc<Self>, stop: CancellationToken) -> Result<(), String> {
        let addr = format!("{}:{}", self.config.host, self.config.port);
        let listener = tokio::net::TcpListener::bind(&addr)
            .await
            .map_err(|e| format!("webhook: cannot listen on {addr}: {e}"))?;
        for problem in self.config.problems() {
            self.log(LogLevel::Warning, &problem);
        }
        self.log(
            LogLevel::Info,
            &format!("[webhook] listening on http://{addr}/webhooks/<route>"),
        );
        self.replay();
        let inflight = self.inflight.clone();
        crate::serve::serve(
            listener,
            self.router(),
            stop,
            crate::serve::HEADER_READ_TIMEOUT,
        )
        .await;
        let deadline = Instant::now() + crate::serve::DRAIN_TIMEOUT;
        while inflight.load(Ordering::Relaxed) > 0 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(())
    }
}

/// POSTs `body` to `url` signed GitHub-style with `secret` as event `test`
/// (`hermes webhook test`); the status and the reply's text.
pub async fn send_test(url: &str, secret: &str, body: String) -> Result<(u16, String), String> {
    let sig = hex::encode(signature::sign(secret.as_bytes(), &[body.as_bytes()]));
    let client = hermes_llm::SharedHttp::new(Duration::from_secs(10))
        .map_err(|e| e.to_string())?
        .client();
    let resp = client
        .post(url)
        .timeout(Duration::from_secs(10))
        .header("Content-Type", "application/json")
        .header("X-Hub-Signature-256", format!("sha256={sig}"))
        .header("X-GitHub-Event", "test")
        .body(body)
        .send()
        .await
        .map_err(|e| hermes_llm::redact::redact_secrets(&e.to_string()))?;
    let status = resp.status().as_u16();
    Ok((status, resp.text().await.unwrap_or_default()))
}

/// Counts a run in flight while alive.
struct Running(Arc<AtomicUsize>);

impl Running {
    fn enter(count: &Arc<AtomicUsize>) -> Self {
        count.fetch_add(1, Ordering::Relaxed);
        Self(count.clone())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_json_or_forms() {
        assert_eq!(parse_body(br#"{"a":1}"#), Some(json!({"a": 1})));
        assert_eq!(
            parse_body(b"a=hello+world&b=%2Fx"),
            Some(json!({"a": "hello world", "b": "/x"}))
        );
        assert_eq!(parse_body(b"not a body"), None);
    }

    #[test]
    fn loopback_hosts() {
        assert!(is_loopback_host("127.0.0.1"));
        assert!(is_loopback_host("[::1]"));
        assert!(is_loopback_host("localhost"));
        assert!(!is_loopback_host("0.0.0.0"));
    }
}
