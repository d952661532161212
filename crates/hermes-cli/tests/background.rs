//! Background processes through the binary: the model starts a server with
//! `terminal(background=true)`, checks on it, reads its log and kills it with
//! the `process` tool; a process still running when the session ends is
//! stopped, or kept when the configuration says so; a REPL on a terminal
//! (`pty=true`) is driven with submit/close; in the REPL, a finished job and
//! a watched pattern in a server's output start a turn of their own.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_mock::Reply;
use serde_json::{Value, json};
use support::pty::{PROMPT, Pane, tmux_available};
use support::{Sandbox, free_port, group_alive, group_gone_soon, stderr, stdout};

/// The JSON results of the `tool` messages in a request, in order.
fn tool_results(body: &Value) -> Vec<Value> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            serde_json::from_str(m["content"].as_str().unwrap_or("null")).unwrap_or(Value::Null)
        })
        .collect()
}

fn call(name: &str, args: Value) -> Reply {
    Reply::tool_call(
        &format!("c_{name}_{}", rand_suffix()),
        name,
        &args.to_string(),
    )
}

fn rand_suffix() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos()
}

#[test]
fn the_model_runs_a_server_in_the_background_checks_it_and_kills_it() {
    let python = std::process::Command::new("python3")
        .arg("--version")
        .output();
    if python.is_err() {
        eprintln!("SKIPPED: python3 is not installed");
        return;
    }
    let sb = Sandbox::start();
    let port = free_port();
    sb.mock.respond_with(move |req| {
        let results = tool_results(&req.body);
        let id = results
            .first()
            .and_then(|r| r["session_id"].as_str())
            .map(str::to_owned);
        Some(match (results.len(), id) {
            (0, _) => call(
                "terminal",
                json!({"command": format!("python3 -m http.server {port} --bind 127.0.0.1"), "background": true}),
            ),
            (1, Some(id)) => call("process", json!({"action": "poll", "session_id": id})),
            (2, _) => call(
                "terminal",
                json!({"command": format!(
                    "for i in $(seq 50); do if exec 3<>/dev/tcp/127.0.0.1/{port}; then printf 'GET / HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n' >&3; head -1 <&3; break; fi 2>/dev/null; sleep 0.1; done"
                )}),
            ),
            (3, Some(id)) => call("process", json!({"action": "log", "session_id": id})),
            (4, Some(id)) => call("process", json!({"action": "kill", "session_id": id})),
            (5, _) => call("process", json!({"action": "list"})),
            _ => Reply::text("The server ran and is stopped."),
        })
    });
    let out = sb.chat("start a web server, check it, then stop it", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "The server ran and is stopped.");
    let last = sb.requests().pop().unwrap();
    let results = tool_results(&last);
    assert_eq!(results.len(), 6, "{results:#?}");
    let started = &results[0];
    assert_eq!(started["output"], "Background process started");
    let id = started["session_id"].as_str().unwrap();
    assert!(id.starts_with("proc_"), "{started}");
    let pid = started["pid"].as_i64().unwrap();
    assert_eq!(results[1]["status"], "running", "{}", results[1]);
    assert!(
        results[2]["output"].as_str().unwrap().contains("200 OK"),
        "{}",
        results[2]
    );
    let log = results[3]["output"].as_str().unwrap();
    assert!(
        log.contains("GET / HTTP/1.1"),
        "the server's own log: {log}"
    );
    assert_eq!(results[4]["status"], "killed", "{}", results[4]);
    let listed = &results[5]["processes"][0];
    assert_eq!(listed["session_id"], id);
    assert_eq!(listed["status"], "exited");
    assert!(!group_alive(pid));
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
}

#[test]
fn a_process_still_running_when_the_session_ends_is_stopped_unless_kept() {
    for keep in [false, true] {
        let sb = Sandbox::start();
        if keep {
            sb.add_config("terminal:\n  keep_background_processes: true\n");
        }
        sb.mock.push(call(
            "terminal",
            json!({"command": "sleep 300", "background": true}),
        ));
        sb.mock.push(Reply::text("left it running"));
        let out = sb.chat("start a long sleep", &[]);
        assert!(out.status.success(), "{}", stderr(&out));
        let results = tool_results(sb.requests().last().unwrap());
        let pid = results[0]["pid"].as_i64().unwrap();
        assert!(
            results[0]["hint"]
                .as_str()
                .unwrap()
                .contains("process(action='poll')")
        );
        if keep {
            assert!(group_alive(pid), "kept processes outlive the session");
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::SIGKILL,
            );
        } else {
            assert!(
                group_gone_soon(pid),
                "the background process outlived its session"
            );
        }
    }
}

