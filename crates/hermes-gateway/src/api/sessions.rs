//! `/api/sessions`: the persisted sessions (list, create, get, delete,
//! messages, fork) and a turn on one (`chat`, `chat/stream`), on state.db or
//! on the database replicas share.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use hermes_state::store::{SessionAdmin, SessionStore, StoreError};
use hermes_state::{ListFilter, NewSession, SessionRow, SessionSummary};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use super::chat::{collect, echo_headers, session_headers, stored_history, usage_json};
use super::errors::ApiError;
use super::run::{RunEvent, RunRequest, admit, start};
use super::{AppState, read_body, sse, unix_now_f64};

fn unavailable() -> ApiError {
    ApiError::server("Session database unavailable")
        .with_status(StatusCode::SERVICE_UNAVAILABLE)
        .with_code("session_db_unavailable")
}

/// The store calls these handlers make, on state.db or the database
/// replicas share (so any replica serves any session).
struct Db {
    store: Arc<dyn SessionStore>,
    admin: Arc<dyn SessionAdmin>,
}

impl Db {
    fn get_session(&self, id: &str) -> Result<Option<SessionRow>, StoreError> {
        self.store.session(id)
    }

    fn set_title(&self, id: &str, title: &str) -> Result<(), StoreError> {
        self.store.set_title(id, title)
    }

    fn create_session(&self, session: &NewSession) -> Result<(), StoreError> {
        self.store.create_session(session)
    }

    fn end_session(&self, id: &str, reason: &str) -> Result<(), StoreError> {
        self.store.end_session(id, reason)
    }

    fn list_sessions(&self, filter: &ListFilter) -> Result<Vec<SessionSummary>, StoreError> {
        self.admin.list_sessions(filter)
    }

    fn delete_session(&self, id: &str) -> Result<bool, StoreError> {
        self.admin.delete_session(id)
    }

    fn messages(&self, id: &str) -> Result<Vec<hermes_state::StoredMessage>, StoreError> {
        self.admin.messages(id)
    }

    fn conversation(&self, id: &str) -> Result<Vec<hermes_protocol::Message>, StoreError> {
        self.store.conversation(id)
    }

    fn append_message(
        &self,
        id: &str,
        message: &hermes_protocol::Message,
        extra: &hermes_state::MessageExtra,
    ) -> Result<(), StoreError> {
        self.store.append_message(id, message, extra)
    }

    fn next_title_in_lineage(&self, title: &str) -> Result<String, StoreError> {
        self.store.next_title_in_lineage(title)
    }
}

/// Runs `f` on the session store off the async threads.
async fn with_db<T: Send + 'static>(
    state: &AppState,
    f: impl FnOnce(&mut Db) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let services = state.manager.services();
    let (Some(store), Some(admin)) = (services.store(), services.admin()) else {
        return Err(unavailable());
    };
    let mut db = Db { store, admin };
    tokio::task::spawn_blocking(move || f(&mut db))
        .await
        .map_err(|e| ApiError::server(e.to_string()))?
}

fn db_error(e: impl std::fmt::Display) -> ApiError {
    ApiError::server(format!("session database error: {e}"))
}

/// A session as clients see it (no system prompt or model config text).
fn session_json(row: &SessionRow) -> Value {
    json!({
        "id": row.id, "source": row.source, "user_id": row.user_id, "model": row.model,
        "title": row.title, "started_at": row.started_at, "ended_at": row.ended_at,
        "end_reason": row.end_reason, "message_count": row.message_count,
        "tool_call_count": row.tool_call_count, "input_tokens": row.input_tokens,
        "output_tokens": row.output_tokens, "api_call_count": row.api_call_count,
        "parent_session_id": row.parent_session_id,
        "has_system_prompt": row.system_prompt.as_deref().is_some_and(|p| !p.is_empty()),
        "has_model_config": row.model_config.as_deref().is_some_and(|c| !c.is_empty()),
    })
}

/// The id a create or fork body asks for (`id` or `session_id`), checked; or
/// the reference's default for sessions made over this API.
fn requested_id(body: &Map<String, Value>) -> Result<String, ApiError> {
    let id = body
        .get("id")
        .or_else(|| body.get("session_id"))
        .and_then(Value::as_str)
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|| super::hex_id(&format!("api_{}_", super::unix_now()), 8));
    valid_id(&id)?;
    Ok(id)
}

