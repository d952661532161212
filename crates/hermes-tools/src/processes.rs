//! Background processes a session starts with `terminal(background=true)`
//! and manages with the `process` tool: each runs in its own process group,
//! its merged output kept as a rolling tail in memory (and scanned for its
//! `watch_patterns`), its exit recorded.

mod launch;
mod pty;
mod watch;

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use tokio::io::AsyncWriteExt;

use self::watch::{Inbox, Watch};

/// Output kept per process (characters, the newest).
pub const MAX_OUTPUT_CHARS: usize = 200_000;
/// Finished processes are forgotten after this long.
const FINISHED_TTL: Duration = Duration::from_secs(30 * 60);
/// At most this many processes are tracked; the oldest finished go first.
const MAX_TRACKED: usize = 64;
/// How long a killed process group gets between SIGTERM and SIGKILL.
const TERM_GRACE: Duration = Duration::from_secs(2);
/// How long a write may wait for a program that does not read its terminal.
const WRITE_LIMIT: Duration = Duration::from_secs(10);
/// How long an exit waits for the rest of the output (a child that outlives
/// the shell may hold the pipe open), so its announcement quotes all of it.
const OUTPUT_DRAIN: Duration = Duration::from_millis(500);

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exit {
    /// Exit code (128 + signal for a signal; -15 when `kill` ended it).
    pub code: i32,
    /// Ended by `kill` (or at the end of the session) rather than on its own.
    pub killed: bool,
}

/// One background process.
#[derive(Debug)]
pub struct Background {
    /// `proc_` + 12 hex digits.
    pub id: String,
    /// The shell command.
    pub command: String,
    /// Where it runs.
    pub cwd: PathBuf,
    /// Its pid (also its process group).
    pub pid: u32,
    /// When it started (wall clock, for listings).
    pub started_at: SystemTime,
    /// Its standard streams are a pseudo-terminal (`pty=true`).
    pub terminal: bool,
    /// Why it got pipes although it asked for a terminal.
    pub terminal_error: Option<String>,
    started: Instant,
    output: Mutex<String>,
    exit: tokio::sync::watch::Receiver<Option<Exit>>,
    killed: Mutex<bool>,
    stdin: tokio::sync::Mutex<Option<Input>>,
    /// Announce the exit to the agent (`notify_on_complete`, or watching
    /// that was turned off for too many matches).
    notify: AtomicBool,
    /// The agent saw the end itself (`wait`, `kill`, the log's last line).
    consumed: AtomicBool,
    /// The exit was announced.
    announced: AtomicBool,
    watch: Mutex<Watch>,
    /// Where its watch notifications wait for the agent.
    inbox: Arc<Inbox>,
}

/// Where writes to a process go.
#[derive(Debug)]
enum Input {
    Pipe(tokio::process::ChildStdin),
    Terminal {
        master: Arc<File>,
        /// The last byte written ended a line, so Ctrl-D alone means EOF.
        at_line_start: bool,
    },
}

impl Background {
    /// The exit, once it happened.
    pub fn exit(&self) -> Option<Exit> {
        *self.exit.borrow()
    }

    /// Marks the end as seen by the agent, so it is not announced again.
    pub fn mark_consumed(&self) {
        self.consumed.store(true, Ordering::SeqCst);
    }

    /// Whether its exit will be announced to the agent.
    pub fn announces_exit(&self) -> bool {
        self.notify.load(Ordering::SeqCst)
    }

    /// Its watch patterns while watching is on.
    pub fn watch_patterns(&self) -> Vec<String> {
        self.watch
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .patterns()
            .to_vec()
    }

    /// Whether a watch pattern matched and was announced.
    pub fn watch_hit(&self) -> bool {
        self.watch
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .hits()
            > 0
    }

    /// Scans newly read output for its watch patterns.
    fn check_watch(&self, text: &str) {
        let now = Instant::now();
        let event = self
            .watch
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .scan(text, now);
        let Some(event) = event else { return };
        if event == watch::Event::Disabled {
            // The agent still hears once, when it ends.
            self.notify.store(true, Ordering::SeqCst);
        }
        self.inbox.deliver(&self.id, &self.command, event, now);
    }

    /// Whether its end is over and still to be announced.
    fn announcement_due(&self) -> bool {
        self.exit().is_some()
            && self.announces_exit()
            && !self.consumed.load(Ordering::SeqCst)
            && !self.announced.load(Ordering::SeqCst)
    }

