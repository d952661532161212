//! Shared helpers: run the built `hermes` binary against the mock provider in an
//! isolated HERMES_HOME and working directory.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use hermes_mock::MockServer;

pub mod acp;
pub mod backends;
pub mod dashboard;
pub mod discord;
pub mod email;
pub mod gateway;
pub mod homeassistant;
pub mod matrix;
pub mod pty;
pub mod slack;
pub mod telegram;
pub mod web;
use serde_json::Value;

/// An isolated home + workdir + mock server.
pub struct Sandbox {
    pub mock: MockServer,
    pub home: tempfile::TempDir,
    pub work: tempfile::TempDir,
}

impl Sandbox {
    /// A sandbox whose config.yaml points `provider: custom` at the mock.
    pub fn start() -> Self {
        Self::start_in(&std::env::temp_dir())
    }

    /// [`Sandbox::start`] with its directories under `parent` (for tests that
    /// hide the system temp directory).
    pub fn start_in(parent: &Path) -> Self {
        let mock = MockServer::start();
        let home = tempfile::tempdir_in(parent).unwrap();
        let work = tempfile::tempdir_in(parent).unwrap();
        // Automatic titles would take scripted replies meant for the next
        // turn; the tests of titles turn them back on.
        let config = format!(
            "auxiliary:\n  title_generation:\n    enabled: false\nmodel:\n  provider: custom\n  base_url: {}\n  default: mock-model\n",
            mock.base_url()
        );
        std::fs::write(home.path().join("config.yaml"), config).unwrap();
        Self { mock, home, work }
    }

    /// Appends YAML to config.yaml (e.g. `agent:\n  api_max_retries: 0\n`).
    pub fn add_config(&self, yaml: &str) {
        let path = self.home.path().join("config.yaml");
        let mut text = std::fs::read_to_string(&path).unwrap_or_default();
        text.push_str(yaml);
        std::fs::write(path, text).unwrap();
    }

    /// Approves and configures a shell hook for each of `events` that appends
    /// its JSON payload (one per line) to the file `log` in the work
    /// directory; returns that file's path.
    pub fn log_hooks(&self, events: &[&str], log: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let log = self.work_path(log);
        let hook = self
            .home
            .path()
            .join(format!("{}.hook.sh", events.join("-")));
        let script = format!("#!/bin/sh\ncat >> '{0}'\necho >> '{0}'\n", log.display());
        std::fs::write(&hook, script).unwrap();
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut yaml = String::from("hooks_auto_accept: true\nhooks:\n");
        for event in events {
            yaml.push_str(&format!("  {event}:\n    - command: {}\n", hook.display()));
        }
        self.add_config(&yaml);
        log
    }

    /// Fails fast: no retries of failed model calls.
    pub fn no_retries(&self) {
        self.add_config("agent:\n  api_max_retries: 0\n");
    }

    pub fn work_path(&self, name: &str) -> PathBuf {
        self.work.path().join(name)
    }

    /// The binary with a clean environment: no provider keys leak in from the host.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_hermes"));
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.home.path())
            .env("HERMES_HOME", self.home.path())
            .current_dir(self.work.path())
            .stdin(std::process::Stdio::null());
        cmd
    }

    /// `hermes ARGS…` to completion.
    pub fn run(&self, args: &[&str]) -> Output {
        self.command().args(args).output().unwrap()
    }

    /// `hermes chat -q PROMPT -Q` plus extra args.
    pub fn chat(&self, prompt: &str, extra: &[&str]) -> Output {
        let mut cmd = self.command();
        cmd.args(["chat", "-q", prompt, "-Q"]).args(extra);
        cmd.output().unwrap()
    }

    /// Chat-completions request bodies, each checked for a valid conversation.
    pub fn requests(&self) -> Vec<Value> {
        let bodies = self.mock.chat_requests();
        for (i, body) in bodies.iter().enumerate() {
            if let Err(e) = hermes_mock::check_conversation(body) {
                panic!("request {i} has an invalid conversation: {e}\n{body:#}");
            }
        }
        bodies
    }
}

/// The hook payloads [`Sandbox::log_hooks`] recorded, in order.
pub fn hook_payloads(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Messages of a request with the given role.
pub fn messages_with_role<'a>(body: &'a Value, role: &str) -> Vec<&'a Value> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == role)
        .collect()
}

/// The text of a request's first system message ("" when none).
pub fn system_text(body: &Value) -> String {
    messages_with_role(body, "system")
        .first()
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

/// The text of a request's last user message ("" when none).
pub fn last_user_text(body: &Value) -> String {
    messages_with_role(body, "user")
        .last()
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

/// Parses a tool message's JSON content.
pub fn tool_content(msg: &Value) -> Value {
    serde_json::from_str(msg["content"].as_str().unwrap()).unwrap()
}

pub fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

/// Resumes session `id` after a failed turn: the provider answers "Paris."
/// and the next request carries both `earlier` and the new question
/// (consecutive user turns are merged on the wire).
pub fn assert_resumes_with(sb: &Sandbox, id: &str, earlier: &str) {
    sb.mock.push(hermes_mock::Reply::text("Paris."));
    let again = sb.chat("and now?", &["--resume", id]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(stdout(&again).trim(), "Paris.");
    let last = sb.mock.chat_requests().pop().unwrap();
    let users: String = messages_with_role(&last, "user")
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default())
        .collect();
    assert!(
        users.contains(earlier) && users.contains("and now?"),
        "{users}"
    );
}

/// The id a `-Q` run printed as `session_id: …` on stderr.
pub fn session_id_of(out: &Output) -> String {
    let err = stderr(out);
    err.lines()
        .find_map(|l| l.strip_prefix("session_id: "))
        .unwrap_or_else(|| panic!("no session_id line in:\n{err}"))
        .trim()
        .to_owned()
}

/// A loopback port nobody listens on (yet).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A file under `tests/fixtures`.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// The `{"step": …, "result": …}` lines a fixture client printed.
pub fn steps(stdout: &str) -> Vec<(String, Value)> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|v| {
            (
                v["step"].as_str().unwrap_or("").to_owned(),
                v["result"].clone(),
            )
        })
        .collect()
}

/// The result of the step called `name`.
pub fn step<'a>(all: &'a [(String, Value)], name: &str) -> &'a Value {
    &all.iter()
        .find(|(s, _)| s == name)
        .unwrap_or_else(|| panic!("no {name} in {all:?}"))
        .1
}

/// The names of the tools a model request offered.
pub fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Whether anything of the process group `pid` is still alive.
pub fn group_alive(pid: i64) -> bool {
    nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap()),
        None,
    )
    .is_ok()
}

/// Waits up to 2 s for the process group `pid` to be gone (its members are
/// reaped a moment after they die); whether it went.
pub fn group_gone_soon(pid: i64) -> bool {
    for _ in 0..100 {
        if !group_alive(pid) {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    false
}
