//! `terminal`: run a shell command in the foreground and return its output.

use std::io::Read;
use std::process::Stdio;
use std::time::Duration;

use futures_util::future::BoxFuture;
use hermes_protocol::ToolSchema;
use serde_json::{Value, json};

use crate::approval::Decision;
use crate::processes::StdinMode;
use crate::truncate::head_tail;
use crate::{Tool, ToolContext, ToolError, ToolResult, arg_bool, arg_i64, arg_str, require_str};

/// Default foreground timeout in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = 180;
/// Largest foreground timeout the model may ask for.
pub const FOREGROUND_MAX_TIMEOUT_SECS: u64 = 600;
/// Output budget in bytes; longer output keeps 40 % head and 60 % tail.
pub const MAX_OUTPUT_BYTES: usize = 50_000;

/// Runs shell commands with `bash -c` in the session's working directory.
#[derive(Debug, Clone, Copy, Default)]
pub struct TerminalTool;

impl Tool for TerminalTool {
    fn name(&self) -> &str {
        "terminal"
    }

    fn toolset(&self) -> &str {
        "terminal"
    }

    fn emoji(&self) -> &str {
        "💻"
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "terminal".into(),
            description: "Run a shell command on this machine and return its combined stdout/stderr \
                and exit code. Use it for builds, tests, git, package managers and anything without \
                a dedicated tool; prefer read_file, search_files and patch for file work. Commands \
                run non-interactively (no stdin): pass flags such as -y. The call returns as soon \
                as the command exits; long output keeps its beginning and end.\n\
                Background: background=true starts the command and returns a session_id at once; \
                use it for servers, watchers and long builds, then process(action='poll'|'log'|'wait'|'kill'). \
                Add pty=true for interactive programs (REPLs, prompts) and talk to them with \
                process(action='submit'). Such processes end with the session."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The shell command to run."},
                    "background": {"type": "boolean", "description": "Run the command in the background and return its session_id at once; manage it with the process tool.", "default": false},
                    "timeout": {"type": "integer", "description": format!("Seconds to wait before killing the command (default {DEFAULT_TIMEOUT_SECS}, foreground maximum {FOREGROUND_MAX_TIMEOUT_SECS}). The call returns as soon as the command finishes, so a generous value costs nothing."), "minimum": 1},
                    "workdir": {"type": "string", "description": "Absolute directory to run in; defaults to the session's working directory."},
                    "pty": {"type": "boolean", "description": "With background=true: run it on a pseudo-terminal (30x120) for interactive programs such as a Python REPL or a CLI that prompts; send input with process(action='write'|'submit'), Ctrl-D with process(action='close').", "default": false},
                    "notify_on_complete": {"type": "boolean", "description": "With background=true: be told once, with its last output, when the process exits. The right choice for builds, tests and other bounded work. Not together with watch_patterns (they are then dropped).", "default": false},
                    "watch_patterns": {"type": "array", "items": {"type": "string"}, "description": "With background=true: strings whose appearance in the output you are told about (the matching lines), for rare one-off signals of a long-lived process such as 'Application startup complete'. At most one notification per 15 seconds per process; after 3 windows in a row with more matches than that, watching stops and you are told once at exit instead. Not for end-of-run markers or errors in loops: use notify_on_complete."}
                },
                "required": ["command"]
            }),
        }
    }

    fn max_result_chars(&self) -> usize {
        100_000
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let command = require_str(&args, "terminal", "command")?;
            if command.trim().is_empty() {
                return Err(ToolError::model(
                    "terminal: 'command' is empty. Pass the shell command to run.",
                ));
            }
            let background = arg_bool(&args, "background").unwrap_or(false);
            let timeout = match arg_i64(&args, "timeout") {
                None => DEFAULT_TIMEOUT_SECS,
                Some(t) if t < 1 => DEFAULT_TIMEOUT_SECS,
                Some(t) if t as u64 > FOREGROUND_MAX_TIMEOUT_SECS && !background => {
                    return Err(ToolError::model(format!(
                        "Foreground timeout {t}s exceeds the maximum of {FOREGROUND_MAX_TIMEOUT_SECS}s. \
                         Use a timeout of at most {FOREGROUND_MAX_TIMEOUT_SECS}s, or split the work."
                    )));
                }
                Some(t) => t as u64,
            };
            let workdir = match arg_str(&args, "workdir") {
                Some(w) if !w.trim().is_empty() => ctx.resolve(w),
                _ => ctx.cwd.clone(),
            };
            // Elsewhere (ssh) the directory is the remote host's; the shell says so.
            if ctx.env.is_host() && !workdir.is_dir() {
                return Err(ToolError::model(format!(
                    "terminal: workdir '{}' is not an existing directory. Create it first or pass another workdir.",
                    workdir.display()
                )));
            }
            // Every command passes the approval gate before it can touch the
            // machine, judged where it runs: from `workdir`, with the PATH the
            // shell it starts inherits from this process.
            let site = ctx.hook_site();
            let observers = (!ctx.hooks.is_empty()).then_some((ctx.hooks.as_ref(), site));
            let decision = if matches!(ctx.env.kind(), "local" | "sandbox") {
                let path = std::env::var_os("PATH")
                    .map(|p| std::env::split_paths(&p).collect())
                    .unwrap_or_default();
                let host =
                    crate::approval::Host::new(ctx.homes.home.clone(), Some(workdir.clone()), path);
                ctx.approvals
                    .check_observed(command, &host, observers)
                    .await
            } else {
                // Another machine's files are read there: a script the
                // command runs is judged by what it holds on that machine.
                let files = std::sync::Arc::new(crate::approval::EnvFiles(ctx.env.clone()));
                let host = crate::approval::Host::remote(None, Some(workdir.clone()), files);
                ctx.approvals
                    .check_observed(command, &host, observers)
                    .await
            };
            let note = match decision {
                Decision::Allow { note } => note,
                Decision::Refuse { result, status } => {
                    ctx.status(status);
                    return Ok(result);
                }
            };
            if background {
                return Ok(start_background(command, &workdir, &args, note, ctx));
            }
            let mut outcome =
                run_foreground(command, &workdir, Duration::from_secs(timeout), ctx).await?;
            transform_output(&mut outcome, command, ctx).await;
            if ctx.env.kind() == "ssh" && outcome.exit_code == hermes_env::SSH_FAILURE {
                // ssh's own failure status: say so, so a dead host is not read as the command's.
                outcome.output.push_str(
                    "\n[hermes] ssh exited 255: the connection to the remote host failed or was \
                     lost, so the command may not have run there. Nothing was run on this \
                     machine instead; the next command reconnects.",
                );
            }
            Ok(outcome.to_json(timeout, note))
        })
    }
}

