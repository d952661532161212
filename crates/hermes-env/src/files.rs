//! File operations as commands inside an environment (the reference's way
//! for backends that are not the local host): what the file tools read and
//! write is exactly what the model's commands see there. Paths are passed
//! as arguments, never spliced into the script.

use std::io;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::{EnvError, Environment};

/// How long one file operation may take.
const FILE_TIMEOUT: Duration = Duration::from_secs(60);

/// A command run to completion.
#[derive(Debug, Clone, Default)]
pub struct Output {
    /// Its exit status (-1 when killed by a signal).
    pub status: i32,
    /// What it printed.
    pub stdout: Vec<u8>,
    /// What it said on stderr.
    pub stderr: String,
}

/// Runs `argv` in `env` from `cwd`, feeding `stdin`, within `timeout`.
pub async fn run(
    env: &dyn Environment,
    argv: &[&str],
    cwd: &Path,
    stdin: Option<&[u8]>,
    timeout: Duration,
) -> Result<Output, EnvError> {
    let launched = match (stdin, env.launchers()) {
        (None, Some(pool)) => run_launched(pool, env, argv, cwd, timeout).await?,
        _ => None,
    };
    let (status, stdout, stderr) = match launched {
        Some(done) => done,
        None => run_spawned(env, argv, cwd, stdin, timeout).await?,
    };
    let stderr = String::from_utf8_lossy(&stderr).trim().to_owned();
    if env.kind() == "ssh" && status == crate::ssh::SSH_FAILURE {
        return Err(EnvError::Unreachable(format!(
            "ssh: the host cannot be reached ({stderr}). Nothing was run locally; check that \
             the host is up and terminal.ssh_* in config.yaml."
        )));
    }
    Ok(Output {
        status,
        stdout,
        stderr,
    })
}

type Finished = (i32, Vec<u8>, Vec<u8>);

fn timed_out(env: &dyn Environment, timeout: Duration) -> EnvError {
    EnvError::Io(format!(
        "{}: timed out after {}s",
        env.kind(),
        timeout.as_secs()
    ))
}

/// Runs `argv` through one of the environment's launchers; `None` when all
/// are busy.
async fn run_launched(
    pool: &crate::Launchers,
    env: &dyn Environment,
    argv: &[&str],
    cwd: &Path,
    timeout: Duration,
) -> Result<Option<Finished>, EnvError> {
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let job = crate::Job {
        argv,
        cwd,
        merge_stderr: false,
        vars: &[],
        unset: &[],
    };
    let ended = tokio::time::timeout(
        timeout,
        pool.run(env, job, &mut |b| stdout.extend_from_slice(b), &mut |b| {
            stderr.extend_from_slice(b)
        }),
    )
    .await
    .map_err(|_| timed_out(env, timeout))??;
    Ok(ended.map(|ended| {
        let status = match ended {
            crate::Ended::Exited(s) | crate::Ended::LauncherDied(s) => s,
        };
        (status, stdout, stderr)
    }))
}

/// Runs `argv` as a process of its own.
async fn run_spawned(
    env: &dyn Environment,
    argv: &[&str],
    cwd: &Path,
    stdin: Option<&[u8]>,
    timeout: Duration,
) -> Result<Finished, EnvError> {
    let mut cmd = env.command(argv, cwd)?;
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .kill_on_drop(true);
    let mut child = cmd
        .spawn()
        .map_err(|e| EnvError::Io(format!("{}: cannot start: {e}", env.kind())))?;
    if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(bytes)
            .await
            .map_err(|e| EnvError::Io(format!("{}: writing input: {e}", env.kind())))?;
        drop(pipe);
    }
    let mut out = child.stdout.take();
    let mut err = child.stderr.take();
    let collect = async {
        let mut stdout = Vec::new();
        let mut stderr = Vec::new();
        // Both at once: a child that fills one pipe while we wait on the
        // other would never finish.
        let read_out = async {
            if let Some(o) = out.as_mut() {
                let _ = o.read_to_end(&mut stdout).await;
            }
        };
        let read_err = async {
            if let Some(e) = err.as_mut() {
                let _ = e.read_to_end(&mut stderr).await;
            }
        };
        tokio::join!(read_out, read_err);
        let status = child.wait().await;
        (stdout, stderr, status)
    };
    let (stdout, stderr, status) = tokio::time::timeout(timeout, collect)
        .await
        .map_err(|_| timed_out(env, timeout))?;
    let status = status
        .map_err(|e| EnvError::Io(format!("{}: wait: {e}", env.kind())))?
        .code()
        .unwrap_or(-1);
    Ok((status, stdout, stderr))
}

fn io_error(e: EnvError) -> io::Error {
    io::Error::other(e.to_string())
}

fn path_arg(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Runs the shell `script` with `path` as `$1` (never spliced into the text).
async fn script_on(
    env: &dyn Environment,
    script: &str,
    path: &Path,
    cwd: &Path,
    stdin: Option<&[u8]>,
) -> io::Result<Output> {
    let p = path_arg(path);
    run(
        env,
        &["sh", "-c", script, "sh", &p],
        cwd,
        stdin,
        FILE_TIMEOUT,
    )
    .await
    .map_err(io_error)
}

/// What a path is in the environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file (or something else that is not a directory).
    File,
    /// A directory.
    Dir,
}

/// What `path` is, `None` when it does not exist.
pub async fn stat(env: &dyn Environment, path: &Path, cwd: &Path) -> io::Result<Option<Kind>> {
    let script =
        r#"if [ -d "$1" ]; then echo dir; elif [ -e "$1" ]; then echo file; else echo none; fi"#;
    let out = script_on(env, script, path, cwd, None).await?;
    Ok(match String::from_utf8_lossy(&out.stdout).trim() {
        "dir" => Some(Kind::Dir),
        "file" => Some(Kind::File),
        _ => None,
    })
}

