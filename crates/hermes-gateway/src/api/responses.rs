//! `POST /v1/responses` (streamed and not), `GET`/`DELETE /v1/responses/{id}`,
//! with `previous_response_id` and named `conversation` chains kept in memory.

use std::collections::HashMap;
use std::sync::Arc;

use hermes_state::responses::ResponseStore;

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use hermes_protocol::{Message, Usage};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use super::chat::{content_text, echo_headers, session_headers};
use super::errors::ApiError;
use super::run::{RunEvent, RunRequest, admit, start};
use super::{AppState, hex_id, read_body, sse, unix_now};

/// Stored responses kept (oldest dropped first), as the reference keeps.
const MAX_STORED: usize = 100;

/// One stored response and what continues it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Stored {
    response: Value,
    #[serde(rename = "conversation_history")]
    history: Vec<(String, String)>,
    instructions: Option<String>,
    session_id: String,
}

/// Stored responses: `HERMES_HOME/response_store.db` on one machine (as the
/// reference keeps them: they survive restarts; the least recently used go
/// past 100), the shared database for replicas.
pub struct Store {
    inner: Arc<dyn ResponseStore>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Store")
    }
}

impl Store {
    /// Responses kept in `inner`.
    pub fn new(inner: Arc<dyn ResponseStore>) -> Self {
        Self { inner }
    }

    fn put(&self, id: &str, stored: Stored, conversation: Option<&str>) {
        let Ok(data) = serde_json::to_string(&stored) else {
            return;
        };
        // A response that cannot be stored is still answered; only its
        // continuation is lost, as when the reference's store fails.
        let _ = self.inner.put(id, &data, conversation, MAX_STORED);
    }

    fn get(&self, id: &str) -> Option<Stored> {
        let data = self.inner.get(id).ok()??;
        match serde_json::from_str(&data) {
            Ok(stored) => Some(stored),
            Err(_) => {
                // A row that no longer reads is dropped and reported as missing.
                let _ = self.inner.delete(id);
                None
            }
        }
    }

    fn delete(&self, id: &str) -> bool {
        self.inner.delete(id).unwrap_or(false)
    }

    fn conversation(&self, name: &str) -> Option<String> {
        self.inner.conversation(name).ok().flatten()
    }
}

/// A short label for a tool call (its most telling argument).
pub fn tool_label(name: &str, arguments: &str) -> String {
    let args: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
    let key = ["command", "path", "query", "url", "pattern", "name"]
        .iter()
        .find_map(|k| args.get(*k).and_then(Value::as_str));
    match key {
        Some(v) => {
            let short: String = v.chars().take(60).collect();
            format!("{name}: {short}")
        }
        None => name.to_owned(),
    }
}

fn usage_json(usage: &Usage) -> Value {
    json!({
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
    })
}

/// A parsed request.
struct Parsed {
    history: Vec<(String, String)>,
    input: String,
    instructions: Option<String>,
    session_id: String,
    model: String,
    store: bool,
    stream: bool,
    conversation: Option<String>,
}

