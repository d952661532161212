//! What every JSON handler shares: errors as `{"error": …}` with a status,
//! store work moved off the async threads, and the store itself.

use std::sync::Arc;

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use hermes_state::store::SessionAdmin;
use serde_json::{Value, json};

use crate::State;

/// A failed request: the status and what to tell the person.
#[derive(Debug)]
pub(crate) struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    /// 400: the request cannot be honoured as it stands.
    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
        }
    }

    /// 404: nothing by that name.
    pub(crate) fn not_found(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::NOT_FOUND,
            message: message.into(),
        }
    }

    /// 500: something failed on this side (secrets redacted).
    pub(crate) fn internal(message: impl std::fmt::Display) -> Self {
        Self {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: hermes_llm::redact::redact_secrets(&message.to_string()),
        }
    }

    /// 503: the session store is not there.
    pub(crate) fn unavailable(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::SERVICE_UNAVAILABLE,
            message: message.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(json!({"error": self.message}))).into_response()
    }
}

impl From<hermes_state::store::StoreError> for ApiError {
    fn from(e: hermes_state::store::StoreError) -> Self {
        Self::internal(e)
    }
}

/// A handler's result.
pub(crate) type ApiResult = Result<Json<Value>, ApiError>;

/// Runs blocking work (SQLite, files) on the blocking pool.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(ApiError::internal)?
}

/// The session store's admin side, or why there is none.
pub(crate) fn admin(state: &State) -> Result<Arc<dyn SessionAdmin>, ApiError> {
    state.manager.services().admin().ok_or_else(|| {
        ApiError::unavailable(
            state
                .manager
                .services()
                .store_problem()
                .unwrap_or_else(|| "session history is off".to_owned()),
        )
    })
}

/// A string field of a JSON body.
pub(crate) fn field<'a>(body: &'a Value, name: &str) -> Option<&'a str> {
    body.get(name).and_then(Value::as_str)
}

/// A required non-empty string field.
pub(crate) fn required<'a>(body: &'a Value, name: &str) -> Result<&'a str, ApiError> {
    field(body, name)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| ApiError::bad_request(format!("'{name}' is required")))
}

/// Anything else: 404 as JSON.
pub(crate) async fn not_found() -> ApiError {
    ApiError::not_found("no such page or API route")
}
