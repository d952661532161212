//! Background-process news reaches an idle session at once: the session
//! says so with an event, and the front-end's `Announce` runs the turn.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::time::{Duration, Instant};

use hermes_mock::Reply;
use hermes_protocol::{Event, Op};
use serde_json::json;
use support::{Sandbox, final_text, turn, wait_for};

fn interactive(sb: &Sandbox) -> hermes_session::SessionSpec {
    let mut spec = sb.spec();
    spec.interactive = true;
    spec
}

#[tokio::test]
async fn a_finished_job_wakes_the_idle_session_and_announce_runs_its_turn() {
    let sb = Sandbox::new();
    sb.mock.push(Reply::tool_call(
        "t1",
        "terminal",
        &json!({
            "command": "sleep 0.3; echo job-done-marker",
            "background": true,
            "notify_on_complete": true
        })
        .to_string(),
    ));
    sb.mock.push(Reply::text("started it"));
    sb.mock.push(Reply::text("the job is done"));
    let mut conv = sb.manager().start(interactive(&sb)).await.unwrap();
    let events = turn(&mut conv, "run the job").await;
    assert_eq!(final_text(&events), "started it");
    let started = Instant::now();
    let offered = wait_for(&mut conv, |e| *e == Event::AnnouncementsWaiting).await;
    assert_eq!(offered.submission, 0);
    assert!(started.elapsed() < Duration::from_secs(5));
    // Nothing reached the model until the front-end asked for the turn.
    assert_eq!(sb.mock.chat_requests().len(), 2);
    let mut seen = Vec::new();
    let end = conv
        .request(Op::Announce, |e| seen.push(e.clone()))
        .await
        .unwrap();
    assert!(matches!(end, Event::TurnComplete { .. }), "{end:?}");
    let Some(Event::Announced { text }) = seen.first() else {
        panic!("the turn did not start with its message: {seen:?}");
    };
    assert!(
        text.starts_with("[IMPORTANT: Background process proc_"),
        "{text}"
    );
    assert!(
        text.ends_with(
            " completed normally (exit code 0).\nCommand: sleep 0.3; echo job-done-marker\n\
             Output:\njob-done-marker]"
        ),
        "{text}"
    );
    assert_eq!(final_text(&seen), "the job is done");
    let requests = sb.mock.chat_requests();
    assert_eq!(requests.len(), 3);
    let last = requests[2]["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["role"], "user");
    assert_eq!(last["content"].as_str(), Some(text.as_str()));
    // Told once: a second Announce finds nothing.
    let again = conv.request(Op::Announce, |_| {}).await.unwrap();
    assert_eq!(again, Event::Ack);
}

#[tokio::test]
async fn news_that_came_during_a_turn_is_offered_when_it_ends() {
    let sb = Sandbox::new();
    sb.mock.push(Reply::tool_call(
        "t1",
        "terminal",
        &json!({
            "command": "echo quick-job",
            "background": true,
            "notify_on_complete": true
        })
        .to_string(),
    ));
    // The turn goes on past the job's end.
    sb.mock.push(Reply::tool_call(
        "t2",
        "terminal",
        &json!({"command": "sleep 1"}).to_string(),
    ));
    sb.mock.push(Reply::text("done waiting"));
    let mut conv = sb.manager().start(interactive(&sb)).await.unwrap();
    let mut order = Vec::new();
    let id = conv.submit(Op::UserInput { text: "go".into() }).unwrap();
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(20), conv.next_event())
            .await
            .unwrap()
            .unwrap();
        let waiting = ev.event == Event::AnnouncementsWaiting;
        if ev.submission == id && ev.event.is_terminal() || waiting {
            order.push(ev.event);
        }
        if waiting {
            break;
        }
    }
    assert!(
        matches!(
            order.as_slice(),
            [Event::TurnComplete { .. }, Event::AnnouncementsWaiting]
        ),
        "{order:?}"
    );
}
