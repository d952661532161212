//! The session runtime driven as a front-end drives it: ops in, events out,
//! questions answered with ops, against the mock and a real state.db.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::time::{Duration, Instant};

use hermes_mock::Reply;
use hermes_protocol::{ApprovalChoice, Event, Op, TurnEnd};
use serde_json::json;
use support::{Sandbox, final_text, last_tool_result, turn, wait_for};

fn terminal(command: &str) -> Reply {
    Reply::tool_call("t1", "terminal", &json!({ "command": command }).to_string())
}

#[tokio::test]
async fn approval_is_an_event_answered_with_an_op() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.work().join("build/obj")).unwrap();
    sb.mock
        .push_all([terminal("rm -rf build"), Reply::text("removed it")]);
    let mut conv = sb
        .manager()
        .start(hermes_session::SessionSpec {
            interactive: true,
            ..sb.spec()
        })
        .await
        .unwrap();
    let id = conv
        .submit(Op::UserInput {
            text: "clean up".into(),
        })
        .unwrap();
    let asked = wait_for(&mut conv, |e| matches!(e, Event::ApprovalRequested { .. })).await;
    assert_eq!(asked.submission, id);
    let Event::ApprovalRequested {
        request_id,
        command,
        reason,
    } = asked.event
    else {
        unreachable!()
    };
    assert_eq!(command, "rm -rf build");
    assert!(reason.contains("delete"), "{reason}");
    assert!(
        sb.work().join("build").exists(),
        "nothing runs before the answer"
    );
    conv.submit(Op::ApprovalAnswer {
        request_id,
        choice: ApprovalChoice::Once,
    })
    .unwrap();
    let done = wait_for(&mut conv, Event::is_terminal).await;
    assert!(matches!(done.event, Event::TurnComplete { .. }), "{done:?}");
    assert!(!sb.work().join("build").exists(), "approved, so it ran");
}

#[tokio::test]
async fn a_denied_or_headless_dangerous_command_does_not_run() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.work().join("build")).unwrap();
    // Interactive, denied.
    sb.mock
        .push_all([terminal("rm -rf build"), Reply::text("ok, left it")]);
    let mut conv = sb
        .manager()
        .start(hermes_session::SessionSpec {
            interactive: true,
            ..sb.spec()
        })
        .await
        .unwrap();
    conv.submit(Op::UserInput {
        text: "clean up".into(),
    })
    .unwrap();
    let Event::ApprovalRequested { request_id, .. } =
        wait_for(&mut conv, |e| matches!(e, Event::ApprovalRequested { .. }))
            .await
            .event
    else {
        unreachable!()
    };
    conv.submit(Op::ApprovalAnswer {
        request_id,
        choice: ApprovalChoice::Deny,
    })
    .unwrap();
    wait_for(&mut conv, Event::is_terminal).await;
    assert!(sb.work().join("build").exists());
    assert!(
        last_tool_result(&sb).contains("denied"),
        "{}",
        last_tool_result(&sb)
    );

    // Headless: refused at once, nobody is asked.
    sb.mock
        .push_all([terminal("rm -rf build"), Reply::text("ok")]);
    let mut conv = sb.manager().start(sb.spec()).await.unwrap();
    let events = turn(&mut conv, "clean up").await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::ApprovalRequested { .. }))
    );
    assert!(sb.work().join("build").exists());
}

#[tokio::test]
async fn clarify_is_an_event_answered_with_an_op() {
    let sb = Sandbox::new();
    sb.mock.push_all([
        Reply::tool_call(
            "c1",
            "clarify",
            &json!({"question": "Which target?", "choices": ["staging", "prod"]}).to_string(),
        ),
        Reply::text("deploying to prod"),
    ]);
    let mut conv = sb
        .manager()
        .start(hermes_session::SessionSpec {
            interactive: true,
            ..sb.spec()
        })
        .await
        .unwrap();
    conv.submit(Op::UserInput {
        text: "deploy".into(),
    })
    .unwrap();
    let Event::ClarifyRequested {
        request_id,
        question,
        choices,
    } = wait_for(&mut conv, |e| matches!(e, Event::ClarifyRequested { .. }))
        .await
        .event
    else {
        unreachable!()
    };
    assert_eq!(question, "Which target?");
    assert_eq!(choices, vec!["staging", "prod"]);
    conv.submit(Op::ClarifyAnswer {
        request_id,
        answer: Some("prod".into()),
    })
    .unwrap();
    wait_for(&mut conv, Event::is_terminal).await;
    assert!(
        last_tool_result(&sb).contains("prod"),
        "{}",
        last_tool_result(&sb)
    );
}

