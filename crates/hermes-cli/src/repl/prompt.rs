//! The prompt, read on a thread of its own while the REPL keeps reading the
//! session: background-process news that arrives while the user sits at the
//! prompt starts a turn at once (the reference's CLI drains its notification
//! queue whenever it is idle), and what was typed comes back in the next
//! prompt.
//!
//! rustyline has no way to end `readline` from outside. While it reads it
//! catches SIGINT itself and returns `Interrupted`, so the REPL sends SIGINT
//! to the reading thread alone, again until it gives up the line (a signal
//! that lands just before or after rustyline's handler is in place meets
//! tokio's handler, which makes sure it is harmless). `Interrupted` drops the
//! line, so the editor's helper keeps a copy as it is drawn.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::Result;
use futures_util::FutureExt;
use hermes_protocol::Event;
use hermes_session::Conversation;
use nix::sys::pthread::{Pthread, pthread_kill, pthread_self};
use nix::sys::signal::Signal;
use rustyline::error::ReadlineError;

use super::PROMPT;
use super::editor::ReplEditor;

/// How often the reading thread is signalled until it stops.
const STOP_RETRY: Duration = Duration::from_millis(100);
/// After this the prompt is left alone (news then rides with the next message).
const STOP_GIVE_UP: Duration = Duration::from_secs(3);

/// What the prompt gave.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Read {
    /// A line, as entered.
    Line(String),
    /// Ctrl+C.
    Interrupted,
    /// Ctrl+D on an empty line.
    Eof,
    /// Background announcements wait for a turn; `typed` is what the prompt
    /// held when it was stopped.
    Announce {
        /// The unfinished line.
        typed: String,
    },
}

/// Reads one line at the prompt (starting with `prefill`) while watching
/// `conv` for [`Event::AnnouncementsWaiting`]; hands the editor back.
pub(crate) async fn read(
    mut ed: ReplEditor,
    prefill: Option<String>,
    conv: &mut Conversation,
) -> Result<(ReplEditor, Read)> {
    // News that came with the end of the last turn needs no prompt at all.
    if news_waiting(conv) {
        let typed = prefill.unwrap_or_default();
        return Ok((ed, Read::Announce { typed }));
    }
    let typed = ed.helper().map(super::editor::ReplHelper::typed);
    if let Some(typed) = &typed {
        *lock(typed) = prefill.clone().unwrap_or_default();
    }
    // Before rustyline swaps handlers: registered now, tokio's handler is
    // what it saves and puts back, so a stray SIGINT never ends the process.
    let stoppable = sigint_is_caught();
    let reader: Arc<Mutex<Option<Pthread>>> = Arc::default();
    let inside = reader.clone();
    let mut reading = tokio::task::spawn_blocking(move || {
        *lock(&inside) = Some(pthread_self());
        let result = match &prefill {
            Some(text) => ed.readline_with_initial(PROMPT, (text, "")),
            None => ed.readline(PROMPT),
        };
        *lock(&inside) = None;
        (ed, result)
    });
    let mut listening = stoppable;
    let mut stopping: Option<Instant> = None;
    let mut retry = tokio::time::interval(STOP_RETRY);
    let (mut ed, result) = loop {
        tokio::select! {
            done = &mut reading => break done?,
            event = conv.next_event(), if listening && stopping.is_none() => match event {
                Some(ev) if ev.event == Event::AnnouncementsWaiting => {
                    stopping = Some(Instant::now());
                    retry.reset_immediately();
                }
                // Nothing else is meant for an idle prompt.
                Some(_) => {}
                None => listening = false,
            },
            _ = retry.tick(), if stopping.is_some_and(|at| at.elapsed() < STOP_GIVE_UP) => {
                interrupt(&reader);
            }
        }
    };
    let read = match result {
        Ok(line) => Read::Line(line),
        // Ours, or a Ctrl+C at the same moment: either way the news goes first.
        Err(ReadlineError::Interrupted) if stopping.is_some() => {
            let typed = typed.map(|t| lock(&t).clone()).unwrap_or_default();
            clear_stopped(&mut ed, &typed)?;
            Read::Announce { typed }
        }
        Err(ReadlineError::Interrupted) => Read::Interrupted,
        Err(ReadlineError::Eof) => Read::Eof,
        Err(e) => return Err(e.into()),
    };
    Ok((ed, read))
}

/// Whether the session said news waits while no prompt was up (the events
/// before it were for ops that are over).
fn news_waiting(conv: &mut Conversation) -> bool {
    while let Some(Some(ev)) = conv.next_event().now_or_never() {
        if ev.event == Event::AnnouncementsWaiting {
            return true;
        }
    }
    false
}

/// Takes the stopped prompt off the screen when it was one row (rustyline
/// left the cursor on the row below it), so the typing, which comes back in
/// the next prompt, does not look sent; a longer input is left in place.
fn clear_stopped(ed: &mut ReplEditor, typed: &str) -> std::io::Result<()> {
    use std::io::Write;
    let cols = ed.dimensions().map_or(0, |(cols, _)| usize::from(cols));
    let width = PROMPT.chars().count() + typed.chars().count();
    if typed.contains('\n') || width >= cols {
        return Ok(());
    }
    let mut err = std::io::stderr();
    write!(err, "\x1b[1A\r\x1b[2K")?;
    err.flush()
}

/// Signals the thread inside `readline`, if one is.
fn interrupt(reader: &Mutex<Option<Pthread>>) {
    // Held while signalling, so the thread cannot leave `readline` (and go
    // on to other work) between the check and the signal.
    let inside = lock(reader);
    if let Some(thread) = *inside {
        let _ = pthread_kill(thread, Signal::SIGINT);
    }
}

/// Makes sure SIGINT outside rustyline is caught (tokio's handler, once
/// installed, stays for the life of the process).
fn sigint_is_caught() -> bool {
    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()).is_ok()
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