    /// The announcement of its end, once, if it asked for one and the agent
    /// has not seen the end by itself.
    fn take_announcement(&self) -> Option<String> {
        let exit = self.exit()?;
        if !self.announcement_due() || self.announced.swap(true, Ordering::SeqCst) {
            return None;
        }
        let how = if exit.killed {
            format!("terminated by Hermes (exit code {}, SIGTERM)", exit.code)
        } else if exit.code == 0 {
            "completed normally (exit code 0)".to_owned()
        } else {
            format!("exited (exit code {})", exit.code)
        };
        Some(format!(
            "[IMPORTANT: Background process {} {how}.\nCommand: {}\nOutput:\n{}]",
            self.id,
            self.command,
            self.tail(2000).trim_end()
        ))
    }

    /// Seconds since it started.
    pub fn uptime_secs(&self) -> u64 {
        self.started.elapsed().as_secs()
    }

    /// The last `chars` characters of its output (all of it when shorter).
    pub fn tail(&self, chars: usize) -> String {
        let out = self.output.lock().unwrap_or_else(PoisonError::into_inner);
        let skip = out.chars().count().saturating_sub(chars);
        out.chars().skip(skip).collect()
    }

    /// Its kept output, as lines.
    pub fn lines(&self) -> Vec<String> {
        let out = self.output.lock().unwrap_or_else(PoisonError::into_inner);
        out.lines().map(str::to_owned).collect()
    }

    /// Waits until it exits or `limit` passes; the exit if it came.
    pub async fn wait(&self, limit: Duration) -> Option<Exit> {
        let mut exit = self.exit.clone();
        let waited = tokio::time::timeout(limit, exit.wait_for(Option::is_some)).await;
        match waited {
            Ok(Ok(done)) => *done,
            _ => self.exit(),
        }
    }

    /// Ends the process group: SIGTERM, then SIGKILL after a grace period.
    /// Returns the exit (`None` if it was already over).
    pub async fn kill(&self) -> Option<Exit> {
        if self.exit().is_some() {
            return None;
        }
        *self.killed.lock().unwrap_or_else(PoisonError::into_inner) = true;
        signal_group(self.pid, nix::sys::signal::SIGTERM);
        let exit = self.wait(TERM_GRACE).await;
        // Whatever of the group ignored SIGTERM (or outlived the shell) goes now.
        signal_group(self.pid, nix::sys::signal::SIGKILL);
        match exit {
            Some(exit) => Some(exit),
            None => self.wait(Duration::from_secs(5)).await,
        }
    }

    /// Writes `data` to its stdin (only processes started with `pty=true`
    /// have one); returns the bytes written.
    pub async fn write(&self, data: &str) -> Result<usize, String> {
        if self.exit().is_some() {
            return Err("Process has already finished".into());
        }
        let mut stdin = self.stdin.lock().await;
        match stdin.as_mut() {
            None => Err(
                "Process stdin not available: start it with pty=true to write to it, or stdin was closed"
                    .into(),
            ),
            Some(Input::Pipe(pipe)) => {
                pipe.write_all(data.as_bytes())
                    .await
                    .map_err(|e| format!("writing to stdin failed: {e}"))?;
                pipe.flush()
                    .await
                    .map_err(|e| format!("writing to stdin failed: {e}"))?;
                Ok(data.len())
            }
            Some(Input::Terminal {
                master,
                at_line_start,
            }) => {
                write_terminal(master, data.as_bytes()).await?;
                if let Some(last) = data.bytes().last() {
                    *at_line_start = matches!(last, b'\n' | b'\r');
                }
                Ok(data.len())
            }
        }
    }

    /// Ends its input: a pipe is closed, a terminal gets Ctrl-D (as
    /// `ptyprocess.sendeof`). Returns what was done.
    pub async fn close_stdin(&self) -> Result<&'static str, String> {
        if self.exit().is_some() {
            return Err("Process has already finished".into());
        }
        let mut stdin = self.stdin.lock().await;
        match stdin.as_mut() {
            None => Err("Process stdin not available (never opened or already closed)".into()),
            Some(Input::Pipe(_)) => {
                stdin.take();
                Ok("stdin closed")
            }
            Some(Input::Terminal {
                master,
                at_line_start,
            }) => {
                // Ctrl-D after unfinished text only hands that text over; a
                // second one is the end of input.
                let eof: &[u8] = if *at_line_start {
                    &[pty::EOF]
                } else {
                    &[pty::EOF, pty::EOF]
                };
                write_terminal(master, eof).await?;
                *at_line_start = true;
                Ok("EOF sent")
            }
        }
    }
}

