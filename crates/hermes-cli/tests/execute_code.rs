//! `execute_code` through the real binary: a script's tool calls run in the
//! session but only the script's result enters the conversation; runaway and
//! disallowed calls are contained. Needs `python3` on PATH.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_mock::Reply;
use hermes_state::{ListFilter, SessionDb};
use serde_json::{Value, json};
use support::*;

fn execute_code_call(code: &str) -> Reply {
    Reply::tool_call(
        "call_1",
        "execute_code",
        &json!({ "code": code }).to_string(),
    )
}

/// Every stored message of every session in the sandbox's state.db.
fn stored_tool_names(sb: &Sandbox) -> Vec<String> {
    let db = SessionDb::open_read_only(&sb.home.path().join("state.db")).unwrap();
    let filter = ListFilter {
        include_children: true,
        ..ListFilter::default()
    };
    let mut names = Vec::new();
    for session in db.list_sessions(&filter).unwrap() {
        for m in db.messages(&session.id).unwrap() {
            if m.role == "tool" {
                names.push(m.tool_name.unwrap_or_default());
            }
        }
    }
    names
}

fn only_tool_result(body: &Value) -> Value {
    let tools = messages_with_role(body, "tool");
    assert_eq!(tools.len(), 1, "{body:#}");
    assert_eq!(tools[0]["tool_call_id"], "call_1");
    tool_content(tools[0])
}

#[test]
fn script_tool_calls_stay_out_of_the_conversation() {
    let sb = Sandbox::start();
    sb.mock.push(execute_code_call(
        "from hermes_tools import terminal\n\
         outs = [terminal(f'echo {w}')['output'].strip() for w in ('one', 'two', 'three')]\n\
         print('summary: ' + '+'.join(outs))\n",
    ));
    sb.mock.push(Reply::text("Done."));
    // Not quiet: progress lines, nested ones included, go to stderr.
    let out = sb
        .command()
        .args(["chat", "-q", "count to three"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");

    let reqs = sb.requests();
    assert_eq!(reqs.len(), 2);
    let result = only_tool_result(&reqs[1]);
    assert_eq!(result["status"], "success", "{result}");
    assert_eq!(result["output"], "summary: one+two+three\n");
    assert_eq!(result["tool_calls_made"], 3);
    let content = messages_with_role(&reqs[1], "tool")[0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(content.contains("\"tool_calls_made\":3"), "{content}");
    // The schema lists the sandbox tools this session has.
    let schema = reqs[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "execute_code")
        .unwrap();
    assert!(
        schema["function"]["description"]
            .as_str()
            .unwrap()
            .contains("  terminal(command: str, timeout=None, workdir=None) -> dict")
    );

    assert_eq!(stored_tool_names(&sb), ["execute_code"]);
    for word in ["one", "two", "three"] {
        assert!(
            err.contains(&format!("    ↳ execute_code: 💻 terminal  echo {word}")),
            "no nested line for {word}:\n{err}"
        );
    }
    // The session log keeps them, tagged with the session, under their origin.
    let log = std::fs::read_to_string(sb.home.path().join("logs/agent.log")).unwrap();
    let nested: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("tools.execute_code: terminal called"))
        .collect();
    assert_eq!(nested.len(), 3, "{log}");
    let sessions =
        hermes_state::session_db::SessionDb::open_read_only(&sb.home.path().join("state.db"))
            .unwrap()
            .list_sessions(&Default::default())
            .unwrap();
    assert!(
        nested
            .iter()
            .all(|l| l.contains(&format!("[{}]", sessions[0].id))),
        "{log}"
    );
    assert!(log.contains("tools: execute_code called"), "{log}");
}

#[test]
fn a_runaway_script_is_killed_at_the_configured_timeout() {
    let sb = Sandbox::start();
    sb.add_config("code_execution:\n  timeout: 2\n");
    sb.mock.push(execute_code_call("while True:\n    pass\n"));
    sb.mock.push(Reply::text("It timed out."));
    let out = sb.chat("spin", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let result = only_tool_result(&sb.requests()[1]);
    assert_eq!(result["status"], "timeout", "{result}");
    assert_eq!(result["error"], "Script timed out after 2s and was killed.");
    assert_eq!(
        result["output"],
        "⏰ Script timed out after 2s and was killed."
    );
}

#[test]
fn a_script_cannot_reach_tools_outside_the_sandbox() {
    let sb = Sandbox::start();
    sb.mock.push(execute_code_call(
        "import hermes_tools\n\
         print(hermes_tools._call('memory', {'action': 'add', 'target': 'user', 'content': 'x'})['error'])\n",
    ));
    sb.mock.push(Reply::text("Not allowed."));
    let out = sb.chat("try memory", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let result = only_tool_result(&sb.requests()[1]);
    assert_eq!(
        result["output"],
        "Tool 'memory' is not available in execute_code. Available: patch, read_file, \
         search_files, terminal, web_extract, web_search, write_file\n",
        "{result}"
    );
    assert_eq!(result["tool_calls_made"], 0);
    assert!(!sb.home.path().join("memories/USER.md").exists());
}

#[test]
fn scripts_run_when_every_system_temp_directory_is_read_only() {
    // A private mount namespace with read-only /tmp and /var/tmp; needs
    // unshare(1) and the privilege to use it (CI runs as root).
    let probe = std::process::Command::new("unshare")
        .args(["-m", "true"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: cannot make a mount namespace here (unshare -m)");
        return;
    }
    // Hiding /tmp would hide the binary and the sandbox too when the checkout
    // itself lives there.
    let under_tmp = |p: &str| p.starts_with("/tmp/") || p.starts_with("/var/tmp/");
    if under_tmp(env!("CARGO_BIN_EXE_hermes")) || under_tmp(env!("CARGO_TARGET_TMPDIR")) {
        eprintln!("skipped: the checkout is under /tmp, which this test makes read-only");
        return;
    }
    let sb = Sandbox::start_in(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")));
    sb.mock.push(execute_code_call(
        "import tempfile\nprint('scratch ok in', tempfile.gettempdir())\n",
    ));
    sb.mock.push(Reply::text("Done."));
    let script = format!(
        "mount -t tmpfs -o ro tmpfs /tmp && mount -t tmpfs -o ro tmpfs /var/tmp && \
         touch /tmp/probe 2>/dev/null && exit 99; exec '{}' chat -q go -Q",
        env!("CARGO_BIN_EXE_hermes")
    );
    let out = std::process::Command::new("unshare")
        .args(["-m", "sh", "-c", &script])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", sb.home.path())
        .env("HERMES_HOME", sb.home.path())
        .current_dir(sb.work.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(99), "/tmp was still writable");
    assert!(out.status.success(), "{}", stderr(&out));
    let result = only_tool_result(&sb.requests()[1]);
    assert_eq!(result["status"], "success", "{result}");
    let printed = result["output"].as_str().unwrap();
    assert!(printed.contains("scratch ok in"), "{printed}");
}
