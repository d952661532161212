//! The interactive REPL used when stdin is a terminal and no `-q` is given:
//! a line editor with history and completion, slash commands, Ctrl+C to
//! interrupt a turn, and a usage summary on exit.

mod actions;
pub mod commands;
pub mod editor;
pub mod history_file;
mod prompt;
mod recent;
mod rollback;
pub mod tally;
pub(crate) mod typeahead;

use std::collections::VecDeque;
use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Result;
use hermes_protocol::{Event, Op, TurnEnd};

use crate::args::RunArgs;
use crate::chat::{Mode, Session};
use crate::driver::{self, Outcome};
use crate::render::Verbosity;
use commands::Parsed;
use tally::Tally;

/// The prompt string.
const PROMPT: &str = "❯ ";

/// Two Ctrl+C presses further apart than this do not count as "press again to exit".
const DOUBLE_INTERRUPT: Duration = Duration::from_secs(2);

/// The live REPL: the session plus what the slash commands change.
pub(crate) struct Repl {
    pub(crate) session: Session,
    /// Usage since the session (or the last /new) began, for /usage.
    pub(crate) tally: Tally,
    /// Usage over the whole process, for the exit line.
    pub(crate) total: Tally,
    /// Text to pre-fill the next prompt with (after /undo).
    pub(crate) prefill: Option<String>,
    pub(crate) quiet: bool,
    /// What was typed during a turn, handled in order once it ends.
    pub(crate) queued: VecDeque<Queued>,
    /// Checkpoints were asked for with `--checkpoints`.
    pub(crate) checkpoints_forced: bool,
    /// The session ids `/sessions` listed last, so `/resume N` picks one.
    pub(crate) listed: Vec<String>,
}

/// Input typed during a turn that waits for the turn to end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Queued {
    /// Sent as the next user message (plain text, `/queue`, an unused `/steer`).
    Message(String),
    /// A slash command other than /steer, /queue and /stop.
    Command(String),
    /// Ctrl+D: leave, as at the prompt.
    Eof,
}

/// What the loop does after a line.
pub(crate) enum Next {
    Continue,
    /// Send this text to the agent as a user turn.
    Send(String),
    Quit,
}

/// Runs the REPL until /quit, Ctrl+D or a double Ctrl+C.
pub(crate) async fn run(run: &RunArgs, quiet: bool) -> Result<ExitCode> {
    let started = Instant::now();
    // A person at this terminal answers dangerous-command approvals and questions.
    let session = Session::start(run, true).await?;
    let mut err = std::io::stderr();
    if !quiet {
        write!(err, "{}", banner(&session))?;
    }
    let history = session.setup.home.root().join(editor::HISTORY_FILE);
    let mut ed = editor::build(session.conv.info().cwd, &history)?;
    let mut repl = Repl {
        session,
        tally: Tally::default(),
        total: Tally::default(),
        prefill: None,
        quiet,
        queued: VecDeque::new(),
        checkpoints_forced: run.checkpoints,
        listed: Vec::new(),
    };
    let mut last_interrupt: Option<Instant> = None;
    loop {
        if let Some(item) = repl.queued.pop_front() {
            if let Queued::Message(line) | Queued::Command(line) = &item
                && ed.add_history_entry(line.as_str()).unwrap_or(false)
            {
                let _ = history_file::append(&history, line);
            }
            let next = match item {
                Queued::Eof => break,
                Queued::Message(text) => {
                    if !repl.quiet {
                        writeln!(err, "{PROMPT}{}", preview(&text))?;
                    }
                    Next::Send(text)
                }
                Queued::Command(line) => {
                    if !repl.quiet {
                        writeln!(err, "{PROMPT}{line}")?;
                    }
                    repl.command(&line).await?
                }
            };
            match next {
                Next::Continue => {}
                Next::Quit => break,
                Next::Send(text) => repl.send(&text).await?,
            }
            continue;
        }
        let (back, read) = prompt::read(ed, repl.prefill.take(), &mut repl.session.conv).await?;
        ed = back;
        let line = match read {
            prompt::Read::Line(line) => line,
            prompt::Read::Interrupted => {
                if last_interrupt.is_some_and(|t| t.elapsed() < DOUBLE_INTERRUPT) {
                    break;
                }
                last_interrupt = Some(Instant::now());
                writeln!(err, "(Press Ctrl+C again or Ctrl+D to exit)")?;
                continue;
            }
            prompt::Read::Eof => break,
            // Background news starts its own turn; the prompt comes back
            // with what was typed.
            prompt::Read::Announce { typed } => {
                if !typed.is_empty() {
                    repl.prefill = Some(typed);
                }
                repl.send_op(Op::Announce).await?;
                continue;
            }
        };
        last_interrupt = None;
        let text = editor::join_continuations(&line);
        if text.trim().is_empty() {
            continue;
        }
        if ed.add_history_entry(line.as_str()).unwrap_or(false) {
            // Saved per line so a crash or a killed terminal keeps what was typed.
            let _ = history_file::append(&history, &line);
        }
        let next = if is_command(&text) {
            repl.command(&text).await?
        } else {
            Next::Send(text)
        };
        match next {
            Next::Continue => {}
            Next::Quit => break,
            Next::Send(text) => repl.send(&text).await?,
        }
    }
    if !quiet {
        writeln!(err, "{}", repl.total.exit_line(started.elapsed()))?;
    }
    repl.session
        .finish(if quiet {
            Mode::Quiet
        } else {
            Mode::Interactive
        })
        .await?;
    Ok(ExitCode::SUCCESS)
}

