//! One gateway per HERMES_HOME: a pid file, with `--replace` stopping the
//! running one first.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Held while the gateway runs; removes the pid file when dropped.
#[derive(Debug)]
pub struct GatewayLock {
    path: PathBuf,
}

/// The pid file's path.
pub fn pid_file(hermes_home: &Path) -> PathBuf {
    hermes_home.join("gateway.pid")
}

/// The pid of a gateway running for this home, if any.
pub fn running_pid(hermes_home: &Path) -> Option<i32> {
    let text = std::fs::read_to_string(pid_file(hermes_home)).ok()?;
    let pid: i32 = text.trim().parse().ok()?;
    let alive = pid > 0
        && nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok()
        && pid != std::process::id() as i32;
    // A stale file whose pid now belongs to another program is not a gateway
    // (and must never be sent SIGTERM by --replace).
    alive.then_some(pid).filter(|pid| is_gateway(*pid))
}

/// Whether `pid` runs `… gateway run …` (where /proc says; assumed elsewhere).
fn is_gateway(pid: i32) -> bool {
    match std::fs::read(format!("/proc/{pid}/cmdline")) {
        Ok(raw) => {
            let args: Vec<&[u8]> = raw.split(|b| *b == 0).collect();
            args.windows(2)
                .any(|w| w[0] == b"gateway" && w[1] == b"run")
        }
        Err(_) => !std::path::Path::new("/proc/self").exists(),
    }
}

impl GatewayLock {
    /// Takes the lock; with `replace`, a running gateway is sent SIGTERM and
    /// given `wait` to drain and exit.
    pub fn acquire(hermes_home: &Path, replace: bool, wait: Duration) -> Result<Self, String> {
        if let Some(pid) = running_pid(hermes_home) {
            if !replace {
                return Err(format!(
                    "a gateway is already running for {} (pid {pid}); stop it, or start with --replace",
                    hermes_home.display()
                ));
            }
            let target = nix::unistd::Pid::from_raw(pid);
            let _ = nix::sys::signal::kill(target, nix::sys::signal::Signal::SIGTERM);
            let deadline = Instant::now() + wait;
            while running_pid(hermes_home) == Some(pid) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
            if running_pid(hermes_home) == Some(pid) {
                let _ = nix::sys::signal::kill(target, nix::sys::signal::Signal::SIGKILL);
            }
        }
        let path = pid_file(hermes_home);
        std::fs::create_dir_all(hermes_home)
            .and_then(|_| std::fs::write(&path, format!("{}\n", std::process::id())))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(Self { path })
    }
}

impl Drop for GatewayLock {
    fn drop(&mut self) {
        let ours = std::fs::read_to_string(&self.path)
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok())
            == Some(std::process::id());
        if ours {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn a_stale_pid_of_another_program_is_not_a_gateway() {
        let home = tempfile::tempdir().unwrap();
        // Our own pid is alive but is not `gateway run`, and is never "another" gateway.
        std::fs::write(pid_file(home.path()), "1\n").unwrap();
        assert_eq!(running_pid(home.path()), None);
        let lock = GatewayLock::acquire(home.path(), false, Duration::from_millis(10)).unwrap();
        assert_eq!(
            std::fs::read_to_string(pid_file(home.path()))
                .unwrap()
                .trim(),
            std::process::id().to_string()
        );
        drop(lock);
        assert!(!pid_file(home.path()).exists());
    }
}
