//! `/v1/runs`: a run starts in the background (202 with its id), its status
//! is polled, its events are read as SSE from any sequence number
//! (`Last-Event-ID`), a pending approval is answered and the run stopped.
//! Everything a reader sees comes from the [`store::RunStore`], so a client
//! that reconnects gets each event once, whichever process wrote it.

mod worker;

/// The run store (in hermes-state, so the PostgreSQL one can implement it).
pub use hermes_state::runs as store;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use hermes_protocol::{ApprovalChoice, Message};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use tokio::sync::mpsc;

use self::store::{Remembered, RunStore, SqliteRunStore, StoreError};
use self::worker::{Active, RunInput};
use super::chat::content_text;
use super::errors::ApiError;
use super::run::admit;
use super::{AppState, body_flag, hex_id, read_body, sse, unix_now_f64};

/// Events read from the store per query.
const PAGE: usize = 256;
/// How often a reader looks at the store when no local writer wakes it.
const POLL: Duration = Duration::from_millis(500);

/// The runs of this server: the store and the runs in flight here.
pub struct Runs {
    path: PathBuf,
    /// Opened on first use: a server that never sees `/v1/runs` creates no file.
    store: OnceLock<Arc<dyn RunStore>>,
    /// Replicas on a shared database: their run store and wake-ups.
    shared: Option<hermes_session::stores::Shared>,
    /// Wake-ups of other replicas' writes (`runs`) and signals (`run_signals`).
    wakeups: OnceLock<(Wakeups, Wakeups)>,
    active: Mutex<HashMap<String, Arc<Active>>>,
    /// Serialises idempotent POSTs so two requests with one key start one run.
    claim: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for Runs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runs").field("path", &self.path).finish()
    }
}

impl Runs {
    /// Runs stored in `home/runs.db`, or in the shared database replicas use.
    pub fn open(home: &Path, shared: Option<hermes_session::stores::Shared>) -> Self {
        let store = OnceLock::new();
        if let Some(shared) = &shared {
            let _ = store.set(shared.runs.clone());
        }
        Self {
            path: home.join("runs.db"),
            store,
            shared,
            wakeups: OnceLock::new(),
            active: Mutex::new(HashMap::new()),
            claim: tokio::sync::Mutex::new(()),
        }
    }

    fn store(&self) -> Result<Arc<dyn RunStore>, ApiError> {
        if let Some(store) = self.store.get() {
            return Ok(store.clone());
        }
        let opened: Arc<dyn RunStore> = match SqliteRunStore::open(&self.path) {
            Ok(store) => Arc::new(store),
            Err(e) => return Err(ApiError::server(e.to_string())),
        };
        Ok(self.store.get_or_init(|| opened).clone())
    }

    fn get(&self, run_id: &str) -> Option<Arc<Active>> {
        self.lock().get(run_id).cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Active>>> {
        self.active.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Forgets a run that ended (its writer finishes what is queued).
    pub(crate) fn finish(&self, run_id: &str) {
        self.lock().remove(run_id);
    }

    /// Wake-ups from other replicas: `(events written, signals sent)`, each
    /// a run id (empty: something may have been missed). `None` alone.
    fn wakeups(&self) -> Option<&(Wakeups, Wakeups)> {
        let shared = self.shared.as_ref()?;
        Some(self.wakeups.get_or_init(|| {
            (
                Wakeups::listen(shared.notifier.as_ref(), "runs"),
                Wakeups::listen(shared.notifier.as_ref(), "run_signals"),
            )
        }))
    }

    /// A receiver of other replicas' event wake-ups.
    pub(crate) fn event_wakeups(&self) -> Option<tokio::sync::broadcast::Receiver<String>> {
        self.wakeups().map(|(events, _)| events.subscribe())
    }

    /// A receiver of signal wake-ups (`None` alone: signals come in directly).
    pub(crate) fn signal_wakeups(&self) -> Option<tokio::sync::broadcast::Receiver<String>> {
        self.wakeups().map(|(_, signals)| signals.subscribe())
    }
}

/// One `LISTEN` topic, fanned out to this process's readers.
pub(crate) struct Wakeups {
    tx: tokio::sync::broadcast::Sender<String>,
}

impl Wakeups {
    fn listen(notifier: &dyn hermes_state::coordination::Notifier, topic: &str) -> Self {
        let (tx, _) = tokio::sync::broadcast::channel(1024);
        if let Ok(rx) = notifier.listen(topic) {
            let forward = tx.clone();
            std::thread::spawn(move || {
                while let Ok(payload) = rx.recv() {
                    // No reader right now is fine; the listener lives on.
                    let _ = forward.send(payload);
                }
            });
        }
        Self { tx }
    }

    fn subscribe(&self) -> tokio::sync::broadcast::Receiver<String> {
        self.tx.subscribe()
    }
}

fn store_error(e: StoreError) -> ApiError {
    ApiError::server(e.to_string())
}

async fn blocking<R: Send + 'static>(
    f: impl FnOnce() -> Result<R, StoreError> + Send + 'static,
) -> Result<R, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::server(e.to_string()))?
        .map_err(store_error)
}

