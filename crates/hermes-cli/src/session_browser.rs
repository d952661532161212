//! `hermes sessions browse`: pick a past session on the terminal (type to
//! filter, ↑/↓ to move, Enter to resume, Esc to leave) and continue it.

use std::io::{IsTerminal, Write};
use std::os::fd::AsFd;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use hermes_state::session_db::SessionSummary;

use crate::terminal_keys::{End, Key, Keys, RawMode, erase};

/// Rows shown at once; the window scrolls with the selection.
const VISIBLE: usize = 12;

/// The sessions whose id, title or first message contain `query` (any case).
pub(crate) fn matching<'a>(rows: &'a [SessionSummary], query: &str) -> Vec<&'a SessionSummary> {
    let q = query.trim().to_lowercase();
    rows.iter()
        .filter(|r| {
            q.is_empty()
                || r.id.to_lowercase().contains(&q)
                || r.title.as_deref().unwrap_or("").to_lowercase().contains(&q)
                || r.preview.to_lowercase().contains(&q)
        })
        .collect()
}

/// The picker as drawn (no trailing newline), a pure function of its state.
pub(crate) fn render(
    shown: &[&SessionSummary],
    total: usize,
    query: &str,
    selected: usize,
    color: bool,
) -> String {
    let (dim, bold, reset) = if color {
        ("\x1b[2m", "\x1b[1m", "\x1b[0m")
    } else {
        ("", "", "")
    };
    let mut out = format!(
        "Resume a session ({} of {total}) — type to filter, ↑/↓ move, Enter resumes, Esc leaves\n> {query}",
        shown.len()
    );
    let start = selected.saturating_sub(VISIBLE - 1);
    for (i, row) in shown.iter().enumerate().skip(start).take(VISIBLE) {
        let label = row.title.as_deref().unwrap_or(&row.preview);
        let line = format!(
            "{}  {}  {:>4} msgs  {}",
            row.id,
            hermes_state::time::UtcTime::from_unix(row.last_active as i64).short(),
            row.message_count,
            crate::render::preview(label, 50)
        );
        if i == selected {
            out.push_str(&format!("\n{bold}❯ {line}{reset}"));
        } else {
            out.push_str(&format!("\n{dim}  {line}{reset}"));
        }
    }
    if shown.is_empty() {
        out.push_str(&format!("\n{dim}  (nothing matches){reset}"));
    }
    out
}

/// Lets the user pick one of `rows`; `None` when they leave without choosing.
pub(crate) fn pick(rows: &[SessionSummary]) -> Result<Option<String>> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() || !std::io::stderr().is_terminal() {
        bail!(
            "browse needs a terminal: list sessions with `hermes sessions list` and continue one with `hermes --resume ID`"
        );
    }
    let fd = stdin.as_fd();
    let Some(raw) = RawMode::enter(fd) else {
        bail!("cannot switch the terminal to key-by-key input");
    };
    let color = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let never = AtomicBool::new(false);
    let mut keys = Keys {
        fd,
        buf: Vec::new(),
        // Nobody waits on a browse: there is no deadline worth having.
        deadline: Instant::now() + Duration::from_secs(86_400 * 365),
        abandoned: &never,
    };
    let mut err = std::io::stderr();
    let mut query = String::new();
    let mut selected = 0usize;
    let mut drawn = String::new();
    let chosen = loop {
        let shown = matching(rows, &query);
        selected = selected.min(shown.len().saturating_sub(1));
        erase(&mut err, &drawn);
        drawn = render(&shown, rows.len(), &query, selected, color);
        let _ = write!(err, "{drawn}");
        let _ = err.flush();
        match keys.key() {
            Ok(Key::Up) => selected = selected.saturating_sub(1),
            Ok(Key::Down) => selected = (selected + 1).min(shown.len().saturating_sub(1)),
            Ok(Key::Enter) => {
                if let Some(row) = shown.get(selected) {
                    break Some(row.id.clone());
                }
            }
            Ok(Key::Backspace) => {
                query.pop();
            }
            Ok(Key::Char(c)) => {
                query.push(c);
                selected = 0;
            }
            Ok(Key::Ignored) => {}
            Ok(Key::Cancel)
            | Err(End::Cancelled | End::Closed | End::TimedOut | End::Abandoned) => {
                break None;
            }
        }
    };
    erase(&mut err, &drawn);
    drop(raw);
    Ok(chosen)
}

#[cfg(test)]
#[path = "session_browser_tests.rs"]
mod tests;
