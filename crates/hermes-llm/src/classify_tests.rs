use std::time::Duration;

use super::*;
use FailoverReason as F;

fn ctx() -> ErrorContext<'static> {
    ErrorContext::default()
}

fn large() -> ErrorContext<'static> {
    ErrorContext {
        approx_tokens: 180_000,
        context_length: Some(200_000),
        num_messages: 300,
        ..ErrorContext::default()
    }
}

fn http(status: u16, body: &str, retry_after: Option<Duration>) -> LlmError {
    LlmError::Http {
        status,
        body: body.to_owned(),
        request_id: None,
        retry_after,
    }
}

#[test]
fn reason_names_round_trip_and_match_serde() {
    for reason in FailoverReason::ALL {
        assert_eq!(FailoverReason::from_name(reason.as_str()), Some(reason));
        assert_eq!(reason.to_string(), reason.as_str());
        let json = serde_json::to_string(&reason).unwrap();
        assert_eq!(json, format!("\"{}\"", reason.as_str()));
    }
    assert_eq!(
        F::OauthLongContextBetaForbidden.as_str(),
        "oauth_long_context_beta_forbidden"
    );
    assert_eq!(FailoverReason::from_name("nope"), None);
}

#[test]
fn pattern_lists_are_lower_case() {
    use patterns as p;
    let lists: &[&[&str]] = &[
        p::BILLING,
        p::BILLING_CODES,
        p::RATE_LIMIT,
        p::OVERLOADED,
        p::USAGE_LIMIT,
        p::USAGE_LIMIT_TRANSIENT,
        p::EXPLICIT_THROTTLE,
        p::PAYLOAD_TOO_LARGE,
        p::IMAGE_TOO_LARGE,
        p::MULTIMODAL_TOOL_CONTENT,
        p::CONTEXT_OVERFLOW,
        p::MODEL_NOT_FOUND,
        p::REQUEST_VALIDATION,
        p::PROVIDER_POLICY_BLOCKED,
        p::CONTENT_POLICY_BLOCKED,
        p::AUTH,
        p::EMPTY_PROVIDER_RESPONSE,
        p::TIMEOUT_MESSAGE,
        p::SERVER_DISCONNECT,
        p::SSL_CERT_VERIFY,
        p::SSL_TRANSIENT,
    ];
    for phrase in lists.iter().flat_map(|l| l.iter()) {
        assert_eq!(*phrase, phrase.to_lowercase(), "{phrase}");
    }
}

#[test]
fn message_prefers_the_body_message() {
    let body = r#"{"error":{"message":"Usage limit reached, try again in 5 minutes"}}"#;
    let c = classify_parts(Some(402), body, "inner", ErrorKind::Http, &ctx());
    assert_eq!(c.reason, F::RateLimit);
    assert_eq!(c.message, "Usage limit reached, try again in 5 minutes");
    assert_eq!(c.retry_after, Some(Duration::from_secs(300)));
    assert_eq!(c.status, Some(402));

    let body = r#"{"error":{"message":"Internal server error occurred"}}"#;
    let c = classify_parts(Some(500), body, "outer", ErrorKind::Http, &ctx());
    assert_eq!(c.message, "Internal server error occurred");

    let c = classify_parts(Some(500), "", "fail", ErrorKind::Http, &ctx());
    assert_eq!(c.message, "fail");
    let c = classify_parts(Some(500), "plain text body", "", ErrorKind::Http, &ctx());
    assert_eq!(c.message, "plain text body");
}

#[test]
fn message_is_capped() {
    let long = "x".repeat(2000);
    let c = classify_parts(None, "", &long, ErrorKind::Other, &ctx());
    assert_eq!(c.message.chars().count(), 500);
}

#[test]
fn status_zero_means_no_status() {
    let c = classify_parts(Some(0), "", "something", ErrorKind::Http, &ctx());
    assert_eq!(c.status, None);
    assert_eq!(c.reason, F::Unknown);
}

