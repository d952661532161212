//! `watch_patterns`: a background process's output is scanned for strings the
//! agent asked about, under the reference's limits (`tools/process_registry.py`,
//! `_check_watch_patterns` and `_global_watch_admit`): one notification per
//! process every 15 s; three crowded windows in a row turn watching off and
//! fall back to one notification at exit; at most 15 across a session's
//! processes in 10 s, then 30 s of quiet.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Minimum spacing between two notifications of one process.
pub const MIN_INTERVAL: Duration = Duration::from_secs(15);
/// Crowded windows in a row after which a process's watching stops.
pub const STRIKE_LIMIT: u32 = 3;
/// Notifications let through across all processes in one window.
pub const GLOBAL_MAX_PER_WINDOW: u32 = 15;
/// The window of [`GLOBAL_MAX_PER_WINDOW`].
pub const GLOBAL_WINDOW: Duration = Duration::from_secs(10);
/// How long the cross-process breaker stays tripped.
pub const GLOBAL_COOLDOWN: Duration = Duration::from_secs(30);
/// Matched lines quoted in one notification.
const MAX_LINES: usize = 20;
/// Characters of matched output quoted in one notification.
const MAX_OUTPUT: usize = 2000;
/// An unterminated line longer than this is matched by its tail only.
const MAX_PARTIAL: usize = 8192;

/// What a scan of new output produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// Lines matched and the agent should hear of it.
    Matched {
        /// The first pattern that matched.
        pattern: String,
        /// The matched lines (at most 20, 2,000 characters).
        output: String,
        /// Matched lines dropped by the rate limit since the last notification.
        suppressed: usize,
    },
    /// Too many crowded windows: watching stops, the exit is announced instead.
    Disabled,
}

/// The watch state of one process.
#[derive(Debug, Default)]
pub struct Watch {
    patterns: Vec<String>,
    /// The last line seen, not yet ended by a newline.
    partial: String,
    /// That unterminated line already matched (so it is not counted again
    /// when the rest of it arrives).
    partial_matched: bool,
    hits: u64,
    suppressed: usize,
    disabled: bool,
    cooldown_until: Option<Instant>,
    strike_candidate: bool,
    strikes: u32,
}

impl Watch {
    /// Watches for `patterns` (empty ones would match every line and are dropped).
    pub fn new(patterns: &[String]) -> Self {
        Self {
            patterns: patterns.iter().filter(|p| !p.is_empty()).cloned().collect(),
            ..Self::default()
        }
    }

    /// The patterns while watching is on; empty once it was turned off.
    pub fn patterns(&self) -> &[String] {
        if self.disabled { &[] } else { &self.patterns }
    }

    /// How many notifications it produced.
    pub fn hits(&self) -> u64 {
        self.hits
    }

    /// Scans newly read output; `now` drives the rate limit.
    pub fn scan(&mut self, text: &str, now: Instant) -> Option<Event> {
        if self.patterns().is_empty() {
            return None;
        }
        let (lines, pattern) = self.matches(text);
        let pattern = pattern?;
        self.admit(&lines, pattern, now)
    }

    /// The lines of `text` that contain a pattern, and the first pattern found.
    /// Lines are cut at `\n` and `\r` (as Python's `splitlines`); a line split
    /// across reads is matched once, as soon as its matching part arrived.
    fn matches(&mut self, text: &str) -> (Vec<String>, Option<String>) {
        let mut buf = std::mem::take(&mut self.partial);
        buf.push_str(text);
        let mut lines = Vec::new();
        let mut first = None;
        let mut record = |line: &str, patterns: &[String]| -> bool {
            let Some(found) = patterns.iter().find(|p| line.contains(p.as_str())) else {
                return false;
            };
            lines.push(line.trim_end().to_owned());
            first.get_or_insert_with(|| found.clone());
            true
        };
        let mut segments: Vec<&str> = buf.split(['\n', '\r']).collect();
        let rest = segments.pop().unwrap_or_default();
        // The first segment continues the carried line: skip it if that matched.
        let mut skip = self.partial_matched;
        for line in segments {
            if !std::mem::take(&mut skip) {
                record(line, &self.patterns);
            }
        }
        let rest_matched = skip || record(rest, &self.patterns);
        let cut = rest
            .char_indices()
            .rev()
            .nth(MAX_PARTIAL - 1)
            .map_or(0, |(i, _)| i);
        self.partial = rest[cut..].to_owned();
        self.partial_matched = rest_matched && !self.partial.is_empty();
        (lines, first)
    }

