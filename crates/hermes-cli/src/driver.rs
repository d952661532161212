//! Running one op of a session on the terminal: its events are rendered (and
//! logged) as they arrive, questions the session asks are put to the user and
//! answered with ops, Ctrl+C interrupts, and lines typed meanwhile are handed
//! to the caller.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::Result;
use hermes_protocol::{Event, Op, SessionEvent};
use hermes_session::{Conversation, Submitter};
use tokio::sync::mpsc;

use crate::clarify_prompt::Open;
use crate::logging::LogSettings;
use crate::render::{Renderer, Verbosity};
use crate::repl::typeahead::Typed;

/// How the op's events are shown.
#[derive(Debug, Clone)]
pub(crate) struct Display {
    pub(crate) verbosity: Verbosity,
    /// Markdown, dimmed reasoning and a spinner (a terminal on both streams).
    pub(crate) rich: bool,
    /// Where `agent.log` goes.
    pub(crate) log: LogSettings,
    /// How long the user has for a `clarify` question.
    pub(crate) clarify_timeout: Duration,
}

/// How an op ended.
#[derive(Debug)]
pub(crate) struct Outcome {
    /// The event that ended it (`TurnComplete`, `Error`, `Undone` …).
    pub(crate) last: Event,
    /// Steer text no tool result carried.
    pub(crate) unused_steer: Option<String>,
}

/// What to do with a line typed while the op runs: `Some(op)` is sent to the session.
pub(crate) type OnTyped<'a> = &'a mut dyn FnMut(Typed) -> Result<Option<Op>>;

/// Submits `op` and runs it to its end. `typed` delivers lines typed meanwhile
/// (the REPL's type-ahead reader), handled by `on_typed`.
pub(crate) async fn run(
    conv: &mut Conversation,
    op: Op,
    display: &Display,
    mut typed: Option<&mut mpsc::UnboundedReceiver<Typed>>,
    on_typed: OnTyped<'_>,
) -> Result<Outcome> {
    let info = conv.info();
    let emojis: HashMap<String, String> =
        info.tools.into_iter().map(|t| (t.name, t.emoji)).collect();
    let mut renderer = Renderer::new(display.verbosity, emojis);
    if display.rich {
        renderer = renderer.rich();
    }
    let (tx, rx) = mpsc::unbounded_channel::<Event>();
    let log = display.log.open(&info.session_id);
    let printer = tokio::spawn(crate::spinner::print_events(renderer, rx, Some(log)));
    let submitter = conv.submitter();
    let interrupts = submitter.clone();
    let watcher = tokio::spawn(async move {
        while tokio::signal::ctrl_c().await.is_ok() {
            let _ = interrupts.submit(Op::Interrupt);
        }
    });
    let id = conv.submit(op)?;
    let mut asked = Asked::default();
    let mut unused_steer = None;
    let last = loop {
        let next = match typed.as_deref_mut() {
            Some(lines) => tokio::select! {
                ev = conv.next_event() => Step::Event(ev),
                Some(line) = lines.recv() => Step::Typed(line),
            },
            None => Step::Event(conv.next_event().await),
        };
        let SessionEvent { submission, event } = match next {
            Step::Typed(line) => {
                if let Some(op) = on_typed(line)? {
                    submitter.submit(op)?;
                }
                continue;
            }
            Step::Event(Some(ev)) => ev,
            Step::Event(None) => anyhow::bail!("the session stopped unexpectedly"),
        };
        match &event {
            Event::ApprovalRequested {
                request_id,
                command,
                reason,
            } => asked.approval(&submitter, *request_id, command, reason),
            Event::ClarifyRequested {
                request_id,
                question,
                choices,
            } => asked.clarify(
                &submitter,
                *request_id,
                question,
                choices,
                display.clarify_timeout,
            ),
            Event::QuestionClosed {
                request_id,
                timed_out,
            } => asked.close(*request_id, *timed_out).await,
            Event::SteerUnused { text } => unused_steer = Some(text.clone()),
            _ => {}
        }
        let done = submission == id && event.is_terminal();
        let _ = tx.send(event.clone());
        if done {
            break event;
        }
    };
    asked.abandon().await;
    watcher.abort();
    drop(tx);
    let _ = printer.await;
    Ok(Outcome { last, unused_steer })
}

enum Step {
    Event(Option<SessionEvent>),
    Typed(Typed),
}

/// Questions put to the user during one op; closed when it ends.
#[derive(Default)]
struct Asked {
    /// Open `clarify` lists and the tasks drawing them.
    open: HashMap<u64, (Arc<Open>, tokio::task::JoinHandle<()>)>,
}

impl Asked {
    fn approval(&self, submitter: &Submitter, request_id: u64, command: &str, reason: &str) {
        let submitter = submitter.clone();
        let (command, reason) = (command.to_owned(), reason.to_owned());
        tokio::spawn(async move {
            let choice =
                tokio::task::spawn_blocking(move || crate::approval_prompt::ask(&command, &reason))
                    .await
                    .unwrap_or(hermes_protocol::ApprovalChoice::Deny);
            let _ = submitter.submit(Op::ApprovalAnswer { request_id, choice });
        });
    }

    fn clarify(
        &mut self,
        submitter: &Submitter,
        request_id: u64,
        question: &str,
        choices: &[String],
        timeout: Duration,
    ) {
        let submitter = submitter.clone();
        let (question, choices) = (question.to_owned(), choices.to_vec());
        let open = Arc::new(Open::default());
        let state = open.clone();
        let task = tokio::spawn(async move {
            let answered = tokio::task::spawn_blocking(move || {
                crate::clarify_prompt::ask(&question, &choices, timeout, &state)
            })
            .await;
            let answer = match answered {
                Ok(crate::clarify_prompt::Answered::Text(text)) => Some(text),
                Ok(crate::clarify_prompt::Answered::Declined) | Err(_) => None,
                Ok(crate::clarify_prompt::Answered::Nothing) => return,
            };
            let _ = submitter.submit(Op::ClarifyAnswer { request_id, answer });
        });
        // Kept so the list gives the terminal back when the op ends.
        self.open.insert(request_id, (open, task));
    }

    /// The session stopped waiting for `request_id`: the list is taken off the
    /// screen before anything else is drawn.
    async fn close(&mut self, request_id: u64, timed_out: bool) {
        if let Some((open, task)) = self.open.remove(&request_id) {
            open.expired.store(timed_out, Ordering::SeqCst);
            open.closed.store(true, Ordering::SeqCst);
            let _ = task.await;
        }
    }

    /// The op ended: every list still open goes.
    async fn abandon(&mut self) {
        for (_, (open, task)) in self.open.drain() {
            open.closed.store(true, Ordering::SeqCst);
            let _ = task.await;
        }
    }
}
