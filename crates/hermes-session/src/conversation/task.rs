//! The task that owns one session: it takes one submission at a time, runs
//! turns, and answers the other ops.

use hermes_tools::hooks::HookEvent;
use std::collections::VecDeque;
use std::sync::Arc;

use hermes_agent::{Agent, AgentError, EventSink};
use hermes_protocol::{Event, Op, SessionEvent};
use hermes_tools::approval::ApprovalGate;
use hermes_tools::builtin::memory::MemoryTool;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::drive::{Channels, Signals, drive};
use super::{SessionInfo, ToolInfo};
use crate::assemble::Assembled;
use crate::endpoint::Endpoint;
use crate::error::explain;
use crate::questions::Questions;
use crate::services::Services;
use crate::spec::SessionSpec;
use crate::store::SessionStore;

/// Everything one session owns.
pub(crate) struct SessionTask {
    pub(super) agent: Agent,
    pub(super) services: Services,
    pub(super) spec: SessionSpec,
    pub(super) endpoint: Endpoint,
    pub(super) memory_tool: Option<MemoryTool>,
    pub(super) toolsets: Vec<String>,
    pub(super) preload: Option<String>,
    pub(super) gate: Arc<ApprovalGate>,
    pub(super) questions: Arc<Questions>,
    pub(super) sink: EventSink,
    pub(super) internal: mpsc::UnboundedReceiver<Event>,
    pub(super) store: Option<Arc<dyn SessionStore>>,
    pub(super) queue: VecDeque<(u64, Op)>,
    /// The system prompt before any overlay (`SetPromptOverlay`).
    pub(super) base_prompt: Option<String>,
    /// The last message sent, for `Retry` after it was never answered.
    pub(super) last_input: Option<String>,
    /// Images for the next turn's message (`Op::UserInputWithImages`).
    pub(super) images: Vec<String>,
    /// Titles the session after its first exchanges, when asked to.
    pub(super) titler: Option<crate::title::Titler>,
    /// The title being generated, if one is.
    pub(super) title_job: Option<tokio::task::JoinHandle<()>>,
}

/// How long closing a session waits for a title still being written.
const TITLE_WAIT_AT_EXIT: std::time::Duration = std::time::Duration::from_secs(5);

/// What a long-running op does with the agent.
enum Work {
    /// A user turn with this message (and these images).
    Message(String, Vec<String>),
    /// The unfinished turn a resumed session stopped in.
    Continue,
    /// A compression, with its focus topic.
    Compress(Option<String>),
}

/// Where the task's output goes.
pub(super) struct Outlet {
    pub(super) out: mpsc::Sender<SessionEvent>,
    pub(super) info: watch::Sender<SessionInfo>,
    /// Sees every event first (a long-running front-end's logs), with the
    /// session's source and the id the conversation started under.
    pub(super) tap: Option<(crate::services::EventTap, String, String)>,
}

impl Outlet {
    /// Sends `event` for submission `id` (dropped if the front-end went away).
    pub(super) async fn emit(&self, id: u64, event: Event) {
        if let Some((tap, source, conversation)) = &self.tap {
            let session = self.info.borrow().session_id.clone();
            tap(
                &crate::services::TappedSession {
                    id: &session,
                    conversation,
                    source,
                },
                &event,
            );
        }
        let _ = self
            .out
            .send(SessionEvent {
                submission: id,
                event,
            })
            .await;
    }
}

impl SessionTask {
    /// A task for an assembled session.
    pub(crate) fn new(services: Services, spec: SessionSpec, built: Assembled) -> Self {
        let (sink, internal) = built.events;
        Self {
            agent: built.agent,
            services,
            spec,
            endpoint: built.endpoint,
            memory_tool: built.memory_tool,
            toolsets: built.toolsets,
            preload: built.preload,
            gate: built.gate,
            questions: built.questions,
            sink,
            internal,
            store: built.store,
            queue: VecDeque::new(),
            base_prompt: None,
            last_input: None,
            images: Vec::new(),
            titler: built.titler,
            title_job: None,
        }
    }

    /// Starts titling the session in the background after a young
    /// conversation's exchange, unless a title is already on its way.
    fn maybe_title(&mut self) {
        let Some(titler) = &self.titler else {
            return;
        };
        if self
            .title_job
            .as_ref()
            .is_some_and(|job| !job.is_finished())
        {
            return;
        }
        let Some((user, answer)) = crate::title::exchange(self.agent.messages()) else {
            return;
        };
        let session = self.agent.options().session_id.clone();
        self.title_job = Some(tokio::spawn(titler.clone().run(session, user, answer)));
    }