fn valid_id(id: &str) -> Result<(), ApiError> {
    let bad = id.is_empty()
        || id.contains(['/', '\\', '\r', '\n', '\0'])
        || id.contains("..")
        || id.starts_with('.');
    if bad {
        return Err(ApiError::bad_request("Invalid session ID").with_code("invalid_session_id"));
    }
    if id.len() > 256 {
        return Err(ApiError::bad_request("Session ID too long").with_code("invalid_session_id"));
    }
    Ok(())
}

fn not_found(id: &str) -> ApiError {
    ApiError::not_found(format!("Session not found: {id}")).with_code("session_not_found")
}

/// The session's row, or 404.
fn existing(db: &Db, id: &str) -> Result<SessionRow, ApiError> {
    db.get_session(id)
        .map_err(db_error)?
        .ok_or_else(|| not_found(id))
}

/// 409 when `id` is taken.
fn ensure_free(db: &Db, id: &str) -> Result<(), ApiError> {
    if db.get_session(id).map_err(db_error)?.is_some() {
        return Err(
            ApiError::bad_request(format!("Session already exists: {id}"))
                .with_status(StatusCode::CONFLICT)
                .with_code("session_exists"),
        );
    }
    Ok(())
}

/// Sets a title; a rejected one is the client's error.
fn set_title(db: &mut Db, id: &str, title: &str) -> Result<(), ApiError> {
    db.set_title(id, title)
        .map(|_| ())
        .map_err(|e| ApiError::bad_request(e.to_string()).with_code("invalid_title"))
}

/// `{"object": "hermes.session", "session": …}`.
fn session_answer(row: &SessionRow) -> Value {
    json!({"object": "hermes.session", "session": session_json(row)})
}

/// `GET /api/sessions`.
pub async fn list(
    State(state): State<Arc<AppState>>,
    Query(query): Query<std::collections::HashMap<String, String>>,
) -> Result<Json<Value>, ApiError> {
    let number = |key: &str, default: usize, max: usize| {
        query
            .get(key)
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(default)
            .min(max)
    };
    let limit = number("limit", 50, 200);
    let offset = number("offset", 0, 1_000_000);
    let filter = ListFilter {
        source: query.get("source").filter(|s| !s.is_empty()).cloned(),
        limit,
        offset,
        include_children: query
            .get("include_children")
            .is_some_and(|v| matches!(v.as_str(), "1" | "true" | "yes")),
        ..ListFilter::default()
    };
    let data = with_db(&state, move |db| {
        let summaries = db.list_sessions(&filter).map_err(db_error)?;
        let mut out = Vec::new();
        for s in summaries {
            if let Some(row) = db.get_session(&s.id).map_err(db_error)? {
                let mut item = session_json(&row);
                item["last_active"] = json!(s.last_active);
                item["preview"] = json!(s.preview);
                out.push(item);
            }
        }
        Ok(out)
    })
    .await?;
    let has_more = data.len() == limit;
    Ok(Json(
        json!({"object": "list", "data": data, "limit": limit, "offset": offset, "has_more": has_more}),
    ))
}

/// `POST /api/sessions`.
pub async fn create(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let body = read_body(body)?;
    let id = requested_id(&body)?;
    let system_prompt = match body.get("system_prompt") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            return Err(ApiError::bad_request("system_prompt must be a string")
                .with_code("invalid_system_prompt"));
        }
    };
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or(&state.config.model_name)
        .to_owned();
    let title = body.get("title").and_then(Value::as_str).map(str::to_owned);
    let cwd = state.cwd.display().to_string();
    let row = with_db(&state, move |db| {
        ensure_free(db, &id)?;
        db.create_session(&NewSession {
            id: id.clone(),
            source: "api_server".into(),
            model: Some(model),
            system_prompt,
            cwd: Some(cwd),
            started_at: unix_now_f64(),
            ..NewSession::default()
        })
        .map_err(db_error)?;
        if let Some(title) = title {
            set_title(db, &id, &title)?;
        }
        existing(db, &id)
    })
    .await?;
    Ok((StatusCode::CREATED, Json(session_answer(&row))).into_response())
}

/// `GET /api/sessions/{id}`.
pub async fn fetch(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    valid_id(&id)?;
    let row = with_db(&state, move |db| existing(db, &id)).await?;
    Ok(Json(session_answer(&row)))
}

