//! Long-lived shells inside an environment that start commands on request.
//! Starting a process in a sandbox, over ssh or in a container costs a
//! namespace entry, a session on the connection or an exec call, and a
//! remote login shell reads its rc files first; a shell kept running there
//! pays that once. Each command still gets a process of its own (a
//! subshell in its own process group, killed with its children when it
//! ends), no input, and the directory and variables it asks for. Its output
//! comes back between marks that carry a random token no command can know.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};

use crate::{EnvError, Environment};

/// Launchers one environment keeps at most (each is a session on an ssh
/// connection, whose server allows ten by default); past it, commands start
/// the slow way.
const MAX_LIVE: usize = 4;

/// How long a new launcher may take to answer (an ssh login included).
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// The shell the launcher runs: bash where there is one, as it can give
/// each command its own process group; else the POSIX shell.
const BOOT: &str = "command -v bash >/dev/null 2>&1 && exec bash --noprofile --norc -s; exec sh -s";

/// A command for a launcher.
#[derive(Debug, Clone, Copy)]
pub struct Job<'a> {
    /// The program and its arguments.
    pub argv: &'a [&'a str],
    /// Where it starts (`~`, `~/…` and empty mean the home directory).
    pub cwd: &'a Path,
    /// Send its stderr where its stdout goes.
    pub merge_stderr: bool,
    /// Variables set for it.
    pub vars: &'a [(&'a str, &'a str)],
    /// Variables it must not see (also kept from the launcher itself).
    pub unset: &'a [String],
}

/// How a launched command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// It exited with this status (128 + N when signal N killed it).
    Exited(i32),
    /// The launcher died (a lost connection, a removed container) with this
    /// status; what it said is in the stderr sink.
    LauncherDied(i32),
}

/// Idle launchers one environment keeps (more are closed as they finish).
const MAX_IDLE: usize = 2;

/// How long a launcher may sit idle before it is closed: a session that
/// went quiet holds no processes (or ssh sessions) for long.
const IDLE_LIMIT: Duration = Duration::from_secs(120);

/// The launchers of one environment: idle ones wait for the next command.
#[derive(Debug, Default)]
pub struct Launchers {
    shared: Arc<Shared>,
    /// Variables no launcher of this environment may carry (credentials):
    /// a command could read a long-lived process's environment.
    hidden: Vec<String>,
}

/// What the pool and its idle sweeper share.
#[derive(Debug, Default)]
struct Shared {
    idle: Mutex<Vec<Idle>>,
    live: AtomicUsize,
    /// Whether a sweeper task is closing stale idle launchers.
    sweeping: AtomicBool,
}

/// A launcher waiting, and since when.
#[derive(Debug)]
struct Idle {
    launcher: Launcher,
    since: Instant,
}

impl Launchers {
    /// An empty pool; launchers start on first use.
    pub fn new() -> Self {
        Self::default()
    }

    /// A pool whose launchers never carry the variables `hidden`.
    pub fn hiding(hidden: Vec<String>) -> Self {
        Self {
            hidden,
            ..Self::default()
        }
    }

    /// Runs `job` in `env` through a launcher, handing what it prints to the
    /// sinks. `None` when every launcher is busy (the caller starts the
    /// command itself). Dropping the future kills the command.
    pub async fn run(
        &self,
        env: &dyn Environment,
        job: Job<'_>,
        stdout: &mut (dyn FnMut(&[u8]) + Send),
        stderr: &mut (dyn FnMut(&[u8]) + Send),
    ) -> Result<Option<Ended>, EnvError> {
        let script = job_script(&job)?;
        let mut retried = false;
        loop {
            let (launcher, reused) = match self.take(env, &job, stderr).await? {
                Taken::Busy => return Ok(None),
                Taken::Died(ended) => return Ok(Some(ended)),
                Taken::Idle(l) => (l, true),
                Taken::New(l) => (l, false),
            };
            let mut running = Running {
                pool: self,
                env,
                launcher: Some(launcher),
                pid: None,
                done: false,
            };
            let (mut out_seen, mut err_seen) = (false, false);
            let ended = running
                .finish(
                    &script,
                    job.merge_stderr,
                    &mut |b| {
                        out_seen = true;
                        stdout(b)
                    },
                    &mut |b| {
                        err_seen = true;
                        stderr(b)
                    },
                )
                .await?;
            running.done = true;
            match (ended, running.launcher.take()) {
                (Ended::Exited(_), Some(l)) => self.put_back(l),
                // An idle launcher that died unseen before the command began
                // (a connection dropped while idle): once more on a new one.
                (Ended::LauncherDied(_), _)
                    if reused && !retried && running.pid.is_none() && !out_seen && !err_seen =>
                {
                    retried = true;
                    continue;
                }
                _ => {}
            }
            return Ok(Some(ended));
        }
    }

