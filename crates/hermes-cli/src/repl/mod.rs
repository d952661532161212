//! The interactive REPL used when stdin is a terminal and no `-q` is given:
//! a line editor with history and completion, slash commands, Ctrl+C to
//! interrupt a turn, and a usage summary on exit.

mod actions;
pub mod commands;
pub mod editor;
pub mod history_file;
pub mod tally;
mod typeahead;

use std::collections::VecDeque;
use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Result;
use hermes_agent::SteerHandle;
use hermes_protocol::TurnEnd;
use rustyline::error::ReadlineError;
use tokio_util::sync::CancellationToken;

use crate::args::RunArgs;
use crate::chat::{self, Mode, Session};
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
    pub(crate) run: RunArgs,
    /// Usage since the session (or the last /new) began, for /usage.
    pub(crate) tally: Tally,
    /// Usage over the whole process, for the exit line.
    pub(crate) total: Tally,
    /// The last message sent, for /retry after it was undone or failed.
    pub(crate) last_input: Option<String>,
    /// Text to pre-fill the next prompt with (after /undo).
    pub(crate) prefill: Option<String>,
    pub(crate) yolo: bool,
    pub(crate) quiet: bool,
    /// The system prompt before any /personality overlay.
    pub(crate) base_prompt: Option<String>,
    /// What was typed during a turn, handled in order once it ends.
    pub(crate) queued: VecDeque<Queued>,
    /// Skills from `-s`, sent in front of the first message (then gone).
    pub(crate) preload: Option<String>,
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
pub(crate) async fn run(run: &RunArgs, quiet: bool, preload: Option<String>) -> Result<ExitCode> {
    let started = Instant::now();
    let session = chat::build_session(run).await?;
    let mut err = std::io::stderr();
    if !quiet {
        write!(err, "{}", banner(&session))?;
    }
    let history = session.home.root().join(editor::HISTORY_FILE);
    let mut ed = editor::build(session.agent.options().cwd.clone(), &history)?;
    let mut repl = Repl {
        session,
        run: run.clone(),
        tally: Tally::default(),
        total: Tally::default(),
        last_input: None,
        prefill: None,
        yolo: run.yolo,
        quiet,
        base_prompt: None,
        queued: VecDeque::new(),
        preload,
    };
    repl.apply_approvals();
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
        let read = match repl.prefill.take() {
            Some(text) => ed.readline_with_initial(PROMPT, (&text, "")),
            None => ed.readline(PROMPT),
        };
        let line = match read {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => {
                if last_interrupt.is_some_and(|t| t.elapsed() < DOUBLE_INTERRUPT) {
                    break;
                }
                last_interrupt = Some(Instant::now());
                writeln!(err, "(Press Ctrl+C again or Ctrl+D to exit)")?;
                continue;
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(e.into()),
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
    chat::finish(
        &repl.session,
        if quiet {
            Mode::Quiet
        } else {
            Mode::Interactive
        },
    )?;
    Ok(ExitCode::SUCCESS)
}

/// A line typed while a turn runs: /steer, /queue (or plain text), /stop;
/// anything else has to wait for the prompt.
fn mid_turn(
    line: &str,
    steer: &SteerHandle,
    cancel: &CancellationToken,
    queued: &mut Vec<Queued>,
) -> Result<()> {
    let mut err = std::io::stderr();
    let text = line.trim();
    if text.is_empty() {
        return Ok(());
    }
    if !is_command(text) {
        writeln!(err, "  queued for after this turn: {}", preview(text))?;
        queued.push(Queued::Message(text.to_owned()));
        return Ok(());
    }
    match commands::parse(text) {
        Parsed::Known(def, arg) => match def.name {
            "steer" | "queue" if arg.is_empty() => {
                writeln!(err, "  Usage: /{} <prompt>", def.name)?;
            }
            "steer" => {
                steer.steer(&arg);
                writeln!(
                    err,
                    "  ⏩ steer noted; the model sees it with the next tool result: {}",
                    preview(&arg)
                )?;
            }
            "queue" => {
                writeln!(err, "  queued for after this turn: {}", preview(&arg))?;
                queued.push(Queued::Message(arg));
            }
            "stop" => {
                writeln!(err, "  stopping the turn…")?;
                cancel.cancel();
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
    Ok(())
}

/// Something the type-ahead reader saw during a turn.
fn typed_mid_turn(
    typed: typeahead::Typed,
    steer: &SteerHandle,
    cancel: &CancellationToken,
    queued: &mut Vec<Queued>,
    prefill: &mut Option<String>,
) -> Result<()> {
    match typed {
        typeahead::Typed::Line(line) => mid_turn(&line, steer, cancel, queued)?,
        typeahead::Typed::Eof => queued.push(Queued::Eof),
        typeahead::Typed::Partial(text) => {
            if prefill.is_none() {
                *prefill = Some(text);
            }
        }
    }
    Ok(())
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
    let toolsets = if session.toolsets.is_empty() {
        "none".to_owned()
    } else {
        session.toolsets.join(", ")
    };
    format!(
        "⚕ Hermes Agent v{} · {} via {}\n  toolsets: {} · {} tools · session {}\n  /help for commands · Alt+Enter for a new line · Ctrl+C interrupts · Ctrl+D exits\n",
        env!("CARGO_PKG_VERSION"),
        session.agent.options().model,
        session.runtime.provider,
        toolsets,
        session.agent.tools().names().count(),
        session.id(),
    )
}

impl Repl {
    /// Dangerous commands are asked about at the terminal (or skipped under /yolo);
    /// `clarify` questions are asked there too.
    pub(crate) fn apply_approvals(&mut self) {
        if let Ok(setup) = crate::setup::Setup::load(self.run.ignore_user_config) {
            let gate =
                crate::approval_prompt::build_gate(&setup.config, &setup.home, self.yolo, true);
            self.session.agent.set_approvals(gate);
            crate::clarify_prompt::install(&mut self.session.agent, &setup.config);
        }
    }

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
        self.last_input = Some(text.to_owned());
        // `-s` skills ride in front of the first message, as in one-shot runs.
        let with_skills;
        let text = match self.preload.take() {
            Some(skills) => {
                with_skills = format!("{skills}\n\n{text}");
                with_skills.as_str()
            }
            None => text,
        };
        let verbosity = if self.quiet {
            Verbosity::FinalOnly
        } else {
            Verbosity::Normal
        };
        let rich = self.rich();
        let steer = self.session.agent.steer_handle();
        let cancel = CancellationToken::new();
        let (lines_tx, mut lines) = tokio::sync::mpsc::unbounded_channel();
        let reader = typeahead::TypeAhead::start(lines_tx);
        let mut queued = Vec::new();
        let mut prefill = None;
        let outcome = {
            let turn =
                chat::run_turn_with(&mut self.session, text, verbosity, rich, cancel.clone());
            tokio::pin!(turn);
            loop {
                tokio::select! {
                    outcome = &mut turn => break outcome,
                    Some(typed) = lines.recv() => {
                        typed_mid_turn(typed, &steer, &cancel, &mut queued, &mut prefill)?;
                    }
                }
            }
        };
        reader.stop();
        // Lines that arrived as the turn ended are still the user's: queue them.
        while let Ok(typed) = lines.try_recv() {
            let late = CancellationToken::new();
            typed_mid_turn(typed, &steer, &late, &mut queued, &mut prefill)?;
        }
        if self.prefill.is_none() {
            self.prefill = prefill;
        }
        let mut err = std::io::stderr();
        if let Some(left) = steer.take() {
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
        match outcome {
            Ok(result) => {
                let route = self.session.agent.active_route().model.clone();
                for tally in [&mut self.tally, &mut self.total] {
                    tally.add_turn(
                        &result.usage,
                        result.api_calls,
                        &route,
                        &self.session.runtime.provider,
                        &self.session.runtime.base_url,
                    );
                }
                if self.quiet {
                    writeln!(std::io::stdout(), "{}", result.final_text.trim_end())?;
                }
                if result.reason == TurnEnd::Interrupted {
                    writeln!(err, "⏹ Interrupted.")?;
                }
            }
            Err(e) => writeln!(err, "error: {}", chat::explain(&e, &self.session.runtime))?,
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
                if let Some(message) = crate::skills_cmd::invocation_message(
                    self.session.home.root(),
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
