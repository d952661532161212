//! The script's process: spawned in its own process group, its output captured
//! with bounded memory, killed (the whole group) on timeout or interrupt.

use hermes_state::numfmt::thousands;
use std::collections::VecDeque;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio_util::sync::CancellationToken;

/// Stdout kept in full up to this many bytes (the reference's `MAX_STDOUT_BYTES`).
pub const MAX_STDOUT_BYTES: usize = 50_000;
/// Stderr kept from its start up to this many bytes.
pub const MAX_STDERR_BYTES: usize = 10_000;
/// The first 40 % of the stdout budget keeps the start of the output…
const STDOUT_HEAD_BYTES: usize = MAX_STDOUT_BYTES * 2 / 5;
/// …and the rest keeps its end, where the final `print()` lands.
const STDOUT_TAIL_BYTES: usize = MAX_STDOUT_BYTES - STDOUT_HEAD_BYTES;
/// How long a script gets to exit after SIGTERM before SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(5);
/// How long to wait for the output pipes to drain once the process is gone.
const DRAIN_WAIT: Duration = Duration::from_secs(3);

/// What to run.
pub struct Spawn<'a> {
    /// The interpreter.
    pub python: &'a Path,
    /// The script file.
    pub script: &'a Path,
    /// Its working directory.
    pub cwd: &'a Path,
    /// Its complete environment.
    pub env: Vec<(String, String)>,
}

/// How the process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// It exited on its own.
    Exited,
    /// It ran past the timeout and was killed.
    Timeout,
    /// The turn was interrupted and it was killed.
    Interrupted,
}

/// What the process left behind.
#[derive(Debug)]
pub struct Outcome {
    /// How it ended.
    pub ending: Ending,
    /// Exit code; a signal N reads as -N, like Python's `returncode`.
    pub exit_code: Option<i32>,
    /// Captured stdout.
    pub stdout: HeadTail,
    /// Captured stderr (the first [`MAX_STDERR_BYTES`]).
    pub stderr: String,
}

/// Stdout with a bounded head and a rolling tail.
#[derive(Debug, Default)]
pub struct HeadTail {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: usize,
}

impl HeadTail {
    /// Adds a chunk: it fills the head first, then rolls through the tail.
    pub fn push(&mut self, mut data: &[u8]) {
        self.total += data.len();
        if self.head.len() < STDOUT_HEAD_BYTES {
            let keep = data.len().min(STDOUT_HEAD_BYTES - self.head.len());
            self.head.extend_from_slice(&data[..keep]);
            data = &data[keep..];
        }
        self.tail.extend(data);
        let excess = self.tail.len().saturating_sub(STDOUT_TAIL_BYTES);
        self.tail.drain(..excess);
    }

    /// The text the model sees plus the reference's truncation metadata.
    pub fn assemble(&self) -> (String, Map<String, Value>) {
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let captured = self.head.len() + tail.len();
        let total = self.total.max(captured);
        let omitted = total - captured;
        let truncated = omitted > 0;
        let text = if truncated {
            format!(
                "{}\n\n... [OUTPUT TRUNCATED - {} bytes omitted out of {} total] ...\n\n{}",
                String::from_utf8_lossy(&self.head),
                thousands(omitted as u64),
                thousands(total as u64),
                String::from_utf8_lossy(&tail)
            )
        } else {
            let mut all = self.head.clone();
            all.extend_from_slice(&tail);
            String::from_utf8_lossy(&all).into_owned()
        };
        let mut meta = Map::new();
        meta.insert("stdout_truncated".into(), json!(truncated));
        meta.insert("stdout_bytes_captured".into(), json!(captured));
        meta.insert("stdout_bytes_total".into(), json!(total));
        meta.insert("stdout_bytes_omitted".into(), json!(omitted));
        if truncated {
            meta.insert(
                "warning".into(),
                json!(
                    "execute_code stdout was truncated; the script did run, but only the captured \
                     head/tail output is included. Re-run only with narrower output if the omitted \
                     data is required."
                ),
            );
        }
        (text, meta)
    }
}

/// Runs the script until it exits, times out or `cancel` fires.
pub async fn run(
    spawn: Spawn<'_>,
    timeout: Duration,
    cancel: &CancellationToken,
) -> std::io::Result<Outcome> {
    let mut cmd = tokio::process::Command::new(spawn.python);
    cmd.arg(spawn.script)
        .current_dir(spawn.cwd)
        .env_clear()
        .envs(spawn.env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own group, so a kill reaches whatever the script spawned too.
        .process_group(0)
        .kill_on_drop(true);
    let mut child = cmd.spawn()?;
    let pid = child.id();

    let stdout = Arc::new(Mutex::new(HeadTail::default()));
    let stderr = Arc::new(Mutex::new(Vec::<u8>::new()));
    let mut readers = Vec::new();
    if let Some(out) = child.stdout.take() {
        let sink = Arc::clone(&stdout);
        readers.push(tokio::spawn(drain(out, move |chunk| {
            if let Ok(mut s) = sink.lock() {
                s.push(chunk);
            }
        })));
    }
    if let Some(err) = child.stderr.take() {
        let sink = Arc::clone(&stderr);
        readers.push(tokio::spawn(drain(err, move |chunk| {
            if let Ok(mut s) = sink.lock() {
                let keep = chunk.len().min(MAX_STDERR_BYTES.saturating_sub(s.len()));
                s.extend_from_slice(&chunk[..keep]);
            }
        })));
    }

    let (ending, status) = tokio::select! {
        status = child.wait() => (Ending::Exited, status.ok()),
        _ = tokio::time::sleep(timeout) => (Ending::Timeout, terminate(&mut child, pid).await),
        _ = cancel.cancelled() => (Ending::Interrupted, terminate(&mut child, pid).await),
    };
    // Background children may still hold the pipes open; the group goes with the script.
    signal_group(pid, nix::sys::signal::Signal::SIGKILL);
    for reader in readers {
        let _ = tokio::time::timeout(DRAIN_WAIT, reader).await;
    }

    let exit_code = status.map(exit_code_of);
    let stdout = std::mem::take(&mut *stdout.lock().map_err(|_| poisoned())?);
    let stderr = String::from_utf8_lossy(&stderr.lock().map_err(|_| poisoned())?).into_owned();
    Ok(Outcome {
        ending,
        exit_code,
        stdout,
        stderr,
    })
}

fn poisoned() -> std::io::Error {
    std::io::Error::other("output capture lock poisoned")
}

async fn drain(mut pipe: impl AsyncRead + Unpin, mut sink: impl FnMut(&[u8])) {
    let mut buf = vec![0u8; 8192];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => sink(&buf[..n]),
        }
    }
}

/// SIGTERM to the group, SIGKILL if it is still there after the grace period.
async fn terminate(
    child: &mut tokio::process::Child,
    pid: Option<u32>,
) -> Option<std::process::ExitStatus> {
    signal_group(pid, nix::sys::signal::Signal::SIGTERM);
    if let Ok(status) = tokio::time::timeout(KILL_GRACE, child.wait()).await {
        return status.ok();
    }
    signal_group(pid, nix::sys::signal::Signal::SIGKILL);
    child.wait().await.ok()
}

fn signal_group(pid: Option<u32>, signal: nix::sys::signal::Signal) {
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), signal);
    }
}

fn exit_code_of(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .unwrap_or_else(|| -status.signal().unwrap_or(0))
}