/// `PATCH /api/sessions/{id}`: `title` (null clears it) and `end_reason` (ends it).
pub async fn update(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, ApiError> {
    valid_id(&id)?;
    let body = read_body(body)?;
    let unknown: Vec<&str> = body
        .keys()
        .map(String::as_str)
        .filter(|k| !matches!(*k, "title" | "end_reason"))
        .collect();
    if !unknown.is_empty() {
        return Err(ApiError::bad_request(format!(
            "Unsupported session fields: {}",
            unknown.join(", ")
        ))
        .with_code("unsupported_session_field"));
    }
    let title = body
        .get("title")
        .map(|t| t.as_str().unwrap_or("").to_owned());
    let end_reason = body
        .get("end_reason")
        .and_then(Value::as_str)
        .filter(|r| !r.is_empty())
        .map(str::to_owned);
    let row = with_db(&state, move |db| {
        existing(db, &id)?;
        if let Some(title) = title {
            set_title(db, &id, &title)?;
        }
        if let Some(reason) = end_reason {
            db.end_session(&id, &reason).map_err(db_error)?;
        }
        existing(db, &id)
    })
    .await?;
    Ok(Json(session_answer(&row)))
}

/// `DELETE /api/sessions/{id}`.
pub async fn delete(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    valid_id(&id)?;
    let key = id.clone();
    let deleted = with_db(&state, move |db| {
        existing(db, &key)?;
        db.delete_session(&key).map_err(db_error)
    })
    .await?;
    Ok(Json(
        json!({"object": "hermes.session.deleted", "id": id, "deleted": deleted}),
    ))
}

/// `GET /api/sessions/{id}/messages`.
pub async fn messages(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    valid_id(&id)?;
    let key = id.clone();
    let data = with_db(&state, move |db| {
        existing(db, &key)?;
        let messages = db.messages(&key).map_err(db_error)?;
        Ok(messages
            .iter()
            .map(|m| {
                let tool_calls = m
                    .tool_calls
                    .as_deref()
                    .and_then(|t| serde_json::from_str::<Value>(t).ok());
                json!({
                    "id": m.id, "session_id": m.session_id, "role": m.role, "content": m.content,
                    "tool_call_id": m.tool_call_id, "tool_calls": tool_calls, "tool_name": m.tool_name,
                    "timestamp": m.timestamp, "token_count": m.token_count,
                    "finish_reason": m.finish_reason, "reasoning": m.reasoning,
                })
            })
            .collect::<Vec<_>>())
    })
    .await?;
    Ok(Json(
        json!({"object": "list", "session_id": id, "data": data}),
    ))
}

/// `POST /api/sessions/{id}/fork`: a new session holding a copy of this one's messages.
pub async fn fork(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    valid_id(&id)?;
    let body = read_body(body).unwrap_or_default();
    let fork_id = requested_id(&body)?;
    let title = body.get("title").and_then(Value::as_str).map(str::to_owned);
    let row = with_db(&state, move |db| {
        let parent = existing(db, &id)?;
        ensure_free(db, &fork_id)?;
        db.create_session(&NewSession {
            id: fork_id.clone(),
            source: "api_server".into(),
            model: parent.model.clone(),
            system_prompt: parent.system_prompt.clone(),
            parent_session_id: Some(id.clone()),
            cwd: parent.cwd.clone(),
            started_at: unix_now_f64(),
            ..NewSession::default()
        })
        .map_err(db_error)?;
        let stamps: Vec<f64> = db
            .messages(&id)
            .map_err(db_error)?
            .iter()
            .map(|m| m.timestamp)
            .collect();
        for (i, message) in db.conversation(&id).map_err(db_error)?.iter().enumerate() {
            let extra = hermes_state::MessageExtra {
                timestamp: stamps.get(i).copied().unwrap_or_else(unix_now_f64),
                ..hermes_state::MessageExtra::default()
            };
            db.append_message(&fork_id, message, &extra)
                .map_err(db_error)?;
        }
        // The source ends as branched; the fork is titled in its lineage.
        db.end_session(&id, "branched").map_err(db_error)?;
        let title = match title {
            Some(t) => t,
            None => db
                .next_title_in_lineage(parent.title.as_deref().unwrap_or("fork"))
                .map_err(db_error)?,
        };
        set_title(db, &fork_id, &title)?;
        existing(db, &fork_id)
    })
    .await?;
    Ok((StatusCode::CREATED, Json(session_answer(&row))).into_response())
}

/// The user message of a session chat body (`message`, `input` or `content`).
fn chat_input(body: &Map<String, Value>) -> Result<(String, Option<String>), ApiError> {
    let text = ["message", "input", "content"]
        .iter()
        .find_map(|k| body.get(*k))
        .map(super::chat::content_text)
        .unwrap_or_default();
    if text.trim().is_empty() {
        return Err(ApiError::bad_request("Missing 'message' field").with_param("message"));
    }
    let system = match body
        .get("system_message")
        .or_else(|| body.get("instructions"))
    {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            return Err(ApiError::bad_request("system_message must be a string")
                .with_code("invalid_system_message"));
        }
    };
    Ok((text, system))
}

