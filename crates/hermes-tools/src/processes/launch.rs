//! Starting a background command on pipes or on a pseudo-terminal.

use std::io::Read;
use std::os::fd::OwnedFd;
use std::process::Stdio;
use std::sync::Arc;

use super::{Input, SpawnOptions, StdinMode, pty};

/// A started child and the ends the table keeps.
pub(super) struct Launched {
    pub child: tokio::process::Child,
    /// Its merged stdout and stderr.
    pub output: Box<dyn Read + Send>,
    pub input: Option<Input>,
    /// Why a terminal was asked for and pipes were given.
    pub terminal_error: Option<String>,
}

/// Starts `command` with `bash -c` as `opts` ask.
pub(super) fn launch(command: &str, opts: &SpawnOptions<'_>) -> Result<Launched, String> {
    if opts.stdin != StdinMode::Terminal {
        return on_pipes(command, opts, opts.stdin == StdinMode::Pipe);
    }
    match pty::open() {
        Ok(pair) => on_terminal(command, opts, pair),
        // As the reference does when ptyprocess fails: pipes, and a word why.
        Err(e) => Ok(Launched {
            terminal_error: Some(e),
            ..on_pipes(command, opts, true)?
        }),
    }
}

fn on_pipes(command: &str, opts: &SpawnOptions<'_>, with_stdin: bool) -> Result<Launched, String> {
    let (reader, writer) = std::io::pipe().map_err(|e| format!("pipe: {e}"))?;
    let writer_err = writer.try_clone().map_err(|e| format!("pipe: {e}"))?;
    let mut cmd = in_environment(&["bash", "-c", command], opts)?;
    cmd.stdin(if with_stdin {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::from(writer))
    .stderr(Stdio::from(writer_err))
    .env("TERM", "dumb")
    .process_group(0);
    prepare(&mut cmd, opts);
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("could not start bash: {e}"))?;
    // The pipe's write ends must live only in the child, or reading never ends.
    drop(cmd);
    let input = child.stdin.take().map(Input::Pipe);
    Ok(Launched {
        child,
        output: Box::new(reader),
        input,
        terminal_error: None,
    })
}

fn on_terminal(
    command: &str,
    opts: &SpawnOptions<'_>,
    pair: pty::Pair,
) -> Result<Launched, String> {
    // `setsid -c` gives the command its own session with the terminal as its
    // controlling one, as ptyprocess does: Ctrl-C written to it interrupts,
    // /dev/tty opens. Without `setsid` it still gets the terminal as its
    // streams, in its own process group.
    let child = match start_on(command, opts, &pair.slave, true) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            start_on(command, opts, &pair.slave, false)
        }
        started => started,
    }
    .map_err(|e| format!("could not start bash: {e}"))?;
    // The slave must live only in the child, or the master never sees the end.
    drop(pair.slave);
    let reader = pair.master.try_clone().map_err(|e| format!("dup: {e}"))?;
    Ok(Launched {
        child,
        output: Box::new(reader),
        input: Some(Input::Terminal {
            master: Arc::new(pair.master),
            at_line_start: true,
        }),
        terminal_error: None,
    })
}

pub(super) fn start_on(
    command: &str,
    opts: &SpawnOptions<'_>,
    slave: &OwnedFd,
    new_session: bool,
) -> std::io::Result<tokio::process::Child> {
    let [stdin, stdout, stderr] = pty::streams(slave).map_err(std::io::Error::other)?;
    let mut cmd = if new_session {
        // Not a group leader (no process_group), so setsid(2) succeeds in
        // place and the pid we hold is the command's, leader of its group.
        in_environment(&["setsid", "-c", "bash", "-c", command], opts)
            .map_err(std::io::Error::other)?
    } else {
        let mut cmd =
            in_environment(&["bash", "-c", command], opts).map_err(std::io::Error::other)?;
        cmd.process_group(0);
        cmd
    };
    cmd.stdin(stdin)
        .stdout(stdout)
        .stderr(stderr)
        .env("TERM", "xterm-256color");
    prepare(&mut cmd, opts);
    cmd.spawn()
}

/// `argv` as a process in the session's environment, starting in its directory.
fn in_environment(
    argv: &[&str],
    opts: &SpawnOptions<'_>,
) -> Result<tokio::process::Command, String> {
    let local = hermes_env::Local::default();
    let environment: &dyn hermes_env::Environment = opts.environment.unwrap_or(&local);
    environment
        .command(argv, opts.cwd)
        .map_err(|e| e.to_string())
}

/// What every background command gets: a quiet environment.
fn prepare(cmd: &mut tokio::process::Command, opts: &SpawnOptions<'_>) {
    cmd.env("PAGER", "cat")
        .env("GIT_PAGER", "cat")
        .env("PYTHONUNBUFFERED", "1");
    // Provider keys in the user's shell must not be one `printenv` away.
    for name in opts.hidden_env {
        cmd.env_remove(name);
    }
}