#[test]
fn checkpoints_are_taken_before_writes_and_the_store_can_be_inspected_and_cleared() {
    let sb = Sandbox::start();
    std::fs::write(sb.work_path("Cargo.toml"), "[package]\n").unwrap();
    std::fs::write(sb.work_path("notes.txt"), "original\n").unwrap();
    sb.mock.push(call(
        "write_file",
        json!({"path": "notes.txt", "content": "changed\n"}),
    ));
    sb.mock
        .push(call("terminal", json!({"command": "rm notes.txt"})));
    sb.mock.push(Reply::text("done"));
    let out = sb.chat(
        "change the notes, then remove them",
        &["--checkpoints", "--yolo"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!sb.work_path("notes.txt").exists());
    let status = sb.command().args(["checkpoints"]).output().unwrap();
    let text = stdout(&status);
    assert!(text.contains("Projects:        1"), "{text}");
    let workdir = sb.work.path().canonicalize().unwrap();
    assert!(text.contains(&workdir.display().to_string()), "{text}");
    // Two checkpoints: before the write, and before the destructive command.
    assert!(text.contains("      2  "), "{text}");
    // Without the flag (or checkpoints.enabled) nothing is taken.
    let plain = Sandbox::start();
    std::fs::write(plain.work_path("a.txt"), "a\n").unwrap();
    plain.mock.push(call(
        "write_file",
        json!({"path": "a.txt", "content": "b\n"}),
    ));
    plain.mock.push(Reply::text("ok"));
    plain.chat("change a", &[]);
    let text = stdout(
        &plain
            .command()
            .args(["checkpoints", "status"])
            .output()
            .unwrap(),
    );
    assert!(text.contains("Projects:        0"), "{text}");
    let pruned = sb
        .command()
        .args(["checkpoints", "prune"])
        .output()
        .unwrap();
    assert!(
        stdout(&pruned).contains("Deleted orphan:  0"),
        "{}",
        stdout(&pruned)
    );
    // Clearing asks unless forced.
    let cleared = sb
        .command()
        .args(["checkpoints", "clear", "-f"])
        .output()
        .unwrap();
    assert!(
        stdout(&cleared).contains("Cleared. Reclaimed"),
        "{}",
        stdout(&cleared)
    );
    assert!(!sb.home.path().join("checkpoints").exists());
}

#[test]
fn the_model_drives_a_python_repl_on_a_terminal() {
    let python = std::process::Command::new("python3")
        .arg("--version")
        .output();
    if python.is_err() {
        eprintln!("SKIPPED: python3 is not installed");
        return;
    }
    const SUBMITTED: &str = "import sys; print('isatty', sys.stdin.isatty(), 6 * 7)";
    let sb = Sandbox::start();
    // Like a careful model: poll until the prompt shows (input typed ahead
    // of a readline prompt would be read, but a Ctrl-D typed ahead is lost),
    // answer it, end the input, wait for the exit.
    sb.mock.respond_with(move |req| {
        let results = tool_results(&req.body);
        let Some(id) = results
            .first()
            .and_then(|r| r["session_id"].as_str())
            .map(str::to_owned)
        else {
            return Some(call(
                "terminal",
                json!({"command": "python3 -q -i", "background": true, "pty": true}),
            ));
        };
        let last = results.last().unwrap();
        let prompted = last["output_preview"]
            .as_str()
            .is_some_and(|o| o.contains(">>> "));
        Some(if last["message"] == "EOF sent" {
            call(
                "process",
                json!({"action": "wait", "session_id": id, "timeout": 20}),
            )
        } else if last.get("bytes_written").is_some() {
            call("process", json!({"action": "close", "session_id": id}))
        } else if prompted {
            call(
                "process",
                json!({"action": "submit", "session_id": id, "data": SUBMITTED}),
            )
        } else if last.get("output_preview").is_some() || results.len() == 1 {
            if results.len() > 100 {
                return Some(Reply::text("no prompt"));
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
            call("process", json!({"action": "poll", "session_id": id}))
        } else {
            Reply::text("The REPL said 42.")
        })
    });
    let out = sb.chat("ask python for six times seven", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "The REPL said 42.");
    let results = tool_results(sb.requests().last().unwrap());
    let n = results.len();
    assert!(n >= 5, "{results:#?}");
    assert!(results[0].get("pty_note").is_none(), "{}", results[0]);
    let submitted = &results[n - 3];
    assert_eq!(submitted["status"], "ok", "{submitted}");
    assert_eq!(
        submitted["bytes_written"],
        SUBMITTED.len() + 1,
        "{submitted}"
    );
    assert_eq!(results[n - 2]["message"], "EOF sent", "{}", results[n - 2]);
    let waited = &results[n - 1];
    assert_eq!(waited["status"], "exited", "{waited}");
    assert_eq!(waited["exit_code"], 0, "{waited}");
    let output = waited["output"].as_str().unwrap();
    assert!(output.contains(SUBMITTED), "the terminal echoes: {output}");
    assert!(output.contains("\nisatty True 42\n"), "{output}");
}

/// The last user message of a request.
fn last_user(body: &Value) -> String {
    support::messages_with_role(body, "user").last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn a_finished_job_starts_a_turn_of_its_own_at_the_idle_prompt() {
    if !tmux_available() {
        return;
    }
    let sb = Sandbox::start();
    sb.mock.push(call(
        "terminal",
        json!({"command": "sleep 1; echo done", "background": true, "notify_on_complete": true}),
    ));
    sb.mock.push(Reply::text("job started"));
    sb.mock.push(Reply::text("The job printed done."));
    let pane = Pane::start(&sb, "bgidle", "chat");
    pane.wait_for(PROMPT);
    pane.send_line("run the job in the background");
    pane.wait_for("job started");
    // No further input: the end of the job alone brings the answer.
    let screen = pane.wait_for("The job printed done.");
    let requests = sb.requests();
    assert_eq!(requests.len(), 3, "{requests:#?}");
    let started = &tool_results(&requests[1])[0];
    assert_eq!(started["notify_on_complete"], true, "{started}");
    let id = started["session_id"].as_str().unwrap();
    let told = format!(
        "[IMPORTANT: Background process {id} completed normally (exit code 0).\n\
         Command: sleep 1; echo done\nOutput:\ndone]"
    );
    assert_eq!(last_user(&requests[2]), told);
    // Shown as the reference shows it: a rule, then the message as the user's.
    assert!(
        screen.contains(&format!(
            "{}\n● [IMPORTANT: Background process {id}",
            "─".repeat(40)
        )),
        "{screen}"
    );
    let after = screen.split("The job printed done.").nth(1).unwrap();
    assert!(!after.contains("IMPORTANT"), "{screen}");
    // Back at the prompt, and told once.
    pane.wait_until("the prompt after the answer", |s| {
        s.trim_end().ends_with(PROMPT)
    });
    sb.mock.push(Reply::text("all quiet"));
    pane.send_line("anything else?");
    pane.wait_for("all quiet");
    assert_eq!(last_user(sb.requests().last().unwrap()), "anything else?");
}

#[test]
fn a_job_that_ends_during_a_turn_gets_a_turn_right_after_it() {
    if !tmux_available() {
        return;
    }
    let sb = Sandbox::start();
    sb.mock.push(call(
        "terminal",
        json!({"command": "echo quick", "background": true, "notify_on_complete": true}),
    ));
    // The turn goes on after the job ended.
    sb.mock
        .push(call("terminal", json!({"command": "sleep 0.5"})));
    sb.mock.push(Reply::text("first answer line"));
    sb.mock.push(Reply::text("The quick job is over."));
    let pane = Pane::start(&sb, "bgafter", "chat");
    pane.wait_for(PROMPT);
    pane.send_line("start it and wait a bit");
    let screen = pane.wait_for("The quick job is over.");
    let requests = sb.requests();
    assert_eq!(requests.len(), 4, "{requests:#?}");
    assert_eq!(last_user(&requests[2]), "start it and wait a bit");
    let told = last_user(&requests[3]);
    assert!(
        told.starts_with("[IMPORTANT: Background process proc_")
            && told.ends_with("Command: echo quick\nOutput:\nquick]"),
        "{told}"
    );
    // Nothing of the first answer was drawn over.
    let first = screen.find("first answer line").unwrap();
    let rule = screen.find(&"─".repeat(40)).unwrap();
    assert!(first < rule, "{screen}");
}

#[test]
fn a_watched_pattern_in_a_servers_output_starts_a_turn_of_its_own() {
    if !tmux_available() {
        return;
    }
    let sb = Sandbox::start();
    sb.mock.push(call(
        "terminal",
        json!({
            "command": "sleep 0.2; echo booting; echo 'Uvicorn running: server-ready-marker'; sleep 300",
            "background": true,
            "watch_patterns": ["server-ready-marker"]
        }),
    ));
    sb.mock.push(Reply::text("server starting"));
    sb.mock.push(Reply::text("the server is up"));
    let pane = Pane::start(&sb, "bgwatch", "chat");
    pane.wait_for(PROMPT);
    pane.send_line("start the server in the background");
    pane.wait_for("server starting");
    pane.wait_for("the server is up");
    let requests = sb.requests();
    let started = &tool_results(&requests[1])[0];
    assert_eq!(
        started["watch_patterns"],
        json!(["server-ready-marker"]),
        "{started}"
    );
    assert!(started.get("notify_on_complete").is_none(), "{started}");
    let id = started["session_id"].as_str().unwrap();
    let command = "sleep 0.2; echo booting; echo 'Uvicorn running: server-ready-marker'; sleep 300";
    assert_eq!(
        last_user(requests.last().unwrap()),
        format!(
            "[IMPORTANT: Background process {id} matched watch pattern \"server-ready-marker\".\n\
             Command: {command}\nMatched output:\nUvicorn running: server-ready-marker]"
        )
    );
    // A match does not end the server, and is told once.
    sb.mock.push(Reply::text("quiet"));
    pane.send_line("and now?");
    pane.wait_for("quiet");
    assert_eq!(last_user(sb.requests().last().unwrap()), "and now?");
    pane.send_line("/stop");
    pane.wait_for("Stopped 1 background process(es).");
    assert!(group_gone_soon(started["pid"].as_i64().unwrap()));
}
