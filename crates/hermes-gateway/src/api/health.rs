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

/// `GET /v1/capabilities`.
pub async fn capabilities(State(state): State<Arc<AppState>>) -> Json<Value> {
    Json(json!({
        "object": "capabilities",
        "platform": "hermes-agent",
        "model": state.config.model_name,
        "auth": {"type": "bearer", "required": true},
        "features": {
            "chat_completions": true,
            "chat_completions_streaming": true,
            "responses_api": true,
            "responses_streaming": true,
            "session_continuity": true,
            "session_key_header": "X-Hermes-Session-Key",
            "session_id_header": "X-Hermes-Session-Id",
            "server_side_tools": true,
        },
        "endpoints": [
            "/v1/chat/completions", "/v1/responses", "/v1/models", "/v1/capabilities",
            "/api/sessions", "/health", "/health/detailed"
        ],
    }))
}