/// Said when a background process will not announce its end.
const SILENT_HINT: &str = "This process runs in the background until it exits or the session ends; \
     nothing announces its end. Check on it with process(action='poll'), read its output with \
     process(action='log'), or block until it finishes with process(action='wait').";

/// Starts `command` in the background; the result names its session id.
/// Mirrors the reference's `terminal_tool` background branch: a session that
/// cannot be told later refuses `notify_on_complete`/`watch_patterns`, and
/// both together keep only `notify_on_complete`.
fn start_background(
    command: &str,
    workdir: &std::path::Path,
    args: &Value,
    approval: Option<String>,
    ctx: &ToolContext,
) -> String {
    let pty = arg_bool(args, "pty").unwrap_or(false);
    let pipe_only = pty && requires_pipe_stdin(command);
    let notify = arg_bool(args, "notify_on_complete").unwrap_or(false);
    let mut patterns = watch_patterns(args);
    let asked = notify || !patterns.is_empty();
    let announces = ctx.processes.announces();
    let conflict = announces && notify && !patterns.is_empty();
    if !announces || conflict {
        patterns.clear();
    }
    let opts = crate::processes::SpawnOptions {
        cwd: workdir,
        hidden_env: &ctx.hidden_env,
        stdin: match (pty, pipe_only) {
            (false, _) => StdinMode::Null,
            (true, true) => StdinMode::Pipe,
            (true, false) => StdinMode::Terminal,
        },
        notify: notify && announces,
        watch_patterns: &patterns,
        environment: Some(ctx.env.as_ref()),
    };
    let process = match ctx.processes.spawn(command, opts) {
        Ok(p) => p,
        Err(e) => {
            return json!({"output": "", "exit_code": -1, "error": format!("Failed to start background process: {e}")})
                .to_string();
        }
    };
    let mut value = json!({
        "output": "Background process started",
        "session_id": process.id,
        "pid": process.pid,
        "exit_code": 0,
        "error": null,
    });
    if let Some(note) = approval {
        value["approval"] = Value::String(note);
    }
    if pipe_only {
        value["pty_note"] = json!(
            "PTY disabled for this command because it expects piped stdin/EOF (for example gh \
             auth login --with-token). Write to it with process(action='write'|'submit'), then \
             call process(action='close') so it receives EOF."
        );
    } else if let Some(e) = &process.terminal_error {
        value["pty_note"] = json!(format!(
            "No pseudo-terminal could be opened ({e}): stdin is a pipe instead; send input with \
             process(action='submit'), end it with process(action='close')."
        ));
    }
    if !asked {
        value["hint"] = json!(SILENT_HINT);
    } else if !announces {
        value["notify_on_complete"] = json!(false);
        value["notify_unsupported"] = json!(
            "notify_on_complete / watch_patterns are not available in this session — it cannot \
             receive an announcement after this run ends (a one-shot run or an API request). The \
             process is running in the background; retrieve its result with \
             process(action='poll') or process(action='wait')."
        );
    } else {
        if conflict {
            value["watch_patterns_ignored"] = json!(
                "watch_patterns ignored because notify_on_complete=True; these two flags produce \
                 duplicate notifications when combined"
            );
        }
        if notify {
            value["notify_on_complete"] = json!(true);
        }
        if !patterns.is_empty() {
            value["watch_patterns"] = json!(process.watch_patterns());
        }
    }
    value.to_string()
}

