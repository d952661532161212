//! The OpenAI-compatible API server: routes, auth, limits and shared state.

mod chat;
mod errors;
mod health;
mod responses;
mod run;
pub mod runs;
mod sessions;
mod sse;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use hermes_session::SessionManager;
use tokio::sync::Semaphore;

pub use errors::ApiError;

use crate::config::{ApiServerConfig, MAX_REQUEST_BYTES};

/// Counts runs in flight (for draining on shutdown and `/health/detailed`).
#[derive(Debug, Default)]
pub struct Inflight(AtomicUsize);

impl Inflight {
    fn enter(&self) -> InflightGuard<'_> {
        self.0.fetch_add(1, Ordering::SeqCst);
        InflightGuard(self)
    }

    /// Runs in flight now.
    pub fn count(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

struct InflightGuard<'a>(&'a Inflight);

impl Drop for InflightGuard<'_> {
    fn drop(&mut self) {
        self.0.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What every handler shares.
pub struct AppState {
    /// The settings.
    pub config: ApiServerConfig,
    /// The session runtime.
    pub manager: SessionManager,
    /// Working directory of the runs.
    pub cwd: PathBuf,
    /// Run slots (`None`: no cap).
    pub slots: Option<Arc<Semaphore>>,
    /// Runs in flight.
    pub inflight: Arc<Inflight>,
    /// When the server started.
    pub started: Instant,
    /// Stored Responses API objects.
    pub responses: responses::Store,
    /// `/v1/runs`: the run store and the runs in flight here.
    pub runs: runs::Runs,
    /// Where each request's line goes (none: not logged).
    pub log: Option<crate::log::LogFn>,
    /// What `/metrics` shows (none: metrics are off).
    pub observer: Option<Arc<hermes_observe::Observer>>,
}

impl AppState {
    /// State for `config` over `manager`.
    pub fn new(config: ApiServerConfig, manager: SessionManager, cwd: PathBuf) -> Self {
        let slots = (config.max_concurrent_runs > 0)
            .then(|| Arc::new(Semaphore::new(config.max_concurrent_runs)));
        let responses = responses::Store::new(manager.services().responses());
        let runs = runs::Runs::open(
            manager.services().setup().home.root(),
            manager.services().shared(),
        );
        Self {
            config,
            manager,
            cwd,
            slots,
            inflight: Arc::default(),
            started: Instant::now(),
            responses,
            runs,
            log: None,
            observer: None,
        }
    }
}

/// The router with every route, auth, CORS and the security headers.
pub fn router(state: Arc<AppState>) -> Router {
    let api = Router::new()
        .route("/health/detailed", get(health::detailed))
        .route("/metrics", get(health::metrics))
        .route("/v1/models", get(health::models))
        .route("/v1/capabilities", get(health::capabilities))
        .route("/v1/chat/completions", post(chat::completions))
        .route("/v1/responses", post(responses::create))
        .route(
            "/v1/responses/{id}",
            get(responses::fetch).delete(responses::delete),
        )
        .route("/v1/runs", post(runs::create))
        .route("/v1/runs/{id}", get(runs::fetch))
        .route("/v1/runs/{id}/events", get(runs::events))
        .route("/v1/runs/{id}/approval", post(runs::approval))
        .route("/v1/runs/{id}/stop", post(runs::stop))
        .route("/api/sessions", get(sessions::list).post(sessions::create))
        .route(
            "/api/sessions/{id}",
            get(sessions::fetch)
                .patch(sessions::update)
                .delete(sessions::delete),
        )
        .route("/api/sessions/{id}/messages", get(sessions::messages))
        .route("/api/sessions/{id}/fork", post(sessions::fork))
        .route("/api/sessions/{id}/chat", post(sessions::chat))
        .route(
            "/api/sessions/{id}/chat/stream",
            post(sessions::chat_stream),
        )
        .route_layer(middleware::from_fn_with_state(state.clone(), authorize));
    Router::new()
        .route("/health", get(health::health))
        .route("/v1/health", get(health::health))
        .merge(api)
        .fallback(not_found)
        .layer(axum::extract::DefaultBodyLimit::max(MAX_REQUEST_BYTES))
        .layer(middleware::from_fn_with_state(state.clone(), edge))
        .with_state(state)
}

async fn not_found(method: Method, uri: axum::http::Uri) -> ApiError {
    ApiError::not_found(format!("Unknown route: {method} {}", uri.path()))
}

/// Bearer key on every route but `/health`, compared exactly: what follows
/// `Bearer ` is the key, with no trimming (the reference strips it, which
/// lets `Bearer  KEY` in).
async fn authorize(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        });
    match given {
        Some(key) if constant_time_eq(key.as_bytes(), state.config.key.as_bytes()) => {
            next.run(request).await
        }
        _ => ApiError::unauthorized().into_response(),
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Body limit, CORS and security headers for every response.
/// Health checks poll often and say nothing worth a log line.
fn is_health(path: &str) -> bool {
    matches!(
        path,
        "/health" | "/v1/health" | "/health/detailed" | "/metrics"
    )
}

async fn edge(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let origin = request.headers().get(header::ORIGIN).cloned();
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    // A browser origin that is not allowed gets nothing, whatever it asks.
    if let Some(origin) = &origin
        && !origin_allowed(&state.config.cors_origins, origin)
    {
        return StatusCode::FORBIDDEN.into_response();
    }
    let logged = state
        .log
        .clone()
        .filter(|_| !is_health(request.uri().path()));
    let line = logged
        .as_ref()
        .map(|_| format!("{} {}", request.method(), request.uri().path()));
    let started = Instant::now();
    let mut response = if request.method() == Method::OPTIONS {
        if origin.is_none() {
            return StatusCode::FORBIDDEN.into_response();
        }
        StatusCode::OK.into_response()
    } else if declared.is_some_and(|n| n > MAX_REQUEST_BYTES) {
        ApiError::too_large(MAX_REQUEST_BYTES).into_response()
    } else {
        next.run(request).await
    };
    if let (Some(log), Some(line)) = (logged, line) {
        let status = response.status();
        let level = if status.is_server_error() {
            crate::log::LogLevel::Error
        } else if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            crate::log::LogLevel::Warning
        } else {
            crate::log::LogLevel::Info
        };
        log(
            level,
            crate::log::API_LOGGER,
            &format!(
                "[Api_Server] {line} -> {} in {} ms",
                status.as_u16(),
                started.elapsed().as_millis()
            ),
        );
    }
    let headers = response.headers_mut();
    security_headers(headers);
    if let Some(origin) = origin {
        cors_headers(&state.config.cors_origins, &origin, headers);
    }
    response
}