fn not_found(run_id: &str) -> ApiError {
    ApiError::not_found(format!("Run not found: {run_id}")).with_code("run_not_found")
}

/// Answers a POST once per `Idempotency-Key`: the same key with the same body
/// gets the first answer again; with another body, 422.
async fn idempotent<F, Fut>(
    state: &AppState,
    scope: &str,
    headers: &HeaderMap,
    body: &[u8],
    handle: F,
) -> Response
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = Result<(StatusCode, Value), ApiError>>,
{
    let key = headers
        .get("idempotency-key")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|k| !k.is_empty());
    let Some(key) = key else {
        return answer(handle().await);
    };
    let fingerprint = hex::encode(Sha256::digest(body));
    let _claim = state.runs.claim.lock().await;
    let result = async {
        let store = state.runs.store()?;
        let (s, k, scope2) = (store.clone(), key.to_owned(), scope.to_owned());
        if let Some(first) = blocking(move || s.recall(&scope2, &k)).await? {
            return replay(first, &fingerprint);
        }
        let (status, body) = handle().await?;
        let first = Remembered {
            fingerprint: fingerprint.clone(),
            status: status.as_u16(),
            body,
        };
        let (k, scope2) = (key.to_owned(), scope.to_owned());
        let kept = blocking(move || store.remember(&scope2, &k, &first)).await?;
        replay(kept, &fingerprint)
    }
    .await;
    answer(result)
}

fn replay(first: Remembered, fingerprint: &str) -> Result<(StatusCode, Value), ApiError> {
    if first.fingerprint != fingerprint {
        return Err(ApiError::bad_request(
            "Idempotency-Key was already used with a different request body",
        )
        .with_status(StatusCode::UNPROCESSABLE_ENTITY)
        .with_code("idempotency_key_reused"));
    }
    let status = StatusCode::from_u16(first.status).unwrap_or(StatusCode::OK);
    Ok((status, first.body))
}

fn answer(result: Result<(StatusCode, Value), ApiError>) -> Response {
    match result {
        Ok((status, body)) => (status, axum::Json(body)).into_response(),
        Err(e) => e.into_response(),
    }
}

/// `POST /v1/runs`.
pub async fn create(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let raw = body.as_ref().map(|b| b.to_vec()).unwrap_or_default();
    idempotent(&state, "runs", &headers, &raw, || start(&state, body)).await
}

