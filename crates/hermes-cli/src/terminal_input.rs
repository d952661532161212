//! Who reads the terminal's input while a turn runs: the type-ahead reader
//! (lines typed for /steer and /queue) or a question put to the user (a clarify
//! list, a dangerous-command approval), which must never race each other.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};

/// Held by whoever reads the terminal's input: the type-ahead reader takes it
/// around each read, a question for the whole time it is asked.
static TERMINAL_INPUT: Mutex<()> = Mutex::new(());

/// Set while a question waits for or holds [`TERMINAL_INPUT`], so the
/// type-ahead reader stands aside rather than racing it for the lock.
static QUESTION_WANTS_INPUT: AtomicBool = AtomicBool::new(false);

/// The input lock for one read by the type-ahead reader, or `None` while a
/// question owns (or is about to own) the terminal.
pub(crate) fn try_read_input() -> Option<MutexGuard<'static, ()>> {
    if QUESTION_WANTS_INPUT.load(Ordering::SeqCst) {
        return None;
    }
    match TERMINAL_INPUT.try_lock() {
        Ok(guard) => Some(guard),
        Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}

/// The terminal's input, owned by a question until dropped.
pub(crate) struct InputClaim {
    _guard: MutexGuard<'static, ()>,
}

impl InputClaim {
    /// Waits for the input and keeps it until dropped.
    pub(crate) fn take() -> Self {
        QUESTION_WANTS_INPUT.store(true, Ordering::SeqCst);
        let guard = TERMINAL_INPUT
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Self { _guard: guard }
    }
}

impl Drop for InputClaim {
    fn drop(&mut self) {
        QUESTION_WANTS_INPUT.store(false, Ordering::SeqCst);
    }
}
