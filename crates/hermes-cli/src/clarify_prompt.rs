//! The REPL's answer to the `clarify` tool's questions: a selection list on
//! the terminal (↑/↓ or k/j move, Enter or a digit picks, an "Other" row for
//! free text, Esc or Ctrl+C cancels), or a numbered list and one typed line
//! when the output is not a terminal. The session times unanswered questions
//! out after `clarify.timeout` (the model then decides itself); the list
//! gives up at the same moment.

use std::io::{IsTerminal, Write};
use std::os::fd::AsFd;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use nix::sys::termios;

use crate::terminal_keys::{End, Key, Keys, RawMode, erase};

/// The row added under the model's choices.
pub(crate) const OTHER: &str = "Other (type your answer)";

/// What came of a question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answered {
    /// The chosen choice or the typed text.
    Text(String),
    /// The user declined (Esc, Ctrl+C, end of input).
    Declined,
    /// Nothing to send: it timed out (the session answers itself) or the turn ended.
    Nothing,
}

/// Whether a question is still open, as the session tells it.
#[derive(Debug, Default)]
pub(crate) struct Open {
    /// The turn ended or the session stopped waiting.
    pub(crate) closed: AtomicBool,
    /// The session's wait expired (the model decides itself).
    pub(crate) expired: AtomicBool,
}

/// Asks on the terminal until answered, `timeout` passes or the session closes it.
pub(crate) fn ask(question: &str, choices: &[String], timeout: Duration, open: &Open) -> Answered {
    match ask_blocking(question, choices, timeout, open) {
        Ok(text) => Answered::Text(text),
        Err(End::Cancelled | End::Closed) => Answered::Declined,
        Err(End::TimedOut | End::Abandoned) => Answered::Nothing,
    }
}

fn ask_blocking(
    question: &str,
    choices: &[String],
    timeout: Duration,
    open: &Open,
) -> Result<String, End> {
    let abandoned = &open.closed;
    let _input = crate::terminal_input::InputClaim::take();
    let stdin = std::io::stdin();
    let fd = stdin.as_fd();
    let mut keys = Keys {
        fd,
        buf: Vec::new(),
        deadline: Instant::now() + timeout,
        abandoned,
    };
    let tty =
        stdin.is_terminal() && std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
    let color = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let mut err = std::io::stderr();
    let outcome = match tty.then(|| RawMode::enter(fd)).flatten() {
        Some(raw) => {
            let _ = termios::tcflush(fd, termios::FlushArg::TCIFLUSH);
            let outcome = ask_on_terminal(&mut keys, &mut err, question, choices, color);
            drop(raw);
            outcome
        }
        None => ask_plainly(&mut keys, &mut err, question, choices),
    };
    let outcome = match outcome {
        Err(End::Abandoned) if open.expired.load(std::sync::atomic::Ordering::SeqCst) => {
            Err(End::TimedOut)
        }
        other => other,
    };
    let dim = |s: &str| {
        if color && tty {
            format!("\x1b[2m{s}\x1b[0m")
        } else {
            s.to_owned()
        }
    };
    match outcome {
        Ok(answer) => {
            let _ = writeln!(
                err,
                "{}",
                dim(&format!(
                    "❓ Clarify: {} → {}",
                    one_line(question),
                    one_line(&answer)
                ))
            );
            Ok(answer)
        }
        Err(End::TimedOut) => {
            let secs = timeout.as_secs();
            let _ = writeln!(
                err,
                "{}",
                dim(&format!(
                    "(clarify timed out after {secs}s — agent will decide)"
                ))
            );
            Err(End::TimedOut)
        }
        Err(end) => Err(end),
    }
}

/// Whitespace collapsed, cut to 120 characters, for the summary line.
fn one_line(text: &str) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if joined.chars().count() > 120 {
        joined.chars().take(119).collect::<String>() + "…"
    } else {
        joined
    }
}

/// The selection list as text: the question, one numbered row per choice plus
/// the "Other" row (the `selected` one marked, and bold when `color`), and a
/// key hint. Ends without a newline.
pub(crate) fn render_menu(
    question: &str,
    choices: &[String],
    selected: usize,
    color: bool,
) -> String {
    let mut lines: Vec<String> = Vec::new();
    for (i, line) in question.lines().enumerate() {
        lines.push(if i == 0 {
            format!("❓ {line}")
        } else {
            format!("   {line}")
        });
    }
    if lines.is_empty() {
        lines.push("❓".to_owned());
    }
    let rows = choices.iter().map(String::as_str).chain([OTHER]);
    for (i, label) in rows.enumerate() {
        let row = if i == selected {
            format!("  ❯ {}. {label}", i + 1)
        } else {
            format!("    {}. {label}", i + 1)
        };
        lines.push(if color && i == selected {
            format!("\x1b[1;36m{row}\x1b[0m")
        } else {
            row
        });
    }
    let hint = format!(
        "  ↑/↓ move · Enter select · 1-{} pick · Esc cancel",
        choices.len() + 1
    );
    lines.push(if color {
        format!("\x1b[2m{hint}\x1b[0m")
    } else {
        hint
    });
    lines.join("\n")
}