/// A line typed while a turn runs: /steer, /queue (or plain text), /stop;
/// anything else has to wait for the prompt. Returns the op to send now.
fn mid_turn(line: &str, queued: &mut Vec<Queued>) -> Result<Option<Op>> {
    let mut err = std::io::stderr();
    let text = line.trim();
    if text.is_empty() {
        return Ok(None);
    }
    if !is_command(text) {
        writeln!(err, "  queued for after this turn: {}", preview(text))?;
        queued.push(Queued::Message(text.to_owned()));
        return Ok(None);
    }
    match commands::parse(text) {
        Parsed::Known(def, arg) => match def.name {
            "steer" | "queue" if arg.is_empty() => {
                writeln!(err, "  Usage: /{} <prompt>", def.name)?;
            }
            "steer" => {
                writeln!(
                    err,
                    "  ⏩ steer noted; the model sees it with the next tool result: {}",
                    preview(&arg)
                )?;
                return Ok(Some(Op::Steer { text: arg }));
            }
            "queue" => {
                writeln!(err, "  queued for after this turn: {}", preview(&arg))?;
                queued.push(Queued::Message(arg));
            }
            "stop" => {
                writeln!(err, "  stopping the turn…")?;
                return Ok(Some(Op::Interrupt));
            }
            name => {
                writeln!(
                    err,
                    "  /{name} has to wait; it runs when this turn ends (/stop ends it now)."
                )?;
                queued.push(Queued::Command(text.to_owned()));
            }
        },
        Parsed::Unknown { typed, .. } => writeln!(
            err,
            "  Unknown command /{typed}. While a turn runs: /steer, /queue, /stop."
        )?,
    }
    Ok(None)
}

/// Something the type-ahead reader saw during a turn; returns the op to send now.
fn typed_mid_turn(
    typed: typeahead::Typed,
    queued: &mut Vec<Queued>,
    prefill: &mut Option<String>,
) -> Result<Option<Op>> {
    match typed {
        typeahead::Typed::Line(line) => return mid_turn(&line, queued),
        typeahead::Typed::Eof => queued.push(Queued::Eof),
        typeahead::Typed::Partial(text) => {
            if prefill.is_none() {
                *prefill = Some(text);
            }
        }
    }
    Ok(None)
}

/// The first line of `text`, cut to 80 characters, for confirmations.
fn preview(text: &str) -> String {
    let first = text.lines().next().unwrap_or("");
    let mut out: String = first.chars().take(80).collect();
    if out.len() < first.len() || text.lines().nth(1).is_some() {
        out.push('…');
    }
    out
}

/// Whether a line is a slash command rather than a message: `/etc/hosts …`
/// is a path someone is asking about, not a command.
fn is_command(text: &str) -> bool {
    let t = text.trim_start();
    let Some(rest) = t.strip_prefix('/') else {
        return false;
    };
    let word = rest.split_whitespace().next().unwrap_or("");
    !word.contains('/') && !rest.starts_with(char::is_whitespace)
}

/// The start-up banner: model, provider, toolsets, and how to get help.
fn banner(session: &Session) -> String {
    let info = session.conv.info();
    // The toolsets whose tools the model is offered, not the ones asked for:
    // a toolset with nothing that can run here is not offered at all.
    let mut offered: Vec<&str> = Vec::new();
    for tool in &info.tools {
        if !offered.contains(&tool.toolset.as_str()) {
            offered.push(&tool.toolset);
        }
    }
    offered.sort_unstable();
    let toolsets = if offered.is_empty() {
        "none".to_owned()
    } else {
        offered.join(", ")
    };
    format!(
        "⚕ Hermes Agent v{} · {} via {}\n  toolsets: {} · {} tools · session {}\n  /help for commands · Alt+Enter for a new line · Ctrl+C interrupts · Ctrl+D exits\n",
        env!("CARGO_PKG_VERSION"),
        info.model,
        info.provider,
        toolsets,
        info.tools.len(),
        info.session_id,
    )
}

