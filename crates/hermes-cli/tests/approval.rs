//! Dangerous-command approval through the real binary. Every "destructive"
//! command here hits a fake `rm` placed first on PATH that only records its
//! arguments, so nothing real is ever deleted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Output;

use hermes_mock::Reply;
use serde_json::Value;
use support::*;

/// A sandbox with a shimmed `rm` that appends its arguments to a marker file.
struct Shimmed {
    sb: Sandbox,
    marker: PathBuf,
    path: String,
}

fn shimmed() -> Shimmed {
    let sb = Sandbox::start();
    sb.no_retries();
    let bin = sb.work_path("shim-bin");
    std::fs::create_dir(&bin).unwrap();
    let marker = sb.work_path("rm-was-called");
    let script = format!("#!/bin/sh\necho \"$@\" >> '{}'\n", marker.display());
    let rm = bin.join("rm");
    std::fs::write(&rm, script).unwrap();
    std::fs::set_permissions(&rm, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Shimmed { sb, marker, path }
}

impl Shimmed {
    /// Scripts one terminal call with `command`, then a closing text reply.
    fn propose(&self, command: &str) {
        let args = serde_json::json!({ "command": command }).to_string();
        self.sb
            .mock
            .push(Reply::tool_call("call_1", "terminal", &args));
        self.sb.mock.push(Reply::text("done"));
    }

    fn run(&self, args: &[&str]) -> Output {
        let mut cmd = self.sb.command();
        cmd.env("PATH", &self.path).args(args);
        cmd.output().unwrap()
    }

    /// The terminal tool's result as the model saw it.
    fn tool_result(&self) -> Value {
        let reqs = self.sb.requests();
        assert_eq!(reqs.len(), 2, "expected a tool round trip");
        let tool = messages_with_role(&reqs[1], "tool");
        assert_eq!(tool.len(), 1);
        tool_content(tool[0])
    }

    fn rm_ran(&self) -> Option<String> {
        std::fs::read_to_string(&self.marker).ok()
    }
}

#[test]
fn hardline_command_is_refused_even_with_yolo() {
    let s = shimmed();
    s.propose("rm -rf /");
    let out = s.run(&["chat", "-q", "clean up", "-Q", "--yolo"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(s.rm_ran(), None, "the hardline command must not run");
    let result = s.tool_result();
    assert_eq!(result["status"], "blocked");
    assert_eq!(result["hardline"], true);
    assert_eq!(result["command"], "rm -rf /");
    let msg = result["error"].as_str().unwrap();
    assert!(msg.contains("BLOCKED (hardline)"), "{msg}");
    assert!(msg.contains("recursive delete of root filesystem"), "{msg}");
}

#[test]
fn hidden_hardline_command_is_refused_with_yolo() {
    let s = shimmed();
    s.propose("FOO=1 bash -c 'ls; sudo rm -rf ~/'");
    let out = s.run(&["-z", "clean up", "--yolo"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(s.rm_ran(), None);
    assert_eq!(s.tool_result()["hardline"], true);
}

#[test]
fn dangerous_command_in_query_mode_is_refused_at_once() {
    let s = shimmed();
    s.propose("rm -rf ./build");
    let started = std::time::Instant::now();
    let out = s.run(&["chat", "-q", "clean the build", "-Q"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    assert_eq!(s.rm_ran(), None, "no approval, so it must not run");
    let result = s.tool_result();
    assert_eq!(result["status"], "blocked");
    assert_eq!(result["hardline"], false);
    let msg = result["error"].as_str().unwrap();
    assert!(msg.contains("recursive delete"), "{msg}");
    assert!(msg.contains("non-interactive"), "{msg}");
    assert!(
        msg.contains("--yolo") && msg.contains("command_allowlist"),
        "{msg}"
    );
}

#[test]
fn dangerous_command_in_oneshot_mode_is_refused() {
    let s = shimmed();
    s.propose("git -C . clean -fd && rm -r build");
    let out = s.run(&["-z", "tidy"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(s.rm_ran(), None);
    assert_eq!(s.tool_result()["status"], "blocked");
}

#[test]
fn yolo_runs_the_dangerous_command() {
    let s = shimmed();
    s.propose("rm -rf ./build");
    let out = s.run(&["chat", "-q", "clean the build", "-Q", "--yolo"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(s.rm_ran().as_deref(), Some("-rf ./build\n"));
    let result = s.tool_result();
    assert_eq!(result["exit_code"], 0);
    assert!(result.get("status").is_none());
}

#[test]
fn approvals_mode_off_in_config_runs_it() {
    let s = shimmed();
    s.sb.add_config("approvals:\n  mode: \"off\"\n");
    s.propose("rm -rf ./build");
    let out = s.run(&["-z", "clean"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(s.rm_ran().as_deref(), Some("-rf ./build\n"));
}

#[test]
fn command_allowlist_in_config_runs_it() {
    let s = shimmed();
    s.sb.add_config("command_allowlist:\n  - \"recursive delete\"\n");
    s.propose("rm -rf ./build");
    let out = s.run(&["-z", "clean"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(s.rm_ran().as_deref(), Some("-rf ./build\n"));
}

#[test]
fn safe_commands_run_without_approval() {
    let s = shimmed();
    s.propose("rm notes.tmp");
    let out = s.run(&["-z", "remove the temp file"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(s.rm_ran().as_deref(), Some("notes.tmp\n"));
}

#[test]
fn refusal_is_shown_as_a_status_line() {
    let s = shimmed();
    s.propose("git push --force");
    let out = s.run(&["chat", "-q", "push it"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("Refused dangerous command")
            || stdout(&out).contains("Refused dangerous command"),
        "stderr: {err}"
    );
}

#[test]
fn approvals_deny_rule_blocks_even_with_yolo() {
    let s = shimmed();
    s.sb.add_config("approvals:\n  deny:\n    - \"rm *\"\n");
    s.propose("rm notes.tmp");
    let out = s.run(&["-z", "remove it", "--yolo"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(s.rm_ran(), None);
    let msg = s.tool_result()["error"].as_str().unwrap().to_owned();
    assert!(msg.contains("approvals.deny"), "{msg}");
}
