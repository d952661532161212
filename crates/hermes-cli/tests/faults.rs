//! The fault matrix through the binary: each way a provider can fail ends the
//! one-shot run with exit 1, a message that names the fault, inside a bounded
//! time, with state.db intact (the question stored, no answer) and the session
//! resumable once the provider works again.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::time::{Duration, Instant};

use hermes_mock::Reply;
use hermes_protocol::Role;
use hermes_state::SessionDb;
use support::*;

/// One row: how the provider misbehaves and what the user must see.
struct Fault {
    /// Replies for every attempt the run makes (all must be used).
    replies: Vec<Reply>,
    /// Extra config.yaml.
    config: &'static str,
    /// Extra environment.
    env: &'static [(&'static str, &'static str)],
    /// Every one of these must be in stderr.
    says: &'static [&'static str],
    /// Nothing the user sees may contain these.
    never_says: &'static [&'static str],
    /// The run must end within this.
    within: Duration,
}

const ONE_ATTEMPT: &str = "agent:\n  api_max_retries: 1\n";

fn times(n: usize, reply: impl Fn() -> Reply) -> Vec<Reply> {
    (0..n).map(|_| reply()).collect()
}

/// Runs the fault, checks the failure, then checks the session survives it.
fn check(fault: Fault) {
    let sb = Sandbox::start();
    sb.add_config(fault.config);
    let attempts = fault.replies.len();
    sb.mock.push_all(fault.replies);
    let started = Instant::now();
    let mut cmd = sb.command();
    cmd.args(["chat", "-q", "what is the capital of France?", "-Q"]);
    for (k, v) in fault.env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let took = started.elapsed();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "exit code; stderr:\n{err}");
    assert_eq!(stdout(&out).trim(), "", "no answer printed");
    for needle in fault.says {
        assert!(err.contains(needle), "stderr lacks {needle:?}:\n{err}");
    }
    for needle in fault.never_says {
        assert!(!err.contains(needle), "stderr has {needle:?}:\n{err}");
    }
    assert!(
        took <= fault.within,
        "took {took:?}, more than {:?}",
        fault.within
    );
    assert_eq!(sb.mock.remaining(), 0, "expected {attempts} attempts");

    // state.db: intact, the question kept, nothing stored as the answer.
    let db_path = sb.home.path().join("state.db");
    let raw = rusqlite::Connection::open(&db_path).unwrap();
    let check: String = raw
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    drop(raw);
    let id = session_id_of(&out);
    let stored = SessionDb::open(&db_path)
        .unwrap()
        .conversation(&id)
        .unwrap();
    let roles: Vec<Role> = stored.iter().map(|m| m.role).collect();
    assert_eq!(roles, [Role::User], "{stored:?}");

    // The log says the turn failed, and never that it completed.
    let logs = sb.home.path().join("logs");
    let errors = std::fs::read_to_string(logs.join("errors.log")).unwrap();
    assert!(errors.contains(&id), "errors.log:\n{errors}");
    let agent = std::fs::read_to_string(logs.join("agent.log")).unwrap();
    assert!(!agent.contains("Completed"), "agent.log:\n{agent}");

    // The provider recovers: the same session goes on with both questions.
    assert_resumes_with(&sb, &id, "capital of France");
}