async fn start(
    state: &Arc<AppState>,
    body: Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Value), ApiError> {
    let body = read_body(body)?;
    let input = run_input(&body)?;
    let permit = admit(state)?;
    let run_id = hex_id("run_", 32);
    let session_id = match body.get("session_id").and_then(Value::as_str) {
        Some(id) if !id.is_empty() => id.to_owned(),
        _ => run_id.clone(),
    };
    let now = unix_now_f64();
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .map_or_else(|| state.config.model_name.clone(), str::to_owned);
    let status = json!({
        "object": "hermes.run", "run_id": run_id, "status": "queued",
        "created_at": now, "updated_at": now, "session_id": session_id, "model": model,
    });
    let active = worker::register(state.runs.store()?, &run_id, status)
        .await
        .map_err(store_error)?;
    state.runs.lock().insert(run_id.clone(), active.clone());
    let input = RunInput {
        session_id,
        ..input
    };
    worker::spawn(state.clone(), active, input, permit);
    Ok((
        StatusCode::ACCEPTED,
        json!({"run_id": run_id, "status": "started"}),
    ))
}

/// The user message, history and options of a run request (as the reference reads them).
fn run_input(body: &Map<String, Value>) -> Result<RunInput, ApiError> {
    let raw = body.get("input").filter(|v| match v {
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Null | Value::Bool(false) => false,
        _ => true,
    });
    let Some(raw) = raw else {
        return Err(ApiError::bad_request("Missing 'input' field"));
    };
    let input = match raw {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .last()
            .and_then(|m| m.get("content"))
            .map(content_text)
            .unwrap_or_default(),
        _ => String::new(),
    };
    if input.is_empty() {
        return Err(ApiError::bad_request("No user message found in input"));
    }
    let mut history = explicit_history(body)?;
    if history.is_empty()
        && let Value::Array(items) = raw
    {
        for item in items.iter().take(items.len().saturating_sub(1)) {
            let role = item.get("role").and_then(Value::as_str).unwrap_or("");
            let content = item.get("content").map(content_text).unwrap_or_default();
            if !role.is_empty() && !content.is_empty() {
                history.push(message(role, content));
            }
        }
    }
    Ok(RunInput {
        session_id: String::new(),
        history,
        instructions: body
            .get("instructions")
            .and_then(Value::as_str)
            .map(str::to_owned),
        input,
        model: body.get("model").and_then(Value::as_str).map(str::to_owned),
    })
}

fn explicit_history(body: &Map<String, Value>) -> Result<Vec<Message>, ApiError> {
    let Some(raw) = body.get("conversation_history").filter(|v| !v.is_null()) else {
        return Ok(Vec::new());
    };
    let Value::Array(entries) = raw else {
        return Err(ApiError::bad_request(
            "'conversation_history' must be an array of message objects",
        ));
    };
    let mut out = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let (Some(role), Some(content)) = (entry.get("role"), entry.get("content")) else {
            return Err(ApiError::bad_request(format!(
                "conversation_history[{i}] must have 'role' and 'content' fields"
            )));
        };
        let role = role
            .as_str()
            .map_or_else(|| role.to_string(), str::to_owned);
        out.push(message(&role, content_text(content)));
    }
    Ok(out)
}

fn message(role: &str, content: String) -> Message {
    match role {
        "assistant" => Message::assistant(content),
        "system" => Message::system(content),
        _ => Message::user(content),
    }
}