    /// An idle launcher, or a new one.
    async fn take(
        &self,
        env: &dyn Environment,
        job: &Job<'_>,
        stderr: &mut (dyn FnMut(&[u8]) + Send),
    ) -> Result<Taken, EnvError> {
        loop {
            let idle = self.shared.idle.lock().ok().and_then(|mut v| v.pop());
            let Some(Idle {
                launcher: mut l, ..
            }) = idle
            else {
                break;
            };
            // One started with a variable this job must not see is retired.
            let clean = job.unset.iter().all(|n| l.removed.contains(n));
            if clean && l.child.try_wait().ok().flatten().is_none() {
                return Ok(Taken::Idle(l));
            }
            self.forget();
        }
        if self.shared.live.fetch_add(1, Ordering::SeqCst) >= MAX_LIVE {
            self.forget();
            return Ok(Taken::Busy);
        }
        let mut unset: Vec<String> = self.hidden.clone();
        unset.extend(job.unset.iter().cloned());
        match Launcher::start(env, &unset, stderr).await {
            Ok(Ok(l)) => Ok(Taken::New(l)),
            Ok(Err(died)) => {
                self.forget();
                Ok(Taken::Died(died))
            }
            Err(e) => {
                self.forget();
                Err(e)
            }
        }
    }

    fn put_back(&self, launcher: Launcher) {
        let Ok(mut idle) = self.shared.idle.lock() else {
            self.forget();
            return;
        };
        idle.push(Idle {
            launcher,
            since: Instant::now(),
        });
        if idle.len() > MAX_IDLE {
            // The oldest goes (its process is killed as it drops).
            idle.remove(0);
            self.forget();
        }
        if !self.shared.sweeping.swap(true, Ordering::SeqCst) {
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => {
                    runtime.spawn(sweep(Arc::downgrade(&self.shared)));
                }
                Err(_) => self.shared.sweeping.store(false, Ordering::SeqCst),
            }
        }
    }

    fn forget(&self) {
        self.shared.live.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Closes launchers idle past [`IDLE_LIMIT`], until none is idle or the
/// pool is gone.
async fn sweep(shared: std::sync::Weak<Shared>) {
    loop {
        tokio::time::sleep(IDLE_LIMIT / 4).await;
        let Some(shared) = shared.upgrade() else {
            return;
        };
        if !close_stale(&shared) {
            return;
        }
    }
}

/// Closes the launchers idle too long; `false` (and no longer sweeping)
/// once none is idle.
fn close_stale(shared: &Shared) -> bool {
    let Ok(mut idle) = shared.idle.lock() else {
        return false;
    };
    let before = idle.len();
    idle.retain(|i| i.since.elapsed() < IDLE_LIMIT);
    shared.live.fetch_sub(before - idle.len(), Ordering::SeqCst);
    if idle.is_empty() {
        shared.sweeping.store(false, Ordering::SeqCst);
        return false;
    }
    true
}

/// What [`Launchers::take`] found.
enum Taken {
    /// Every launcher is busy.
    Busy,
    /// One that ran commands before.
    Idle(Launcher),
    /// One just started.
    New(Launcher),
    /// A new one died starting (its words went to the stderr sink).
    Died(Ended),
}

/// One long-lived shell.
#[derive(Debug)]
struct Launcher {
    child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
    stderr: ChildStderr,
    out_marks: Marks,
    err_marks: Marks,
    /// The variables removed from its environment when it started.
    removed: std::collections::HashSet<String>,
}

impl Launcher {
    /// Starts a launcher and waits for its first marks. `Ok(Err(_))` when
    /// it died before answering (ssh could not connect, bwrap refused).
    async fn start(
        env: &dyn Environment,
        unset: &[String],
        stderr: &mut (dyn FnMut(&[u8]) + Send),
    ) -> Result<Result<Self, Ended>, EnvError> {
        let mut cmd = env.command(&["sh", "-c", BOOT], Path::new("/"))?;
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        for name in unset {
            cmd.env_remove(name);
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| EnvError::Io(format!("{}: cannot start: {e}", env.kind())))?;
        let (Some(stdin), Some(stdout), Some(err)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(EnvError::Io(format!(
                "{}: no pipes to the launcher",
                env.kind()
            )));
        };
        let tag = fresh_tag();
        let mut launcher = Self {
            child,
            stdin,
            stdout,
            stderr: err,
            out_marks: Marks::new(&tag),
            err_marks: Marks::new(&tag),
            removed: unset.iter().cloned().collect(),
        };
        // fd 3 keeps the launcher's stderr for the commands, while the shell's
        // own job notices ("Killed") go nowhere.
        let hello = format!(
            "exec 3>&2\nset -m 2>/dev/null\n__bash=${{BASH_VERSION:+y}}\n__tag=$(printf '{tag}')\n\
             printf '%sR 0\\n' \"$__tag\"\nprintf '%sE\\n' \"$__tag\" >&2\n",
            tag = tag.printf
        );
        // What an rc file prints before the first marks is not a command's;
        // it matters only when the launcher dies.
        let mut said = Vec::new();
        let answered = tokio::time::timeout(
            START_TIMEOUT,
            launcher.exchange(
                &hello,
                true,
                &mut |_| {},
                &mut |b| said.extend_from_slice(b),
                &mut |_| {},
            ),
        )
        .await;
        match answered {
            Ok(Ok(Some(_))) => Ok(Ok(launcher)),
            Ok(Ok(None)) | Ok(Err(_)) => {
                stderr(&said);
                Ok(Err(Ended::LauncherDied(launcher.status().await)))
            }
            Err(_) => Err(EnvError::Io(format!(
                "{}: the environment did not answer within {}s",
                env.kind(),
                START_TIMEOUT.as_secs()
            ))),
        }
    }

    /// Sends `script` and reads its streams up to their end marks (stderr's
    /// only when `marks_stderr`: a job whose stderr is merged marks none):
    /// the exit status, or `None` when the launcher's output ended first.
    async fn exchange(
        &mut self,
        script: &str,
        marks_stderr: bool,
        stdout: &mut (dyn FnMut(&[u8]) + Send),
        stderr: &mut (dyn FnMut(&[u8]) + Send),
        on_pid: &mut (dyn FnMut(u32) + Send),
    ) -> std::io::Result<Option<i32>> {
        self.stdin.write_all(script.as_bytes()).await?;
        self.stdin.flush().await?;
        let mut status = None;
        let mut out_done = false;
        let mut err_done = !marks_stderr;
        let read = {
            let read_out =
                read_to_mark(&mut self.stdout, &mut self.out_marks, |piece| match piece {
                    Piece::Data(d) => stdout(d),
                    Piece::Mark(m) => {
                        if let Some(pid) = m.strip_prefix("P ").and_then(|p| p.trim().parse().ok())
                        {
                            on_pid(pid);
                        } else if let Some(rc) = m.strip_prefix("R ") {
                            status = rc.trim().parse().ok();
                            out_done = true;
                        }
                    }
                });
            let read_err =
                read_to_mark(&mut self.stderr, &mut self.err_marks, |piece| match piece {
                    Piece::Data(d) => stderr(d),
                    Piece::Mark(m) => {
                        if m == "E" {
                            err_done = true;
                        }
                    }
                });
            let reads = async {
                if marks_stderr {
                    let (a, b) = tokio::join!(read_out, read_err);
                    a.and(b)
                } else {
                    read_out.await
                }
            };
            tokio::pin!(reads);
            tokio::select! {
                biased;
                r = &mut reads => r,
                _ = self.child.wait() => {
                    // The launcher is gone. What it wrote last is still in the
                    // pipes, but a command it started may hold them open.
                    tokio::time::timeout(Duration::from_millis(200), &mut reads)
                        .await
                        .unwrap_or(Ok(()))
                }
            }
        };
        read?;
        let status = status.filter(|_| out_done && err_done);
        if status.is_none() {
            if !marks_stderr {
                let _ = tokio::time::timeout(
                    Duration::from_millis(200),
                    read_to_mark(&mut self.stderr, &mut self.err_marks, |piece| {
                        if let Piece::Data(d) = piece {
                            stderr(d)
                        }
                    }),
                )
                .await;
            }
            // Its last words, held back in case they began a mark.
            self.out_marks.flush(&mut |p| {
                if let Piece::Data(d) = p {
                    stdout(d)
                }
            });
            self.err_marks.flush(&mut |p| {
                if let Piece::Data(d) = p {
                    stderr(d)
                }
            });
        }
        Ok(status)
    }

    /// The launcher's exit status once it is gone (-1 when unknown).
    async fn status(&mut self) -> i32 {
        match tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await {
            Ok(Ok(s)) => s.code().unwrap_or(-1),
            _ => {
                let _ = self.child.start_kill();
                -1
            }
        }
    }
}

/// Reads `reader` until a mark ends the command's part of the stream (an
/// `R` or `E` mark) or the stream ends.
async fn read_to_mark(
    reader: &mut (impl AsyncRead + Unpin),
    marks: &mut Marks,
    mut on: impl FnMut(Piece<'_>),
) -> std::io::Result<()> {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        // Marks already read (with the previous chunk) count first.
        if marks.drain(&mut on) {
            return Ok(());
        }
        let n = reader.read(&mut buf).await?;
        if n == 0 {
            marks.flush(&mut on);
            return Ok(());
        }
        marks.push(&buf[..n]);
    }
}

/// A command in flight: killed if its future is dropped before the end.
struct Running<'a> {
    pool: &'a Launchers,
    env: &'a dyn Environment,
    launcher: Option<Launcher>,
    pid: Option<u32>,
    done: bool,
}

