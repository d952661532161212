//! A run in the background: the session turn, its events numbered and written
//! to the store in small batches (one writer per run, so numbers never clash),
//! and the signals (`/approval`, `/stop`) that reach it while it works.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use hermes_protocol::{Event, Message, Op, TurnEnd, Usage};
use hermes_session::{Seed, SessionSpec, Submitter};
use serde_json::{Map, Value, json};
use tokio::sync::{OwnedSemaphorePermit, mpsc, watch};

use super::store::{RunStore, StoredEvent};
use crate::api::{AppState, unix_now_f64};

/// Most events written in one transaction.
const BATCH: usize = 64;
/// How long a batch waits for more events once it has one (deltas come in bursts).
const LINGER: Duration = Duration::from_millis(20);
/// Longest tool preview in `tool.started`.
const PREVIEW_CHARS: usize = 200;

/// What a run needs to start.
#[derive(Debug, Clone, Default)]
pub struct RunInput {
    /// The session it records under.
    pub session_id: String,
    /// The conversation before the message.
    pub history: Vec<Message>,
    /// System text for this run only.
    pub instructions: Option<String>,
    /// The user message.
    pub input: String,
    /// A model override.
    pub model: Option<String>,
}

enum Entry {
    Event(Value),
    Status(&'static str, Map<String, Value>),
}

/// One run in flight on this process.
pub struct Active {
    run_id: String,
    log: mpsc::UnboundedSender<Entry>,
    /// The highest sequence number written so far.
    pub written: watch::Receiver<u64>,
    submitter: OnceLock<Submitter>,
    pending: Mutex<Vec<u64>>,
    stopping: AtomicBool,
}

impl std::fmt::Debug for Active {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Active")
            .field("run_id", &self.run_id)
            .finish()
    }
}

impl Active {
    /// Queues `event` (an object with `event`; `run_id` and `timestamp` are added).
    pub fn emit(&self, mut event: Value) {
        if let Some(obj) = event.as_object_mut() {
            obj.insert("run_id".into(), json!(self.run_id));
            obj.insert("timestamp".into(), json!(unix_now_f64()));
        }
        let _ = self.log.send(Entry::Event(event));
    }

    /// Queues a status change with extra status fields.
    pub fn set_status(&self, status: &'static str, fields: Value) {
        let fields = match fields {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        let _ = self.log.send(Entry::Status(status, fields));
    }

    /// Answers the oldest pending approval (or all of them); returns how many.
    pub fn resolve(&self, choice: hermes_protocol::ApprovalChoice, all: bool) -> usize {
        let Some(submitter) = self.submitter.get() else {
            return 0;
        };
        let ids: Vec<u64> = {
            let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            let n = if all {
                pending.len()
            } else {
                pending.len().min(1)
            };
            pending.drain(..n).collect()
        };
        ids.iter()
            .filter(|id| {
                submitter
                    .submit(Op::ApprovalAnswer {
                        request_id: **id,
                        choice,
                    })
                    .is_ok()
            })
            .count()
    }

    /// Asks the run to stop: the turn is interrupted (tools in flight are
    /// cancelled) and the run ends `cancelled`.
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        if let Some(submitter) = self.submitter.get() {
            let _ = submitter.submit(Op::Interrupt);
        }
    }

    fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }
}

/// Registers `run_id` (status `queued`, written before this returns so a
/// `GET` right after the 202 finds it) and its writer.
pub async fn register(
    store: Arc<dyn RunStore>,
    run_id: &str,
    status: Value,
) -> Result<Arc<Active>, super::store::StoreError> {
    let initial = status.clone();
    let id = run_id.to_owned();
    let store2 = store.clone();
    tokio::task::spawn_blocking(move || store2.put_status(&id, &initial))
        .await
        .map_err(|e| super::store::StoreError(e.to_string()))??;
    let (tx, rx) = mpsc::unbounded_channel();
    let (written_tx, written) = watch::channel(0);
    tokio::spawn(write_loop(store, run_id.to_owned(), status, rx, written_tx));
    Ok(Arc::new(Active {
        run_id: run_id.to_owned(),
        log: tx,
        written,
        submitter: OnceLock::new(),
        pending: Mutex::new(Vec::new()),
        stopping: AtomicBool::new(false),
    }))
}