#[test]
fn server_errors_retry_twice_within_seconds_then_fail() {
    check(Fault {
        replies: times(3, || {
            Reply::error(500, r#"{"error":{"message":"upstream exploded"}}"#)
        }),
        config: "",
        env: &[],
        says: &["HTTP 500", "upstream exploded", "server error"],
        never_says: &[],
        // Two waits of 2–3 s and 4–6 s, as the reference's curve.
        within: Duration::from_secs(15),
    });
}

#[test]
fn rate_limits_honour_retry_after_then_fail() {
    check(Fault {
        replies: times(3, || {
            Reply::error(429, r#"{"error":{"message":"slow down"}}"#)
                .with_header("retry-after", "1")
        }),
        config: "",
        env: &[],
        says: &["HTTP 429", "rate limiting"],
        never_says: &[],
        within: Duration::from_secs(8),
    });
}

#[test]
fn a_retry_after_longer_than_the_wait_budget_fails_at_once() {
    check(Fault {
        replies: times(1, || {
            Reply::error(429, r#"{"error":{"message":"quota"}}"#).with_header("retry-after", "300")
        }),
        config: "agent:\n  api_retry_max_wait_seconds: 30\n",
        env: &[],
        says: &["HTTP 429"],
        never_says: &[],
        within: Duration::from_secs(5),
    });
}

#[test]
fn an_html_502_is_summarised_not_dumped() {
    let page = "<!DOCTYPE html><html><head><title>502 Bad Gateway</title>\
                <style>body{color:red}</style></head><body><h1>502</h1>\
                <p>nginx</p></body></html>";
    check(Fault {
        replies: times(1, || {
            Reply::error(502, page).with_header("content-type", "text/html")
        }),
        config: ONE_ATTEMPT,
        env: &[],
        says: &["HTTP 502", "HTML error page", "502 Bad Gateway"],
        never_says: &["<html", "<style", "DOCTYPE"],
        within: Duration::from_secs(5),
    });
}

#[test]
fn a_200_that_is_not_a_model_reply_is_named() {
    check(Fault {
        replies: times(1, || {
            Reply::error(200, "Welcome to the captive portal")
                .with_header("content-type", "text/plain")
        }),
        config: ONE_ATTEMPT,
        env: &[],
        says: &[
            "not a model response",
            "Welcome to the captive portal",
            "check the base URL",
        ],
        never_says: &["timed out", "timeout"],
        within: Duration::from_secs(5),
    });
}

#[test]
fn garbage_in_the_event_stream_is_a_decode_error() {
    check(Fault {
        replies: times(1, || {
            Reply::raw_sse(vec!["{this is not json".into(), "[DONE]".into()])
        }),
        config: ONE_ATTEMPT,
        env: &[],
        says: &["cannot decode", "{this is not json"],
        never_says: &["timed out"],
        within: Duration::from_secs(5),
    });
}

#[test]
fn a_cut_stream_says_the_connection_dropped() {
    check(Fault {
        replies: times(1, || Reply::text("Paris is the capital").cut_after(1)),
        config: ONE_ATTEMPT,
        env: &[],
        says: &[
            "connection lost mid-stream",
            "dropped before the reply was complete",
        ],
        never_says: &["timed out"],
        within: Duration::from_secs(5),
    });
}

#[test]
fn a_refused_connection_is_not_called_a_timeout() {
    let sb = Sandbox::start();
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    std::fs::write(
        sb.home.path().join("config.yaml"),
        format!(
            "model:\n  provider: custom\n  base_url: http://127.0.0.1:{port}/v1\n  default: m\n"
        ),
    )
    .unwrap();
    let started = Instant::now();
    let out = sb.command().args(["chat", "-q", "hi"]).output().unwrap();
    let took = started.elapsed();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("Connection refused"), "{err}");
    assert!(err.contains("is the server running"), "{err}");
    assert!(err.contains("cannot connect"), "{err}");
    assert!(!err.to_lowercase().contains("timeout"), "{err}");
    assert!(!err.contains("timed out"), "{err}");
    assert!(took < Duration::from_secs(15), "took {took:?}");
}

#[test]
fn a_413_is_a_request_size_problem_not_a_context_overflow() {
    check(Fault {
        replies: times(1, || {
            Reply::error(413, r#"{"error":{"message":"Request Entity Too Large"}}"#)
        }),
        config: "",
        env: &[],
        says: &["HTTP 413", "too large", "Shorten the last message"],
        never_says: &["context window"],
        within: Duration::from_secs(5),
    });
}

#[test]
fn a_context_overflow_that_cannot_shrink_says_so() {
    let overflow = r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens."}}"#;
    check(Fault {
        replies: times(2, || Reply::error(400, overflow)),
        config: "",
        env: &[],
        says: &["context window", "new session"],
        never_says: &[],
        within: Duration::from_secs(5),
    });
}

#[test]
fn empty_replies_forever_fail() {
    check(Fault {
        replies: times(4, || Reply::text("")),
        config: "",
        env: &[],
        says: &["empty reply 4 times"],
        never_says: &[],
        within: Duration::from_secs(10),
    });
}

#[test]
fn a_stall_past_the_read_timeout_fails_fast() {
    check(Fault {
        replies: times(1, || Reply::text("late").with_delay(Duration::from_secs(8))),
        config: ONE_ATTEMPT,
        env: &[("HERMES_STREAM_READ_TIMEOUT", "1")],
        says: &["timed out", "HERMES_STREAM_READ_TIMEOUT"],
        never_says: &["is the server running"],
        within: Duration::from_secs(5),
    });
}

#[test]
fn a_stream_that_trickles_past_the_request_timeout_is_cut() {
    let long = "word ".repeat(40);
    check(Fault {
        replies: times(1, || {
            Reply::text(long.clone()).with_chunk_delay(Duration::from_millis(300))
        }),
        config: ONE_ATTEMPT,
        env: &[("HERMES_API_TIMEOUT", "2")],
        says: &["time limit", "HERMES_API_TIMEOUT"],
        never_says: &[],
        within: Duration::from_secs(6),
    });
}

#[test]
fn config_request_timeout_applies_per_provider() {
    check(Fault {
        replies: times(1, || Reply::text("late").with_delay(Duration::from_secs(8))),
        config: "providers:\n  custom:\n    request_timeout_seconds: 1\nagent:\n  api_max_retries: 1\n",
        env: &[],
        says: &["timed out"],
        never_says: &[],
        within: Duration::from_secs(5),
    });
}