fn parse(state: &AppState, body: &Map<String, Value>) -> Result<Parsed, ApiError> {
    let raw_input = body
        .get("input")
        .ok_or_else(|| ApiError::bad_request("Missing 'input' field").with_param("input"))?;
    let mut instructions = body
        .get("instructions")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let mut previous = body
        .get("previous_response_id")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let conversation = body
        .get("conversation")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if conversation.is_some() && previous.is_some() {
        return Err(ApiError::bad_request(
            "Cannot use both 'conversation' and 'previous_response_id'",
        ));
    }
    if let Some(name) = &conversation {
        previous = state.responses.conversation(name);
    }
    let flag = |key: &str, default: bool| super::body_flag(body, key, default);
    let mut inputs: Vec<(String, String)> = Vec::new();
    match raw_input {
        Value::String(s) => inputs.push(("user".into(), s.clone())),
        Value::Array(items) => {
            for item in items {
                match item {
                    Value::String(s) => inputs.push(("user".into(), s.clone())),
                    Value::Object(obj) => {
                        // Tool outputs and other non-message items carry no turn text.
                        if obj
                            .get("type")
                            .and_then(Value::as_str)
                            .is_some_and(|t| t != "message")
                        {
                            continue;
                        }
                        let role = obj.get("role").and_then(Value::as_str).unwrap_or("user");
                        inputs.push((
                            role.to_owned(),
                            content_text(obj.get("content").unwrap_or(&Value::Null)),
                        ));
                    }
                    _ => {}
                }
            }
        }
        _ => {
            return Err(
                ApiError::bad_request("'input' must be a string or array").with_param("input")
            );
        }
    }
    let mut history: Vec<(String, String)> = Vec::new();
    let mut session_id = None;
    if let Some(raw) = body.get("conversation_history").filter(|v| !v.is_null()) {
        let Some(items) = raw.as_array() else {
            return Err(ApiError::bad_request(
                "'conversation_history' must be an array of message objects",
            ));
        };
        for (i, entry) in items.iter().enumerate() {
            let (Some(role), Some(content)) = (entry.get("role"), entry.get("content")) else {
                return Err(ApiError::bad_request(format!(
                    "conversation_history[{i}] must have 'role' and 'content' fields"
                )));
            };
            history.push((
                role.as_str().unwrap_or("user").to_owned(),
                content_text(content),
            ));
        }
    } else if let Some(prev) = &previous {
        let Some(stored) = state.responses.get(prev) else {
            return Err(ApiError::not_found(format!(
                "Previous response not found: {prev}"
            )));
        };
        history = stored.history;
        session_id = Some(stored.session_id);
        if instructions.is_none() {
            instructions = stored.instructions;
        }
    }
    let Some((_, input)) = inputs.pop() else {
        return Err(ApiError::bad_request("No user message found in input"));
    };
    if input.trim().is_empty() {
        return Err(ApiError::bad_request("No user message found in input"));
    }
    history.extend(inputs);
    Ok(Parsed {
        history,
        input,
        instructions,
        session_id: session_id.unwrap_or_else(|| uuid::Uuid::new_v4().to_string()),
        model: body
            .get("model")
            .and_then(Value::as_str)
            .filter(|m| !m.trim().is_empty())
            .unwrap_or(&state.config.model_name)
            .to_owned(),
        store: flag("store", true),
        stream: flag("stream", false),
        conversation,
    })
}

fn to_messages(history: &[(String, String)]) -> Vec<Message> {
    history
        .iter()
        .filter_map(|(role, text)| match role.as_str() {
            "user" => Some(Message::user(text.clone())),
            "assistant" => Some(Message::assistant(text.clone())),
            _ => None,
        })
        .collect()
}