#[test]
fn retry_after_from_text_body_and_header() {
    let body = r#"{"error":{"message":"Provider returned error","metadata":{"raw":"{\"error\":{\"message\":\"Rate limit exceeded. Please retry after 30s.\"}}"}}}"#;
    let c = classify_parts(
        Some(400),
        body,
        "Provider returned error",
        ErrorKind::Http,
        &ctx(),
    );
    assert_eq!(c.retry_after, Some(Duration::from_secs(30)));

    let body = r#"{"error":{"message":"slow down","retry_after":12}}"#;
    let c = classify_parts(Some(429), body, "", ErrorKind::Http, &ctx());
    assert_eq!(c.retry_after, Some(Duration::from_secs(12)));

    let said = "upstream said retry-after: 2";
    let c = classify_parts(None, "", said, ErrorKind::Other, &ctx());
    assert_eq!(
        (c.reason, c.retry_after),
        (F::Unknown, Some(Duration::from_secs(2)))
    );
    let c = classify_parts(
        None,
        "",
        "retry after the window resets",
        ErrorKind::Other,
        &ctx(),
    );
    assert_eq!(c.retry_after, None);
    let c = classify_parts(
        Some(429),
        "",
        "quotaResetDelay: 1500ms",
        ErrorKind::Http,
        &ctx(),
    );
    assert_eq!(c.retry_after, Some(Duration::from_millis(1500)));

    // The header wins and is clamped to ten minutes.
    let err = http(
        429,
        "slow down, try again in 5 minutes",
        Some(Duration::from_secs(7)),
    );
    assert_eq!(
        classify_error(&err, &ctx()).retry_after,
        Some(Duration::from_secs(7))
    );
    let err = http(503, "", Some(Duration::from_secs(3600)));
    assert_eq!(
        classify_error(&err, &ctx()).retry_after,
        Some(Duration::from_secs(600))
    );
    let err = http(
        429,
        "Weekly usage limit reached. Try again in 6 hours",
        None,
    );
    assert_eq!(
        classify_error(&err, &ctx()).retry_after,
        Some(Duration::from_secs(600))
    );

    // Never on a non-retryable classification.
    let err = http(401, "try again in 5 minutes", Some(Duration::from_secs(7)));
    let c = classify_error(&err, &ctx());
    assert_eq!((c.reason, c.retry_after), (F::Auth, None));
}

#[test]
fn upstream_provider_is_reported() {
    let body = r#"{"error":{"message":"Provider returned error","code":429,"metadata":{"provider_name":"DeepSeek","raw":"{\"error\":{\"message\":\"Rate limit exceeded\"}}"}}}"#;
    let or = ErrorContext {
        provider: "openrouter",
        ..ctx()
    };
    let c = classify_error(&http(429, body, None), &or);
    assert_eq!(c.reason, F::UpstreamRateLimit);
    assert_eq!(c.upstream_provider.as_deref(), Some("DeepSeek"));
    let c = classify_error(&http(400, body, None), &or);
    assert_eq!(c.upstream_provider, None);
}

#[test]
fn classify_error_maps_every_variant() {
    let cases = [
        (
            LlmError::Transport("cannot connect: connection refused".into()),
            F::Timeout,
        ),
        (
            LlmError::Timeout("no data from the provider for 90s".into()),
            F::Timeout,
        ),
        (LlmError::Decode("bad stream chunk".into()), F::Unknown),
        (
            LlmError::StreamEnded("connection closed".into()),
            F::Timeout,
        ),
        (LlmError::Cancelled, F::Cancelled),
        (LlmError::Config("bad base URL".into()), F::Unknown),
        (http(413, "", None), F::PayloadTooLarge),
    ];
    for (err, reason) in cases {
        assert_eq!(classify_error(&err, &ctx()).reason, reason, "{err}");
    }
    let ended = LlmError::StreamEnded("connection closed before the end of the stream".into());
    let c = classify_error(&ended, &large());
    assert_eq!(c.reason, F::ContextOverflow);
    assert!(c.should_compress);
    let reasoning = ErrorContext {
        model: "openai/o3-mini",
        ..large()
    };
    assert_eq!(classify_error(&ended, &reasoning).reason, F::Timeout);
}

