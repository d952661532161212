//! The chat page's sessions: one long-lived conversation per browser chat,
//! its events kept in order (numbered, so a reconnecting `EventSource` picks
//! up where it left off) and sent as server-sent events; the page's buttons
//! become ops (send, interrupt, approve, answer, switch model, new session).

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State as Extract};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::Response;
use hermes_protocol::{ApprovalChoice, Event, Op};
use hermes_session::{ResumeRequest, SessionSpec, Submitter};
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::State;
use crate::api::{ApiError, ApiResult, field, required};

/// Events kept per chat for reconnects (older ones are dropped).
const KEPT_EVENTS: usize = 5000;

/// How long a silent event stream waits before a keep-alive comment.
const KEEPALIVE: Duration = Duration::from_secs(20);

/// Tool results are shown up to this many characters.
const RESULT_CHARS: usize = 4000;

/// One browser chat.
struct Chat {
    submitter: Submitter,
    /// Numbered events as JSON (number = index + `dropped` + 1).
    events: Mutex<(u64, Vec<String>)>,
    wake: Notify,
}

impl Chat {
    fn push(&self, event: &Value) {
        let mut held = self.events.lock().unwrap_or_else(PoisonError::into_inner);
        held.1.push(event.to_string());
        if held.1.len() > KEPT_EVENTS {
            let extra = held.1.len() - KEPT_EVENTS;
            held.1.drain(..extra);
            held.0 += extra as u64;
        }
        drop(held);
        self.wake.notify_waiters();
    }

    /// The events numbered after `after`, with their numbers.
    fn since(&self, after: u64) -> Vec<(u64, String)> {
        let held = self.events.lock().unwrap_or_else(PoisonError::into_inner);
        let (dropped, list) = (&held.0, &held.1);
        let skip = after.saturating_sub(*dropped) as usize;
        list.iter()
            .enumerate()
            .skip(skip)
            .map(|(i, e)| (dropped + i as u64 + 1, e.clone()))
            .collect()
    }
}

/// Chats kept open at once: each page load makes one, so the oldest are
/// closed past this (their sessions stay stored and can be continued).
const OPEN_CHATS: usize = 32;

/// The chats of this process, and their ids oldest first.
#[derive(Default)]
pub(crate) struct Chats(Mutex<HashMap<String, Arc<Chat>>>, Mutex<Vec<String>>);

impl Chats {
    /// Adds a chat, closing the oldest beyond [`OPEN_CHATS`].
    fn insert(&self, id: String, chat: Arc<Chat>) {
        let mut order = self.1.lock().unwrap_or_else(PoisonError::into_inner);
        let mut all = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        all.insert(id.clone(), chat);
        order.push(id);
        while order.len() > OPEN_CHATS {
            let oldest = order.remove(0);
            if let Some(old) = all.remove(&oldest) {
                close(&old);
            }
        }
    }

    fn get(&self, id: &str) -> Result<Arc<Chat>, ApiError> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned()
            .ok_or_else(|| ApiError::not_found(format!("no chat {id} (reload the page)")))
    }

    /// Ends every chat's session (the server is stopping).
    pub(crate) fn close_all(&self) {
        let chats: Vec<Arc<Chat>> = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .map(|(_, c)| c)
            .collect();
        for chat in chats {
            close(&chat);
        }
    }
}

/// Ends a chat's session (recorded as ended); its pump ends with it.
fn close(chat: &Chat) {
    let _ = chat.submitter.submit(Op::Shutdown {
        reason: "dashboard_close".into(),
    });
}

/// `POST /api/chat {session_id?}`: a new chat, on a new or a stored session.
pub(crate) async fn create(
    Extract(state): Extract<Arc<State>>,
    body: Option<Json<Value>>,
) -> ApiResult {
    let body = body.map(|Json(b)| b).unwrap_or(Value::Null);
    let cwd = std::env::current_dir().map_err(ApiError::internal)?;
    let mut spec = SessionSpec::new("dashboard", cwd);
    spec.interactive = true;
    spec.auto_title = true;
    if let Some(id) = field(&body, "session_id").filter(|s| !s.is_empty()) {
        spec.resume = Some(ResumeRequest::Resume(id.to_owned()));
    }
    let mut conv = state
        .manager
        .start(spec)
        .await
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    let info = conv.info();
    let chat = Arc::new(Chat {
        submitter: conv.submitter(),
        events: Mutex::new((0, Vec::new())),
        wake: Notify::new(),
    });
    for notice in conv.notices() {
        let (hermes_session::Notice::Info(message) | hermes_session::Notice::Warning(message)) =
            notice;
        chat.push(&json!({"type": "status", "message": message}));
    }
    let pump = chat.clone();
    tokio::spawn(async move {
        while let Some(event) = conv.next_event().await {
            if let Some(json) = describe(event.event) {
                pump.push(&json);
            }
        }
        pump.push(&json!({"type": "error", "message": "the session ended; start a new chat"}));
    });
    let chat_id = crate::security::new_token();
    state.chats.insert(chat_id.clone(), chat);
    Ok(Json(json!({
        "chat_id": chat_id,
        "session_id": info.session_id,
        "model": info.model,
        "provider": info.provider,
    })))
}

