//! A real pseudo-terminal for the tests that drive the interactive binary:
//! tmux, one private server per pane, polled screen captures.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use super::Sandbox;

/// How long to wait for the screen to show something.
pub const WAIT: Duration = Duration::from_secs(20);

/// A tmux server of its own (so parallel tests never share one) running `hermes chat`.
pub struct Pane {
    socket: String,
    _sb_paths: PathBuf,
}

pub fn tmux_available() -> bool {
    let ok = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIPPED: tmux is not installed (apt-get install tmux) — PTY tests need it");
    }
    ok
}

impl Pane {
    pub fn start(sb: &Sandbox, name: &str, args: &str) -> Pane {
        Self::launch(sb, name, args, false)
    }

    /// [`Pane::start`], printing `EXIT=<code>` when the binary ends.
    pub fn start_reporting_exit(sb: &Sandbox, name: &str, args: &str) -> Pane {
        Self::launch(sb, name, args, true)
    }

    /// [`Pane::start`] with extra environment variables (`NAME=value` words).
    pub fn start_with_env(sb: &Sandbox, name: &str, env: &str, args: &str) -> Pane {
        Self::launch_env(sb, name, env, args, false)
    }

    fn launch(sb: &Sandbox, name: &str, args: &str, report_exit: bool) -> Pane {
        Self::launch_env(sb, name, "", args, report_exit)
    }

    fn launch_env(sb: &Sandbox, name: &str, env: &str, args: &str, report_exit: bool) -> Pane {
        let socket = format!("hermes-{}-{name}", std::process::id());
        let script = sb.home.path().join(format!("run-{name}.sh"));
        let (exec, after) = if report_exit {
            ("", "\necho \"EXIT=$?\"")
        } else {
            ("exec ", "")
        };
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\ncd '{}' && {exec}env -i PATH=\"$PATH\" HOME='{}' HERMES_HOME='{}' TERM=xterm-256color LANG=C.UTF-8 {env} '{}' {args}{after}\n",
                sb.work.path().display(),
                sb.home.path().display(),
                sb.home.path().display(),
                env!("CARGO_BIN_EXE_hermes"),
            ),
        )
        .unwrap();
        let status = Command::new("tmux")
            .args([
                "-L",
                &socket,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-x",
                "120",
                "-y",
                "50",
            ])
            .args(["-s", "t", "sh"])
            .arg(&script)
            .status()
            .unwrap();
        assert!(status.success(), "tmux new-session failed");
        let _ = Command::new("tmux")
            .args([
                "-L",
                &socket,
                "set-option",
                "-t",
                "t",
                "remain-on-exit",
                "on",
            ])
            .status();
        Pane {
            socket,
            _sb_paths: script,
        }
    }

    pub fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Types text literally.
    pub fn type_text(&self, text: &str) {
        self.tmux(&["send-keys", "-t", "t", "-l", text]);
    }

    /// Sends named keys (`Enter`, `C-c`, `Tab`).
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    pub fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "t", "-S", "-500"])
    }

    /// Polls the screen until `pred` holds; panics with the screen after `WAIT`.
    pub fn wait_until(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if pred(&screen) {
                return screen;
            }
            if start.elapsed() > WAIT {
                panic!("timed out waiting for {what}; screen:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn wait_for(&self, text: &str) -> String {
        self.wait_until(text, |s| s.contains(text))
    }

    /// Waits until `text` appears `n` times.
    pub fn wait_for_count(&self, text: &str, n: usize) -> String {
        self.wait_until(&format!("{n}× {text}"), |s| s.matches(text).count() >= n)
    }

    pub fn send_line(&self, text: &str) {
        self.type_text(text);
        self.keys(&["Enter"]);
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

/// The REPL's prompt marker.
pub const PROMPT: &str = "❯";
