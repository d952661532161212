//! A provider that answers with nothing (no text, no tool calls) through the
//! binary: retried as the reference does, never stored as the answer, and a
//! clear failure with exit 1 when it never stops.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_mock::Reply;
use hermes_state::SessionDb;
use support::*;

#[test]
fn an_empty_reply_is_retried_and_the_real_one_is_the_answer() {
    let sb = Sandbox::start();
    sb.mock.push_all([Reply::text(""), Reply::text("Paris.")]);
    let out = sb.chat("capital of France?", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "Paris.");
    assert_eq!(sb.mock.chat_requests().len(), 2);
    let db = SessionDb::open(&sb.home.path().join("state.db")).unwrap();
    let texts: Vec<String> = db
        .conversation(&session_id_of(&out))
        .unwrap()
        .iter()
        .map(|m| m.text().to_owned())
        .collect();
    assert_eq!(
        texts,
        vec!["capital of France?", "Paris."],
        "nothing empty stored"
    );
}

#[test]
fn empty_replies_forever_fail_clearly_and_leave_a_resumable_session() {
    let sb = Sandbox::start();
    sb.mock.push_all((0..4).map(|_| Reply::text("")));
    let out = sb.chat("capital of France?", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "", "no empty answer printed");
    let err = stderr(&out);
    assert!(err.contains("empty reply 4 times"), "{err}");
    assert!(err.contains("switch models"), "{err}");
    assert_eq!(
        sb.mock.chat_requests().len(),
        4,
        "the first call and three retries"
    );
    let id = session_id_of(&out);
    let db = SessionDb::open(&sb.home.path().join("state.db")).unwrap();
    let stored = db.conversation(&id).unwrap();
    assert_eq!(stored.len(), 1, "only the user's message: {stored:?}");
    drop(db);
    assert_resumes_with(&sb, &id, "capital of France?");
}