/// `POST /v1/responses`.
pub async fn create(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let session = session_headers(&headers)?;
    let body = read_body(body)?;
    let parsed = parse(&state, &body)?;
    let permit = admit(&state)?;
    let echo = echo_headers(&parsed.session_id, session.key.as_deref());
    let events = start(
        &state,
        RunRequest {
            session_id: parsed.session_id.clone(),
            history: to_messages(&parsed.history),
            ephemeral_prompt: parsed.instructions.clone(),
            input: parsed.input.clone(),
            model: None,
        },
        permit,
    );
    let id = hex_id("resp_", 28);
    if parsed.stream {
        return Ok(stream(state, events, id, parsed, echo));
    }
    let mut builder = Output::default();
    let mut events = events;
    let mut outcome = None;
    while let Some(event) = events.recv().await {
        match event {
            RunEvent::Done { text, usage } => {
                outcome = Some(Ok((text, usage)));
                break;
            }
            RunEvent::Failed(message) => {
                outcome = Some(Err(message));
                break;
            }
            other => {
                builder.absorb(other);
            }
        }
    }
    let (text, usage) = match outcome {
        Some(Ok(done)) => done,
        Some(Err(message)) => (
            hermes_llm::redact::redact_secrets(&message),
            Usage::default(),
        ),
        None => ("(No response generated)".to_owned(), Usage::default()),
    };
    let text = if text.is_empty() {
        builder.text.clone()
    } else {
        text
    };
    let mut output: Vec<Value> = builder.items.iter().map(plain_item).collect();
    output.push(json!({
        "type": "message", "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }));
    let response = json!({
        "id": id,
        "object": "response",
        "status": "completed",
        "created_at": unix_now(),
        "model": parsed.model,
        "output": output,
        "usage": usage_json(&usage),
    });
    remember(&state, &id, &response, &parsed, &text);
    let mut http = Json(response).into_response();
    http.headers_mut().extend(echo);
    Ok(http)
}

/// A streamed item as the non-streamed response lists it: no id or status,
/// a tool's output as plain text.
fn plain_item(item: &Value) -> Value {
    let mut out = item.clone();
    if let Some(map) = out.as_object_mut() {
        map.remove("id");
        map.remove("status");
        if let Some(text) = map
            .get("output")
            .and_then(|o| o.pointer("/0/text"))
            .and_then(Value::as_str)
            .map(str::to_owned)
        {
            map.insert("output".into(), Value::String(text));
        }
    }
    out
}

fn message_item(id: &str, text: &str, status: &str) -> Value {
    json!({
        "id": id, "type": "message", "status": status, "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    })
}

fn remember(state: &AppState, id: &str, response: &Value, parsed: &Parsed, answer: &str) {
    if !parsed.store {
        return;
    }
    let mut history = parsed.history.clone();
    history.push(("user".into(), parsed.input.clone()));
    history.push(("assistant".into(), answer.to_owned()));
    state.responses.put(
        id,
        Stored {
            response: response.clone(),
            history,
            instructions: parsed.instructions.clone(),
            session_id: parsed.session_id.clone(),
        },
        parsed.conversation.as_deref(),
    );
}

/// Function-call items as the run goes.
#[derive(Default)]
struct Output {
    items: Vec<Value>,
    calls: HashMap<String, (String, String)>,
    text: String,
}

impl Output {
    /// Takes in one event; returns the items it completed.
    fn absorb(&mut self, event: RunEvent) -> Vec<Value> {
        match event {
            RunEvent::Delta(text) => {
                self.text.push_str(&text);
                Vec::new()
            }
            RunEvent::ToolStarted {
                id,
                name,
                arguments,
            } => {
                self.calls.insert(id, (name, arguments));
                Vec::new()
            }
            RunEvent::ToolFinished { id, name, result } => {
                let arguments = self
                    .calls
                    .remove(&id)
                    .map_or_else(|| "{}".to_owned(), |(_, a)| a);
                let call = json!({
                    "id": hex_id("fc_", 24),
                    "type": "function_call", "status": "completed",
                    "call_id": id, "name": name, "arguments": arguments,
                });
                let output = json!({
                    "id": hex_id("fco_", 24),
                    "type": "function_call_output", "status": "completed",
                    "call_id": id, "output": [{"type": "input_text", "text": result}],
                });
                self.items.push(call.clone());
                self.items.push(output.clone());
                vec![call, output]
            }
            RunEvent::Done { .. } | RunEvent::Failed(_) => Vec::new(),
        }
    }
}

/// The streamed form: the Responses event types, in order, each with its
/// `sequence_number`.
fn stream(
    state: Arc<AppState>,
    mut events: mpsc::Receiver<RunEvent>,
    id: String,
    parsed: Parsed,
    echo: HeaderMap,
) -> Response {
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    tokio::spawn(async move {
        let created = unix_now();
        let mut seq = 0u64;
        let mut emit = |kind: &str, mut data: Value| {
            data["type"] = json!(kind);
            data["sequence_number"] = json!(seq);
            seq += 1;
            sse::frame(Some(kind), &data.to_string())
        };
        let envelope = |status: &str, output: Value, usage: Option<&Usage>| {
            let mut env = json!({
                "id": id, "object": "response", "status": status, "created_at": created,
                "model": parsed.model, "output": output,
            });
            if let Some(u) = usage {
                env["usage"] = usage_json(u);
            }
            env
        };
        let msg_id = hex_id("msg_", 24);
        let mut frames = vec![
            emit(
                "response.created",
                json!({"response": envelope("in_progress", json!([]), None)}),
            ),
            emit(
                "response.in_progress",
                json!({"response": envelope("in_progress", json!([]), None)}),
            ),
        ];
        let mut output = Output::default();
        let mut next_index = 0u64;
        let mut message_index: Option<u64> = None;
        let outcome = loop {
            for frame in frames.drain(..) {
                if tx.send(frame).await.is_err() {
                    return;
                }
            }
            let Some(event) = events.recv().await else {
                break Err("the run ended without an answer".to_owned());
            };
            match event {
                RunEvent::Delta(text) => {
                    let index = *message_index.get_or_insert_with(|| {
                        let index = next_index;
                        next_index += 1;
                        frames.push(emit("response.output_item.added", json!({
                            "output_index": index,
                            "item": {"id": msg_id, "type": "message", "status": "in_progress", "role": "assistant", "content": []},
                        })));
                        frames.push(emit("response.content_part.added", json!({
                            "item_id": msg_id, "output_index": index, "content_index": 0,
                            "part": {"type": "output_text", "text": "", "annotations": []},
                        })));
                        index
                    });
                    output.text.push_str(&text);
                    frames.push(emit("response.output_text.delta", json!({
                        "item_id": msg_id, "output_index": index, "content_index": 0, "delta": text, "logprobs": [],
                    })));
                }
                RunEvent::Done { text, usage } => break Ok((text, usage)),
                RunEvent::Failed(message) => break Err(message),
                other => {
                    for item in output.absorb(other) {
                        let index = next_index;
                        next_index += 1;
                        frames.push(emit(
                            "response.output_item.added",
                            json!({"output_index": index, "item": item}),
                        ));
                        frames.push(emit(
                            "response.output_item.done",
                            json!({"output_index": index, "item": item}),
                        ));
                    }
                }
            }
        };
        match outcome {
            Ok((text, usage)) => {
                let text = if output.text.is_empty() {
                    text
                } else {
                    output.text.clone()
                };
                let index = match message_index {
                    Some(i) => i,
                    None => {
                        let i = next_index;
                        frames.push(emit("response.output_item.added", json!({
                            "output_index": i,
                            "item": {"id": msg_id, "type": "message", "status": "in_progress", "role": "assistant", "content": []},
                        })));
                        frames.push(emit(
                            "response.content_part.added",
                            json!({
                                "item_id": msg_id, "output_index": i, "content_index": 0,
                                "part": {"type": "output_text", "text": "", "annotations": []},
                            }),
                        ));
                        frames.push(emit("response.output_text.delta", json!({
                            "item_id": msg_id, "output_index": i, "content_index": 0, "delta": text, "logprobs": [],
                        })));
                        i
                    }
                };
                frames.push(emit("response.output_text.done", json!({
                    "item_id": msg_id, "output_index": index, "content_index": 0, "text": text, "logprobs": [],
                })));
                frames.push(emit(
                    "response.content_part.done",
                    json!({
                        "item_id": msg_id, "output_index": index, "content_index": 0,
                        "part": {"type": "output_text", "text": text, "annotations": []},
                    }),
                ));
                let item = message_item(&msg_id, &text, "completed");
                frames.push(emit(
                    "response.output_item.done",
                    json!({"output_index": index, "item": item}),
                ));
                let mut items = output.items.clone();
                items.push(item);
                let done = envelope("completed", Value::Array(items), Some(&usage));
                remember(&state, &id, &done, &parsed, &text);
                frames.push(emit("response.completed", json!({"response": done})));
            }
            Err(message) => {
                let message = hermes_llm::redact::redact_secrets(&message);
                let mut failed = envelope(
                    "failed",
                    Value::Array(output.items.clone()),
                    Some(&Usage::default()),
                );
                failed["error"] = json!({"code": "server_error", "message": message});
                remember(&state, &id, &failed, &parsed, &output.text);
                frames.push(emit("response.failed", json!({"response": failed})));
            }
        }
        for frame in frames {
            if tx.send(frame).await.is_err() {
                return;
            }
        }
    });
    sse::response(rx, echo)
}

/// `GET /v1/responses/{id}`.
pub async fn fetch(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    state
        .responses
        .get(&id)
        .map(|s| Json(s.response))
        .ok_or_else(|| ApiError::not_found(format!("Response not found: {id}")))
}

/// `DELETE /v1/responses/{id}`.
pub async fn delete(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    if state.responses.delete(&id) {
        Ok(Json(
            json!({"id": id, "object": "response", "deleted": true}),
        ))
    } else {
        Err(ApiError::not_found(format!("Response not found: {id}")))
    }
}