/// Numbers events and writes them with the status, a batch at a time, until
/// every sender is gone.
async fn write_loop(
    store: Arc<dyn RunStore>,
    run_id: String,
    mut status: Value,
    mut rx: mpsc::UnboundedReceiver<Entry>,
    written: watch::Sender<u64>,
) {
    let mut seq = 0u64;
    while let Some(first) = rx.recv().await {
        let mut batch = vec![first];
        let deadline = tokio::time::Instant::now() + LINGER;
        while batch.len() < BATCH {
            match tokio::time::timeout_at(deadline, rx.recv()).await {
                Ok(Some(entry)) => batch.push(entry),
                _ => break,
            }
        }
        let mut events = Vec::new();
        for entry in batch {
            match entry {
                Entry::Event(event) => {
                    seq += 1;
                    if let Some(name) = event.get("event").cloned() {
                        merge(&mut status, None, [("last_event".to_owned(), name)]);
                    }
                    events.push(StoredEvent { seq, event });
                }
                Entry::Status(s, fields) => merge(&mut status, Some(s), fields),
            }
        }
        let (store, id, snapshot) = (store.clone(), run_id.clone(), status.clone());
        let result = tokio::task::spawn_blocking(move || {
            store.append(&id, &events)?;
            store.put_status(&id, &snapshot)
        })
        .await;
        // A failed write leaves a gap readers skip over; the run itself goes on.
        drop(result);
        written.send_replace(seq);
    }
}

fn merge(
    status: &mut Value,
    state: Option<&str>,
    fields: impl IntoIterator<Item = (String, Value)>,
) {
    if let Some(obj) = status.as_object_mut() {
        if let Some(state) = state {
            obj.insert("status".into(), json!(state));
        }
        obj.insert("updated_at".into(), json!(unix_now_f64()));
        obj.extend(fields);
    }
}

/// Runs the turn in the background; the run leaves `registry` when it ends.
pub fn spawn(
    state: Arc<AppState>,
    active: Arc<Active>,
    input: RunInput,
    permit: Option<OwnedSemaphorePermit>,
) {
    if let Some(wakeups) = state.runs.signal_wakeups() {
        tokio::spawn(take_signals(state.clone(), active.clone(), wakeups));
    }
    tokio::spawn(async move {
        let _permit = permit;
        let _inflight = state.inflight.enter();
        drive(&state, &active, input).await;
        state.runs.finish(&active.run_id);
    });
}

/// How often a run looks for signals when no wake-up came.
const SIGNAL_POLL: Duration = Duration::from_secs(1);

/// Applies the signals other replicas send this run (`/stop`, `/approval`
/// there) until it ends here.
async fn take_signals(
    state: Arc<AppState>,
    active: Arc<Active>,
    mut wakeups: tokio::sync::broadcast::Receiver<String>,
) {
    let Ok(store) = state.runs.store() else {
        return;
    };
    while state.runs.get(&active.run_id).is_some() {
        let (s, id) = (store.clone(), active.run_id.clone());
        if let Ok(Ok(signals)) = tokio::task::spawn_blocking(move || s.take_signals(&id)).await {
            for signal in &signals {
                super::apply_signal(&active, signal);
            }
        }
        super::wait_for_run(&mut wakeups, &active.run_id, SIGNAL_POLL).await;
    }
}

