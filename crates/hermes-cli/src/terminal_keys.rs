//! Reading single key presses from the terminal for the pickers (the clarify
//! list, the session browser): raw mode, escape-sequence decoding, and waiting
//! with a deadline or until the asker gives up.

use std::io::Write;
use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use nix::poll::{PollFd, PollFlags, poll};
use nix::sys::termios::{self, LocalFlags, SetArg, Termios};

/// How long a lone Esc waits for the rest of an escape sequence.
pub(crate) const ESC_WAIT_MS: u8 = 40;

/// Why no answer came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    /// Esc or Ctrl+C.
    Cancelled,
    /// The deadline passed.
    TimedOut,
    /// The turn was interrupted; nobody waits for the answer.
    Abandoned,
    /// The input closed.
    Closed,
}

/// One key press.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Key {
    Up,
    Down,
    Enter,
    /// Esc, Ctrl+C or Ctrl+D.
    Cancel,
    Backspace,
    Char(char),
    /// Anything else (other escape sequences, control characters).
    Ignored,
}

/// The first key in `bytes` and how many bytes it takes, or `None` when more
/// bytes are needed (a lone Esc, a partial escape sequence or UTF-8 character).
pub(crate) fn decode(bytes: &[u8]) -> Option<(Key, usize)> {
    let first = *bytes.first()?;
    match first {
        0x1b => match bytes.get(1) {
            None => None,
            Some(b'[' | b'O') => {
                let end = bytes[2..].iter().position(|b| (0x40..=0x7e).contains(b))? + 2;
                let key = match (bytes[end], end) {
                    (b'A', 2) => Key::Up,
                    (b'B', 2) => Key::Down,
                    _ => Key::Ignored,
                };
                Some((key, end + 1))
            }
            Some(_) => Some((Key::Cancel, 1)),
        },
        b'\r' | b'\n' => Some((Key::Enter, 1)),
        0x03 | 0x04 => Some((Key::Cancel, 1)),
        0x7f | 0x08 => Some((Key::Backspace, 1)),
        b if b < 0x20 => Some((Key::Ignored, 1)),
        b if b < 0x80 => Some((Key::Char(char::from(b)), 1)),
        b => {
            let len = match b {
                0xc0..=0xdf => 2,
                0xe0..=0xef => 3,
                0xf0..=0xf7 => 4,
                _ => return Some((Key::Ignored, 1)),
            };
            let head = bytes.get(..len)?;
            match std::str::from_utf8(head)
                .ok()
                .and_then(|s| s.chars().next())
            {
                Some(c) => Some((Key::Char(c), len)),
                None => Some((Key::Ignored, 1)),
            }
        }
    }
}

/// Reads keys or lines from stdin until a deadline or until the turn is abandoned.
pub(crate) struct Keys<'a> {
    pub(crate) fd: BorrowedFd<'a>,
    pub(crate) buf: Vec<u8>,
    pub(crate) deadline: Instant,
    pub(crate) abandoned: &'a AtomicBool,
}

impl Keys<'_> {
    /// Waits up to `ms` for input and appends it; `Ok(false)` when none came.
    pub(crate) fn fill(&mut self, ms: u16) -> Result<bool, End> {
        let mut fds = [PollFd::new(self.fd, PollFlags::POLLIN)];
        match poll(&mut fds, ms) {
            Ok(0) | Err(nix::errno::Errno::EINTR) => return Ok(false),
            Ok(_) => {}
            Err(_) => return Err(End::Closed),
        }
        let mut chunk = [0u8; 1024];
        match nix::unistd::read(self.fd, &mut chunk) {
            Ok(0) => Err(End::Closed),
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                Ok(true)
            }
            Err(nix::errno::Errno::EINTR | nix::errno::Errno::EAGAIN) => Ok(false),
            Err(_) => Err(End::Closed),
        }
    }

    /// Fails once the turn is gone or the time is up.
    pub(crate) fn check(&self) -> Result<(), End> {
        if self.abandoned.load(Ordering::SeqCst) {
            return Err(End::Abandoned);
        }
        if Instant::now() >= self.deadline {
            return Err(End::TimedOut);
        }
        Ok(())
    }

    /// The next key press (raw mode).
    pub(crate) fn key(&mut self) -> Result<Key, End> {
        loop {
            if let Some((key, used)) = decode(&self.buf) {
                self.buf.drain(..used);
                return Ok(key);
            }
            if !self.buf.is_empty() && !self.fill(u16::from(ESC_WAIT_MS))? {
                // Nothing completes it: a lone Esc, or bytes to drop.
                let lone_esc = self.buf == [0x1b];
                self.buf.clear();
                if lone_esc {
                    return Ok(Key::Cancel);
                }
            }
            self.check()?;
            if self.buf.is_empty() {
                self.fill(100)?;
            }
        }
    }

    /// The next line, without its newline (canonical mode or a pipe).
    pub(crate) fn line(&mut self) -> Result<String, End> {
        loop {
            if let Some(end) = self.buf.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=end).collect();
                return Ok(String::from_utf8_lossy(&line[..end])
                    .trim_end_matches('\r')
                    .to_owned());
            }
            self.check()?;
            match self.fill(100) {
                Err(End::Closed) if !self.buf.is_empty() => {
                    let rest = std::mem::take(&mut self.buf);
                    return Ok(String::from_utf8_lossy(&rest).into_owned());
                }
                Err(end) => return Err(end),
                Ok(_) => {}
            }
        }
    }
}

/// The terminal in raw-ish mode (no line buffering, echo or signal keys) until dropped.
pub(crate) struct RawMode<'a> {
    fd: BorrowedFd<'a>,
    saved: Termios,
}

impl<'a> RawMode<'a> {
    /// `None` when the terminal's mode cannot be changed.
    pub(crate) fn enter(fd: BorrowedFd<'a>) -> Option<Self> {
        let saved = termios::tcgetattr(fd).ok()?;
        let mut raw = saved.clone();
        raw.local_flags
            .remove(LocalFlags::ICANON | LocalFlags::ECHO | LocalFlags::ISIG | LocalFlags::IEXTEN);
        raw.control_chars[termios::SpecialCharacterIndices::VMIN as usize] = 1;
        raw.control_chars[termios::SpecialCharacterIndices::VTIME as usize] = 0;
        termios::tcsetattr(fd, SetArg::TCSANOW, &raw).ok()?;
        Some(Self { fd, saved })
    }
}

impl Drop for RawMode<'_> {
    fn drop(&mut self) {
        let _ = termios::tcsetattr(self.fd, SetArg::TCSANOW, &self.saved);
    }
}

/// Clears `shown` (written without a final newline), leaving the cursor where it began.
pub(crate) fn erase(err: &mut impl Write, shown: &str) {
    let up = shown.matches('\n').count();
    let _ = write!(err, "\r");
    if up > 0 {
        let _ = write!(err, "\x1b[{up}A");
    }
    let _ = write!(err, "\x1b[J");
    let _ = err.flush();
}
