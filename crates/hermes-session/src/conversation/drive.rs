//! Running one long op (a turn, a compression) while the session keeps
//! listening: its events go out as they happen, signals act on it at once,
//! and every other op waits in the queue.

use std::collections::VecDeque;
use std::future::Future;

use hermes_agent::SteerHandle;
use hermes_protocol::{Event, Op};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::task::Outlet;
use crate::questions::Questions;

/// The session's channels, lent to a running op.
pub(super) struct Channels<'a> {
    /// Ops from the front-end.
    pub(super) ops: &'a mut mpsc::UnboundedReceiver<(u64, Op)>,
    /// Events from the agent, its tools and the question askers.
    pub(super) internal: &'a mut mpsc::UnboundedReceiver<Event>,
    /// Events to the front-end (bounded: a slow reader pauses the op).
    pub(super) out: &'a Outlet,
    /// Questions waiting for answers.
    pub(super) questions: &'a Questions,
    /// Ops that wait for the running one to end.
    pub(super) queue: &'a mut VecDeque<(u64, Op)>,
}

/// What a running op can be told mid-way.
pub(super) struct Signals<'a> {
    /// Fired by [`Op::Interrupt`].
    pub(super) cancel: &'a CancellationToken,
    /// Filled by [`Op::Steer`].
    pub(super) steer: &'a SteerHandle,
}

/// Drives `work` to its end for submission `id`. Terminal events it emits are
/// held back and returned, so the caller can say more before the op ends.
pub(super) async fn drive<T>(
    id: u64,
    work: impl Future<Output = T>,
    ch: Channels<'_>,
    signals: Signals<'_>,
) -> (T, Vec<Event>) {
    let mut held = Vec::new();
    tokio::pin!(work);
    let done = loop {
        tokio::select! {
            biased;
            done = &mut work => break done,
            Some(event) = ch.internal.recv() => forward(id, event, ch.out, &mut held).await,
            Some((sid, op)) = ch.ops.recv() => match op {
                Op::Interrupt => signals.cancel.cancel(),
                Op::Steer { text } => {
                    signals.steer.steer(&text);
                }
                Op::ApprovalAnswer { request_id, choice } => {
                    ch.questions.answer_approval(request_id, choice);
                }
                Op::ClarifyAnswer { request_id, answer } => {
                    ch.questions.answer_clarify(request_id, answer);
                }
                other => ch.queue.push_back((sid, other)),
            },
        }
    };
    // What the op sent as it finished is still its own.
    while let Ok(event) = ch.internal.try_recv() {
        forward(id, event, ch.out, &mut held).await;
    }
    (done, held)
}

/// Sends one event out, or holds it back when it would end the op.
async fn forward(id: u64, event: Event, out: &Outlet, held: &mut Vec<Event>) {
    if event.is_terminal() {
        held.push(event);
        return;
    }
    // A front-end that went away only loses the events.
    out.emit(id, event).await;
}