    /// The session as front-ends see it.
    pub(crate) fn info(&self) -> SessionInfo {
        let tools = self.agent.tools();
        let mut listed: Vec<ToolInfo> = tools
            .names()
            .filter_map(|n| {
                tools.get(n).map(|t| ToolInfo {
                    name: n.to_owned(),
                    toolset: t.toolset().to_owned(),
                    emoji: t.emoji().to_owned(),
                })
            })
            .collect();
        listed.sort_by(|a, b| a.name.cmp(&b.name));
        let messages = self.agent.messages();
        let chars: usize = messages.iter().map(|m| m.text().len()).sum();
        SessionInfo {
            session_id: self.agent.options().session_id.clone(),
            model: self.agent.active_route().model.clone(),
            provider: self.endpoint.provider.clone(),
            base_url: self.endpoint.base_url.clone(),
            toolsets: self.toolsets.clone(),
            tools: listed,
            tool_schemas: tools.shared_schemas(),
            messages: messages.len(),
            approx_tokens: (chars / 4) as u64,
            context_length: self.agent.context_length(),
            yolo: self.gate.mode() == hermes_tools::approval::ApprovalMode::Off,
            recorded: self.store.is_some(),
            pending_tool_calls: self.agent.pending_tool_calls(),
            background: self
                .agent
                .processes()
                .running()
                .iter()
                .map(|p| super::BackgroundInfo {
                    id: p.id.clone(),
                    command: p.command.clone(),
                    uptime_secs: p.uptime_secs(),
                })
                .collect(),
            cwd: self.spec.cwd.clone(),
        }
    }

    /// Takes submissions until the front-end hangs up or asks to shut down.
    pub(crate) async fn run(
        mut self,
        mut ops: mpsc::UnboundedReceiver<(u64, Op)>,
        out: mpsc::Sender<SessionEvent>,
        info: watch::Sender<SessionInfo>,
    ) {
        let tap = self.services.event_tap().map(|tap| {
            let started_as = self.agent.options().session_id.clone();
            (tap, self.spec.source.clone(), started_as)
        });
        let outlet = Outlet { out, info, tap };
        loop {
            let (id, op) = match self.queue.pop_front() {
                Some(next) => next,
                None => {
                    // Idle: background processes can wake the session too.
                    let table = self.agent.processes().clone();
                    tokio::select! {
                        next = ops.recv() => match next {
                            Some(next) => next,
                            None => return,
                        },
                        () = table.announcement_ready() => {
                            self.offer_announcements(&outlet).await;
                            continue;
                        }
                    }
                }
            };
            let stop = self.handle(id, op, &mut ops, &outlet).await;
            let _ = outlet.info.send(self.info());
            if stop {
                return;
            }
            // News that came during the op (and no queued message took)
            // is offered now that nothing runs, as the reference drains its
            // queue after each turn.
            if self.queue.is_empty() {
                self.offer_announcements(&outlet).await;
            }
        }
    }

    /// Tells the front-end that announcements wait while no turn runs; it
    /// starts their turn with [`Op::Announce`].
    async fn offer_announcements(&self, outlet: &Outlet) {
        if self.agent.processes().has_announcements() {
            outlet.emit(0, Event::AnnouncementsWaiting).await;
        }
    }

    /// `Announce`: a turn whose message is the announcements waiting, shown
    /// to the front-end first (the reference's CLI prints the synthetic
    /// message as the user's); `Ack` when a turn already took them.
    async fn announce(
        &mut self,
        id: u64,
        ops: &mut mpsc::UnboundedReceiver<(u64, Op)>,
        outlet: &Outlet,
    ) {
        let notes = masked_announcements(&self.agent);
        if notes.is_empty() {
            outlet.emit(id, Event::Ack).await;
            return;
        }
        let text = notes.join("\n\n");
        outlet
            .emit(id, Event::Announced { text: text.clone() })
            .await;
        self.turn(id, Some(text), ops, outlet).await;
    }