/// The `watch_patterns` argument: a list of strings (one string is taken as
/// a list of one); empty strings would match everything and are dropped.
fn watch_patterns(args: &Value) -> Vec<String> {
    let patterns = match args.get("watch_patterns") {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        Some(Value::String(one)) => vec![one.clone()],
        _ => Vec::new(),
    };
    patterns.into_iter().filter(|p| !p.is_empty()).collect()
}

/// Commands that change behaviour on a terminal and wait for EOF on a pipe
/// (the reference's `_command_requires_pipe_stdin`).
fn requires_pipe_stdin(command: &str) -> bool {
    let normalized = command
        .to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    normalized.starts_with("gh auth login") && normalized.contains("--with-token")
}

/// How a foreground command ended.
struct Outcome {
    output: String,
    exit_code: i32,
    timed_out: bool,
}

impl Outcome {
    fn to_json(&self, timeout: u64, approval: Option<String>) -> String {
        let output = head_tail(strip_ansi(&self.output).trim_end(), MAX_OUTPUT_BYTES, 0.4);
        let error = self
            .timed_out
            .then(|| format!("Command timed out after {timeout} seconds"));
        let mut value = json!({"output": output, "exit_code": self.exit_code, "error": error});
        if let Some(note) = approval {
            value["approval"] = Value::String(note);
        }
        value.to_string()
    }
}

/// `transform_terminal_output` hooks: the first replacement of a foreground
/// command's output wins (before it is trimmed for the model).
async fn transform_output(outcome: &mut Outcome, command: &str, ctx: &ToolContext) {
    use crate::hooks::{HookEvent, object};
    if !ctx.hooks.wants(HookEvent::TransformTerminalOutput, None) {
        return;
    }
    let site = ctx.hook_site();
    let extra = object([
        ("command", json!(command)),
        ("output", json!(outcome.output)),
        ("returncode", json!(outcome.exit_code)),
        ("env_type", json!("local")),
    ]);
    let answers = ctx
        .hooks
        .fire(HookEvent::TransformTerminalOutput, site, None, extra)
        .await;
    if let Some(text) = answers
        .iter()
        .find_map(|a| a.get("result").and_then(Value::as_str))
    {
        outcome.output = text.to_owned();
    }
}

/// Variables every foreground command gets: no pager waits for a key.
const QUIET_VARS: &[(&str, &str)] = &[("PAGER", "cat"), ("GIT_PAGER", "cat"), ("TERM", "dumb")];

async fn run_foreground(
    command: &str,
    workdir: &std::path::Path,
    timeout: Duration,
    ctx: &ToolContext,
) -> Result<Outcome, ToolError> {
    if let Some(pool) = ctx.env.launchers()
        && let Some(outcome) = run_launched(pool, command, workdir, timeout, ctx).await?
    {
        return Ok(outcome);
    }
    run_spawned(command, workdir, timeout, ctx).await
}

/// Runs the command through one of the environment's launchers (see
/// `hermes_env::Launchers`); `None` when all are busy.
async fn run_launched(
    pool: &hermes_env::Launchers,
    command: &str,
    workdir: &std::path::Path,
    timeout: Duration,
    ctx: &ToolContext,
) -> Result<Option<Outcome>, ToolError> {
    let mut output = Bounded::default();
    // The launcher's own words (ssh's on a lost connection) follow the output.
    let mut said = Bounded::default();
    let job = hermes_env::Job {
        argv: &["bash", "-c", command],
        cwd: workdir,
        merge_stderr: true,
        vars: QUIET_VARS,
        unset: &ctx.hidden_env,
    };
    let (ended, timed_out) = {
        let mut to_output = |b: &[u8]| output.push(b);
        let mut to_said = |b: &[u8]| said.push(b);
        let run = pool.run(ctx.env.as_ref(), job, &mut to_output, &mut to_said);
        // Dropping the run kills the command and its group.
        tokio::select! {
            ended = run => (ended.map_err(|e| ToolError::model(format!("terminal: {e}")))?, false),
            _ = tokio::time::sleep(timeout) => (Some(hermes_env::Ended::Exited(124)), true),
            _ = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
        }
    };
    let exit_code = match ended {
        None => return Ok(None),
        Some(hermes_env::Ended::Exited(code)) => code,
        Some(hermes_env::Ended::LauncherDied(code)) => code,
    };
    let mut text = output.finish();
    let said = said.finish();
    if !said.trim().is_empty() {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&said);
    }
    Ok(Some(Outcome {
        output: text,
        exit_code,
        timed_out,
    }))
}

