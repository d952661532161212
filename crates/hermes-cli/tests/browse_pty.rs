//! `hermes sessions browse` in a real pseudo-terminal: type to filter, Enter
//! resumes the chosen session in the REPL with its history.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_mock::Reply;
use support::pty::{PROMPT, Pane, tmux_available};
use support::*;

#[test]
fn browse_filters_and_resumes_the_chosen_session() {
    if !tmux_available() {
        return;
    }
    let sb = Sandbox::start();
    sb.mock.push(Reply::text("Noted the llama facts."));
    let first = sb.chat("Remember: llamas hum when they are curious.", &[]);
    assert!(first.status.success(), "{}", stderr(&first));
    sb.mock.push(Reply::text("Weather noted."));
    let second = sb.chat("It is raining in Lisbon today.", &[]);
    assert!(second.status.success(), "{}", stderr(&second));
    let llama = session_id_of(&first);

    let pane = Pane::start(&sb, "browse", "sessions browse");
    let screen = pane.wait_for("Resume a session (2 of 2)");
    assert!(screen.contains(&llama), "{screen}");
    pane.type_text("llama");
    pane.wait_for("(1 of 2)");
    pane.keys(&["Enter"]);
    let screen = pane.wait_for(PROMPT);
    assert!(
        screen.contains(&llama),
        "the REPL continues that session: {screen}"
    );

    sb.mock.push(Reply::text("They hum."));
    pane.send_line("What do llamas do?");
    pane.wait_for("They hum.");
    let last = sb.requests().pop().unwrap();
    let users = messages_with_role(&last, "user");
    assert_eq!(users.len(), 2, "{last:#}");
    assert!(
        users[0]["content"]
            .as_str()
            .unwrap()
            .contains("llamas hum when they are curious")
    );
}

#[test]
fn browse_without_a_terminal_says_what_to_do_instead() {
    let sb = Sandbox::start();
    sb.mock.push(Reply::text("ok"));
    assert!(sb.chat("hello", &[]).status.success());
    let out = sb.command().args(["sessions", "browse"]).output().unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("browse needs a terminal"),
        "{}",
        stderr(&out)
    );
}