/// `GET /v1/runs/{id}`.
pub async fn fetch(
    State(state): State<Arc<AppState>>,
    UrlPath(run_id): UrlPath<String>,
) -> Response {
    match status_of(&state, &run_id).await {
        Ok(status) => axum::Json(status).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn status_of(state: &AppState, run_id: &str) -> Result<Value, ApiError> {
    let store = state.runs.store()?;
    let id = run_id.to_owned();
    blocking(move || store.status(&id))
        .await?
        .ok_or_else(|| not_found(run_id))
}

/// `GET /v1/runs/{id}/events`: SSE from after `Last-Event-ID` (0: from the
/// start), following the run until it ends.
pub async fn events(
    State(state): State<Arc<AppState>>,
    UrlPath(run_id): UrlPath<String>,
    headers: HeaderMap,
) -> Response {
    if let Err(e) = status_of(&state, &run_id).await {
        return e.into_response();
    }
    let after = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(0);
    let (tx, rx) = mpsc::channel(64);
    tokio::spawn(follow(state, run_id, after, tx));
    sse::response(rx, HeaderMap::new())
}

/// Sends the run's events numbered above `last` until the run has ended and
/// every event is sent, or the client goes away.
async fn follow(state: Arc<AppState>, run_id: String, mut last: u64, tx: mpsc::Sender<Bytes>) {
    let Ok(store) = state.runs.store() else {
        return;
    };
    let mut written = state.runs.get(&run_id).map(|a| a.written.clone());
    let mut wakeups = state.runs.event_wakeups();
    loop {
        // The status is read first: a terminal one is stored after the last
        // event, so the read below then sees every event there is.
        let (s, id) = (store.clone(), run_id.clone());
        let ended = matches!(
            blocking(move || s.status(&id)).await,
            Ok(Some(v)) if v["status"].as_str().is_some_and(worker::is_terminal)
        );
        loop {
            let (s, id) = (store.clone(), run_id.clone());
            let Ok(page) = blocking(move || s.read_after(&id, last, PAGE)).await else {
                return;
            };
            for e in &page {
                let data = e.event.to_string();
                let frame = Bytes::from(format!("id: {}\ndata: {data}\n\n", e.seq));
                if tx.send(frame).await.is_err() {
                    return;
                }
                last = e.seq;
            }
            if page.len() < PAGE {
                break;
            }
        }
        if ended {
            let _ = tx.send(Bytes::from_static(b": stream closed\n\n")).await;
            return;
        }
        match written.as_mut() {
            Some(w) => {
                if let Ok(Err(_)) = tokio::time::timeout(POLL, w.changed()).await {
                    // The writer finished; from here the store alone tells.
                    written = None;
                }
            }
            None => match wakeups.as_mut() {
                // Another replica writes this run: its commit's NOTIFY wakes us.
                Some(w) => wait_for_run(w, &run_id, POLL).await,
                None => tokio::time::sleep(POLL).await,
            },
        }
    }
}

/// Waits until a wake-up names `run_id` (or may have been missed), at most `limit`.
pub(crate) async fn wait_for_run(
    wakeups: &mut tokio::sync::broadcast::Receiver<String>,
    run_id: &str,
    limit: Duration,
) {
    let _ = tokio::time::timeout(limit, async {
        loop {
            match wakeups.recv().await {
                Ok(id) if id == run_id || id.is_empty() => return,
                Ok(_) => {}
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => return,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                    // No listener: only the timeout is left.
                    std::future::pending::<()>().await;
                }
            }
        }
    })
    .await;
}

/// Whether `run_id` is stored and has not ended (it runs on some replica).
async fn running_elsewhere(state: &AppState, run_id: &str) -> Result<bool, ApiError> {
    let status = status_of(state, run_id).await?;
    Ok(!status["status"].as_str().is_some_and(worker::is_terminal))
}

/// `POST /v1/runs/{id}/approval`: `{"choice": once|session|always|deny, "all": bool}`.
pub async fn approval(
    State(state): State<Arc<AppState>>,
    UrlPath(run_id): UrlPath<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let raw = body.as_ref().map(|b| b.to_vec()).unwrap_or_default();
    let scope = format!("approval:{run_id}");
    idempotent(&state, &scope, &headers, &raw, || {
        resolve(&state, &run_id, body)
    })
    .await
}

async fn resolve(
    state: &AppState,
    run_id: &str,
    body: Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Value), ApiError> {
    status_of(state, run_id).await?;
    let body = read_body(body)?;
    let raw = match body.get("choice") {
        Some(Value::String(s)) => s.trim().to_ascii_lowercase(),
        Some(other) if !other.is_null() => other.to_string(),
        _ => String::new(),
    };
    let choice = match raw.as_str() {
        "once" | "approve" | "approved" | "allow" => ApprovalChoice::Once,
        "session" => ApprovalChoice::Session,
        "always" => ApprovalChoice::Always,
        "deny" => ApprovalChoice::Deny,
        _ => {
            return Err(ApiError::bad_request(
                "Invalid approval choice; expected one of: once, session, always, deny",
            )
            .with_code("invalid_approval_choice"));
        }
    };
    let all = body_flag(&body, "all", false) || body_flag(&body, "resolve_all", false);
    let Some(active) = state.runs.get(run_id) else {
        return forward_approval(state, run_id, choice, all).await;
    };
    let resolved = active.resolve(choice, all);
    if resolved == 0 {
        return Err(conflict(
            format!("Run has no pending approval: {run_id}"),
            "approval_not_pending",
        ));
    }
    let name = choice_name(choice);
    active.set_status("running", Value::Null);
    active.emit(json!({"event": "approval.responded", "choice": name, "resolved": resolved}));
    Ok((
        StatusCode::OK,
        json!({
            "object": "hermes.run.approval_response",
            "run_id": run_id, "choice": name, "resolved": resolved,
        }),
    ))
}

fn choice_name(choice: ApprovalChoice) -> &'static str {
    match choice {
        ApprovalChoice::Once => "once",
        ApprovalChoice::Session => "session",
        ApprovalChoice::Always => "always",
        ApprovalChoice::Deny => "deny",
    }
}

