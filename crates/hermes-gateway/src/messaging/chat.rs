//! One conversation per chat (per session key): a task that owns the
//! session, takes the chat's messages in order, streams answers back, asks
//! for approvals in the chat, and marks each message done in the inbox once
//! it has been answered.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hermes_protocol::{Event, Op, SessionEvent, TurnEnd};
use hermes_session::{Conversation, ResumeRequest, SessionSpec};
use hermes_state::session_db::SessionRouting;
use tokio::sync::mpsc;

use super::Hub;
use super::approvals::approval_word;
use super::config::{BusyMode, PlatformSettings};
use super::media::{self, OutgoingFile};
use super::platform::{Adapter, ChatRef, Incoming, Outgoing, PlatformError, Progress};
use super::stream::{AnswerStream, ProgressBubble};

/// Typing indicators fade after about five seconds on most platforms.
const TYPING_EVERY: Duration = Duration::from_secs(4);
/// At most one "busy" note per chat in this time.
const BUSY_ACK_EVERY: Duration = Duration::from_secs(30);

/// What a chat's task is sent.
#[derive(Debug)]
pub(crate) struct ChatInput {
    /// The message.
    pub message: Incoming,
    /// It was accepted before a restart and is handled again now.
    pub replayed: bool,
}

/// A replayed message found in its session.
enum Replay {
    /// Its turn finished: the answer was given.
    Answered,
    /// Its turn was cut short.
    CutShort,
}

/// A turn in progress.
#[derive(Debug)]
pub(super) struct Turn {
    pub submission: u64,
    /// Inbox keys this turn answers.
    pub keys: Vec<String>,
    pub stream: AnswerStream,
    pub progress: ProgressBubble,
    pub last_typing: Option<Instant>,
    /// The message that started it, marked when the turn ends.
    pub origin: Option<Incoming>,
    /// When it started (for the log's `response ready` line).
    pub started: Instant,
}

/// A dangerous command waiting for the chat's answer.
#[derive(Debug)]
pub(super) struct PendingApproval {
    pub request_id: u64,
    /// Who started the turn that asks: only they (or an admin) may answer.
    pub owner: Option<String>,
    /// What its buttons carry (see [`Hub::register_press`]).
    pub token: u64,
    pub message_id: Option<String>,
}

/// A chat's task.
pub(super) struct ChatWorker {
    pub hub: Arc<Hub>,
    pub adapter: Arc<dyn Adapter>,
    pub settings: Arc<PlatformSettings>,
    pub key: String,
    pub chat: ChatRef,
    pub conv: Option<Conversation>,
    pub turn: Option<Turn>,
    pub queue: VecDeque<ChatInput>,
    pub approvals: Vec<PendingApproval>,
    pub clarify: Option<u64>,
    pub last_busy_ack: Option<Instant>,
    pub typing_ok: bool,
}

async fn next_event(conv: &mut Option<Conversation>) -> Option<SessionEvent> {
    match conv {
        Some(c) => c.next_event().await,
        None => std::future::pending().await,
    }
}

/// The agent's view of a message with files: notes saying where they are.
fn agent_text(message: &Incoming) -> String {
    let mut text = message.text.clone();
    for file in &message.attachments {
        let name = std::path::Path::new(&file.path)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let note = match file.kind.as_str() {
            "image" => format!("[The user sent an image. It is saved at: {}]", file.path),
            "voice" | "audio" => format!("[The user sent a voice message: {}]", file.path),
            _ => format!(
                "[The user sent a document: '{name}'. It is saved at: {}. Read it with your tools if needed.]",
                file.path
            ),
        };
        text = if text.is_empty() {
            note
        } else {
            format!("{note}\n\n{text}")
        };
    }
    text
}