    async fn handle(
        &mut self,
        id: u64,
        op: Op,
        ops: &mut mpsc::UnboundedReceiver<(u64, Op)>,
        outlet: &Outlet,
    ) -> bool {
        match op {
            // With no turn running, a steer is just the next message.
            Op::UserInput { text } if self.spec.interactive => {
                let (text, images) = crate::images::prepare(
                    &self.services,
                    &self.endpoint,
                    &self.spec.cwd,
                    text,
                    Vec::new(),
                )
                .await;
                self.images = images;
                self.turn(id, Some(text), ops, outlet).await;
            }
            Op::UserInput { text } | Op::Steer { text } => {
                self.turn(id, Some(text), ops, outlet).await;
            }
            Op::UserInputWithImages { text, images } => {
                let (text, images) = crate::images::prepare(
                    &self.services,
                    &self.endpoint,
                    &self.spec.cwd,
                    text,
                    images,
                )
                .await;
                self.images = images;
                self.turn(id, Some(text), ops, outlet).await;
            }
            Op::ContinueTurn => self.turn(id, None, ops, outlet).await,
            Op::Announce => self.announce(id, ops, outlet).await,
            // Signals with nothing running to act on.
            Op::Interrupt | Op::ApprovalAnswer { .. } | Op::ClarifyAnswer { .. } => {}
            Op::Retry => match self.retry_text() {
                Some(text) => self.turn(id, Some(text), ops, outlet).await,
                None => {
                    outlet
                        .emit(
                            id,
                            Event::Error {
                                message: "No message to retry.".into(),
                            },
                        )
                        .await;
                }
            },
            Op::Compress { focus } => self.compress(id, focus, ops, outlet).await,
            Op::StopProcesses => {
                let message = match self.agent.processes().kill_all().await {
                    0 => "No running background processes.".to_owned(),
                    n => format!("Stopped {n} background process(es)."),
                };
                outlet.emit(id, Event::Status { message }).await;
                outlet.emit(id, Event::Ack).await;
            }
            Op::Shutdown { reason } => {
                self.shut_down(id, &reason, outlet).await;
                return true;
            }
            other => {
                let new_session = matches!(other, Op::NewSession);
                if new_session {
                    self.agent
                        .session_boundary_hooks(HookEvent::OnSessionFinalize, "new_session")
                        .await;
                }
                let previous = self.agent.options().session_id.clone();
                let event = self.command(other);
                if let Event::SessionChanged { session_id, .. } = &event {
                    self.agent
                        .memory_session_switched(session_id, &previous, new_session);
                }
                if new_session && matches!(event, Event::SessionChanged { .. }) {
                    self.agent
                        .session_boundary_hooks(HookEvent::OnSessionReset, "new_session")
                        .await;
                }
                outlet.emit(id, event).await;
            }
        }
        false
    }

    /// Ends the session: background processes stopped (or released when the
    /// configuration keeps them), the title awaited briefly, the finalize
    /// hooks run, and the record closed (or dropped when nothing was said).
    async fn shut_down(&mut self, id: u64, reason: &str, outlet: &Outlet) {
        let keep = matches!(
            self.services
                .setup()
                .config
                .get("terminal.keep_background_processes"),
            Some(serde_json::Value::Bool(true))
        );
        if keep {
            self.agent.processes().release_all();
        } else {
            self.agent.processes().kill_all().await;
        }
        if let Some(job) = self.title_job.take() {
            let _ = tokio::time::timeout(TITLE_WAIT_AT_EXIT, job).await;
        }
        self.agent
            .session_boundary_hooks(HookEvent::OnSessionFinalize, reason)
            .await;
        self.agent.end_memory().await;
        let session = self.agent.options().session_id.clone();
        let discarded = self
            .store
            .as_ref()
            .is_some_and(|store| store.discard_if_empty(&session).unwrap_or(false));
        if !discarded && let Err(e) = self.agent.end_session(reason) {
            outlet
                .emit(
                    id,
                    Event::Status {
                        message: format!("could not close the session record: {e}"),
                    },
                )
                .await;
        }
        outlet.emit(id, Event::ShutdownComplete).await;
    }

    /// What `Retry` sends: the last turn's message (undone first), else the
    /// last message sent.
    fn retry_text(&mut self) -> Option<String> {
        match self.agent.undo_turns(1) {
            Ok(Some((text, _))) => Some(text),
            Ok(None) | Err(_) => self.last_input.clone(),
        }
    }