#[test]
fn reasoning_models_match_by_slug() {
    use reasoning::is_reasoning_model as r;
    assert!(r("nvidia/nemotron-3-ultra-550b-a55b"));
    assert!(r("openai/o3-mini"));
    assert!(r("deepseek/deepseek-r1"));
    assert!(r("qwen/qwen3-235b-a22b-thinking"));
    assert!(r("x-ai/grok-4-fast-reasoning"));
    assert!(r("anthropic/claude-opus-4-6"));
    assert!(r("O1"));
    assert!(!r("gpt-4o"));
    assert!(!r("olmo-1"));
    assert!(!r("llama-4-70b-o1-preview"));
    assert!(!r(""));
    assert!(!r("openai/"));
}

#[test]
fn auth_helpers() {
    let c = classify_parts(Some(401), "", "Unauthorized", ErrorKind::Http, &ctx());
    assert!(c.is_auth());
    let p = c.into_auth_permanent();
    assert!(p.is_auth());
    assert_eq!(p.reason, F::AuthPermanent);
    assert!(!p.retryable && !p.should_rotate_credential && p.should_fallback);
    assert_eq!(p.status, Some(401));
}

// ── property-style checks ──

const BODIES: &[&str] = &[
    "",
    "not json at all",
    r#"{"error":{"message":"Error"}}"#,
    r#"{"error":{"message":"Provider returned error","metadata":{"raw":"{\"error\":{\"message\":\"context length exceeded\"}}"}}}"#,
    r#"{"error":{"message":"Provider returned error","metadata":{"provider_name":"X"}}}"#,
    r#"{"error":{"code":"insufficient_quota","message":"You exceeded your current quota"}}"#,
    r#"{"error":{"type":"invalid_request_error","message":"content_filter triggered"}}"#,
    r#"{"message":"usage limit reached"}"#,
];

const MESSAGES: &[&str] = &[
    "",
    "Too Many Requests",
    "Rate limit exceeded",
    "Monthly quota reached.",
    "insufficient credits",
    "Extra usage is required for long context requests",
    "The service is temporarily overloaded",
    "thinking block has invalid signature",
    "You do not have an active Grok subscription",
    "Your request was flagged by the moderation system",
    "context length exceeded",
    "server disconnected",
    "[SSL: BAD_RECORD_MAC] sslv3 alert bad record mac",
];

const KINDS: &[ErrorKind] = &[
    ErrorKind::Http,
    ErrorKind::Transport,
    ErrorKind::Timeout,
    ErrorKind::StreamEnded,
    ErrorKind::Decode,
    ErrorKind::Other,
];

#[test]
fn every_429_is_retryable() {
    for body in BODIES {
        for message in MESSAGES {
            for kind in KINDS {
                for context in [ctx(), large()] {
                    let c = classify_parts(Some(429), body, message, *kind, &context);
                    assert!(c.retryable, "429 {body:?} {message:?} {kind:?} -> {c:?}");
                }
            }
        }
    }
}

#[test]
fn cancelled_is_never_retryable() {
    let statuses = [None, Some(400), Some(429), Some(500), Some(503)];
    for status in statuses {
        for body in BODIES {
            for message in MESSAGES {
                let c = classify_parts(status, body, message, ErrorKind::Cancelled, &large());
                assert_eq!(c.reason, F::Cancelled);
                assert!(!c.retryable && !c.should_compress && !c.should_fallback);
                assert!(!c.should_rotate_credential);
            }
        }
    }
    assert!(!classify_error(&LlmError::Cancelled, &ctx()).retryable);
}