#[tokio::test]
async fn an_interrupt_ends_the_running_turn_at_once() {
    let sb = Sandbox::new();
    sb.mock
        .push(Reply::text("too late").with_delay(Duration::from_secs(30)));
    let mut conv = sb.manager().start(sb.spec()).await.unwrap();
    let started = Instant::now();
    let id = conv
        .submit(Op::UserInput {
            text: "take your time".into(),
        })
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    conv.submit(Op::Interrupt).unwrap();
    let done = wait_for(&mut conv, Event::is_terminal).await;
    assert_eq!(done.submission, id);
    assert!(
        matches!(
            done.event,
            Event::TurnComplete {
                reason: TurnEnd::Interrupted,
                ..
            }
        ),
        "{done:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn input_sent_mid_turn_waits_for_it_and_runs_next() {
    let sb = Sandbox::new();
    sb.mock.push_all([
        Reply::text("first answer").with_delay(Duration::from_millis(300)),
        Reply::text("second answer"),
    ]);
    let mut conv = sb.manager().start(sb.spec()).await.unwrap();
    let a = conv.submit(Op::UserInput { text: "one".into() }).unwrap();
    let b = conv.submit(Op::UserInput { text: "two".into() }).unwrap();
    let mut ends = Vec::new();
    while ends.len() < 2 {
        let ev = wait_for(&mut conv, Event::is_terminal).await;
        let Event::TurnComplete { final_text, .. } = ev.event else {
            panic!("{ev:?}")
        };
        ends.push((ev.submission, final_text));
    }
    assert_eq!(
        ends,
        vec![(a, "first answer".into()), (b, "second answer".into())]
    );
    let second = &sb.mock.chat_requests()[1];
    let users: Vec<String> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| support::text_of(&m["content"]))
        .collect();
    assert_eq!(users, vec!["one", "two"], "one turn after the other");
}

#[tokio::test]
async fn steer_goes_with_the_next_tool_result_and_an_unused_one_is_reported() {
    let sb = Sandbox::new();
    sb.mock.push_all([
        terminal("sleep 1; echo built"),
        Reply::text("done"),
        Reply::text("no tools here").with_delay(Duration::from_millis(400)),
    ]);
    let mut conv = sb.manager().start(sb.spec()).await.unwrap();
    conv.submit(Op::UserInput {
        text: "build".into(),
    })
    .unwrap();
    wait_for(&mut conv, |e| matches!(e, Event::ToolStarted { .. })).await;
    conv.submit(Op::Steer {
        text: "use release mode".into(),
    })
    .unwrap();
    wait_for(&mut conv, Event::is_terminal).await;
    let result = last_tool_result(&sb);
    assert!(
        result.contains("use release mode") && result.contains("USER STEER"),
        "{result}"
    );

    // A steer with no tool call left in the turn comes back to the front-end.
    let id = conv
        .submit(Op::UserInput {
            text: "chat".into(),
        })
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    conv.submit(Op::Steer {
        text: "be brief".into(),
    })
    .unwrap();
    let unused = wait_for(&mut conv, |e| {
        matches!(e, Event::SteerUnused { .. }) || e.is_terminal()
    })
    .await;
    assert_eq!(unused.submission, id);
    assert_eq!(
        unused.event,
        Event::SteerUnused {
            text: "be brief".into()
        }
    );
    let end = wait_for(&mut conv, Event::is_terminal).await;
    assert!(matches!(end.event, Event::TurnComplete { .. }));
}

#[tokio::test]
async fn session_commands_change_the_session_and_the_store() {
    let sb = Sandbox::new();
    sb.mock.push_all([
        Reply::text("a1"),
        Reply::text("a2"),
        Reply::text("a3"),
        Reply::text("a4"),
    ]);
    let mut conv = sb.manager().start(sb.spec()).await.unwrap();
    let first = conv.info().session_id;
    assert_eq!(final_text(&turn(&mut conv, "q1").await), "a1");
    assert_eq!(final_text(&turn(&mut conv, "q2").await), "a2");

    let undone = conv.request(Op::Undo { turns: 1 }, |_| {}).await.unwrap();
    assert_eq!(
        undone,
        Event::Undone {
            text: Some("q2".into()),
            removed: 2
        }
    );
    let titled = conv
        .request(
            Op::SetTitle {
                title: "first try".into(),
            },
            |_| {},
        )
        .await
        .unwrap();
    assert_eq!(titled, Event::Ack);

    let changed = conv.request(Op::NewSession, |_| {}).await.unwrap();
    let Event::SessionChanged { session_id, .. } = changed else {
        panic!("{changed:?}")
    };
    assert_ne!(session_id, first);
    assert_eq!(conv.info().session_id, session_id);
    assert_eq!(conv.info().messages, 1, "only the system prompt");

    let switched = conv
        .request(
            Op::SwitchModel {
                target: "other-model".into(),
            },
            |_| {},
        )
        .await
        .unwrap();
    assert!(matches!(switched, Event::ModelChanged { ref model, .. } if model == "other-model"));
    let overlay = conv
        .request(
            Op::SetPromptOverlay {
                overlay: Some("Talk like a pirate.".into()),
            },
            |_| {},
        )
        .await
        .unwrap();
    assert_eq!(overlay, Event::Ack);
    assert_eq!(final_text(&turn(&mut conv, "q3").await), "a3");
    let last = sb.mock.chat_requests().last().unwrap().clone();
    assert_eq!(last["model"], "other-model");
    assert!(
        support::text_of(&last["messages"][0]["content"]).ends_with("Talk like a pirate."),
        "the overlay follows the system prompt"
    );

    let resumed = conv
        .request(
            Op::Resume {
                key: "first try".into(),
            },
            |_| {},
        )
        .await
        .unwrap();
    assert_eq!(
        resumed,
        Event::SessionChanged {
            session_id: first.clone(),
            reason: "resumed".into(),
            messages: 2
        }
    );
    assert_eq!(final_text(&turn(&mut conv, "q4").await), "a4");
    conv.shutdown("test_close").await.unwrap();

    let db = sb.db();
    let old = db.get_session(&first).unwrap().unwrap();
    assert_eq!(old.title.as_deref(), Some("first try"));
    assert_eq!(old.end_reason.as_deref(), Some("test_close"));
    let texts: Vec<String> = db
        .conversation(&first)
        .unwrap()
        .iter()
        .map(|m| m.text().to_owned())
        .collect();
    assert_eq!(texts, vec!["q1", "a1", "q4", "a4"], "q2 was undone");
    let second = db.get_session(&session_id).unwrap().unwrap();
    assert_eq!(second.end_reason.as_deref(), Some("resumed_other"));
}

