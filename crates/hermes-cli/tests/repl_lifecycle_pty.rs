//! The REPL's session lifecycle in a real terminal (tmux): compressing on
//! request, leaving no empty session behind, and background processes
//! (listed by /status, ended by /stop, and a job's end starting its own turn
//! while the user is typing).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_mock::Reply;
use support::pty::{PROMPT, Pane, tmux_available};
use support::{Sandbox, session_id_of};

#[test]
fn compress_on_request_summarises_a_short_conversation() {
    if !tmux_available() {
        return;
    }
    let sb = Sandbox::start();
    for i in 1..=4 {
        sb.mock.push(Reply::text(format!("answer {i}")));
    }
    let pane = Pane::start(&sb, "compress", "chat");
    pane.wait_for(PROMPT);
    for i in 1..=4 {
        pane.send_line(&format!("question {i}"));
        pane.wait_for(&format!("answer {i}"));
    }
    sb.mock
        .push(Reply::text("The user asked four numbered questions."));
    pane.send_line("/compact");
    let screen = pane.wait_for("Compressed: ");
    assert!(screen.contains("Compressed: 9 → "), "{screen}");
    // Growth is said, not hidden: a summary longer than the short
    // conversation it replaced comes with a note.
    let sizes: Vec<u64> = screen
        .lines()
        .find(|l| l.contains(" tokens)."))
        .map(|l| {
            l.split('~')
                .skip(1)
                .filter_map(|part| part.split_whitespace().next()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(sizes.len(), 2, "{screen}");
    if sizes[1] >= sizes[0] {
        assert!(screen.contains("Note: the context grew"), "{screen}");
    }
    // The summary request went to the model, and the next turn carries it.
    sb.mock.push(Reply::text("answer 5"));
    pane.send_line("question 5");
    pane.wait_for("answer 5");
    let last = sb.requests().last().unwrap().to_string();
    assert!(last.contains("four numbered questions"), "{last}");
    assert!(
        last.contains("question 4") && last.contains("question 5"),
        "{last}"
    );
    assert!(!last.contains("answer 2"), "{last}");
}

#[test]
fn a_repl_opened_and_closed_leaves_no_session_behind() {
    if !tmux_available() {
        return;
    }
    let sb = Sandbox::start();
    let pane = Pane::start(&sb, "emptyexit", "chat");
    pane.wait_for(PROMPT);
    pane.keys(&["C-d"]);
    pane.wait_until("the REPL to exit", |_| {
        pane.tmux(&["display-message", "-p", "-t", "t", "#{pane_dead}"])
            .trim()
            == "1"
    });
    let screen = pane.screen();
    assert!(
        !screen.contains("Resume this session"),
        "a resume hint for a session that is not kept:\n{screen}"
    );
    let out = sb.command().args(["sessions", "list"]).output().unwrap();
    let listed = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        !listed.contains("cli"),
        "an empty session is listed:\n{listed}"
    );
    let db = rusqlite::Connection::open(sb.home.path().join("state.db")).unwrap();
    let n: i64 = db
        .query_row("SELECT COUNT(*) FROM sessions", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 0);
}

#[test]
fn status_lists_background_processes_and_stop_ends_them() {
    if !tmux_available() {
        return;
    }
    let sb = Sandbox::start();
    sb.mock.push(Reply::tool_call(
        "c1",
        "terminal",
        r#"{"command":"sleep 300","background":true}"#,
    ));
    sb.mock.push(Reply::text("started it"));
    let pane = Pane::start(&sb, "bgstop", "chat");
    pane.wait_for(PROMPT);
    pane.send_line("start a sleeper");
    pane.wait_for("started it");
    pane.send_line("/status");
    let screen = pane.wait_for("running in the background");
    assert!(screen.contains("· sleep 300"), "{screen}");
    pane.send_line("/stop");
    pane.wait_for("Stopped 1 background process(es).");
    pane.send_line("/stop");
    pane.wait_for("No running background processes.");
    let pid = sb.requests().last().unwrap()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .map(|m| {
            let v: serde_json::Value =
                serde_json::from_str(m["content"].as_str().unwrap()).unwrap();
            v["pid"].as_i64().unwrap()
        })
        .unwrap();
    assert!(support::group_gone_soon(pid), "the sleeper survived /stop");
}

#[test]
fn a_job_ending_while_the_user_types_runs_its_turn_and_keeps_the_typing() {
    if !tmux_available() {
        return;
    }
    let sb = Sandbox::start();
    sb.mock.push(Reply::tool_call(
        "c1",
        "terminal",
        r#"{"command":"sleep 1.5; echo build-finished-marker","background":true,"notify_on_complete":true}"#,
    ));
    sb.mock.push(Reply::text("build started"));
    sb.mock.push(Reply::text("noted the build"));
    let pane = Pane::start(&sb, "bgnotify", "chat");
    pane.wait_for(PROMPT);
    pane.send_line("run the build in the background");
    pane.wait_for("build started");
    pane.wait_until("the prompt", |s| s.trim_end().ends_with(PROMPT));
    // Half a message, no Enter, when the build ends.
    pane.type_text("half typed");
    pane.wait_for("noted the build");
    let requests = sb.requests();
    assert_eq!(requests.len(), 3);
    let told = support::messages_with_role(&requests[2], "user")
        .last()
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        told.starts_with("[IMPORTANT: Background process proc_")
            && told.ends_with("Output:\nbuild-finished-marker]"),
        "{told}"
    );
    // The prompt comes back with the typing, and it goes on from there.
    pane.wait_until("the typing back at the prompt", |s| {
        s.trim_end().ends_with(&format!("{PROMPT} half typed"))
    });
    sb.mock.push(Reply::text("got the rest"));
    pane.send_line(" too");
    pane.wait_for("got the rest");
    let last = support::messages_with_role(sb.requests().last().unwrap(), "user")
        .last()
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(last, "half typed too");
}

#[test]
fn rollback_restores_a_file_the_agent_broke_in_a_large_repository() {
    if !tmux_available() {
        return;
    }
    let sb = Sandbox::start();
    let work = sb.work.path();
    std::fs::write(work.join("Cargo.toml"), "[package]\nname = \"big\"\n").unwrap();
    for d in 0..100 {
        let dir = work.join(format!("src/m{d:03}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..100 {
            std::fs::write(dir.join(format!("f{f:03}.rs")), format!("// {d}/{f}\n")).unwrap();
        }
    }
    let target = work.join("src/m042/f007.rs");
    let original = b"fn keep_me() {\n    \xe2\x9c\x93 bytes\t\r\n}\n".to_vec();
    std::fs::write(&target, &original).unwrap();
    sb.mock.push(Reply::tool_call(
        "c1",
        "write_file",
        r#"{"path":"src/m042/f007.rs","content":"broken\n"}"#,
    ));
    sb.mock.push(Reply::text("I rewrote it."));
    let pane = Pane::start(&sb, "rollback", "chat --checkpoints");
    pane.wait_for(PROMPT);
    pane.send_line("rewrite f007");
    pane.wait_for("I rewrote it.");
    assert!(
        std::fs::read_to_string(&target)
            .unwrap()
            .starts_with("broken")
    );
    pane.send_line("/rollback");
    let screen = pane.wait_for("/rollback <N>");
    assert!(
        screen.contains("1. ") && screen.contains("before write_file"),
        "{screen}"
    );
    pane.send_line("/rollback diff 1");
    pane.wait_for("+broken");
    pane.send_line("/rollback 1");
    pane.wait_for("Chat turn undone to match restored file state.");
    assert_eq!(
        std::fs::read(&target).unwrap(),
        original,
        "restored byte for byte"
    );
    // The project's own tree holds no repository of ours.
    assert!(!work.join(".git").exists());
    let store = sb.home.path().join("checkpoints/store");
    assert!(store.join("HEAD").is_file());
}

#[test]
fn rollback_says_how_to_turn_checkpoints_on() {
    if !tmux_available() {
        return;
    }
    let sb = Sandbox::start();
    let pane = Pane::start(&sb, "rollbackoff", "chat");
    pane.wait_for(PROMPT);
    pane.send_line("/rollback");
    pane.wait_for("Checkpoints are not enabled.");
    assert!(pane.screen().contains("hermes chat --checkpoints"));
}

#[test]
fn sessions_lists_recent_ones_and_resume_takes_a_number() {
    if !tmux_available() {
        return;
    }
    let sb = Sandbox::start();
    sb.mock.push(Reply::text("first answer"));
    let first = sb.chat("the first question", &[]);
    let first_id = session_id_of(&first);
    sb.mock.push(Reply::text("second answer"));
    assert!(sb.chat("the second question", &[]).status.success());
    let pane = Pane::start(&sb, "sessions", "chat");
    pane.wait_for(PROMPT);
    pane.send_line("/help");
    let help = pane.wait_for("/sessions");
    assert!(help.contains("/resume [ID|TITLE|N]"), "{help}");
    pane.send_line("/sessions");
    let screen = pane.wait_for("Use /resume <number>");
    assert!(screen.contains("Recent sessions:"), "{screen}");
    let row = |n: &str| {
        screen
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{n} ")))
            .unwrap_or_else(|| panic!("no row {n}: {screen}"))
            .to_owned()
    };
    assert!(
        row("1").contains("the second question"),
        "newest first: {screen}"
    );
    assert!(row("2").contains("the first question") && row("2").contains(&first_id));
    pane.send_line("/resume 2");
    pane.wait_for(&format!("Resumed session {first_id}"));
    sb.mock.push(Reply::text("third answer"));
    pane.send_line("and now?");
    pane.wait_for("third answer");
    let last = sb.requests().last().unwrap().to_string();
    assert!(
        last.contains("the first question") && !last.contains("the second question"),
        "{last}"
    );
}