#[test]
fn ssl_errors_never_compress() {
    let ssl = [
        "[SSL: BAD_RECORD_MAC] sslv3 alert bad record mac (_ssl.c:2580)",
        "ERR_SSL_SSL/TLS_ALERT_BAD_RECORD_MAC during streaming",
        "[SSL: TLSV1_ALERT_INTERNAL_ERROR] tlsv1 alert internal error",
        "ssl handshake failure; server disconnected",
        "[SSL: UNEXPECTED_EOF_WHILE_READING] peer closed connection (unexpected eof)",
        "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed",
        "received fatal alert: HandshakeFailure; connection reset by peer",
        "invalid peer certificate: Expired",
    ];
    let contexts = [
        ctx(),
        large(),
        ErrorContext {
            approx_tokens: 900_000,
            context_length: Some(1_000_000),
            num_messages: 2_000,
            ..ErrorContext::default()
        },
    ];
    for message in ssl {
        for kind in KINDS {
            for context in contexts {
                let c = classify_parts(None, "", message, *kind, &context);
                assert!(!c.should_compress, "{message:?} {kind:?} -> {c:?}");
                assert!(
                    matches!(c.reason, F::Timeout | F::SslCertVerification),
                    "{message:?} {kind:?} -> {:?}",
                    c.reason
                );
            }
        }
    }
}

const KEY: &str = "sk-proj-AbCdEf0123456789xyzXYZ";
const BEARER: &str = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl";

#[test]
fn messages_never_leak_secrets() {
    let templates = [
        "Incorrect API key provided: {KEY}. You can find your API key at ...",
        "{KEY}",
        "auth failed (key={KEY})",
        "header Authorization: Bearer {BEARER} rejected",
        "authorization: bearer {BEARER}",
        r#"{"error":{"message":"Invalid key {KEY} for model"}}"#,
        r#"{"error":{"message":"bad request","api_key":"{KEY}"}}"#,
        "GET https://generativelanguage.googleapis.com/v1/models?key=AIzaSyA1234567890abcdefghijklmnopqrstu failed",
    ];
    for template in templates {
        let text = template.replace("{KEY}", KEY).replace("{BEARER}", BEARER);
        for status in [None, Some(400), Some(401), Some(429), Some(500)] {
            for (body, message) in [(text.as_str(), "failed"), ("", text.as_str())] {
                let c = classify_parts(status, body, message, ErrorKind::Http, &ctx());
                for secret in [
                    "AbCdEf0123456789",
                    "eyJhbGciOiJIUzI1NiJ9",
                    "AIzaSyA1234567890",
                ] {
                    assert!(!c.message.contains(secret), "{text:?} -> {:?}", c.message);
                }
            }
        }
    }
}

#[test]
fn redaction_keeps_ordinary_text() {
    let redact = redact_secrets;
    assert_eq!(redact("task-scheduler is busy"), "task-scheduler is busy");
    assert_eq!(
        redact("max_tokens=4096 too many tokens"),
        "max_tokens=4096 too many tokens"
    );
    assert_eq!(redact("use sk-short"), "use sk-short");
    assert_eq!(redact(&format!("key {KEY} bad")), "key sk-pro...zXYZ bad");
    assert_eq!(redact("Bearer abc.defgh"), "Bearer ***");
    assert_eq!(redact("x?token=abc&y=1"), "x?token=***&y=1");
    assert_eq!(redact(r#""password": "hunter2""#), r#""password": "***""#);
    assert_eq!(redact("émoji ✓ sk-"), "émoji ✓ sk-");
}

#[test]
fn configuration_errors_are_not_retried() {
    let ctx = ErrorContext {
        provider: "custom",
        model: "m",
        approx_tokens: 0,
        context_length: None,
        num_messages: 1,
    };
    let c = classify_error(
        &LlmError::Config("invalid base URL: relative URL without a base".into()),
        &ctx,
    );
    assert!(!c.retryable);
}