#[tokio::test]
async fn a_slow_reader_pauses_the_session_instead_of_buffering_without_bound() {
    let sb = Sandbox::new();
    // ~600 text deltas in the first answer, more than the event buffer holds.
    let long = "word ".repeat(1000);
    sb.mock
        .push_all([Reply::text(long.clone()), Reply::text("second")]);
    let mut conv = sb.manager().start(sb.spec()).await.unwrap();
    conv.submit(Op::UserInput { text: "one".into() }).unwrap();
    conv.submit(Op::UserInput { text: "two".into() }).unwrap();
    // Nobody reads: the first turn stalls on the full buffer, so the second
    // never reaches the model.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(sb.mock.chat_requests().len(), 1);
    // Reading lets both finish, with nothing lost.
    let mut text = String::new();
    let mut ends = 0;
    while ends < 2 {
        let ev = wait_for(&mut conv, |_| true).await;
        match ev.event {
            Event::TextDelta { text: t } if ends == 0 => text.push_str(&t),
            e if e.is_terminal() => ends += 1,
            _ => {}
        }
    }
    assert_eq!(text, long);
    assert_eq!(sb.mock.chat_requests().len(), 2);
}

#[test]
fn a_turn_cut_short_while_an_approval_waits_is_continued_after_resume() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.work().join("build")).unwrap();
    sb.mock
        .push_all([terminal("rm -rf build"), Reply::text("cleaned up")]);
    let interactive = || hermes_session::SessionSpec {
        interactive: true,
        ..sb.spec()
    };
    let runtime = || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    };
    // The first process asks for approval, then dies: dropping its runtime
    // stops every task mid-turn, as a killed process would.
    let session_id = runtime().block_on(async {
        let mut conv = sb.manager().start(interactive()).await.unwrap();
        conv.submit(Op::UserInput {
            text: "clean up".into(),
        })
        .unwrap();
        wait_for(&mut conv, |e| matches!(e, Event::ApprovalRequested { .. })).await;
        conv.info().session_id
    });
    assert!(sb.work().join("build").exists());
    let stored = sb.db().conversation(&session_id).unwrap();
    assert_eq!(
        stored.len(),
        2,
        "the message and the reply asking for the tool"
    );
    assert_eq!(stored[1].tool_calls.len(), 1);

    // The next process resumes the session and finishes the turn.
    runtime().block_on(async {
        let mut conv = sb
            .manager()
            .start(hermes_session::SessionSpec {
                resume: Some(hermes_session::ResumeRequest::Resume(session_id.clone())),
                ..interactive()
            })
            .await
            .unwrap();
        assert_eq!(conv.info().pending_tool_calls, 1);
        conv.submit(Op::ContinueTurn).unwrap();
        let Event::ApprovalRequested { request_id, .. } =
            wait_for(&mut conv, |e| matches!(e, Event::ApprovalRequested { .. }))
                .await
                .event
        else {
            unreachable!()
        };
        conv.submit(Op::ApprovalAnswer {
            request_id,
            choice: ApprovalChoice::Once,
        })
        .unwrap();
        let end = wait_for(&mut conv, Event::is_terminal).await;
        assert!(
            matches!(&end.event, Event::TurnComplete { final_text, .. } if final_text == "cleaned up"),
            "{end:?}"
        );
        assert_eq!(conv.info().pending_tool_calls, 0);
        let again = conv.request(Op::ContinueTurn, |_| {}).await.unwrap();
        assert!(matches!(again, Event::Error { .. }), "nothing left: {again:?}");
        conv.shutdown("test_close").await.unwrap();
    });
    assert!(!sb.work().join("build").exists());
    let roles: Vec<hermes_protocol::Role> = sb
        .db()
        .conversation(&session_id)
        .unwrap()
        .iter()
        .map(|m| m.role)
        .collect();
    use hermes_protocol::Role::{Assistant, Tool, User};
    assert_eq!(
        roles,
        vec![User, Assistant, Tool, Assistant],
        "no row written twice"
    );
}