async fn drive(state: &AppState, active: &Active, input: RunInput) {
    active.set_status("running", Value::Null);
    if active.stopping() {
        return cancelled(active);
    }
    let mut spec = SessionSpec::new("api_server", state.cwd.clone());
    spec.model = input.model.clone();
    // A person answers approvals through `/approval`.
    spec.interactive = true;
    spec.seed = Some(Seed {
        session_id: input.session_id.clone(),
        history: input.history,
        ephemeral_prompt: input.instructions,
    });
    let mut conv = match state.manager.start(spec).await {
        Ok(conv) => conv,
        Err(e) => return failed(active, &e.to_string()),
    };
    let _ = active.submitter.set(conv.submitter());
    let Ok(id) = conv.submit(Op::UserInput { text: input.input }) else {
        return failed(active, "the session closed");
    };
    if active.stopping() {
        // The stop came while the session started: nothing interrupted it yet.
        let _ = conv.submit(Op::Interrupt);
    }
    while let Some(event) = conv.next_event().await {
        if event.submission != id {
            continue;
        }
        if let Some(end) = forward(active, &conv.submitter(), event.event) {
            return end;
        }
    }
    failed(active, "the session stopped");
}

/// Emits the run event for one session event; `Some` once the run is over.
fn forward(active: &Active, submitter: &Submitter, event: Event) -> Option<()> {
    match event {
        Event::TextDelta { text } => active.emit(json!({"event": "message.delta", "delta": text})),
        Event::ToolStarted {
            call_id,
            name,
            arguments,
        } => active.emit(json!({
            "event": "tool.started", "tool": name, "tool_call_id": call_id,
            "preview": arguments.chars().take(PREVIEW_CHARS).collect::<String>(),
        })),
        Event::ToolFinished {
            call_id,
            name,
            outcome,
            duration_ms,
            ..
        } => active.emit(json!({
            "event": "tool.completed", "tool": name, "tool_call_id": call_id,
            "duration": duration_ms as f64 / 1000.0,
            "error": outcome != hermes_protocol::ToolOutcome::Ok,
        })),
        Event::ApprovalRequested {
            request_id,
            command,
            reason,
        } => {
            active
                .pending
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(request_id);
            active.set_status("waiting_for_approval", Value::Null);
            active.emit(json!({
                "event": "approval.request",
                "request_id": request_id,
                "command": hermes_llm::redact::redact_secrets(&command),
                "description": reason,
                "choices": ["once", "session", "always", "deny"],
            }));
        }
        Event::QuestionClosed { request_id, .. } => {
            let mut pending = active.pending.lock().unwrap_or_else(|e| e.into_inner());
            pending.retain(|id| *id != request_id);
        }
        Event::ClarifyRequested { request_id, .. } => {
            // No endpoint answers questions: the model decides itself at once
            // instead of waiting out `clarify.timeout`.
            let _ = submitter.submit(Op::ClarifyAnswer {
                request_id,
                answer: None,
            });
        }
        Event::TurnComplete {
            final_text,
            reason,
            usage,
            ..
        } => {
            if active.stopping() || reason == TurnEnd::Interrupted {
                cancelled(active);
            } else {
                completed(active, &final_text, &usage);
            }
            return Some(());
        }
        Event::Error { message } => {
            if active.stopping() {
                cancelled(active);
            } else {
                failed(active, &message);
            }
            return Some(());
        }
        _ => {}
    }
    None
}

fn completed(active: &Active, output: &str, usage: &Usage) {
    let usage = json!({
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
    });
    active.emit(json!({"event": "run.completed", "output": output, "usage": usage}));
    active.set_status("completed", json!({"output": output, "usage": usage}));
}

fn failed(active: &Active, error: &str) {
    let error = hermes_llm::redact::redact_secrets(error);
    active.emit(json!({"event": "run.failed", "error": error}));
    active.set_status("failed", json!({"error": error}));
}

fn cancelled(active: &Active) {
    active.emit(json!({"event": "run.cancelled"}));
    active.set_status("cancelled", Value::Null);
}

/// A terminal status: the run's events are all written once this is stored.
pub fn is_terminal(status: &str) -> bool {
    matches!(status, "completed" | "failed" | "cancelled")
}
