//! `POST /v1/chat/completions`, streamed and not, as the reference answers it.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use hermes_protocol::{Message, Usage};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use tokio::sync::mpsc;

use super::errors::ApiError;
use super::run::{RunEvent, RunRequest, admit, start};
use super::{AppState, hex_id, read_body, sse, unix_now};

/// The session headers a request carried, checked.
#[derive(Debug, Default, Clone)]
pub struct SessionHeaders {
    /// `X-Hermes-Session-Id`: continue this stored session.
    pub id: Option<String>,
    /// `X-Hermes-Session-Key`: the client's stable channel key (echoed).
    pub key: Option<String>,
}

const MAX_SESSION_HEADER: usize = 256;

/// Reads and checks the session headers.
pub fn session_headers(headers: &HeaderMap) -> Result<SessionHeaders, ApiError> {
    let read = |name: &str, what: &str, capital: &str| -> Result<Option<String>, ApiError> {
        let Some(raw) = headers.get(name) else {
            return Ok(None);
        };
        let value = raw
            .to_str()
            .map_err(|_| ApiError::bad_request(format!("Invalid {what}")))?
            .trim()
            .to_owned();
        if value.is_empty() {
            return Ok(None);
        }
        if value.len() > MAX_SESSION_HEADER {
            return Err(ApiError::bad_request(format!("{capital} too long")));
        }
        if value.contains(['\r', '\n', '\0']) {
            return Err(ApiError::bad_request(format!("Invalid {what}")));
        }
        Ok(Some(value))
    };
    let id = read("x-hermes-session-id", "session ID", "Session ID")?;
    let drive_letter = |id: &str| {
        let mut chars = id.chars();
        chars.next().is_some_and(|c| c.is_ascii_alphabetic()) && chars.next() == Some(':')
    };
    if let Some(id) = &id
        && (id.contains(['/', '\\']) || id.contains("..") || drive_letter(id))
    {
        return Err(ApiError::bad_request("Invalid session ID"));
    }
    Ok(SessionHeaders {
        id,
        key: read("x-hermes-session-key", "session key", "Session key")?,
    })
}

/// Response headers naming the session.
pub fn echo_headers(session_id: &str, key: Option<&str>) -> HeaderMap {
    let mut headers = HeaderMap::new();
    if let Ok(v) = HeaderValue::from_str(session_id) {
        headers.insert("x-hermes-session-id", v);
    }
    if let Some(v) = key.and_then(|k| HeaderValue::from_str(k).ok()) {
        headers.insert("x-hermes-session-key", v);
    }
    headers
}

