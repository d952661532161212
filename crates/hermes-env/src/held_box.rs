//! One long-lived bubblewrap box per sandbox that commands join with
//! `nsenter`, instead of a new box per command: building the namespaces
//! and mounts is most of a sandboxed command's cost. Joining namespaces
//! needs root, so only a root Hermes holds a box; others make one per
//! command. A box that died is made again on the next command.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::EnvError;

/// The held box: bwrap's pid and the process commands join (the box's `sleep`).
#[derive(Debug, Clone, Copy)]
struct Running {
    bwrap: u32,
    init: u32,
}

/// A box made on first use and kept while the sandbox lives.
#[derive(Debug)]
pub(crate) struct HeldBox {
    nsenter: PathBuf,
    running: Mutex<Option<Running>>,
}

impl HeldBox {
    /// A holder when this process may join namespaces (root, `nsenter` installed).
    pub(crate) fn available() -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        let root = std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0);
        let nsenter = crate::sandbox::find_program("nsenter")?;
        root.then(|| Self {
            nsenter,
            running: Mutex::new(None),
        })
    }

    /// `nsenter` arguments that run a command inside the box, from `cwd`;
    /// `start` makes the box (bwrap's arguments, the command excluded).
    pub(crate) fn enter(
        &self,
        bwrap: &Path,
        box_args: impl FnOnce() -> Result<Vec<String>, EnvError>,
        cwd: &Path,
    ) -> Result<(PathBuf, Vec<String>), EnvError> {
        let mut guard = self
            .running
            .lock()
            .map_err(|_| EnvError::Io("sandbox: the box's lock is poisoned".into()))?;
        let running = match *guard {
            Some(r) if alive(r.init) => r,
            _ => {
                let r = start(bwrap, box_args()?)?;
                *guard = Some(r);
                r
            }
        };
        let args = vec![
            "-t".to_owned(),
            running.init.to_string(),
            "-m".into(),
            "-n".into(),
            "-p".into(),
            "-r".into(),
            "--".into(),
            // Not nsenter's --wd: it resolves the directory on the host before
            // entering, so a write there would land outside the box.
            "env".into(),
            "-C".into(),
            cwd.display().to_string(),
        ];
        Ok((self.nsenter.clone(), args))
    }
}

impl Drop for HeldBox {
    fn drop(&mut self) {
        if let Ok(Some(r)) = self.running.get_mut().map(|r| r.take()) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(r.bwrap as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

fn first_child(pid: u32) -> Option<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn runs_sleep(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "sleep")
}

fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Starts `bwrap ARGS sleep infinity` from a thread that lives as long as
/// the box: bwrap's `--die-with-parent` follows the thread that spawned it,
/// and a runtime's worker may go away while the box is still wanted.
fn start(bwrap: &Path, mut args: Vec<String>) -> Result<Running, EnvError> {
    args.extend(["sleep".into(), "infinity".into()]);
    let (tx, rx) = std::sync::mpsc::channel();
    let program = bwrap.to_path_buf();
    std::thread::Builder::new()
        .name("hermes-sandbox".into())
        .spawn(move || {
            let child = std::process::Command::new(program)
                .args(args)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn();
            match child {
                Ok(mut c) => {
                    let _ = tx.send(Ok(c.id()));
                    let _ = c.wait();
                }
                Err(e) => {
                    let _ = tx.send(Err(e.to_string()));
                }
            }
        })
        .map_err(|e| EnvError::Io(format!("sandbox: {e}")))?;
    let bwrap = rx
        .recv_timeout(Duration::from_secs(10))
        .map_err(|_| EnvError::Io("sandbox: bwrap did not start".into()))?
        .map_err(|e| EnvError::Io(format!("sandbox: cannot start bwrap: {e}")))?;
    // Join the box's `sleep`, not bwrap's child: that child is still building
    // the mounts (its root not yet the box's) until it runs the command, so
    // only a process that already runs `sleep` sees the finished box.
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if let Some(init) = first_child(bwrap)
            .and_then(first_child)
            .filter(|pid| runs_sleep(*pid))
        {
            return Ok(Running { bwrap, init });
        }
        if !alive(bwrap) {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    Err(EnvError::Io(
        "sandbox: the box did not come up (bwrap exited; is unprivileged namespace creation allowed?)"
            .into(),
    ))
}
