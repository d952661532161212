//! One agent run for one HTTP request: a session on the runtime (seeded with
//! the client's conversation), one turn, its events forwarded to the handler;
//! a client that goes away interrupts the run.

use std::sync::Arc;

use hermes_protocol::{Event, Message, Op, Usage};
use hermes_session::{Seed, SessionSpec};
use tokio::sync::{OwnedSemaphorePermit, mpsc};

use super::AppState;
use super::errors::ApiError;

/// What a handler hears from a run.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEvent {
    /// Answer text as it streams.
    Delta(String),
    /// A tool started.
    ToolStarted {
        /// The call id.
        id: String,
        /// The tool.
        name: String,
        /// Its arguments (JSON text).
        arguments: String,
    },
    /// A tool finished.
    ToolFinished {
        /// The call id.
        id: String,
        /// The tool.
        name: String,
        /// The result the model was sent.
        result: String,
    },
    /// The run ended with an answer.
    Done {
        /// The final text.
        text: String,
        /// Tokens used.
        usage: Usage,
    },
    /// The run failed.
    Failed(String),
}

/// What to run.
#[derive(Debug, Clone, Default)]
pub struct RunRequest {
    /// The session to record under.
    pub session_id: String,
    /// The conversation before this message.
    pub history: Vec<Message>,
    /// The client's system text (this run only).
    pub ephemeral_prompt: Option<String>,
    /// The new user message.
    pub input: String,
    /// A model override (`None`: the configured one).
    pub model: Option<String>,
}

/// Takes a run slot (or 429 when all are busy).
pub fn admit(state: &AppState) -> Result<Option<OwnedSemaphorePermit>, ApiError> {
    let Some(slots) = &state.slots else {
        return Ok(None);
    };
    slots
        .clone()
        .try_acquire_owned()
        .map(Some)
        .map_err(|_| ApiError::too_many_runs(state.config.max_concurrent_runs))
}

/// Starts the run; events arrive on the receiver, which ends after `Done` or
/// `Failed`. Dropping the receiver interrupts the run.
pub fn start(
    state: &Arc<AppState>,
    request: RunRequest,
    permit: Option<OwnedSemaphorePermit>,
) -> mpsc::Receiver<RunEvent> {
    let (tx, rx) = mpsc::channel(256);
    let state = state.clone();
    tokio::spawn(async move {
        let _permit = permit;
        let _inflight = state.inflight.enter();
        drive(&state, request, tx).await;
    });
    rx
}

async fn drive(state: &AppState, request: RunRequest, tx: mpsc::Sender<RunEvent>) {
    let mut spec = SessionSpec::new("api_server", state.cwd.clone());
    spec.model = request.model.clone();
    spec.seed = Some(Seed {
        session_id: request.session_id.clone(),
        history: request.history,
        ephemeral_prompt: request.ephemeral_prompt,
    });
    let mut conv = match state.manager.start(spec).await {
        Ok(conv) => conv,
        Err(e) => {
            let _ = tx.send(RunEvent::Failed(e.to_string())).await;
            return;
        }
    };
    let submitted = conv.submit(Op::UserInput {
        text: request.input,
    });
    let Ok(id) = submitted else {
        let _ = tx.send(RunEvent::Failed("the session closed".into())).await;
        return;
    };
    let mut interrupted = false;
    let mut gone = false;
    loop {
        let next = tokio::select! {
            event = conv.next_event() => event,
            _ = tx.closed(), if !interrupted => {
                // The client went away: stop the turn; the session stays consistent.
                interrupted = true;
                gone = true;
                let _ = conv.submit(Op::Interrupt);
                continue;
            }
        };
        let Some(event) = next else {
            if !gone {
                let _ = tx
                    .send(RunEvent::Failed("the session stopped".into()))
                    .await;
            }
            break;
        };
        if event.submission != id {
            continue;
        }
        let out = match event.event {
            Event::TextDelta { text } => Some(RunEvent::Delta(text)),
            Event::ToolStarted {
                call_id,
                name,
                arguments,
            } => Some(RunEvent::ToolStarted {
                id: call_id,
                name,
                arguments,
            }),
            Event::ToolFinished {
                call_id,
                name,
                result,
                ..
            } => Some(RunEvent::ToolFinished {
                id: call_id,
                name,
                result,
            }),
            Event::TurnComplete {
                final_text, usage, ..
            } => {
                if !gone {
                    let _ = tx
                        .send(RunEvent::Done {
                            text: final_text,
                            usage,
                        })
                        .await;
                }
                break;
            }
            Event::Error { message } => {
                if !gone {
                    let _ = tx.send(RunEvent::Failed(message)).await;
                }
                break;
            }
            _ => None,
        };
        if let Some(out) = out
            && !gone
            && tx.send(out).await.is_err()
        {
            gone = true;
            interrupted = true;
            let _ = conv.submit(Op::Interrupt);
        }
    }
    // Dropping the conversation stops its task without ending the session:
    // an API conversation goes on with the client's next request.
    drop(conv);
}
