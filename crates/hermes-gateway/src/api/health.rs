//! Health, model listing and capabilities.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use serde_json::{Value, json};

use super::AppState;

/// `GET /health`, `/v1/health` (no key needed).
pub async fn health() -> Json<Value> {
    Json(json!({"status": "ok", "platform": "hermes-agent", "version": env!("CARGO_PKG_VERSION")}))
}

/// `GET /health/detailed`.
pub async fn detailed(State(state): State<Arc<AppState>>) -> Json<Value> {
    Json(json!({
        "status": "ok",
        "platform": "hermes-agent",
        "version": env!("CARGO_PKG_VERSION"),
        "uptime_seconds": state.started.elapsed().as_secs(),
        "active_runs": state.inflight.count(),
        "max_concurrent_runs": state.config.max_concurrent_runs,
        "pid": std::process::id(),
    }))
}

/// `GET /metrics`: the Prometheus (OpenMetrics) text of the process's
/// counters, behind the API key like every route but `/health`.
pub async fn metrics(State(state): State<Arc<AppState>>) -> axum::response::Response {
    use axum::http::{StatusCode, header};
    use axum::response::IntoResponse;
    let Some(metrics) = state.observer.as_ref().and_then(|o| o.metrics()) else {
        return super::ApiError::not_found(
            "Metrics are off: set observability.metrics: true in config.yaml".to_owned(),
        )
        .into_response();
    };
    let runs = i64::try_from(state.inflight.count()).unwrap_or(i64::MAX);
    metrics
        .in_flight
        .get_or_create(&vec![("part", "api_server".to_owned())])
        .set(runs);
    (
        StatusCode::OK,
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        metrics.render(),
    )
        .into_response()
}

/// `GET /v1/models`: the one model Hermes answers as.
pub async fn models(State(state): State<Arc<AppState>>) -> Json<Value> {
    let created = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Json(json!({
        "object": "list",
        "data": [{
            "id": state.config.model_name,
            "object": "model",
            "created": created,
            "owned_by": "hermes",
            "permission": [],
            "root": state.config.model_name,
            "parent": null,
        }],
    }))
}

/// `GET /v1/capabilities`: what this server does (the reference's shape;
/// features it lacks say `false`).
pub async fn capabilities(State(state): State<Arc<AppState>>) -> Json<Value> {
    let endpoint = |method: &str, path: &str| json!({"method": method, "path": path});
    Json(json!({
        "object": "hermes.api_server.capabilities",
        "platform": "hermes-agent",
        "model": state.config.model_name,
        "auth": {"type": "bearer", "required": true},
        "runtime": {
            "mode": "server_agent",
            "tool_execution": "server",
            "split_runtime": false,
            "description": "The API server runs a server-side Hermes session per request; tools execute on the API-server host.",
        },
        "features": {
            "chat_completions": true, "chat_completions_streaming": true,
            "responses_api": true, "responses_streaming": true,
            "run_submission": true, "run_status": true, "run_events_sse": true,
            "run_stop": true, "run_approval_response": true,
            "tool_progress_events": true, "approval_events": true,
            "session_resources": true, "session_chat": true, "session_chat_streaming": true,
            "session_fork": true, "admin_config_rw": false, "jobs_admin": false,
            "memory_write_api": false, "skills_api": false, "audio_api": false,
            "realtime_voice": false,
            "session_continuity_header": "X-Hermes-Session-Id",
            "session_key_header": "X-Hermes-Session-Key",
            "cors": !state.config.cors_origins.is_empty(),
        },
        "endpoints": {
            "health": endpoint("GET", "/health"),
            "health_detailed": endpoint("GET", "/health/detailed"),
            "models": endpoint("GET", "/v1/models"),
            "chat_completions": endpoint("POST", "/v1/chat/completions"),
            "responses": endpoint("POST", "/v1/responses"),
            "runs": endpoint("POST", "/v1/runs"),
            "run_status": endpoint("GET", "/v1/runs/{run_id}"),
            "run_events": endpoint("GET", "/v1/runs/{run_id}/events"),
            "run_approval": endpoint("POST", "/v1/runs/{run_id}/approval"),
            "run_stop": endpoint("POST", "/v1/runs/{run_id}/stop"),
            "sessions": endpoint("GET", "/api/sessions"),
            "session_create": endpoint("POST", "/api/sessions"),
            "session": endpoint("GET", "/api/sessions/{session_id}"),
            "session_update": endpoint("PATCH", "/api/sessions/{session_id}"),
            "session_delete": endpoint("DELETE", "/api/sessions/{session_id}"),
            "session_messages": endpoint("GET", "/api/sessions/{session_id}/messages"),
            "session_fork": endpoint("POST", "/api/sessions/{session_id}/fork"),
            "session_chat": endpoint("POST", "/api/sessions/{session_id}/chat"),
            "session_chat_stream": endpoint("POST", "/api/sessions/{session_id}/chat/stream"),
        },
    }))
}