    /// Applies the per-process rate limit to a match.
    fn admit(&mut self, lines: &[String], pattern: String, now: Instant) -> Option<Event> {
        if let Some(until) = self.cooldown_until
            && now < until
        {
            self.suppressed += lines.len();
            // One strike per crowded window, however many matches it drops.
            if !self.strike_candidate {
                self.strike_candidate = true;
                self.strikes += 1;
                if self.strikes >= STRIKE_LIMIT {
                    self.disabled = true;
                    return Some(Event::Disabled);
                }
            }
            return None;
        }
        // A window that passed without drops ends a run of strikes.
        if self.cooldown_until.is_some() && !self.strike_candidate {
            self.strikes = 0;
        }
        self.strike_candidate = false;
        self.cooldown_until = Some(now + MIN_INTERVAL);
        self.hits += 1;
        let suppressed = std::mem::take(&mut self.suppressed);
        let mut output = lines
            .iter()
            .take(MAX_LINES)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n");
        if output.chars().count() > MAX_OUTPUT {
            output = output.chars().take(MAX_OUTPUT).collect();
            output.push_str("\n...(truncated)");
        }
        Some(Event::Matched {
            pattern,
            output,
            suppressed,
        })
    }
}

/// The cross-process circuit breaker of one session.
#[derive(Debug, Default)]
pub struct Breaker {
    window_start: Option<Instant>,
    window_hits: u32,
    tripped_until: Option<Instant>,
    suppressed: usize,
}

impl Breaker {
    /// Whether a match may be announced at `now`; notes about the breaker
    /// itself (tripped, released) are added to `notes`.
    pub fn admit(&mut self, now: Instant, notes: &mut Vec<String>) -> bool {
        if let Some(until) = self.tripped_until
            && now >= until
        {
            let suppressed = std::mem::take(&mut self.suppressed);
            self.tripped_until = None;
            self.window_start = Some(now);
            self.window_hits = 0;
            if suppressed > 0 {
                notes.push(format!(
                    "[IMPORTANT: Watch-pattern notifications resumed. {suppressed} match \
                     event(s) were suppressed during the flood.]"
                ));
            }
        }
        if self.tripped_until.is_some() {
            self.suppressed += 1;
            return false;
        }
        if self
            .window_start
            .is_none_or(|start| now.duration_since(start) >= GLOBAL_WINDOW)
        {
            self.window_start = Some(now);
            self.window_hits = 0;
        }
        if self.window_hits >= GLOBAL_MAX_PER_WINDOW {
            self.tripped_until = Some(now + GLOBAL_COOLDOWN);
            self.suppressed += 1;
            notes.push(format!(
                "[IMPORTANT: Watch-pattern overflow: >{GLOBAL_MAX_PER_WINDOW} notifications in \
                 {}s across all processes. Suppressing further watch_match events for {}s.]",
                GLOBAL_WINDOW.as_secs(),
                GLOBAL_COOLDOWN.as_secs()
            ));
            return false;
        }
        self.window_hits += 1;
        true
    }
}

/// Watch notifications of a session's processes, in the order they happened,
/// waiting for the agent's next turn.
#[derive(Debug, Default)]
pub struct Inbox {
    notes: Mutex<Vec<String>>,
    breaker: Mutex<Breaker>,
    /// Woken when something may be waiting (a note, an announced exit), so
    /// an idle session starts a turn for it.
    ready: tokio::sync::Notify,
}

impl Inbox {
    /// Queues what `event` of process `id` running `command` says.
    pub fn deliver(&self, id: &str, command: &str, event: Event, now: Instant) {
        let mut notes = Vec::new();
        match event {
            Event::Disabled => notes.push(disabled_note(id)),
            Event::Matched {
                pattern,
                output,
                suppressed,
            } => {
                let mut breaker = self.breaker.lock().unwrap_or_else(PoisonError::into_inner);
                if breaker.admit(now, &mut notes) {
                    notes.push(match_note(id, command, &pattern, &output, suppressed));
                }
            }
        }
        if notes.is_empty() {
            return;
        }
        self.notes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(notes);
        self.wake();
    }

    /// Tells the session something may be waiting (a permit is kept when
    /// nobody waits, so a wake-up during a turn is seen after it).
    pub fn wake(&self) {
        self.ready.notify_one();
    }

    /// Waits for the next [`Inbox::wake`].
    pub async fn woken(&self) {
        self.ready.notified().await;
    }

    /// Whether notes are waiting.
    pub fn has_notes(&self) -> bool {
        !self
            .notes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
    }

    /// Everything queued so far, oldest first.
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.notes.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// The reference's text for a match (`format_process_notification`, `watch_match`).
pub fn match_note(
    id: &str,
    command: &str,
    pattern: &str,
    output: &str,
    suppressed: usize,
) -> String {
    let mut text = format!(
        "[IMPORTANT: Background process {id} matched watch pattern \"{pattern}\".\n\
         Command: {command}\nMatched output:\n{output}"
    );
    if suppressed > 0 {
        text.push_str(&format!(
            "\n({suppressed} earlier matches were suppressed by rate limit)"
        ));
    }
    text.push(']');
    text
}

/// The reference's text when watching is turned off (`watch_disabled`).
pub fn disabled_note(id: &str) -> String {
    format!(
        "[IMPORTANT: Watch patterns disabled for process {id} — {STRIKE_LIMIT} consecutive \
         rate-limit windows triggered (min spacing {}s). Falling back to notify_on_complete \
         semantics; you'll get exactly one notification when the process exits.]",
        MIN_INTERVAL.as_secs()
    )
}

#[cfg(test)]
#[path = "watch_tests.rs"]
mod tests;