/// An approval for a run another replica executes: sent to it as a signal
/// when the run waits for one there (202: it is applied there).
async fn forward_approval(
    state: &AppState,
    run_id: &str,
    choice: ApprovalChoice,
    all: bool,
) -> Result<(StatusCode, Value), ApiError> {
    let status = status_of(state, run_id).await?;
    if state.runs.shared.is_none() || status["status"] != "waiting_for_approval" {
        return Err(conflict(
            format!("Run has no active approval session: {run_id}"),
            "approval_not_active",
        ));
    }
    let store = state.runs.store()?;
    let (id, name) = (run_id.to_owned(), choice_name(choice));
    blocking(move || store.signal(&id, &json!({"approval": name, "all": all}))).await?;
    Ok((
        StatusCode::ACCEPTED,
        json!({
            "object": "hermes.run.approval_response",
            "run_id": run_id, "choice": name, "forwarded": true,
        }),
    ))
}

/// Applies a signal another replica sent to a run executing here.
pub(crate) fn apply_signal(active: &worker::Active, signal: &Value) {
    if signal["stop"] == true {
        active.set_status("stopping", Value::Null);
        active.stop();
        return;
    }
    let choice = match signal["approval"].as_str() {
        Some("once") => ApprovalChoice::Once,
        Some("session") => ApprovalChoice::Session,
        Some("always") => ApprovalChoice::Always,
        Some("deny") => ApprovalChoice::Deny,
        _ => return,
    };
    let resolved = active.resolve(choice, signal["all"] == true);
    if resolved > 0 {
        active.set_status("running", Value::Null);
        active.emit(json!({"event": "approval.responded", "choice": choice_name(choice), "resolved": resolved}));
    }
}

fn conflict(message: String, code: &'static str) -> ApiError {
    ApiError::bad_request(message)
        .with_status(StatusCode::CONFLICT)
        .with_code(code)
}

/// `POST /v1/runs/{id}/stop`: interrupts the run (tools in flight are cancelled).
pub async fn stop(
    State(state): State<Arc<AppState>>,
    UrlPath(run_id): UrlPath<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let raw = body.as_ref().map(|b| b.to_vec()).unwrap_or_default();
    let scope = format!("stop:{run_id}");
    idempotent(&state, &scope, &headers, &raw, || async {
        match state.runs.get(&run_id) {
            Some(active) => {
                active.set_status("stopping", Value::Null);
                active.stop();
            }
            // Running on another replica: it takes the signal.
            None if state.runs.shared.is_some() && running_elsewhere(&state, &run_id).await? => {
                let store = state.runs.store()?;
                let id = run_id.clone();
                blocking(move || store.signal(&id, &json!({"stop": true}))).await?;
            }
            None => return Err(not_found(&run_id)),
        }
        Ok((
            StatusCode::OK,
            json!({"run_id": run_id, "status": "stopping"}),
        ))
    })
    .await
}
