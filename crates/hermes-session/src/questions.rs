//! Questions a session puts to a person — dangerous-command approvals and the
//! `clarify` tool — sent out as events and answered with ops, so every
//! front-end (terminal, web, chat) asks in its own way and a headless one
//! simply refuses.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::future::BoxFuture;
use hermes_agent::EventSink;
use hermes_protocol::{ApprovalChoice, Event};
use hermes_state::Config;
use hermes_state::HermesHome;
use hermes_tools::Clarifier;
use hermes_tools::approval::{
    ApprovalGate, ApprovalMode, ApprovalRequest, Approver, DEFAULT_TIMEOUT, Presence,
};
use tokio::sync::oneshot;

/// What `clarify` returns when nobody answered in time (the reference's words).
pub const CLARIFY_TIMEOUT_TEXT: &str = "The user did not provide a response within the time limit. \
     Use your best judgement to make the choice and proceed.";

/// Seconds to wait for a clarify answer when `clarify.timeout` is unset.
pub const DEFAULT_CLARIFY_TIMEOUT: Duration = Duration::from_secs(120);

/// The open questions of one session, by request id.
#[derive(Debug, Default)]
pub(crate) struct Questions {
    next: AtomicU64,
    approvals: Mutex<HashMap<u64, oneshot::Sender<ApprovalChoice>>>,
    clarify: Mutex<HashMap<u64, oneshot::Sender<Option<String>>>>,
}

impl Questions {
    fn id(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Delivers an approval answer; unknown or stale ids are ignored.
    pub(crate) fn answer_approval(&self, id: u64, choice: ApprovalChoice) {
        let waiting = self
            .approvals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id);
        if let Some(tx) = waiting {
            let _ = tx.send(choice);
        }
    }

    /// Delivers a clarify answer; unknown or stale ids are ignored.
    pub(crate) fn answer_clarify(&self, id: u64, answer: Option<String>) {
        let waiting = self
            .clarify
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id);
        if let Some(tx) = waiting {
            let _ = tx.send(answer);
        }
    }
}

/// Removes a question when its asker stops waiting (answered, timed out, interrupted).
struct Forget<'a, T> {
    map: &'a Mutex<HashMap<u64, oneshot::Sender<T>>>,
    id: u64,
}

impl<T> Drop for Forget<'_, T> {
    fn drop(&mut self) {
        self.map
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
    }
}

/// Asks approvals through [`Event::ApprovalRequested`].
pub(crate) struct EventApprover {
    pub(crate) questions: Arc<Questions>,
    pub(crate) events: EventSink,
}

impl Approver for EventApprover {
    fn ask<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalChoice> {
        Box::pin(async move {
            let id = self.questions.id();
            let (tx, rx) = oneshot::channel();
            self.questions
                .approvals
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(id, tx);
            let _forget = Forget {
                map: &self.questions.approvals,
                id,
            };
            let sent = self.events.send(Event::ApprovalRequested {
                request_id: id,
                command: request.command.clone(),
                reason: request.reason.clone(),
            });
            if sent.is_err() {
                return ApprovalChoice::Deny;
            }
            rx.await.unwrap_or(ApprovalChoice::Deny)
        })
    }
}

/// Asks `clarify` questions through [`Event::ClarifyRequested`].
pub(crate) struct EventClarifier {
    pub(crate) questions: Arc<Questions>,
    pub(crate) events: EventSink,
    pub(crate) timeout: Duration,
}

impl std::fmt::Debug for EventClarifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventClarifier")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Clarifier for EventClarifier {
    fn ask<'a>(
        &'a self,
        question: &'a str,
        choices: &'a [String],
    ) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let id = self.questions.id();
            let (tx, rx) = oneshot::channel();
            self.questions
                .clarify
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(id, tx);
            let _forget = Forget {
                map: &self.questions.clarify,
                id,
            };
            self.events
                .send(Event::ClarifyRequested {
                    request_id: id,
                    question: question.to_owned(),
                    choices: choices.to_vec(),
                })
                .map_err(|_| "the session has ended".to_owned())?;
            match tokio::time::timeout(self.timeout, rx).await {
                Err(_) => {
                    // The front-end's prompt can stop asking now.
                    let _ = self.events.send(Event::QuestionClosed {
                        request_id: id,
                        timed_out: true,
                    });
                    Ok(CLARIFY_TIMEOUT_TEXT.to_owned())
                }
                Ok(Ok(Some(answer))) => Ok(answer),
                Ok(Ok(None)) => Err("cancelled by the user".to_owned()),
                Ok(Err(_)) => Err("the session has ended".to_owned()),
            }
        })
    }
}

