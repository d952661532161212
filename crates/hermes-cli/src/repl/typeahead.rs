//! Lines typed while a turn runs. A thread waits on stdin and reads only
//! complete lines (the terminal is in canonical mode between prompts, so a line
//! becomes readable when Enter is pressed); the end of the turn wakes it through
//! a pipe, so the next prompt comes back at once, and any half-typed line is
//! left for that prompt.

use std::os::fd::AsFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use nix::poll::{PollFd, PollFlags, poll};
use tokio::sync::mpsc::UnboundedSender;

/// The longest the reader holds the input lock in one wait, and how long it
/// waits between tries while a question owns the input.
const QUESTION_WAIT_MS: u16 = 50;

/// What the reader saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Typed {
    /// A complete line, without its newline.
    Line(String),
    /// Ctrl+D on an empty line.
    Eof,
    /// Text typed without Enter before the turn ended (Ctrl+D mid-line hands
    /// it over early); it goes back into the next prompt.
    Partial(String),
}

/// The running reader; [`TypeAhead::stop`] ends it.
pub(crate) struct TypeAhead {
    stop: Arc<AtomicBool>,
    /// Written to (or dropped) to wake the reader out of its wait.
    wake: Option<std::io::PipeWriter>,
    thread: Option<JoinHandle<()>>,
}

impl TypeAhead {
    /// Starts reading; what is typed goes to `lines`.
    pub(crate) fn start(lines: UnboundedSender<Typed>) -> Self {
        // Pasted text arrives wrapped in markers, so a multi-line paste stays
        // one message (the line editor turns this on only while it reads).
        bracketed_paste(true);
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let (thread, wake) = match std::io::pipe() {
            Ok((woken, wake)) => {
                let thread = std::thread::Builder::new()
                    .name("typeahead".into())
                    .spawn(move || read_lines(&flag, &woken, &lines))
                    .ok();
                (thread, Some(wake))
            }
            // Without a pipe nothing could end the reader's wait: no type-ahead.
            Err(_) => (None, None),
        };
        Self { stop, wake, thread }
    }

    /// Stops the reader and waits for it (it wakes at once).
    pub(crate) fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Closing the write end makes the read end readable (end of file).
        drop(self.wake.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
            bracketed_paste(false);
        }
    }
}

impl Drop for TypeAhead {
    fn drop(&mut self) {
        self.halt();
    }
}

/// Turns the terminal's bracketed-paste mode on or off (stdout a terminal only).
fn bracketed_paste(on: bool) {
    use std::io::{IsTerminal, Write};
    let mut out = std::io::stdout().lock();
    if out.is_terminal() {
        let _ = out.write_all(if on { b"\x1b[?2004h" } else { b"\x1b[?2004l" });
        let _ = out.flush();
    }
}

fn read_lines(stop: &AtomicBool, woken: &std::io::PipeReader, lines: &UnboundedSender<Typed>) {
    let stdin = std::io::stdin();
    let fd = stdin.as_fd();
    let mut pending: Vec<u8> = Vec::new();
    let mut joiner = Joiner::default();
    let mut buf = [0u8; 4096];
    while !stop.load(Ordering::SeqCst) {
        // A question to the user owns the input while it is asked.
        let Some(_input) = crate::terminal_input::try_read_input() else {
            let mut fds = [PollFd::new(woken.as_fd(), PollFlags::POLLIN)];
            let _ = poll(&mut fds, QUESTION_WAIT_MS);
            continue;
        };
        let mut fds = [
            PollFd::new(fd, PollFlags::POLLIN),
            PollFd::new(woken.as_fd(), PollFlags::POLLIN),
        ];
        // Bounded, so a question asked meanwhile gets the input lock within
        // one interval; the end of the turn wakes the wait at once.
        match poll(&mut fds, QUESTION_WAIT_MS) {
            Ok(0) => continue,
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => return,
        }
        let any = PollFlags::POLLIN | PollFlags::POLLHUP;
        if fds[1].revents().is_some_and(|r| r.intersects(any)) {
            break;
        }
        let ready = fds[0].revents().is_some_and(|r| r.intersects(any));
        if !ready {
            // POLLERR/POLLNVAL on stdin: nothing more can be read from it.
            if fds[0].revents().is_some_and(|r| !r.is_empty()) {
                break;
            }
            continue;
        }
        match nix::unistd::read(fd, &mut buf) {
            // Ctrl+D on an empty line; reported once, then reading stops so a
            // closed stdin cannot spin.
            Ok(0) => {
                let _ = lines.send(Typed::Eof);
                break;
            }
            Ok(n) => {
                pending.extend_from_slice(&buf[..n]);
                while let Some(end) = pending.iter().position(|&b| b == b'\n') {
                    let line: Vec<u8> = pending.drain(..=end).collect();
                    let text = String::from_utf8_lossy(&line[..end]);
                    if let Some(done) = joiner.push(text.trim_end_matches('\r'))
                        && lines.send(Typed::Line(done)).is_err()
                    {
                        return;
                    }
                }
            }
            Err(nix::errno::Errno::EINTR | nix::errno::Errno::EAGAIN) => {}
            Err(_) => return,
        }
    }
    let mut rest = joiner.take();
    rest.push_str(&String::from_utf8_lossy(&pending));
    if !rest.is_empty() {
        let _ = lines.send(Typed::Partial(rest));
    }
}

/// Bracketed-paste markers (the terminal wraps pasted text in them while the
/// line editor has paste mode on).
const PASTE_START: &str = "\x1b[200~";
const PASTE_END: &str = "\x1b[201~";

/// Joins terminal lines into messages the way the prompt does: a trailing `\`
/// or Alt+Enter (ESC before the newline) continues the message, and a
/// bracketed paste is one message however many lines it has.
#[derive(Debug, Default)]
struct Joiner {
    text: String,
    in_paste: bool,
}

impl Joiner {
    /// Adds one terminal line; returns a finished message when there is one.
    fn push(&mut self, line: &str) -> Option<String> {
        let mut line = line.to_owned();
        if line.contains(PASTE_START) {
            line = line.replace(PASTE_START, "");
            self.in_paste = true;
        }
        if self.in_paste {
            if line.contains(PASTE_END) {
                line = line.replace(PASTE_END, "");
                self.in_paste = false;
            } else {
                self.text.push_str(&line);
                self.text.push('\n');
                return None;
            }
        }
        if let Some(head) = line
            .strip_suffix('\\')
            .or_else(|| line.strip_suffix('\x1b'))
        {
            self.text.push_str(head);
            self.text.push('\n');
            return None;
        }
        self.text.push_str(&line);
        Some(self.take())
    }

    /// What has been gathered so far, leaving nothing.
    fn take(&mut self) -> String {
        self.in_paste = false;
        std::mem::take(&mut self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continued_and_pasted_lines_make_one_message() {
        let mut j = Joiner::default();
        assert_eq!(j.push("plain").as_deref(), Some("plain"));
        assert_eq!(j.push("first\\"), None);
        assert_eq!(j.push("second").as_deref(), Some("first\nsecond"));
        assert_eq!(j.push("alt one\x1b"), None);
        assert_eq!(j.push("alt two").as_deref(), Some("alt one\nalt two"));
        assert_eq!(j.push("\x1b[200~pasted one"), None);
        assert_eq!(
            j.push("pasted two\x1b[201~").as_deref(),
            Some("pasted one\npasted two")
        );
        assert_eq!(j.push("half\\"), None);
        assert_eq!(j.take(), "half\n");
    }
}