async fn prepare(
    state: &Arc<AppState>,
    id: &str,
    body: Result<Bytes, BytesRejection>,
) -> Result<RunRequest, ApiError> {
    valid_id(id)?;
    let key = id.to_owned();
    with_db(state, move |db| existing(db, &key)).await?;
    let body = read_body(body)?;
    let (input, system) = chat_input(&body)?;
    Ok(RunRequest {
        session_id: id.to_owned(),
        history: stored_history(state, id),
        ephemeral_prompt: system,
        input,
        model: None,
    })
}

/// `POST /api/sessions/{id}/chat`: one turn, answered when it ends.
pub async fn chat(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let session = session_headers(&headers)?;
    let request = prepare(&state, &id, body).await?;
    let permit = admit(&state)?;
    let events = start(&state, request, permit);
    let (text, usage, failure) = collect(events).await;
    if let Some(message) = failure.filter(|_| text.is_empty()) {
        return Err(ApiError::server(message));
    }
    let mut response = Json(json!({
        "object": "hermes.session.chat.completion",
        "session_id": id,
        "message": {"role": "assistant", "content": text},
        "usage": usage_json(&usage),
    }))
    .into_response();
    response
        .headers_mut()
        .extend(echo_headers(&id, session.key.as_deref()));
    Ok(response)
}

/// `POST /api/sessions/{id}/chat/stream`: the same turn as server-sent events,
/// named as the reference names them: `run.started`, `message.started`,
/// `assistant.delta`, `tool.started`/`tool.completed`, `assistant.completed`,
/// `run.completed` (or `error`), then `done`; each payload carries
/// `session_id`, `run_id`, `seq` and `ts`.
pub async fn chat_stream(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let session = session_headers(&headers)?;
    let request = prepare(&state, &id, body).await?;
    let input = request.input.clone();
    let permit = admit(&state)?;
    let mut events = start(&state, request, permit);
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    let session_id = id.clone();
    tokio::spawn(async move {
        let run_id = format!("run_{}", uuid::Uuid::new_v4().simple());
        let message_id = format!("msg_{}", uuid::Uuid::new_v4().simple());
        let mut seq = 0u64;
        let mut frame = |kind: &str, mut data: Value| {
            seq += 1;
            if let Some(map) = data.as_object_mut() {
                map.entry("session_id").or_insert_with(|| json!(session_id));
                map.insert("run_id".into(), json!(run_id));
                map.insert("seq".into(), json!(seq));
                map.insert("ts".into(), json!(unix_now_f64()));
            }
            sse::frame(Some(kind), &data.to_string())
        };
        let opening = [
            frame(
                "run.started",
                json!({"user_message": {"role": "user", "content": input}}),
            ),
            frame(
                "message.started",
                json!({"message": {"id": message_id, "role": "assistant"}}),
            ),
        ];
        for f in opening {
            if tx.send(f).await.is_err() {
                return;
            }
        }
        while let Some(event) = events.recv().await {
            let mut out = Vec::new();
            let mut last = false;
            match event {
                RunEvent::Delta(text) => out.push(frame(
                    "assistant.delta",
                    json!({"message_id": message_id, "delta": text}),
                )),
                RunEvent::ToolStarted { name, arguments, .. } => out.push(frame(
                    "tool.started",
                    json!({"message_id": message_id, "tool_name": name,
                           "preview": super::responses::tool_label(&name, &arguments), "args": arguments}),
                )),
                RunEvent::ToolFinished { name, .. } => out.push(frame(
                    "tool.completed",
                    json!({"message_id": message_id, "tool_name": name}),
                )),
                RunEvent::Done { text, usage } => {
                    out.push(frame(
                        "assistant.completed",
                        json!({"message_id": message_id, "content": text, "completed": true,
                               "partial": false, "interrupted": false}),
                    ));
                    out.push(frame(
                        "run.completed",
                        json!({"message_id": message_id, "completed": true,
                               "messages": [{"role": "assistant", "content": text}],
                               "usage": usage_json(&usage)}),
                    ));
                    last = true;
                }
                RunEvent::Failed(message) => {
                    out.push(frame(
                        "error",
                        json!({"message": hermes_llm::redact::redact_secrets(&message)}),
                    ));
                    last = true;
                }
            }
            if last {
                out.push(sse::frame(Some("done"), "{}"));
            }
            for f in out {
                if tx.send(f).await.is_err() {
                    return;
                }
            }
            if last {
                return;
            }
        }
    });
    Ok(sse::response(rx, echo_headers(&id, session.key.as_deref())))
}