/// Runs the command as a process of its own.
async fn run_spawned(
    command: &str,
    workdir: &std::path::Path,
    timeout: Duration,
    ctx: &ToolContext,
) -> Result<Outcome, ToolError> {
    let (reader, writer) = std::io::pipe().map_err(|e| ToolError::Fatal(format!("pipe: {e}")))?;
    let writer_err = writer
        .try_clone()
        .map_err(|e| ToolError::Fatal(format!("pipe: {e}")))?;
    let mut cmd = ctx
        .env
        .command(&["bash", "-c", command], workdir)
        .map_err(|e| ToolError::model(format!("terminal: {e}")))?;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::from(writer))
        .stderr(Stdio::from(writer_err))
        .envs(QUIET_VARS.iter().copied())
        .process_group(0)
        .kill_on_drop(true);
    // Provider keys in the user's shell must not be one `printenv` away.
    for name in ctx.hidden_env.iter() {
        cmd.env_remove(name);
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| ToolError::model(format!("terminal: could not start bash: {e}")))?;
    // The command's pipe writers now live only in the child (and its children);
    // `cmd` holds the parent's copies, so drop it before reading to see EOF.
    drop(cmd);
    let pid = child.id();
    let collector = tokio::task::spawn_blocking(move || collect(reader));

    let (exit_code, timed_out) = tokio::select! {
        status = child.wait() => {
            let status = status.map_err(|e| ToolError::Fatal(format!("wait: {e}")))?;
            (exit_code_of(status), false)
        }
        _ = tokio::time::sleep(timeout) => {
            kill_group(pid);
            let _ = child.wait().await;
            (124, true)
        }
        _ = ctx.cancel.cancelled() => {
            kill_group(pid);
            let _ = child.wait().await;
            return Err(ToolError::Cancelled);
        }
    };
    // Background children of the command may keep the pipe open; kill the group
    // once the shell itself is gone so reading finishes.
    kill_group(pid);
    let output = collector
        .await
        .map_err(|e| ToolError::Fatal(format!("reader: {e}")))?;
    Ok(Outcome {
        output,
        exit_code,
        timed_out,
    })
}

/// Reads the merged output, keeping memory bounded (see [`Bounded`]).
fn collect(mut reader: std::io::PipeReader) -> String {
    let mut kept = Bounded::default();
    let mut buf = [0u8; 8192];
    loop {
        match reader.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => kept.push(&buf[..n]),
        }
    }
    kept.finish()
}

/// Output kept in bounded memory: the first and last `2 * MAX_OUTPUT_BYTES`
/// bytes survive, the middle is counted.
#[derive(Default)]
struct Bounded {
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    dropped: usize,
}

impl Bounded {
    const KEEP: usize = 2 * MAX_OUTPUT_BYTES;

    fn push(&mut self, mut chunk: &[u8]) {
        if self.head.len() < Self::KEEP {
            let take = (Self::KEEP - self.head.len()).min(chunk.len());
            self.head.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
        self.tail.extend(chunk);
        if self.tail.len() > Self::KEEP {
            let extra = self.tail.len() - Self::KEEP;
            self.tail.drain(..extra);
            self.dropped += extra;
        }
    }

    fn finish(self) -> String {
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        if self.dropped > 0 {
            text.push_str(&format!(
                "\n... [{} bytes of output not kept] ...\n",
                self.dropped
            ));
        }
        let tail: Vec<u8> = self.tail.into_iter().collect();
        text.push_str(&String::from_utf8_lossy(&tail));
        text
    }
}

fn exit_code_of(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

fn kill_group(pid: Option<u32>) {
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        let _ =
            nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), nix::sys::signal::SIGKILL);
    }
}

/// Removes ANSI escape sequences so the model never copies them into files.
pub fn strip_ansi(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\u{1b}') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            Some('[') => {
                chars.next();
                // CSI: parameters then one final byte in @..~
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') => {
                chars.next();
                // OSC: until BEL or ESC \
                while let Some(c) = chars.next() {
                    if c == '\u{7}' || (c == '\u{1b}' && chars.peek() == Some(&'\\')) {
                        if c == '\u{1b}' {
                            chars.next();
                        }
                        break;
                    }
                }
            }
            Some(_) => {
                chars.next();
            }
            None => {}
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
#[path = "terminal_tests.rs"]
mod tests;