impl ChatWorker {
    /// Runs until the chat's sender is dropped and the running turn is done.
    pub async fn run(mut self, mut rx: mpsc::UnboundedReceiver<ChatInput>) {
        let mut open = true;
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            if !open && self.turn.is_none() {
                break;
            }
            tokio::select! {
                input = rx.recv(), if open => match input {
                    Some(input) => self.incoming(input).await,
                    None => open = false,
                },
                event = next_event(&mut self.conv) => match event {
                    Some(event) => self.event(event).await,
                    None => {
                        self.conv = None;
                        self.end_turn(Some("the session stopped unexpectedly; send your message again")).await;
                    }
                },
                _ = tick.tick(), if self.turn.is_some() => self.tick().await,
            }
            while open && self.turn.is_none() {
                let Some(next) = self.queue.pop_front() else {
                    break;
                };
                self.start_turn(next).await;
            }
        }
    }

    pub(super) fn done(&self, key: &str) {
        let _ = self.hub.inbox.done(self.adapter.name(), key);
    }

    /// Sends a short note (markdown); failures are only logged.
    pub(super) async fn say(&self, text: &str) {
        if let Err(e) = super::stream::send_long(self.adapter.as_ref(), &self.chat, text).await {
            self.hub.warn(&format!(
                "{}: cannot send to {}: {e}",
                self.adapter.name(),
                self.chat.id
            ));
        }
    }

    async fn incoming(&mut self, mut input: ChatInput) {
        if input.message.button_press.is_none() && !self.dispatch_hooks(&mut input).await {
            self.done(&input.message.key);
            return;
        }
        let message = &input.message;
        if let Some(press) = &message.button_press {
            let press = press.clone();
            self.button(&input.message, &press).await;
            self.done(&input.message.key);
            return;
        }
        let text = message.text.trim().to_owned();
        if let Some(request_id) = self.clarify
            && !text.starts_with('/')
            && let Some(conv) = &self.conv
        {
            let _ = conv.submit(Op::ClarifyAnswer {
                request_id,
                answer: Some(text),
            });
            self.clarify = None;
            self.done(&input.message.key);
            return;
        }
        if !self.approvals.is_empty()
            && let Some(choice) = approval_word(&text)
        {
            self.resolve_approvals(choice, false, &message.sender).await;
            self.done(&input.message.key);
            return;
        }
        if text.starts_with('/') {
            match self.command(&input).await {
                Some(true) => {
                    self.done(&input.message.key);
                    return;
                }
                Some(false) => return,
                None => {}
            }
        }
        if self.turn.is_some() {
            self.busy(input).await;
        } else {
            self.start_turn(input).await;
        }
    }

    /// `pre_gateway_dispatch` hooks: `{"action":"skip"}` drops the message
    /// (`false`), `{"action":"rewrite","text":…}` replaces its text.
    async fn dispatch_hooks(&self, input: &mut ChatInput) -> bool {
        use hermes_tools::hooks::{HookEvent, HookSite, object};
        let hooks = self.hub.manager.services().hooks();
        if !hooks.wants(HookEvent::PreGatewayDispatch, None) {
            return true;
        }
        let m = &input.message;
        let extra = object([
            ("platform", serde_json::json!(self.adapter.name())),
            ("chat_id", serde_json::json!(m.chat.id)),
            ("thread_id", serde_json::json!(m.chat.thread_id)),
            ("user_id", serde_json::json!(m.sender.id)),
            ("user_name", serde_json::json!(m.sender.name)),
            ("text", serde_json::json!(m.text)),
        ]);
        let cwd = self
            .hub
            .manager
            .services()
            .setup()
            .home
            .root()
            .to_path_buf();
        let site = HookSite {
            session_id: "",
            cwd: &cwd,
            events: None,
        };
        let answers = hooks
            .fire(HookEvent::PreGatewayDispatch, site, None, extra)
            .await;
        for answer in answers {
            match answer.get("action").and_then(serde_json::Value::as_str) {
                Some("skip") => {
                    self.hub.log(&format!(
                        "{}: a pre_gateway_dispatch hook dropped a message from {}",
                        self.adapter.name(),
                        input.message.sender.id
                    ));
                    return false;
                }
                Some("rewrite") => {
                    if let Some(text) = answer.get("text").and_then(serde_json::Value::as_str) {
                        input.message.text = text.to_owned();
                    }
                    return true;
                }
                Some("allow") => return true,
                _ => {}
            }
        }
        true
    }

    async fn busy(&mut self, input: ChatInput) {
        let mode = self.hub.config.busy;
        let ack = self
            .last_busy_ack
            .is_none_or(|t| t.elapsed() >= BUSY_ACK_EVERY);
        match mode {
            BusyMode::Steer => {
                if let Some(conv) = &self.conv
                    && conv
                        .submit(Op::Steer {
                            text: agent_text(&input.message),
                        })
                        .is_ok()
                {
                    if let Some(turn) = &mut self.turn {
                        turn.keys.push(input.message.key.clone());
                    }
                    if ack {
                        self.last_busy_ack = Some(Instant::now());
                        self.say("⏩ Steered into current run. Your message arrives after the next tool call.")
                            .await;
                    }
                    return;
                }
                self.queue.push_back(input);
            }
            BusyMode::Queue => {
                self.queue.push_back(input);
                if ack {
                    self.last_busy_ack = Some(Instant::now());
                    self.say(
                        "⏳ Queued for the next turn. I'll respond once the current task finishes.",
                    )
                    .await;
                }
            }
            BusyMode::Interrupt => {
                self.queue.push_back(input);
                if let Some(conv) = &self.conv {
                    let _ = conv.submit(Op::Interrupt);
                }
                if ack {
                    self.last_busy_ack = Some(Instant::now());
                    self.say("⚡ Interrupting current task. I'll respond to your message shortly.")
                        .await;
                }
            }
        }
    }

    /// Where this chat's session rows say they come from.
    fn routing(&self, message: &Incoming) -> SessionRouting {
        let origin = serde_json::json!({
            "platform": self.adapter.name(),
            "chat_id": self.chat.id,
            "chat_name": self.chat.name,
            "chat_type": self.chat.kind.as_str(),
            "user_id": message.sender.id,
            "user_name": message.sender.name,
            "thread_id": self.chat.thread_id,
        });
        SessionRouting {
            session_key: self.key.clone(),
            chat_id: Some(self.chat.id.clone()),
            chat_type: Some(self.chat.kind.as_str().to_owned()),
            thread_id: self.chat.thread_id.clone(),
            user_id: Some(message.sender.id.clone()),
            display_name: self
                .chat
                .name
                .clone()
                .or_else(|| Some(message.sender.name.clone())),
            origin_json: Some(origin.to_string()),
        }
    }

    /// The chat's session: the one it had (even before a restart), or a new one.
    pub(super) async fn ensure_conversation(&mut self, message: &Incoming) -> Result<(), String> {
        if self.conv.is_some() {
            return Ok(());
        }
        let platform = self.adapter.name();
        let mut spec = SessionSpec::new(platform, self.hub.cwd.clone());
        spec.interactive = true;
        spec.routing = Some(self.routing(message));
        let store = self.hub.manager.services().store();
        if let Some(store) = &store
            && let Ok(Some(id)) = store.open_session_for_key(&self.key, platform)
        {
            spec.resume = Some(ResumeRequest::Resume(id));
        }
        let conv = self
            .hub
            .manager
            .start(spec)
            .await
            .map_err(|e| e.to_string())?;
        self.conv = Some(conv);
        Ok(())
    }

    async fn start_turn(&mut self, input: ChatInput) {
        let message = input.message;
        if let Err(e) = self.ensure_conversation(&message).await {
            self.say(&format!("⚠️ {e}")).await;
            self.done(&message.key);
            return;
        }
        let Some(conv) = &self.conv else {
            return;
        };
        let text = agent_text(&message);
        // A message the gateway took before a crash may already be in the
        // session: its turn cut short (run it again instead of adding the
        // message twice), or even answered, the crash falling between the
        // answer and the inbox's note of it (then it is not answered twice).
        let op = match input.replayed.then(|| self.replay_state(&text)).flatten() {
            Some(Replay::Answered) => {
                self.hub.log(&format!(
                    "{}: {} was answered before the restart; not answering it again",
                    self.adapter.name(),
                    message.key
                ));
                self.done(&message.key);
                return;
            }
            Some(Replay::CutShort) => Op::Retry,
            None => Op::UserInput { text },
        };
        self.hub.log(&format!(
            "inbound message: platform={} user={} chat={} msg={:?}",
            self.adapter.name(),
            message.sender.name,
            self.chat.id,
            crate::log::clip(&message.text, 200)
        ));
        match conv.submit(op) {
            Ok(submission) => {
                self.watch_turn(submission, Some(&message.key));
                let _ = self.adapter.mark(&message, Progress::Working).await;
                if let Some(turn) = &mut self.turn {
                    turn.origin = Some(message);
                }
                self.tick().await;
            }
            Err(e) => {
                self.say(&format!("⚠️ {e}")).await;
                self.done(&message.key);
            }
        }
    }

    /// Starts the turn of the background announcements waiting; its answer
    /// goes to the chat like any other.
    async fn announce(&mut self) {
        let Some(conv) = &self.conv else {
            return;
        };
        if let Ok(submission) = conv.submit(Op::Announce) {
            self.watch_turn(submission, None);
            self.tick().await;
        }
    }

    /// Follows the turn started by `submission`; it answers inbox entry `key`.
    pub(super) fn watch_turn(&mut self, submission: u64, key: Option<&str>) {
        if self.turn.is_none() {
            self.hub
                .turns
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        self.turn = Some(Turn {
            submission,
            keys: key.map(str::to_owned).into_iter().collect(),
            stream: AnswerStream::new(self.hub.config.streaming.enabled),
            progress: ProgressBubble::default(),
            last_typing: None,
            origin: None,
            started: Instant::now(),
        });
    }

    /// Where a replayed message `text` stands in the session, when it is the
    /// session's newest user message.
    fn replay_state(&self, text: &str) -> Option<Replay> {
        use hermes_protocol::Role;
        let id = self.conv.as_ref()?.info().session_id;
        let store = self.hub.manager.services().store()?;
        let history = store.conversation(&id).ok()?;
        let at = history.iter().rposition(|m| m.role == Role::User)?;
        if history[at].text() != text {
            return None;
        }
        let answered = history[at + 1..]
            .iter()
            .rev()
            .find(|m| m.role != Role::System)
            .is_some_and(|m| {
                m.role == Role::Assistant && m.tool_calls.is_empty() && !m.text().trim().is_empty()
            });
        Some(if answered {
            Replay::Answered
        } else {
            Replay::CutShort
        })
    }

    async fn tick(&mut self) {
        let typing_due = self.settings.typing
            && self.typing_ok
            && self
                .turn
                .as_ref()
                .is_some_and(|t| t.last_typing.is_none_or(|at| at.elapsed() >= TYPING_EVERY))
            && self.approvals.is_empty();
        if typing_due {
            if let Some(turn) = &mut self.turn {
                turn.last_typing = Some(Instant::now());
            }
            if let Err(PlatformError::Unsupported(_)) = self.adapter.typing(&self.chat).await {
                self.typing_ok = false;
            }
        }
        if let Some(turn) = &mut self.turn {
            turn.stream
                .flush(
                    self.adapter.as_ref(),
                    &self.chat,
                    &self.hub.config.streaming,
                )
                .await;
        }
    }

    async fn event(&mut self, event: SessionEvent) {
        match event.event {
            Event::ApprovalRequested {
                request_id,
                command,
                reason,
            } => self.ask_approval(request_id, command, reason).await,
            Event::ClarifyRequested {
                request_id,
                question,
                choices,
            } => {
                self.clarify = Some(request_id);
                let mut text = format!("❓ {question}");
                for (i, choice) in choices.iter().enumerate() {
                    text.push_str(&format!("\n{}. {choice}", i + 1));
                }
                self.say(&text).await;
            }
            Event::QuestionClosed {
                request_id,
                timed_out,
            } => {
                if self.clarify == Some(request_id) {
                    self.clarify = None;
                }
                if let Some(i) = self
                    .approvals
                    .iter()
                    .position(|a| a.request_id == request_id)
                {
                    let pending = self.approvals.remove(i);
                    if timed_out && let Some(id) = pending.message_id {
                        let note =
                            Outgoing::plain("⏱ Approval timed out: the command was not run.");
                        let _ = self.adapter.edit(&self.chat, &id, &note).await;
                    }
                }
            }
            // Background news for an idle chat starts a turn there, as the
            // reference injects it as a message from the chat (busy: the
            // session offers it again when the turn ends, or the next
            // message carries it).
            Event::AnnouncementsWaiting => {
                if self.turn.is_none() && self.queue.is_empty() {
                    self.announce().await;
                }
            }
            other => {
                let ours = self
                    .turn
                    .as_ref()
                    .is_some_and(|t| t.submission == event.submission);
                if ours {
                    self.turn_event(other).await;
                }
            }
        }
    }

    async fn turn_event(&mut self, event: Event) {
        let Some(turn) = &mut self.turn else {
            return;
        };
        let adapter = self.adapter.as_ref();
        match event {
            Event::TextDelta { text } => turn.stream.push(&text),
            Event::ToolStarted {
                name, arguments, ..
            } => {
                turn.stream.segment_break(adapter, &self.chat).await;
                let emoji = self
                    .conv
                    .as_ref()
                    .and_then(|c| c.info().tools.into_iter().find(|t| t.name == name))
                    .map_or_else(|| "⚙️".to_owned(), |t| t.emoji);
                turn.progress
                    .tool_started(
                        adapter,
                        &self.chat,
                        self.settings.tool_progress,
                        &emoji,
                        &name,
                        &arguments,
                    )
                    .await;
            }
            Event::TurnComplete {
                final_text,
                reason,
                api_calls,
                ..
            } => {
                self.hub.log(&format!(
                    "response ready: platform={} chat={} time={:.1}s api_calls={api_calls} response={} chars",
                    adapter.name(),
                    self.chat.id,
                    turn.started.elapsed().as_secs_f64(),
                    final_text.chars().count()
                ));
                let (text, files) = media::extract(
                    &final_text,
                    self.hub.config.user_home.as_deref(),
                    &self.hub.home,
                );
                if let Err(e) = turn.stream.finish(adapter, &self.chat, &text).await {
                    self.hub.warn(&format!(
                        "{}: cannot deliver an answer to {}: {e}",
                        adapter.name(),
                        self.chat.id
                    ));
                }
                for file in &files {
                    self.send_file(file).await;
                }
                if reason == TurnEnd::BudgetExhausted && final_text.trim().is_empty() {
                    self.say(
                        "⚠️ I ran out of steps for this turn. Send another message to continue.",
                    )
                    .await;
                }
                self.end_turn(None).await;
            }
            Event::Error { message } => self.end_turn(Some(&message)).await,
            // An announcement a message had already carried: nothing to say.
            Event::Ack => self.end_turn(None).await,
            _ => {}
        }
    }

    /// Ends the running turn (with an error to show, if any) and marks its messages done.
    async fn end_turn(&mut self, error: Option<&str>) {
        let Some(turn) = self.turn.take() else {
            return;
        };
        self.hub
            .turns
            .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        if let Some(error) = error {
            self.say(&format!("⚠️ {error}")).await;
        }
        if let Some(origin) = &turn.origin {
            let progress = if error.is_some() {
                Progress::Failed
            } else {
                Progress::Done
            };
            let _ = self.adapter.mark(origin, progress).await;
        }
        for key in &turn.keys {
            self.done(key);
        }
        self.approvals.clear();
        self.clarify = None;
    }

    /// Sends a file the answer named; where the platform cannot take it,
    /// says where it is instead.
    async fn send_file(&self, file: &OutgoingFile) {
        if let Err(e) = self.adapter.send_file(&self.chat, file, "").await {
            self.hub.warn(&format!(
                "{}: cannot send {} to {}: {e}",
                self.adapter.name(),
                file.path.display(),
                self.chat.id
            ));
            let why = match e {
                PlatformError::Unsupported(_) => "this platform cannot take it here".to_owned(),
                other => other.to_string(),
            };
            self.say(&format!("📎 {} ({why})", file.path.display()))
                .await;
        }
    }
}
