//! Session history through the binary: persistence, resume, continue, `hermes sessions`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::time::{Duration, Instant};

use hermes_mock::Reply;
use hermes_state::session_db::SessionDb;
use support::*;

fn sessions(sb: &Sandbox, args: &[&str]) -> std::process::Output {
    sb.command().arg("sessions").args(args).output().unwrap()
}

#[test]
fn a_chat_is_persisted_and_listed_shown_searched_and_exported() {
    let sb = Sandbox::start();
    sb.mock.push(Reply::tool_call(
        "c1",
        "terminal",
        r#"{"command":"echo persisted-output"}"#,
    ));
    sb.mock.push(Reply::text("The kumquat answer is 42."));
    let out = sb.chat("what is the kumquat answer?", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let id = session_id_of(&out);

    let db = SessionDb::open_read_only(&sb.home.path().join("state.db")).unwrap();
    let row = db.get_session(&id).unwrap().unwrap();
    assert_eq!(row.source, "cli");
    assert_eq!(row.model.as_deref(), Some("mock-model"));
    assert_eq!(row.message_count, 4);
    assert_eq!(row.tool_call_count, 1);
    assert_eq!(row.api_call_count, 2);
    assert!(row.input_tokens > 0 && row.output_tokens > 0);
    assert_eq!(row.end_reason.as_deref(), Some("cli_close"));
    assert!(
        row.system_prompt
            .as_deref()
            .unwrap_or("")
            .contains("Hermes")
    );
    drop(db);

    let list = sessions(&sb, &["list"]);
    assert!(list.status.success(), "{}", stderr(&list));
    assert!(
        stdout(&list).contains(&id) && stdout(&list).contains("what is the kumquat"),
        "{}",
        stdout(&list)
    );

    let show = sessions(&sb, &["show", &id[..18]]);
    let text = stdout(&show);
    assert!(
        text.contains("[user] what is the kumquat answer?") && text.contains("persisted-output"),
        "{text}"
    );

    let search = sessions(&sb, &["search", "kumquat"]);
    assert!(stdout(&search).contains(&id), "{}", stdout(&search));

    let export = sessions(&sb, &["export", "-"]);
    let line: serde_json::Value =
        serde_json::from_str(stdout(&export).lines().next().unwrap()).unwrap();
    assert_eq!(line["id"], id.as_str());
    assert_eq!(line["messages"].as_array().unwrap().len(), 4);
}

#[test]
fn resume_by_id_continues_the_conversation_with_the_stored_prompt() {
    let sb = Sandbox::start();
    sb.mock.push(Reply::text("First answer."));
    let first = sb.chat("remember the word zebra", &[]);
    let id = session_id_of(&first);
    sb.mock.push(Reply::text("The word was zebra."));
    let second = sb.chat("what was the word?", &["--resume", &id]);
    assert!(second.status.success(), "{}", stderr(&second));
    assert_eq!(session_id_of(&second), id);
    let reqs = sb.requests();
    let msgs = reqs[1]["messages"].as_array().unwrap();
    let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, vec!["system", "user", "assistant", "user"]);
    assert_eq!(
        msgs[0], reqs[0]["messages"][0],
        "same system prompt: the prefix cache holds"
    );
    assert_eq!(msgs[1]["content"], "remember the word zebra");
    let db = SessionDb::open_read_only(&sb.home.path().join("state.db")).unwrap();
    assert_eq!(db.get_session(&id).unwrap().unwrap().message_count, 4);
}

#[test]
fn continue_picks_the_latest_or_a_titled_session() {
    let sb = Sandbox::start();
    sb.mock.push(Reply::text("a"));
    let a = session_id_of(&sb.chat("session alpha", &[]));
    std::thread::sleep(Duration::from_millis(1100)); // distinct ids and timestamps
    sb.mock.push(Reply::text("b"));
    let b = session_id_of(&sb.chat("session beta", &[]));
    assert_ne!(a, b);

    sb.mock.push(Reply::text("continued"));
    let out = sb.chat("and now?", &["-c"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        session_id_of(&out),
        b,
        "plain -c continues the most recent session"
    );

    let renamed = sessions(&sb, &["rename", &a, "Alpha", "work"]);
    assert!(renamed.status.success(), "{}", stderr(&renamed));
    sb.mock.push(Reply::text("back to alpha"));
    let out = sb.chat("hello again", &["--continue", "Alpha work"]);
    assert_eq!(session_id_of(&out), a);
    let last = sb.requests().pop().unwrap();
    assert_eq!(last["messages"][1]["content"], "session alpha");
}

#[test]
fn unknown_resume_target_says_how_to_find_sessions() {
    let sb = Sandbox::start();
    let out = sb.chat("hi", &["--resume", "no-such-session"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("hermes sessions list"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn delete_needs_confirmation_without_a_tty_and_works_with_yes() {
    let sb = Sandbox::start();
    sb.mock.push(Reply::text("x"));
    let id = session_id_of(&sb.chat("to be deleted", &[]));
    let refused = sessions(&sb, &["delete", &id]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(stderr(&refused).contains("--yes"), "{}", stderr(&refused));
    let done = sessions(&sb, &["delete", &id, "--yes"]);
    assert!(done.status.success(), "{}", stderr(&done));
    let db = SessionDb::open_read_only(&sb.home.path().join("state.db")).unwrap();
    assert!(db.get_session(&id).unwrap().is_none());
    assert_eq!(db.message_count(None).unwrap(), 0);
}

#[test]
fn normal_mode_tells_how_to_resume() {
    let sb = Sandbox::start();
    sb.mock.push(Reply::text("hi"));
    let out = sb.command().args(["chat", "-q", "hello"]).output().unwrap();
    assert!(
        stderr(&out).contains("Resume this session with:\n  hermes --resume "),
        "{}",
        stderr(&out)
    );
}

#[test]
fn kill_9_mid_tool_call_leaves_a_resumable_session() {
    let sb = Sandbox::start();
    sb.mock.push(Reply::tool_call(
        "call_sleep",
        "terminal",
        r#"{"command":"sleep 30"}"#,
    ));
    let mut child = sb
        .command()
        .args(["chat", "-q", "run the long job", "-Q"])
        .spawn()
        .unwrap();
    let db_path = sb.home.path().join("state.db");
    let deadline = Instant::now() + Duration::from_secs(20);
    let id = loop {
        assert!(
            Instant::now() < deadline,
            "the tool call never reached the store"
        );
        if let Ok(db) = SessionDb::open_read_only(&db_path)
            && let Ok(Some(s)) = db.most_recent(None)
            && db
                .messages(&s.id)
                .unwrap_or_default()
                .iter()
                .any(|m| m.tool_calls.is_some())
        {
            break s.id;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_millis(200)); // the tool is running now
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    let db = SessionDb::open_read_only(&db_path).unwrap();
    let stored = db.messages(&id).unwrap();
    assert_eq!(
        stored.iter().map(|m| m.role.as_str()).collect::<Vec<_>>(),
        vec!["user", "assistant"]
    );
    drop(db);

    sb.mock
        .push(Reply::text("Resumed; the job was interrupted."));
    let out = sb.chat("continue please", &["--resume", &id]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Resumed; the job was interrupted.\n");
    let last = sb.requests().pop().unwrap(); // requests() checks every conversation is valid
    let roles: Vec<&str> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, vec!["system", "user", "assistant", "tool", "user"]);
    assert_eq!(last["messages"][3]["tool_call_id"], "call_sleep");
}