    /// One turn, with signals handled while it runs: a user message, or
    /// (`None`) the unfinished turn a resumed session stopped in.
    async fn turn(
        &mut self,
        id: u64,
        text: Option<String>,
        ops: &mut mpsc::UnboundedReceiver<(u64, Op)>,
        outlet: &Outlet,
    ) {
        let input = text.map(|text| {
            self.last_input = Some(text.clone());
            // `-s` skills ride in front of the first message.
            match self.preload.take() {
                Some(skills) => format!("{skills}\n\n{text}"),
                None => text,
            }
        });
        if let Some(memory) = &self.memory_tool {
            memory.reset_turn();
        }
        // Background processes that ended since the last turn are announced
        // ahead of the message.
        let table = self.agent.processes();
        if table.running().iter().any(|p| p.announces_exit()) {
            // The front-end may have held the runtime while it read the line:
            // give the reaper of an exited process a moment to record it.
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        let announcements = masked_announcements(&self.agent);
        let input = match (input, announcements.is_empty()) {
            (Some(text), false) => Some(format!("{}\n\n{text}", announcements.join("\n\n"))),
            (input, _) => input,
        };
        let work = match input {
            Some(text) => Work::Message(text, std::mem::take(&mut self.images)),
            None => Work::Continue,
        };
        // Replicas: another one may be running a turn of this session.
        let _turn = match self.services.shared() {
            Some(shared) => {
                let session = self.agent.options().session_id.clone();
                match crate::turn_lease::TurnLease::take(
                    shared.coordinator,
                    &session,
                    self.services.replica(),
                    crate::stores::lease_ttl(&self.services.setup().config),
                )
                .await
                {
                    Ok(lease) => {
                        // The other replica's turn is in the store, not in this agent.
                        if lease.waited
                            && let Some(store) = self.services.store()
                            && let Ok(history) = store.conversation(&session)
                        {
                            self.agent.refresh_history(history);
                        }
                        Some(lease)
                    }
                    Err(message) => {
                        outlet.emit(id, Event::Error { message }).await;
                        return;
                    }
                }
            }
            None => None,
        };
        let (outcome, held, unused_steer) = self.run_work(id, &work, ops, outlet).await;
        if let Some(text) = unused_steer {
            outlet.emit(id, Event::SteerUnused { text }).await;
        }
        for event in held {
            outlet.emit(id, event).await;
        }
        match outcome {
            Ok(()) => self.maybe_title(),
            Err(e) => {
                let message = explain(&e, &self.endpoint);
                outlet.emit(id, Event::Error { message }).await;
            }
        }
    }

    /// Runs `work` on the agent for submission `id` while the session keeps
    /// listening (see [`drive`]); returns its outcome, the terminal events it
    /// emitted, and steer text nothing delivered.
    async fn run_work(
        &mut self,
        id: u64,
        work: &Work,
        ops: &mut mpsc::UnboundedReceiver<(u64, Op)>,
        outlet: &Outlet,
    ) -> (Result<(), AgentError>, Vec<Event>, Option<String>) {
        let cancel = CancellationToken::new();
        let steer = self.agent.steer_handle();
        let agent = &mut self.agent;
        let sink = &self.sink;
        let task = async {
            match work {
                Work::Message(text, images) => agent
                    .run_turn_with_images(text, images.clone(), sink, &cancel)
                    .await
                    .map(drop),
                Work::Continue => agent.continue_turn(sink, &cancel).await.map(drop),
                Work::Compress(focus) => agent
                    .compress(focus.as_deref(), sink, &cancel)
                    .await
                    .map(drop),
            }
        };
        let (outcome, held) = drive(
            id,
            task,
            Channels {
                ops,
                internal: &mut self.internal,
                out: outlet,
                questions: &self.questions,
                queue: &mut self.queue,
            },
            Signals {
                cancel: &cancel,
                steer: &steer,
            },
        )
        .await;
        (outcome, held, steer.take())
    }

    /// `Compress`: summarise the middle of the conversation now.
    async fn compress(
        &mut self,
        id: u64,
        focus: Option<String>,
        ops: &mut mpsc::UnboundedReceiver<(u64, Op)>,
        outlet: &Outlet,
    ) {
        let before = self.agent.messages().len();
        let focus = focus.filter(|f| !f.trim().is_empty());
        let (outcome, held, _) = self.run_work(id, &Work::Compress(focus), ops, outlet).await;
        for event in held {
            outlet.emit(id, event).await;
        }
        let event = match outcome {
            Ok(_) => Event::Compressed {
                before,
                after: self.agent.messages().len(),
            },
            Err(e) => Event::Error {
                message: explain(&e, &self.endpoint),
            },
        };
        outlet.emit(id, event).await;
    }
}

/// Background-process announcements waiting, masked as terminal output is:
/// they carry the process's own output into the conversation and onto the
/// front-end, past the tool-result masking.
fn masked_announcements(agent: &Agent) -> Vec<String> {
    agent
        .processes()
        .take_announcements()
        .iter()
        .map(|note| hermes_llm::redact::redact_terminal_output(note, None))
        .collect()
}
