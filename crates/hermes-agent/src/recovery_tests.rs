//! The retry decision over the classifier's verdicts, with no HTTP: each row
//! runs a failure through `classify_parts` and checks what follows it.

use std::time::Duration;

use hermes_llm::{ErrorContext, ErrorKind, FailoverReason as F, classify_parts};

use super::*;

const SECS: fn(u64) -> Duration = Duration::from_secs;

fn verdict(status: u16, body: &str, message: &str, kind: ErrorKind) -> ClassifiedError {
    let status = (status != 0).then_some(status);
    classify_parts(status, body, message, kind, &ErrorContext::default())
}

fn state(attempt: u32, rotation_refused: bool, can_fall_back: bool) -> RetryState {
    RetryState {
        attempt,
        waited: Duration::ZERO,
        rotation_refused,
        can_fall_back,
    }
}

const FRESH: RetryState = RetryState {
    attempt: 0,
    waited: Duration::ZERO,
    rotation_refused: false,
    can_fall_back: true,
};

fn retry(secs: u64, attempt: u32) -> Recovery {
    Recovery::Retry {
        delay: SECS(secs),
        attempt,
    }
}

/// (name, status (0 = none), body, message, kind, expected reason, state, expected decision)
type Row = (
    &'static str,
    u16,
    &'static str,
    &'static str,
    ErrorKind,
    F,
    RetryState,
    Recovery,
);

#[test]
fn decision_table_over_the_classifier() {
    use ErrorKind::{Http as H, Timeout as TO, Transport as T};
    let policy = RetryPolicy::default();
    let overflow = r#"{"error":{"message":"This model's maximum context length is 8192 tokens"}}"#;
    #[rustfmt::skip]
    let rows: Vec<Row> = vec![
        ("401 rotates the key first", 401, "", "Unauthorized", H, F::Auth, FRESH, Recovery::Rotate),
        ("401 with no key left falls back", 401, "", "Unauthorized", H, F::Auth, state(0, true, true), Recovery::FallBack),
        ("401 with nothing left fails", 401, "", "Unauthorized", H, F::Auth, state(0, true, false), Recovery::Fail),
        ("403 never rotates", 403, "", "Forbidden", H, F::Auth, FRESH, Recovery::FallBack),
        ("402 rotates, then falls back", 402, "", "Payment Required", H, F::Billing, state(0, true, true), Recovery::FallBack),
        ("429 rotates first", 429, "", "Too Many Requests", H, F::RateLimit, FRESH, Recovery::Rotate),
        ("429 without another key backs off", 429, "", "Too Many Requests", H, F::RateLimit, state(0, true, true), retry(2, 1)),
        ("503 backs off", 503, "", "Service Unavailable", H, F::Overloaded, FRESH, retry(2, 1)),
        ("500 backs off, doubling", 500, "", "Internal Server Error", H, F::ServerError, state(1, false, true), retry(4, 2)),
        ("500 after the last retry falls back", 500, "", "Internal Server Error", H, F::ServerError, state(2, false, true), Recovery::FallBack),
        ("500 after the last retry with no route fails", 500, "", "Internal Server Error", H, F::ServerError, state(2, false, false), Recovery::Fail),
        ("a timeout backs off", 0, "", "no response", TO, F::Timeout, FRESH, retry(2, 1)),
        ("a refused connection backs off", 0, "", "connection refused", T, F::Timeout, FRESH, retry(2, 1)),
        ("context overflow compresses", 400, overflow, "Bad Request", H, F::ContextOverflow, FRESH, Recovery::Compress),
        ("413 compresses", 413, "", "Payload Too Large", H, F::PayloadTooLarge, FRESH, Recovery::Compress),
        ("an unknown model falls back", 404, r#"{"error":{"message":"model not found"}}"#, "Not Found", H, F::ModelNotFound, FRESH, Recovery::FallBack),
        ("an unknown model with no route fails", 404, r#"{"error":{"message":"model not found"}}"#, "Not Found", H, F::ModelNotFound, state(0, false, false), Recovery::Fail),
        ("a malformed request is not retried", 400, r#"{"error":{"message":"invalid parameter: tools[0]"}}"#, "Bad Request", H, F::FormatError, state(0, false, false), Recovery::Fail),
    ];
    for (name, status, body, message, kind, reason, st, want) in rows {
        let v = verdict(status, body, message, kind);
        assert_eq!(v.reason, reason, "{name}: classified as {:?}", v.reason);
        assert_eq!(decide(&v, &st, &policy, 0.0), want, "{name}");
    }
}

#[test]
fn every_reason_ends_in_a_decision_that_terminates() {
    // Whatever the classifier says, repeating the decision with the state the
    // driver would carry forward reaches Fail without a fallback route.
    let policy = RetryPolicy::default();
    for reason in F::ALL {
        let mut v = verdict(500, "", "x", ErrorKind::Http);
        v.reason = reason;
        let mut st = state(0, false, false);
        let mut steps = 0;
        loop {
            steps += 1;
            assert!(steps < 20, "{reason:?} does not terminate");
            match decide(&v, &st, &policy, 0.5) {
                Recovery::Rotate => st.rotation_refused = true,
                Recovery::Retry { delay, attempt } => {
                    st.attempt = attempt;
                    st.waited += delay;
                    st.rotation_refused = false;
                }
                Recovery::Fail | Recovery::FallBack | Recovery::Compress => break,
            }
        }
    }
}

#[test]
fn retry_after_is_honoured_but_capped() {
    let patient = RetryPolicy {
        max_total_wait: SECS(3600),
        ..RetryPolicy::default()
    };
    let mut v = verdict(503, "", "busy", ErrorKind::Http);
    v.retry_after = Some(SECS(7));
    assert_eq!(decide(&v, &FRESH, &patient, 0.9), retry(7, 1));
    v.retry_after = Some(SECS(900));
    assert_eq!(decide(&v, &FRESH, &patient, 0.0), retry(600, 1));
    // Longer than the whole wait budget: give the route up at once.
    let policy = RetryPolicy::default();
    assert_eq!(decide(&v, &FRESH, &policy, 0.0), Recovery::FallBack);
}

#[test]
fn jitter_comes_from_the_injected_unit() {
    let policy = RetryPolicy::default();
    let v = verdict(503, "", "busy", ErrorKind::Http);
    assert_eq!(
        decide(&v, &FRESH, &policy, 1.0),
        Recovery::Retry {
            delay: Duration::from_millis(3_000),
            attempt: 1
        }
    );
}

#[test]
fn the_total_wait_bound_gives_the_route_up() {
    let policy = RetryPolicy {
        max_total_wait: SECS(5),
        ..RetryPolicy::default()
    };
    let v = verdict(502, "", "Bad Gateway", ErrorKind::Http);
    let mut st = FRESH;
    assert_eq!(decide(&v, &st, &policy, 0.0), retry(2, 1));
    st.attempt = 1;
    st.waited = SECS(2);
    // 2 s waited + 4 s would pass 5 s: fall back instead of waiting.
    assert_eq!(decide(&v, &st, &policy, 0.0), Recovery::FallBack);
    st.can_fall_back = false;
    assert_eq!(decide(&v, &st, &policy, 0.0), Recovery::Fail);
}