/// Text of a message `content`: a string, or the text parts of a list.
pub fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| match p {
                Value::String(s) => Some(s.as_str()),
                Value::Object(_) => p.get("text").and_then(Value::as_str).filter(|_| {
                    matches!(
                        p.get("type").and_then(Value::as_str),
                        Some("text" | "input_text" | "output_text") | None
                    )
                }),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The reference's stable id for a client-held conversation: the system text
/// and first user message never change across its turns.
pub fn derived_session_id(system: Option<&str>, first_user: &str) -> String {
    let digest = Sha256::digest(format!("{}\n{first_user}", system.unwrap_or("")).as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("api-{}", &hex[..16])
}

/// The history a continued session already has.
pub fn stored_history(state: &AppState, session_id: &str) -> Vec<Message> {
    state
        .manager
        .services()
        .store()
        .and_then(|store| store.conversation(session_id).ok())
        .unwrap_or_default()
}

/// OpenAI usage from ours.
pub fn usage_json(usage: &Usage) -> Value {
    json!({
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
    })
}

/// A parsed chat request.
struct ChatRequest {
    run: RunRequest,
    model: String,
    stream: bool,
}

fn parse(
    state: &AppState,
    body: &Map<String, Value>,
    session: &SessionHeaders,
) -> Result<ChatRequest, ApiError> {
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .filter(|m| !m.is_empty())
        .ok_or_else(|| {
            ApiError::bad_request("Missing or invalid 'messages' field").with_param("messages")
        })?;
    let mut system: Option<String> = None;
    let mut conversation: Vec<(String, String)> = Vec::new();
    for (i, msg) in messages.iter().enumerate() {
        let Some(obj) = msg.as_object() else {
            return Err(
                ApiError::bad_request(format!("messages[{i}] must be an object"))
                    .with_param(format!("messages[{i}]")),
            );
        };
        let role = obj.get("role").and_then(Value::as_str).unwrap_or("");
        let text = content_text(obj.get("content").unwrap_or(&Value::Null));
        match role {
            // `developer`, `tool` and other roles are dropped, as the reference drops them.
            "system" => {
                system = Some(match system {
                    Some(s) => format!("{s}\n{text}"),
                    None => text,
                });
            }
            "user" | "assistant" => conversation.push((role.to_owned(), text)),
            _ => {}
        }
    }
    let Some((_, input)) = conversation
        .last()
        .cloned()
        .filter(|(_, t)| !t.trim().is_empty())
    else {
        return Err(
            ApiError::bad_request("No user message found in messages").with_param("messages")
        );
    };
    let earlier = &conversation[..conversation.len() - 1];
    let (session_id, history) = match &session.id {
        Some(id) => (id.clone(), stored_history(state, id)),
        None => {
            let first_user = conversation
                .iter()
                .find(|(r, _)| r == "user")
                .map(|(_, t)| t.as_str())
                .unwrap_or("");
            let history = earlier
                .iter()
                .map(|(role, text)| {
                    if role == "user" {
                        Message::user(text.clone())
                    } else {
                        Message::assistant(text.clone())
                    }
                })
                .collect();
            (derived_session_id(system.as_deref(), first_user), history)
        }
    };
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .filter(|m| !m.trim().is_empty())
        .unwrap_or(&state.config.model_name)
        .to_owned();
    let stream = super::body_flag(body, "stream", false);
    Ok(ChatRequest {
        run: RunRequest {
            session_id,
            history,
            ephemeral_prompt: system,
            input,
            model: None,
        },
        model,
        stream,
    })
}

/// `POST /v1/chat/completions`.
pub async fn completions(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let body = read_body(body)?;
    let session = session_headers(&headers)?;
    let request = parse(&state, &body, &session)?;
    let permit = admit(&state)?;
    let session_id = request.run.session_id.clone();
    let echo = echo_headers(&session_id, session.key.as_deref());
    let id = hex_id("chatcmpl-", 29);
    let created = unix_now();
    let events = start(&state, request.run, permit);
    if request.stream {
        return Ok(stream(events, id, created, request.model, echo));
    }
    let (text, usage, failure) = collect(events).await;
    if let Some(message) = failure.filter(|_| text.is_empty()) {
        let mut body = ApiError::server(message).body();
        body["error"]["code"] = json!("agent_incomplete");
        body["error"]["hermes"] = json!({"completed": false, "partial": false, "failed": true});
        let mut response = (axum::http::StatusCode::BAD_GATEWAY, Json(body)).into_response();
        response.headers_mut().extend(echo);
        return Ok(response);
    }
    let mut response = Json(json!({
        "id": id,
        "object": "chat.completion",
        "created": created,
        "model": request.model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": text},
            "finish_reason": "stop",
        }],
        "usage": usage_json(&usage),
    }))
    .into_response();
    response.headers_mut().extend(echo);
    Ok(response)
}

/// Waits for the run's end: its text, usage, and why it failed (if it did).
pub async fn collect(mut events: mpsc::Receiver<RunEvent>) -> (String, Usage, Option<String>) {
    let mut streamed = String::new();
    while let Some(event) = events.recv().await {
        match event {
            RunEvent::Delta(text) => streamed.push_str(&text),
            RunEvent::Done { text, usage } => {
                return (if text.is_empty() { streamed } else { text }, usage, None);
            }
            RunEvent::Failed(message) => return (String::new(), Usage::default(), Some(message)),
            _ => {}
        }
    }
    (
        streamed,
        Usage::default(),
        Some("the run ended without an answer".into()),
    )
}