impl Repl {
    /// Styled output: only when both streams are a terminal and NO_COLOR is unset.
    fn rich(&self) -> bool {
        use std::io::IsTerminal;
        !self.quiet
            && std::io::stdout().is_terminal()
            && std::io::stderr().is_terminal()
            && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
    }

    /// Runs one user turn and reports how it ended.
    pub(crate) async fn send(&mut self, text: &str) -> Result<()> {
        self.send_op(Op::UserInput {
            text: text.to_owned(),
        })
        .await
    }

    /// Runs an op that may start a turn (a message, `/retry`): lines typed
    /// meanwhile are read, and usage is tallied.
    pub(crate) async fn send_op(&mut self, op: Op) -> Result<()> {
        let verbosity = if self.quiet {
            Verbosity::FinalOnly
        } else {
            Verbosity::Normal
        };
        let display = self.session.display(verbosity, self.rich());
        let (lines_tx, mut lines) = tokio::sync::mpsc::unbounded_channel();
        let reader = typeahead::TypeAhead::start(lines_tx);
        let mut queued = Vec::new();
        let mut prefill = None;
        let outcome = driver::run(
            &mut self.session.conv,
            op,
            &display,
            Some(&mut lines),
            &mut |typed| typed_mid_turn(typed, &mut queued, &mut prefill),
        )
        .await;
        reader.stop();
        // Lines that arrived as the turn ended are still the user's: queue
        // them (a late /steer becomes the next message, a late /stop is moot).
        while let Ok(typed) = lines.try_recv() {
            if let Some(Op::Steer { text }) = typed_mid_turn(typed, &mut queued, &mut prefill)? {
                queued.push(Queued::Message(text));
            }
        }
        // What the prompt held before the turn, then what was typed during it.
        self.prefill = match (self.prefill.take(), prefill) {
            (Some(before), Some(during)) => Some(before + &during),
            (before, during) => before.or(during),
        };
        let Outcome { last, unused_steer } = outcome?;
        let mut err = std::io::stderr();
        if let Some(left) = unused_steer {
            writeln!(
                err,
                "⏩ No tool ran after your /steer; sending it as the next message."
            )?;
            // Ahead of a typed Ctrl+D, so it is not lost on the way out.
            let at = queued
                .iter()
                .position(|q| *q == Queued::Eof)
                .unwrap_or(queued.len());
            queued.insert(at, Queued::Message(left));
        }
        self.queued.extend(queued);
        match last {
            Event::TurnComplete {
                final_text,
                reason,
                usage,
                api_calls,
            } => {
                let info = self.session.conv.info();
                for tally in [&mut self.tally, &mut self.total] {
                    tally.add_turn(
                        &usage,
                        api_calls,
                        &info.model,
                        &info.provider,
                        &info.base_url,
                    );
                }
                if self.quiet {
                    writeln!(std::io::stdout(), "{}", final_text.trim_end())?;
                }
                if reason == TurnEnd::Interrupted {
                    writeln!(err, "⏹ Interrupted.")?;
                }
            }
            // Drawn by the renderer unless output is quiet.
            Event::Error { message } if self.quiet => writeln!(err, "error: {message}")?,
            _ => {}
        }
        Ok(())
    }

    /// Runs a slash command.
    async fn command(&mut self, line: &str) -> Result<Next> {
        let (def, arg) = match commands::parse(line) {
            Parsed::Known(def, arg) => (def, arg),
            Parsed::Unknown { typed, suggestion } => {
                // `/skill-name [instruction]` loads an installed skill as the message.
                let instruction = line
                    .trim()
                    .split_once(char::is_whitespace)
                    .map_or("", |(_, rest)| rest);
                if let Some(message) = hermes_session::skills::invocation_message(
                    self.session.setup.home.root(),
                    &typed,
                    instruction,
                ) {
                    return Ok(Next::Send(message));
                }
                let mut err = std::io::stderr();
                match suggestion {
                    Some(s) => writeln!(err, "Unknown command /{typed}. Did you mean /{s}?")?,
                    None => writeln!(err, "Unknown command /{typed}. Type /help for the list.")?,
                }
                return Ok(Next::Continue);
            }
        };
        self.dispatch(def.name, &arg).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_messages_not_commands() {
        assert!(is_command("/help"));
        assert!(is_command("  /model x"));
        assert!(!is_command("/etc/hosts has what?"));
        assert!(!is_command("/ hello"));
        assert!(!is_command("hello /help"));
    }
}