/// `clarify.timeout` (seconds), else the reference's two minutes.
pub(crate) fn clarify_timeout(config: &Config) -> Duration {
    config
        .sections
        .clarify
        .timeout
        .filter(|secs| *secs > 0.0)
        .map_or(DEFAULT_CLARIFY_TIMEOUT, Duration::from_secs_f64)
}

/// The session's approval gate: `yolo` or `approvals.mode: off` skip approval
/// for dangerous commands; `command_allowlist` entries are pre-approved and
/// `approvals.deny` globs always refused; `presence` says who, if anyone, is asked.
pub fn approval_gate(
    config: &Config,
    home: &HermesHome,
    yolo: bool,
    presence: Presence,
) -> Arc<ApprovalGate> {
    let section = &config.sections.approvals;
    let mode = if yolo {
        ApprovalMode::Off
    } else {
        ApprovalMode::from_section(section)
    };
    let timeout = section
        .timeout
        .filter(|secs| *secs >= 1.0)
        .map_or(DEFAULT_TIMEOUT, |secs| Duration::from_secs(secs as u64));
    Arc::new(
        ApprovalGate::new(mode, presence)
            .with_allowlist(
                config.sections.command_allowlist.clone(),
                Some(home.config_file()),
            )
            .with_deny(section.deny.clone())
            .with_timeout(timeout),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clarify_timeout_comes_from_config() {
        let dir = tempfile::tempdir().unwrap();
        let config = |yaml: &str| {
            let path = dir.path().join("config.yaml");
            std::fs::write(&path, yaml).unwrap();
            Config::load(&path, &hermes_state::Env::default()).unwrap()
        };
        assert_eq!(clarify_timeout(&config("{}")), Duration::from_secs(120));
        assert_eq!(
            clarify_timeout(&config("clarify:\n  timeout: 5\n")),
            Duration::from_secs(5)
        );
        assert_eq!(
            clarify_timeout(&config("clarify:\n  timeout: \"7\"\n")),
            Duration::from_secs(7)
        );
    }

    #[tokio::test]
    async fn questions_go_out_as_events_and_come_back_as_answers() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let questions = Arc::new(Questions::default());
        let approver = EventApprover {
            questions: questions.clone(),
            events: tx.clone(),
        };
        let request = ApprovalRequest {
            command: "rm -rf build".into(),
            reason: "recursive delete".into(),
        };
        let asking = approver.ask(&request);
        tokio::pin!(asking);
        let id = tokio::select! {
            _ = &mut asking => panic!("answered before anyone was asked"),
            Some(Event::ApprovalRequested { request_id, command, .. }) = rx.recv() => {
                assert_eq!(command, "rm -rf build");
                request_id
            }
        };
        questions.answer_approval(id + 100, ApprovalChoice::Always);
        questions.answer_approval(id, ApprovalChoice::Session);
        assert_eq!(asking.await, ApprovalChoice::Session);

        let clarifier = EventClarifier {
            questions: questions.clone(),
            events: tx,
            timeout: Duration::from_millis(50),
        };
        let choices = vec!["a".to_owned()];
        // Unanswered: the reference's "decide yourself" text after the timeout.
        assert_eq!(
            clarifier.ask("which?", &choices).await,
            Ok(CLARIFY_TIMEOUT_TEXT.to_owned())
        );
        let Some(Event::ClarifyRequested { request_id, .. }) = rx.recv().await else {
            panic!("no question event");
        };
        // A late answer to a question nobody waits for is ignored.
        questions.answer_clarify(request_id, Some("late".into()));
        assert!(questions.clarify.lock().unwrap().is_empty());
    }
}