impl Running<'_> {
    async fn finish(
        &mut self,
        script: &str,
        merged: bool,
        stdout: &mut (dyn FnMut(&[u8]) + Send),
        stderr: &mut (dyn FnMut(&[u8]) + Send),
    ) -> Result<Ended, EnvError> {
        // The pid is kept where `drop` finds it while the command runs.
        let Self { launcher, pid, .. } = self;
        let Some(launcher) = launcher.as_mut() else {
            return Err(EnvError::Io("no launcher".into()));
        };
        let result = launcher
            .exchange(script, !merged, stdout, stderr, &mut |p| *pid = Some(p))
            .await;
        match result {
            Ok(Some(status)) => Ok(Ended::Exited(status)),
            Ok(None) | Err(_) => {
                let status = launcher.status().await;
                self.launcher = None;
                self.pool.forget();
                // Its command may outlive it (a sandbox's job holds the pipes).
                if let Some(pid) = self.pid {
                    kill_group(self.env, pid);
                }
                Ok(Ended::LauncherDied(status))
            }
        }
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        if self.launcher.take().is_some() {
            self.pool.forget();
        }
        // The launcher dies with its handle; the command, in its own group
        // inside the environment, is killed there.
        if let Some(pid) = self.pid {
            kill_group(self.env, pid);
        }
    }
}

