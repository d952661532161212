//! Mid-turn steering: text the user sends while a turn runs, delivered to the
//! model by appending it to the latest tool result rather than as a new user
//! message (which would break the assistant/tool alternation mid-turn).

use std::sync::{Arc, Mutex, PoisonError};

/// Opening line of the wrapper around steer text inside a tool result.
pub const STEER_OPEN: &str =
    "[USER STEER — sent by the user while this turn was running; not part of the tool output]";
/// Closing line of the wrapper.
pub const STEER_CLOSE: &str = "[/USER STEER]";

/// The steer text wrapped so the model can tell it from the tool's own output.
pub fn steer_marker(text: &str) -> String {
    format!("\n\n{STEER_OPEN}\n{text}\n{STEER_CLOSE}")
}

/// A cheap, cloneable slot for pending steer text, shared between the agent and
/// whoever reads the user's input while a turn runs.
#[derive(Debug, Clone, Default)]
pub struct SteerHandle(Arc<Mutex<Option<String>>>);

impl SteerHandle {
    /// Adds text to deliver after the next tool call; several steers are joined
    /// by newlines. Returns false for blank text, which is ignored.
    pub fn steer(&self, text: &str) -> bool {
        let text = text.trim();
        if text.is_empty() {
            return false;
        }
        let mut slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match slot.as_mut() {
            Some(pending) => {
                pending.push('\n');
                pending.push_str(text);
            }
            None => *slot = Some(text.to_owned()),
        }
        true
    }

    /// Takes the pending text, leaving none.
    pub fn take(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }

    /// Puts text back in front of anything added since it was taken.
    pub(crate) fn restore(&self, text: String) {
        let mut slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        *slot = Some(match slot.take() {
            Some(later) => format!("{text}\n{later}"),
            None => text,
        });
    }

    /// Whether text is waiting.
    pub fn is_pending(&self) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steers_accumulate_and_drain_once() {
        let h = SteerHandle::default();
        let other = h.clone();
        assert!(!h.steer("   "));
        assert!(h.steer(" one "));
        assert!(other.steer("two"));
        assert_eq!(h.take().as_deref(), Some("one\ntwo"));
        assert_eq!(other.take(), None);
        h.steer("later");
        h.restore("first".into());
        assert_eq!(h.take().as_deref(), Some("first\nlater"));
        assert!(!h.is_pending());
    }

    #[test]
    fn the_marker_says_who_sent_it() {
        let m = steer_marker("use the other file");
        assert!(m.starts_with("\n\n[USER STEER"));
        assert!(m.contains("\nuse the other file\n"));
        assert!(m.ends_with(STEER_CLOSE));
    }
}