fn security_headers(headers: &mut HeaderMap) {
    for (name, value) in [
        (
            "content-security-policy",
            "default-src 'none'; frame-ancestors 'none'",
        ),
        (
            "permissions-policy",
            "camera=(), microphone=(), geolocation=()",
        ),
        (
            "strict-transport-security",
            "max-age=31536000; includeSubDomains",
        ),
        ("x-content-type-options", "nosniff"),
        ("x-frame-options", "DENY"),
        ("x-xss-protection", "0"),
        ("referrer-policy", "no-referrer"),
    ] {
        if !headers.contains_key(name) {
            headers.insert(name, HeaderValue::from_static(value));
        }
    }
}

fn origin_allowed(allowed: &[String], origin: &HeaderValue) -> bool {
    let origin = origin.to_str().unwrap_or("");
    allowed.iter().any(|a| a == "*" || a == origin)
}

fn cors_headers(allowed: &[String], origin: &HeaderValue, headers: &mut HeaderMap) {
    let origin_text = origin.to_str().unwrap_or("");
    let allow = if allowed.iter().any(|a| a == "*") {
        HeaderValue::from_static("*")
    } else if allowed.iter().any(|a| a == origin_text) {
        origin.clone()
    } else {
        return;
    };
    if allow != "*" {
        headers.insert("vary", HeaderValue::from_static("Origin"));
    }
    headers.insert("access-control-allow-origin", allow);
    headers.insert(
        "access-control-allow-methods",
        HeaderValue::from_static("GET, POST, PATCH, DELETE, OPTIONS"),
    );
    headers.insert(
        "access-control-allow-headers",
        HeaderValue::from_static(
            "Authorization, Content-Type, Idempotency-Key, X-Hermes-Session-Id, X-Hermes-Session-Key",
        ),
    );
    headers.insert(
        "access-control-expose-headers",
        HeaderValue::from_static("X-Hermes-Session-Id, X-Hermes-Session-Key"),
    );
    headers.insert("access-control-max-age", HeaderValue::from_static("600"));
}

/// Seconds since the Unix epoch.
pub(crate) fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The same with a fraction (as state.db stores times).
pub(crate) fn unix_now_f64() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// `prefix` and `len` random hex digits (`chatcmpl-…`, `resp_…`, `msg_…`).
pub(crate) fn hex_id(prefix: &str, len: usize) -> String {
    let hex = uuid::Uuid::new_v4().simple().to_string();
    format!("{prefix}{}", &hex[..len.min(hex.len())])
}

/// A boolean body field as the reference reads it: JSON booleans, the
/// strings true/1/yes/on and false/0/no/off, numbers; anything else is `default`.
pub(crate) fn body_flag(
    body: &serde_json::Map<String, serde_json::Value>,
    key: &str,
    default: bool,
) -> bool {
    match body.get(key) {
        Some(serde_json::Value::Bool(b)) => *b,
        Some(serde_json::Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "on" => true,
            "false" | "0" | "no" | "off" => false,
            _ => default,
        },
        Some(serde_json::Value::Number(n)) => n.as_f64().map_or(default, |f| f != 0.0),
        _ => default,
    }
}

/// Reads a JSON object body, with OpenAI-shaped errors for what is wrong.
pub(crate) fn read_body(
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Result<serde_json::Map<String, serde_json::Value>, ApiError> {
    let body = body.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::too_large(MAX_REQUEST_BYTES)
        } else {
            ApiError::bad_request(format!("Could not read the request body: {e}"))
        }
    })?;
    match serde_json::from_slice::<serde_json::Value>(&body) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        Ok(_) => Err(ApiError::bad_request("Request body must be a JSON object")),
        Err(_) => Err(ApiError::bad_request("Invalid JSON in request body")),
    }
}