/// The list for a plain (non-terminal) output, with the line to answer on.
pub(crate) fn render_plain(question: &str, choices: &[String]) -> String {
    let mut out = format!("❓ {question}\n");
    if choices.is_empty() {
        out.push_str("Your answer: ");
        return out;
    }
    for (i, label) in choices
        .iter()
        .map(String::as_str)
        .chain([OTHER])
        .enumerate()
    {
        out.push_str(&format!("  {}. {label}\n", i + 1));
    }
    out.push_str("Choice (number, or type your answer): ");
    out
}

/// What a typed line means for a list of `choices`: `Some(answer)`, or `None`
/// when the "Other" row's number was typed (the answer comes next).
pub(crate) fn parse_plain(line: &str, choices: &[String]) -> Option<String> {
    let text = line.trim();
    match text.parse::<usize>() {
        Ok(n) if (1..=choices.len()).contains(&n) => Some(choices[n - 1].clone()),
        Ok(n) if n == choices.len() + 1 && !choices.is_empty() => None,
        _ => Some(text.to_owned()),
    }
}

fn ask_plainly(
    keys: &mut Keys<'_>,
    err: &mut impl Write,
    question: &str,
    choices: &[String],
) -> Result<String, End> {
    let _ = write!(err, "\n{}", render_plain(question, choices));
    let _ = err.flush();
    loop {
        let line = keys.line()?;
        if line.trim().is_empty() {
            let _ = write!(
                err,
                "{}",
                if choices.is_empty() {
                    "Your answer: "
                } else {
                    "Choice: "
                }
            );
            let _ = err.flush();
            continue;
        }
        if choices.is_empty() {
            return Ok(line.trim().to_owned());
        }
        if let Some(answer) = parse_plain(&line, choices) {
            return Ok(answer);
        }
        let _ = write!(err, "Your answer: ");
        let _ = err.flush();
        loop {
            let text = keys.line()?;
            if !text.trim().is_empty() {
                return Ok(text.trim().to_owned());
            }
        }
    }
}

fn ask_on_terminal(
    keys: &mut Keys<'_>,
    err: &mut impl Write,
    question: &str,
    choices: &[String],
    color: bool,
) -> Result<String, End> {
    let _ = write!(err, "\n\x1b[?25l");
    let result = pick(keys, err, question, choices, color);
    let _ = write!(err, "\x1b[?25h");
    let _ = err.flush();
    match result {
        Ok(Some(answer)) => Ok(answer),
        Ok(None) => {
            let label = if color {
                format!("\x1b[1m❓ {}\x1b[0m", one_line(question))
            } else {
                format!("❓ {}", one_line(question))
            };
            let _ = writeln!(err, "{label}");
            read_text(keys, err, "  ✎ Your answer: ")
        }
        Err(end) => Err(end),
    }
}

/// The selection list; `Ok(None)` means free text (an open question, or "Other").
fn pick(
    keys: &mut Keys<'_>,
    err: &mut impl Write,
    question: &str,
    choices: &[String],
    color: bool,
) -> Result<Option<String>, End> {
    if choices.is_empty() {
        return Ok(None);
    }
    let rows = choices.len() + 1;
    let mut selected = 0usize;
    let mut menu = render_menu(question, choices, selected, color);
    let _ = write!(err, "{menu}");
    let _ = err.flush();
    let chosen = loop {
        let key = match keys.key() {
            Ok(key) => key,
            Err(end) => {
                erase(err, &menu);
                return Err(end);
            }
        };
        let next = match key {
            Key::Up | Key::Char('k') => (selected + rows - 1) % rows,
            Key::Down | Key::Char('j') => (selected + 1) % rows,
            Key::Enter => break selected,
            Key::Char(c @ '1'..='9') => {
                let i = (c as usize) - ('1' as usize);
                if i < rows {
                    break i;
                }
                continue;
            }
            Key::Cancel => {
                erase(err, &menu);
                return Err(End::Cancelled);
            }
            _ => continue,
        };
        if next != selected {
            selected = next;
            erase(err, &menu);
            menu = render_menu(question, choices, selected, color);
            let _ = write!(err, "{menu}");
            let _ = err.flush();
        }
    };
    erase(err, &menu);
    Ok(choices.get(chosen).cloned())
}

/// A line typed in raw mode: printable characters, Backspace, Enter (when not
/// empty); Esc or Ctrl+C cancels. Pasted text's markers are skipped.
fn read_text(keys: &mut Keys<'_>, err: &mut impl Write, prompt: &str) -> Result<String, End> {
    let mut text = String::new();
    let _ = write!(err, "{prompt}");
    let _ = err.flush();
    loop {
        match keys.key()? {
            Key::Enter if !text.trim().is_empty() => {
                let _ = writeln!(err);
                return Ok(text.trim().to_owned());
            }
            Key::Char(c) => text.push(c),
            Key::Backspace => {
                text.pop();
            }
            Key::Cancel => {
                let _ = writeln!(err);
                return Err(End::Cancelled);
            }
            _ => continue,
        }
        let _ = write!(err, "\r\x1b[2K{prompt}{text}");
        let _ = err.flush();
    }
}

#[cfg(test)]
#[path = "clarify_prompt_tests.rs"]
mod tests;