fn chunk(id: &str, created: u64, model: &str, delta: Value, finish: Option<&str>) -> Value {
    json!({
        "id": id, "object": "chat.completion.chunk", "created": created, "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    })
}

fn stream(
    mut events: mpsc::Receiver<RunEvent>,
    id: String,
    created: u64,
    model: String,
    echo: HeaderMap,
) -> Response {
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    tokio::spawn(async move {
        let send = |value: Value| sse::frame(None, &value.to_string());
        if tx
            .send(send(chunk(
                &id,
                created,
                &model,
                json!({"role": "assistant"}),
                None,
            )))
            .await
            .is_err()
        {
            return;
        }
        let mut started = std::collections::HashSet::new();
        while let Some(event) = events.recv().await {
            let frame = match event {
                RunEvent::Delta(text) => {
                    send(chunk(&id, created, &model, json!({"content": text}), None))
                }
                RunEvent::ToolStarted {
                    id: call,
                    name,
                    arguments,
                } => {
                    if name.starts_with('_') {
                        continue;
                    }
                    started.insert(call.clone());
                    let label = super::responses::tool_label(&name, &arguments);
                    sse::frame(
                        Some("hermes.tool.progress"),
                        &json!({"tool": name, "emoji": "⚡", "label": label, "toolCallId": call, "status": "running"}).to_string(),
                    )
                }
                RunEvent::ToolFinished { id: call, name, .. } => {
                    if !started.remove(&call) {
                        continue;
                    }
                    sse::frame(
                        Some("hermes.tool.progress"),
                        &json!({"tool": name, "toolCallId": call, "status": "completed"})
                            .to_string(),
                    )
                }
                RunEvent::Done { usage, .. } => {
                    let mut last = chunk(&id, created, &model, json!({}), Some("stop"));
                    last["usage"] = usage_json(&usage);
                    let _ = tx.send(send(last)).await;
                    let _ = tx.send(Bytes::from_static(b"data: [DONE]\n\n")).await;
                    return;
                }
                RunEvent::Failed(message) => {
                    let message = hermes_llm::redact::redact_secrets(&message);
                    let mut last = chunk(&id, created, &model, json!({}), Some("error"));
                    last["usage"] = usage_json(&Usage::default());
                    last["error"] = json!({"message": message, "type": "agent_error"});
                    last["hermes"] = json!({"completed": false, "partial": false, "failed": true, "error": message, "error_code": "agent_error"});
                    let _ = tx.send(send(last)).await;
                    let _ = tx.send(Bytes::from_static(b"data: [DONE]\n\n")).await;
                    return;
                }
            };
            if tx.send(frame).await.is_err() {
                // The client went away: dropping `events` interrupts the run.
                return;
            }
        }
    });
    sse::response(rx, echo)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn derived_ids_follow_the_conversation_not_the_turn() {
        let a = derived_session_id(Some("sys"), "first");
        assert_eq!(a, derived_session_id(Some("sys"), "first"));
        assert_ne!(a, derived_session_id(None, "first"));
        assert!(a.starts_with("api-") && a.len() == 20, "{a}");
    }

    #[test]
    fn content_parts_keep_their_text() {
        let parts = json!([
            {"type": "text", "text": "a"},
            {"type": "image_url", "image_url": {"url": "http://x/i.png"}},
            {"type": "input_text", "text": "b"}
        ]);
        assert_eq!(content_text(&parts), "a\nb");
        assert_eq!(content_text(&json!("plain")), "plain");
        assert_eq!(content_text(&Value::Null), "");
    }

    #[test]
    fn session_headers_are_checked() {
        let mut headers = HeaderMap::new();
        headers.insert("x-hermes-session-id", HeaderValue::from_static("../etc"));
        assert_eq!(
            session_headers(&headers).unwrap_err().message,
            "Invalid session ID"
        );
        headers.insert("x-hermes-session-id", HeaderValue::from_static("c:evil"));
        assert!(session_headers(&headers).is_err());
        headers.insert("x-hermes-session-id", HeaderValue::from_static("api-1"));
        headers.insert(
            "x-hermes-session-key",
            HeaderValue::from_static("agent:main:x"),
        );
        let ok = session_headers(&headers).unwrap();
        assert_eq!(ok.id.as_deref(), Some("api-1"));
        assert_eq!(ok.key.as_deref(), Some("agent:main:x"));
        let long = "k".repeat(300);
        headers.insert(
            "x-hermes-session-key",
            HeaderValue::from_str(&long).unwrap(),
        );
        assert_eq!(
            session_headers(&headers).unwrap_err().message,
            "Session key too long"
        );
    }
}