/// Writes to a terminal's master without blocking the runtime: a program
/// that stops reading fills the terminal's input queue.
async fn write_terminal(master: &Arc<File>, data: &[u8]) -> Result<(), String> {
    let master = master.clone();
    let data = data.to_vec();
    let writing = tokio::task::spawn_blocking(move || {
        let mut file: &File = &master;
        file.write_all(&data).and_then(|()| file.flush())
    });
    match tokio::time::timeout(WRITE_LIMIT, writing).await {
        Ok(Ok(Ok(()))) => Ok(()),
        Ok(Ok(Err(e))) => Err(format!("writing to the terminal failed: {e}")),
        Ok(Err(e)) => Err(format!("writing to the terminal failed: {e}")),
        Err(_) => Err(format!(
            "the process is not reading its input: the write did not finish within {}s",
            WRITE_LIMIT.as_secs()
        )),
    }
}

fn signal_group(pid: u32, signal: nix::sys::signal::Signal) {
    if let Ok(pid) = i32::try_from(pid) {
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), signal);
    }
}

/// The background processes of one session.
#[derive(Debug, Default)]
pub struct ProcessTable {
    processes: Mutex<HashMap<String, Arc<Background>>>,
    /// The session delivers announcements of ended processes (a conversation
    /// that goes on; a one-shot run ends before any could arrive).
    announces: bool,
    /// Watch notifications of every process, with the session-wide breaker.
    inbox: Arc<Inbox>,
}

/// What a background process's standard input is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StdinMode {
    /// Nothing (`/dev/null`).
    Null,
    /// A pipe the `process` tool writes to.
    Pipe,
    /// A pseudo-terminal for stdin, stdout and stderr (pipes if none opens).
    Terminal,
}

/// What `spawn` needs besides the command.
#[derive(Debug, Clone, Copy)]
pub struct SpawnOptions<'a> {
    /// The working directory.
    pub cwd: &'a Path,
    /// Variables the process must not inherit.
    pub hidden_env: &'a [String],
    /// Its standard input.
    pub stdin: StdinMode,
    /// Announce its exit to the agent.
    pub notify: bool,
    /// Strings in its output the agent is told about.
    pub watch_patterns: &'a [String],
    /// Where it runs; `None` is the local host.
    pub environment: Option<&'a dyn hermes_env::Environment>,
}

impl ProcessTable {
    /// A table whose session delivers exit announcements (`notify_on_complete`)
    /// and watch notifications.
    pub fn announcing() -> Self {
        Self {
            processes: Mutex::default(),
            announces: true,
            inbox: Arc::default(),
        }
    }

    /// Whether exit announcements reach the agent in this session.
    pub fn announces(&self) -> bool {
        self.announces
    }

    /// Watch notifications, then announcements of processes that ended since
    /// the last call, oldest first.
    pub fn take_announcements(&self) -> Vec<String> {
        let mut notes = self.inbox.take();
        notes.extend(self.list().iter().filter_map(|p| p.take_announcement()));
        notes
    }

    /// Whether [`ProcessTable::take_announcements`] has something to give.
    pub fn has_announcements(&self) -> bool {
        self.inbox.has_notes() || self.list().iter().any(|p| p.announcement_due())
    }

    /// Waits until an announcement may be waiting: a watch pattern matched,
    /// or a process that announces its end ended. A wake-up that came while
    /// nobody waited is kept for the next call.
    pub async fn announcement_ready(&self) {
        self.inbox.woken().await;
    }

    /// Starts `command` with `bash -c` in its own process group (its own
    /// session on a terminal).
    pub fn spawn(&self, command: &str, opts: SpawnOptions<'_>) -> Result<Arc<Background>, String> {
        let launch::Launched {
            mut child,
            output,
            input,
            terminal_error,
        } = launch::launch(command, &opts)?;
        let pid = child.id().ok_or("the process ended before it started")?;
        let (exit_tx, exit_rx) = tokio::sync::watch::channel(None);
        let process = Arc::new(Background {
            id: new_id(),
            command: command.to_owned(),
            cwd: opts.cwd.to_path_buf(),
            pid,
            started_at: SystemTime::now(),
            terminal: matches!(input, Some(Input::Terminal { .. })),
            terminal_error,
            started: Instant::now(),
            output: Mutex::new(String::new()),
            exit: exit_rx,
            killed: Mutex::new(false),
            stdin: tokio::sync::Mutex::new(input),
            notify: AtomicBool::new(opts.notify),
            consumed: AtomicBool::new(false),
            announced: AtomicBool::new(false),
            watch: Mutex::new(Watch::new(opts.watch_patterns)),
            inbox: self.inbox.clone(),
        });
        let reading = process.clone();
        let (drained_tx, drained) = tokio::sync::oneshot::channel::<()>();
        std::thread::Builder::new()
            .name(format!("bg-{}", process.id))
            .spawn(move || {
                pump(output, &reading);
                let _ = drained_tx.send(());
            })
            .map_err(|e| format!("could not start the output reader: {e}"))?;
        let waiting = process.clone();
        tokio::spawn(async move {
            let code = match child.wait().await {
                Ok(status) => exit_code_of(status),
                Err(_) => -1,
            };
            // The last lines may still be in the pipe: the exit is recorded
            // (and announced) once they are read, as the reference's reader
            // queues the completion after the end of the output.
            let _ = tokio::time::timeout(OUTPUT_DRAIN, drained).await;
            let killed = *waiting
                .killed
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let code = if killed { -15 } else { code };
            let _ = exit_tx.send(Some(Exit { code, killed }));
            if waiting.announces_exit() {
                waiting.inbox.wake();
            }
        });
        let mut table = self
            .processes
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        prune(&mut table);
        table.insert(process.id.clone(), process.clone());
        Ok(process)
    }