/// The bytes of `path`.
pub async fn read(env: &dyn Environment, path: &Path, cwd: &Path) -> io::Result<Vec<u8>> {
    let script = r#"if [ -d "$1" ]; then exit 21; elif [ ! -e "$1" ]; then exit 2; elif [ ! -r "$1" ]; then exit 13; fi; exec cat -- "$1""#;
    let out = script_on(env, script, path, cwd, None).await?;
    match out.status {
        0 => Ok(out.stdout),
        2 => Err(io::Error::new(io::ErrorKind::NotFound, "no such file")),
        21 => Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "is a directory",
        )),
        13 => Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "permission denied",
        )),
        _ => Err(io::Error::other(out.stderr)),
    }
}

/// Replaces `path` with `bytes` (a temporary file renamed over it, so a
/// reader never sees half of it); `true` when its directory was created.
pub async fn write(
    env: &dyn Environment,
    path: &Path,
    bytes: &[u8],
    cwd: &Path,
) -> io::Result<bool> {
    let script = r#"d=$(dirname -- "$1"); made=0
if [ ! -d "$d" ]; then mkdir -p -- "$d" || exit 1; made=1; fi
t="$1.hermes-tmp.$$"
if cat > "$t" && mv -f -- "$t" "$1"; then echo "$made"; else rm -f -- "$t"; exit 1; fi"#;
    let out = script_on(env, script, path, cwd, Some(bytes)).await?;
    if out.status != 0 {
        let why = if out.stderr.is_empty() {
            format!("exit status {}", out.status)
        } else {
            out.stderr
        };
        return Err(io::Error::other(why));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim() == "1")
}

/// Removes `path` (a missing file is not an error).
pub async fn remove(env: &dyn Environment, path: &Path, cwd: &Path) -> io::Result<()> {
    let p = path_arg(path);
    let out = run(env, &["rm", "-f", "--", &p], cwd, None, FILE_TIMEOUT)
        .await
        .map_err(io_error)?;
    if out.status == 0 {
        Ok(())
    } else {
        Err(io::Error::other(out.stderr))
    }
}

/// One `grep` hit: file, line number, line.
pub type Hit = (String, u64, String);

/// Lines matching the extended regex `pattern` under `root` (files named
/// like `include` when given), at most `limit`. `find` picks the files
/// (skipping `.git` and `node_modules`) and `grep -nHE` reads them: options
/// BusyBox's grep has too, so minimal images work.
pub async fn grep(
    env: &dyn Environment,
    pattern: &str,
    root: &Path,
    include: Option<&str>,
    limit: usize,
    cwd: &Path,
) -> io::Result<Vec<Hit>> {
    let r = path_arg(root);
    let mut argv = vec![
        "find",
        &r,
        "(",
        "-name",
        ".git",
        "-o",
        "-name",
        "node_modules",
        ")",
        "-prune",
        "-o",
        "-type",
        "f",
    ];
    if let Some(glob) = include {
        argv.extend(["-name", glob]);
    }
    argv.extend(["-exec", "grep", "-nHE", "-e", pattern, "--", "{}", "+"]);
    let out = run(env, &argv, cwd, None, FILE_TIMEOUT)
        .await
        .map_err(io_error)?;
    if out.status > 1 && out.stdout.is_empty() {
        return Err(io::Error::other(out.stderr));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text
        .lines()
        .filter_map(|line| {
            let (file, rest) = line.split_once(':')?;
            let (number, content) = rest.split_once(':')?;
            Some((file.to_owned(), number.parse().ok()?, content.to_owned()))
        })
        .take(limit)
        .collect())
}

/// Files under `root` whose name matches the shell glob `name`, at most `limit`.
pub async fn find(
    env: &dyn Environment,
    name: &str,
    root: &Path,
    limit: usize,
    cwd: &Path,
) -> io::Result<Vec<String>> {
    let r = path_arg(root);
    let argv = [
        "find", &r, "-name", ".git", "-prune", "-o", "-type", "f", "-name", name, "-print",
    ];
    let out = run(env, &argv, cwd, None, FILE_TIMEOUT)
        .await
        .map_err(io_error)?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .take(limit)
        .map(str::to_owned)
        .collect())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn a_command_that_fills_stderr_before_stdout_finishes() {
        let dir = tempfile::tempdir().unwrap();
        let script = "head -c 300000 /dev/zero >&2; echo done";
        let out = run(
            &crate::Local::default(),
            &["sh", "-c", script],
            dir.path(),
            None,
            Duration::from_secs(10),
        )
        .await
        .unwrap();
        assert_eq!(out.stdout, b"done\n");
        assert_eq!(out.status, 0);
    }

    #[tokio::test]
    async fn files_round_trip_through_the_local_environment() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/c.txt");
        let env = crate::Local::default();
        assert_eq!(stat(&env, &path, dir.path()).await.unwrap(), None);
        assert!(write(&env, &path, b"x\ny\n", dir.path()).await.unwrap());
        assert_eq!(read(&env, &path, dir.path()).await.unwrap(), b"x\ny\n");
        assert_eq!(
            stat(&env, &path, dir.path()).await.unwrap(),
            Some(Kind::File)
        );
        let hits = grep(&env, "^y$", dir.path(), Some("*.txt"), 10, dir.path())
            .await
            .unwrap();
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert_eq!(hits[0].1, 2);
        let found = find(&env, "c.*", dir.path(), 10, dir.path()).await.unwrap();
        assert_eq!(found.len(), 1);
        remove(&env, &path, dir.path()).await.unwrap();
        let err = read(&env, &path, dir.path()).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }
}