/// Kills process group `pid` inside `env`, without waiting.
fn kill_group(env: &dyn Environment, pid: u32) {
    let group = format!("-{pid}");
    if let Ok(mut cmd) = env.command(&["kill", "-KILL", "--", &group], Path::new("/")) {
        let spawned = cmd
            .as_std_mut()
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        if let Ok(mut child) = spawned {
            std::thread::spawn(move || child.wait());
        }
    }
}

/// The shell text that runs `job` and marks its end.
fn job_script(job: &Job<'_>) -> Result<String, EnvError> {
    let quote = |w: &str| {
        shlex::try_quote(w)
            .map(|q| q.into_owned())
            .map_err(|_| EnvError::Io("a command word holds a NUL byte".into()))
    };
    let mut body = String::new();
    for name in job.unset.iter().filter(|n| is_name(n)) {
        body.push_str(&format!("unset {name}; "));
    }
    for (name, value) in job.vars.iter().filter(|(n, _)| is_name(n)) {
        body.push_str(&format!("export {name}={}; ", quote(value)?));
    }
    let dir = job.cwd.to_string_lossy();
    if dir.is_empty() || dir == "~" {
        body.push_str("cd || exit 1; ");
    } else if let Some(rest) = dir.strip_prefix("~/") {
        body.push_str(&format!("cd ~/{} || exit 1; ", quote(rest)?));
    } else {
        body.push_str(&format!("cd {} || exit 1; ", quote(&dir)?));
    }
    let words: Result<Vec<String>, EnvError> = job.argv.iter().map(|w| quote(w)).collect();
    let exec = format!("exec {}", words?.join(" "));
    match job.argv {
        // A bash script runs in the launcher's own fork when it is bash: the
        // same shell, one exec fewer. Not one that reads `$$`, which in a
        // fork still names the launcher.
        [bash, "-c", script]
            if matches!(*bash, "bash" | "/bin/bash" | "/usr/bin/bash")
                && !script.contains("$$") =>
        {
            let inline = quote(&format!(" {script}"))?;
            body.push_str(&format!(
                "if [ \"$__bash\" = y ]; then eval {inline}; else {exec}; fi"
            ));
        }
        _ => body.push_str(&exec),
    }
    let (streams, err_mark) = if job.merge_stderr {
        ("2>&1", "")
    } else {
        ("2>&3", "printf '%sE\\n' \"$__tag\" >&2\n")
    };
    Ok(format!(
        "{{ ( {body}\n) </dev/null {streams} 3>&- & __hp=$!\nprintf '%sP %s\\n' \"$__tag\" \"$__hp\"\n\
         wait \"$__hp\"; __hr=$?; kill -KILL -- \"-$__hp\"; }} 2>/dev/null\n\
         printf '%sR %s\\n' \"$__tag\" \"$__hr\"\n{err_mark}"
    ))
}

fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A launcher's mark prefix: as bytes in the stream, and as printf writes it.
struct Tag {
    bytes: Vec<u8>,
    printf: String,
}

fn fresh_tag() -> Tag {
    // Unguessable, so a command's output cannot forge the launcher's marks.
    let hex = uuid::Uuid::new_v4().simple().to_string();
    Tag {
        bytes: format!("\x1eHERMES-{hex} ").into_bytes(),
        printf: format!("\\036HERMES-{hex} "),
    }
}

/// What the stream holds between marks.
enum Piece<'a> {
    Data(&'a [u8]),
    Mark(&'a str),
}

/// Splits a launcher's stream into a command's bytes and the launcher's marks.
#[derive(Debug)]
struct Marks {
    tag: Vec<u8>,
    held: Vec<u8>,
}

impl Marks {
    fn new(tag: &Tag) -> Self {
        Self {
            tag: tag.bytes.clone(),
            held: Vec::new(),
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        self.held.extend_from_slice(bytes);
    }

    /// Hands on what is held; `true` once an `R` or `E` mark went by (the
    /// bytes after it stay held for the next command).
    fn drain(&mut self, on: &mut impl FnMut(Piece<'_>)) -> bool {
        loop {
            let Some(at) = find(&self.held, &self.tag) else {
                // Keep what could be the start of a mark.
                let keep = (self.tag.len() - 1).min(self.held.len());
                let cut = self.held.len() - keep;
                if cut > 0 {
                    on(Piece::Data(&self.held[..cut]));
                    self.held.drain(..cut);
                }
                return false;
            };
            if at > 0 {
                on(Piece::Data(&self.held[..at]));
                self.held.drain(..at);
            }
            let Some(nl) = self.held.iter().position(|b| *b == b'\n') else {
                return false;
            };
            let text = String::from_utf8_lossy(&self.held[self.tag.len()..nl]).into_owned();
            self.held.drain(..=nl);
            on(Piece::Mark(&text));
            if text.starts_with('R') || text == "E" {
                return true;
            }
        }
    }

    /// Hands on everything held (the stream ended).
    fn flush(&mut self, on: &mut impl FnMut(Piece<'_>)) {
        if !self.held.is_empty() {
            on(Piece::Data(&self.held));
            self.held.clear();
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
#[path = "launcher_tests.rs"]
mod tests;