    /// The process with this id.
    pub fn get(&self, id: &str) -> Option<Arc<Background>> {
        let table = self
            .processes
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        table.get(id.trim()).cloned()
    }

    /// Every tracked process, oldest first.
    pub fn list(&self) -> Vec<Arc<Background>> {
        let table = self
            .processes
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut all: Vec<Arc<Background>> = table.values().cloned().collect();
        all.sort_by_key(|p| p.started);
        all
    }

    /// Processes still running.
    pub fn running(&self) -> Vec<Arc<Background>> {
        self.list()
            .into_iter()
            .filter(|p| p.exit().is_none())
            .collect()
    }

    /// Stops tracking every process without signalling any (they outlive the
    /// session, as `terminal.keep_background_processes` asks).
    pub fn release_all(&self) {
        self.processes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// Kills every running process; returns how many there were.
    pub async fn kill_all(&self) -> usize {
        let running = self.running();
        let n = running.len();
        futures_util::future::join_all(running.iter().map(|p| p.kill())).await;
        n
    }
}

impl Drop for ProcessTable {
    fn drop(&mut self) {
        // A table dropped with processes still running (a session that ended
        // without killing them) must not leave them orphaned.
        let table = self
            .processes
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        for p in table.values().filter(|p| p.exit().is_none()) {
            signal_group(p.pid, nix::sys::signal::SIGKILL);
        }
    }
}

/// Forgets finished processes past their time, and the oldest finished ones
/// beyond [`MAX_TRACKED`].
fn prune(table: &mut HashMap<String, Arc<Background>>) {
    table.retain(|_, p| p.exit().is_none() || p.started.elapsed() < FINISHED_TTL);
    while table.len() >= MAX_TRACKED {
        let oldest = table
            .values()
            .filter(|p| p.exit().is_some())
            .min_by_key(|p| p.started)
            .map(|p| p.id.clone());
        match oldest {
            Some(id) => {
                table.remove(&id);
            }
            None => break,
        }
    }
}

fn new_id() -> String {
    format!("proc_{:012x}", fastrand::u64(..1 << 48))
}

/// Appends the process's output to its rolling buffer, and scans it for
/// watch patterns, until the pipe or terminal closes.
fn pump(mut reader: Box<dyn Read + Send>, process: &Background) {
    let mut buf = [0u8; 8192];
    let mut pending: Vec<u8> = Vec::new();
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            // A terminal's master reports EIO once no one holds the slave.
            Err(_) => break,
        };
        pending.extend_from_slice(&buf[..n]);
        // Keep an incomplete UTF-8 sequence for the next read.
        let valid = match std::str::from_utf8(&pending) {
            Ok(_) => pending.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => pending.len(),
        };
        let text = String::from_utf8_lossy(&pending[..valid]).into_owned();
        pending.drain(..valid);
        record(process, &text);
    }
    if !pending.is_empty() {
        record(process, &String::from_utf8_lossy(&pending));
    }
}

fn record(process: &Background, text: &str) {
    let text = crate::builtin::terminal::strip_ansi(text);
    {
        let mut out = process
            .output
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        out.push_str(&text);
        let excess = out.chars().count().saturating_sub(MAX_OUTPUT_CHARS);
        if excess > 0 {
            let cut = out.char_indices().nth(excess).map_or(out.len(), |(i, _)| i);
            out.drain(..cut);
        }
    }
    process.check_watch(&text);
}

fn exit_code_of(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

#[cfg(test)]
#[path = "processes_tests.rs"]
mod tests;