/// The page's view of one session event; `None` for what it does not show.
fn describe(event: Event) -> Option<Value> {
    Some(match event {
        Event::TextDelta { text } => json!({"type": "text", "text": text}),
        Event::ReasoningDelta { text } => json!({"type": "reasoning", "text": text}),
        Event::ToolStarted {
            call_id,
            name,
            arguments,
        } => json!({"type": "tool_started", "call_id": call_id, "name": name,
                    "arguments": hermes_llm::redact::redact_secrets(&arguments)}),
        Event::ToolFinished {
            call_id,
            name,
            outcome,
            result,
            duration_ms,
        } => {
            let shown: String = result.chars().take(RESULT_CHARS).collect();
            json!({"type": "tool_finished", "call_id": call_id, "name": name,
                   "ok": outcome == hermes_protocol::ToolOutcome::Ok,
                   "result": hermes_llm::redact::redact_secrets(&shown),
                   "duration_ms": duration_ms})
        }
        Event::ApprovalRequested {
            request_id,
            command,
            reason,
        } => json!({"type": "approval", "request_id": request_id,
                    "command": hermes_llm::redact::redact_secrets(&command), "reason": reason}),
        Event::ClarifyRequested {
            request_id,
            question,
            choices,
        } => json!({"type": "clarify", "request_id": request_id, "question": question,
                    "choices": choices}),
        Event::QuestionClosed { request_id, .. } => {
            json!({"type": "question_closed", "request_id": request_id})
        }
        Event::Status { message } => json!({"type": "status", "message": message}),
        Event::Error { message } => json!({"type": "error",
                                          "message": hermes_llm::redact::redact_secrets(&message)}),
        Event::TurnComplete {
            final_text,
            reason,
            usage,
            ..
        } => json!({"type": "turn_complete", "final_text": final_text,
                    "reason": format!("{reason:?}"),
                    "usage": {"input_tokens": usage.input_tokens,
                              "output_tokens": usage.output_tokens}}),
        Event::SessionChanged { session_id, .. } => {
            json!({"type": "session_changed", "session_id": session_id})
        }
        Event::ModelChanged {
            model, provider, ..
        } => json!({"type": "model_changed", "model": model, "provider": provider}),
        Event::Compressed { before, after } => json!({"type": "status",
            "message": format!("Compressed: {before} → {after} messages.")}),
        _ => return None,
    })
}

/// `GET /api/chat/{id}/events`: everything since `Last-Event-ID`, then live.
pub(crate) async fn events(
    Extract(state): Extract<Arc<State>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let chat = state.chats.get(&id)?;
    let after = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);
    let stream = futures_util::stream::unfold((chat, after), |(chat, mut after)| async move {
        loop {
            let frame = {
                // Registered before looking, so an event pushed in between wakes it.
                let woken = chat.wake.notified();
                let fresh = chat.since(after);
                if fresh.is_empty() {
                    match tokio::time::timeout(KEEPALIVE, woken).await {
                        Ok(()) => continue,
                        Err(_) => Bytes::from_static(b": keepalive\n\n"),
                    }
                } else {
                    let mut frame = String::new();
                    for (n, data) in fresh {
                        frame.push_str(&format!("id: {n}\ndata: {data}\n\n"));
                        after = n;
                    }
                    Bytes::from(frame)
                }
            };
            return Some((Ok::<_, Infallible>(frame), (chat, after)));
        }
    });
    let mut response = Response::new(Body::from_stream(stream));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    Ok(response)
}

/// `POST /api/chat/{id}/{send|interrupt|approval|clarify|model|new}`.
pub(crate) async fn act(
    Extract(state): Extract<Arc<State>>,
    Path((id, action)): Path<(String, String)>,
    body: Option<Json<Value>>,
) -> ApiResult {
    let chat = state.chats.get(&id)?;
    let body = body.map(|Json(b)| b).unwrap_or(Value::Null);
    let op = match action.as_str() {
        "send" => Op::UserInput {
            text: required(&body, "text")?.to_owned(),
        },
        "interrupt" => Op::Interrupt,
        "new" => Op::NewSession,
        "model" => Op::SwitchModel {
            target: required(&body, "model")?.to_owned(),
        },
        "approval" => Op::ApprovalAnswer {
            request_id: request_id(&body)?,
            choice: match required(&body, "choice")? {
                "once" => ApprovalChoice::Once,
                "session" => ApprovalChoice::Session,
                "always" => ApprovalChoice::Always,
                "deny" => ApprovalChoice::Deny,
                other => {
                    return Err(ApiError::bad_request(format!(
                        "choice '{other}' is not one of once, session, always, deny"
                    )));
                }
            },
        },
        "clarify" => Op::ClarifyAnswer {
            request_id: request_id(&body)?,
            answer: field(&body, "answer")
                .map(str::to_owned)
                .filter(|a| !a.trim().is_empty()),
        },
        other => return Err(ApiError::not_found(format!("no chat action '{other}'"))),
    };
    chat.submitter
        .submit(op)
        .map_err(|e| ApiError::bad_request(format!("{e}; start a new chat")))?;
    Ok(Json(json!({"ok": true})))
}

fn request_id(body: &Value) -> Result<u64, ApiError> {
    body.get("request_id")
        .and_then(Value::as_u64)
        .ok_or_else(|| ApiError::bad_request("'request_id' is required"))
}
