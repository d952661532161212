//! A running session: one task owns the agent; front-ends send [`Op`]s in
//! and read [`SessionEvent`]s out through a bounded channel, and see a
//! [`SessionInfo`] snapshot that the task keeps current.

mod commands;
mod drive;
mod task;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use hermes_protocol::{Event, Op, SessionEvent};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::error::SessionError;
use crate::spec::Notice;

pub use commands::resolve_model_target;
pub(crate) use task::SessionTask;

/// How many events may wait for a front-end that is slow to read them; past
/// that the session pauses (a turn does not run ahead of its reader).
pub const EVENT_BUFFER: usize = 256;

/// One tool as the session offers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolInfo {
    /// Its name.
    pub name: String,
    /// The toolset it belongs to (`file`, `browser`, `mcp-github` …).
    pub toolset: String,
    /// Its emoji for progress lines.
    pub emoji: String,
}

/// What a front-end shows about a session (banner, `/status`, `/tools`).
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInfo {
    /// The session id now (compression and `/new` change it).
    pub session_id: String,
    /// The model in use now.
    pub model: String,
    /// Its provider.
    pub provider: String,
    /// Its endpoint.
    pub base_url: String,
    /// The toolsets enabled.
    pub toolsets: Vec<String>,
    /// The tools offered, by name.
    pub tools: Vec<ToolInfo>,
    /// Their schemas exactly as the model is sent them (shared, cheap to clone).
    pub tool_schemas: Arc<[hermes_protocol::ToolSchema]>,
    /// Messages in the conversation, the system prompt included.
    pub messages: usize,
    /// Its size, roughly, in tokens.
    pub approx_tokens: u64,
    /// The model's context window as known now.
    pub context_length: u64,
    /// Dangerous commands run without asking.
    pub yolo: bool,
    /// The session is recorded in the store.
    pub recorded: bool,
    /// Tool calls of an unfinished turn waiting to run (see [`Op::ContinueTurn`]).
    pub pending_tool_calls: usize,
    /// Background processes running (as of the last update).
    pub background: Vec<BackgroundInfo>,
    /// The working directory.
    pub cwd: PathBuf,
}

/// A background process, as `/status` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackgroundInfo {
    /// Its `proc_` id.
    pub id: String,
    /// The command.
    pub command: String,
    /// Seconds it has run.
    pub uptime_secs: u64,
}

/// Sends ops to a session; cheap to clone (a prompt answering an approval
/// holds one while the front-end goes on reading events).
#[derive(Debug, Clone)]
pub struct Submitter {
    tx: mpsc::UnboundedSender<(u64, Op)>,
    next: Arc<AtomicU64>,
}

impl Submitter {
    /// Queues `op` and returns its submission id (events it causes carry it).
    pub fn submit(&self, op: Op) -> Result<u64, SessionError> {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        self.tx.send((id, op)).map_err(|_| SessionError::Closed)?;
        Ok(id)
    }
}

/// A front-end's handle on one running session.
#[derive(Debug)]
pub struct Conversation {
    submitter: Submitter,
    events: mpsc::Receiver<SessionEvent>,
    info: watch::Receiver<SessionInfo>,
    notices: Vec<Notice>,
    task: Option<JoinHandle<()>>,
    checkpoints: Option<Arc<hermes_tools::checkpoints::Checkpoints>>,
}

impl Conversation {
    /// Starts `task` on the runtime and returns its handle.
    pub(crate) fn spawn(task: SessionTask, notices: Vec<Notice>) -> Self {
        let (ops_tx, ops_rx) = mpsc::unbounded_channel();
        let (events_tx, events_rx) = mpsc::channel(EVENT_BUFFER);
        let next = Arc::new(AtomicU64::new(0));
        let (info_tx, info_rx) = watch::channel(task.info());
        let checkpoints = task.agent.checkpoints();
        let handle = tokio::spawn(task.run(ops_rx, events_tx, info_tx));
        Self {
            submitter: Submitter { tx: ops_tx, next },
            events: events_rx,
            info: info_rx,
            notices,
            task: Some(handle),
            checkpoints,
        }
    }

    /// The session's checkpoints (kept where its files are: this host, or
    /// the SSH host or container its commands run in).
    pub fn checkpoints(&self) -> Option<Arc<hermes_tools::checkpoints::Checkpoints>> {
        self.checkpoints.clone()
    }

    /// What the session reported while starting (warnings, the offline fallback).
    pub fn notices(&self) -> &[Notice] {
        &self.notices
    }

    /// A handle for sending ops from elsewhere.
    pub fn submitter(&self) -> Submitter {
        self.submitter.clone()
    }

    /// Queues `op`; returns its submission id.
    pub fn submit(&self, op: Op) -> Result<u64, SessionError> {
        self.submitter.submit(op)
    }

    /// The next event; `None` once the session's task has stopped.
    pub async fn next_event(&mut self) -> Option<SessionEvent> {
        self.events.recv().await
    }

    /// The session as it is now.
    pub fn info(&self) -> SessionInfo {
        self.info.borrow().clone()
    }

    /// Submits `op` and reads events until the one that ends it, handing every
    /// event of it (the last included) to `each`; returns that last event. For
    /// front-ends that answer no questions mid-op (scripts, tests, one-shot runs).
    pub async fn request(
        &mut self,
        op: Op,
        mut each: impl FnMut(&Event),
    ) -> Result<Event, SessionError> {
        let id = self.submit(op)?;
        while let Some(SessionEvent { submission, event }) = self.next_event().await {
            if submission != id {
                continue;
            }
            each(&event);
            if event.is_terminal() {
                return Ok(event);
            }
        }
        Err(SessionError::Closed)
    }

    /// Ends the session, recording `reason`, and waits for its task to stop.
    pub async fn shutdown(mut self, reason: &str) -> Result<(), SessionError> {
        let result = self
            .request(
                Op::Shutdown {
                    reason: reason.to_owned(),
                },
                |_| {},
            )
            .await;
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        match result {
            Ok(Event::Error { message }) => Err(SessionError::Store(message)),
            Ok(_) => Ok(()),
            Err(e) => Err(e),
        }
    }
}
