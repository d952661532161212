use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use super::{LlmError, request_id, retry_after, truncate};

fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (k, v) in pairs {
        map.insert(
            HeaderName::from_bytes(k.as_bytes()).unwrap(),
            HeaderValue::from_str(v).unwrap(),
        );
    }
    map
}

#[test]
fn retry_after_parses_numbers_only() {
    assert_eq!(
        retry_after(&headers(&[("retry-after", "7")])),
        Some(Duration::from_secs(7))
    );
    assert_eq!(
        retry_after(&headers(&[("retry-after", "1.5")])),
        Some(Duration::from_millis(1500))
    );
    assert_eq!(
        retry_after(&headers(&[("retry-after-ms", "250"), ("retry-after", "9")])),
        Some(Duration::from_millis(250))
    );
    assert_eq!(
        retry_after(&headers(&[(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT"
        )])),
        None
    );
    assert_eq!(retry_after(&headers(&[("retry-after", "-3")])), None);
    assert_eq!(
        retry_after(&headers(&[("retry-after", "1e300")])),
        Some(Duration::from_secs(86_400))
    );
    assert_eq!(retry_after(&HeaderMap::new()), None);
}

#[test]
fn request_id_prefers_x_request_id_then_request_id_then_cf_ray() {
    let all = headers(&[
        ("cf-ray", "ray"),
        ("request-id", "rid"),
        ("x-request-id", "xid"),
    ]);
    assert_eq!(request_id(&all).as_deref(), Some("xid"));
    assert_eq!(
        request_id(&headers(&[("cf-ray", "ray"), ("request-id", "rid")])).as_deref(),
        Some("rid")
    );
    assert_eq!(
        request_id(&headers(&[("cf-ray", "ray")])).as_deref(),
        Some("ray")
    );
    assert_eq!(request_id(&HeaderMap::new()), None);
}

#[test]
fn http_display_shows_status_excerpt_and_id() {
    let body = format!(
        "{{\"error\":\n  {{\"message\": \"slow down\"}}}}{}",
        "x".repeat(5000)
    );
    let e = LlmError::from_response_parts(429, &headers(&[("x-request-id", "req_1")]), &body);
    let LlmError::Http {
        status,
        body: kept,
        request_id,
        ..
    } = &e
    else {
        panic!("{e:?}")
    };
    assert_eq!(*status, 429);
    assert!(kept.len() <= super::MAX_ERROR_BODY + 4);
    assert_eq!(request_id.as_deref(), Some("req_1"));
    let shown = e.to_string();
    assert!(
        shown.starts_with("HTTP 429: {\"error\": {\"message\": \"slow down\"}}"),
        "{shown}"
    );
    assert!(shown.ends_with("(request id req_1)"), "{shown}");
    assert!(shown.len() < 400, "{shown}");
    assert_eq!(e.status(), Some(429));
}

#[test]
fn in_stream_error_display() {
    let e = LlmError::Http {
        status: 0,
        body: "oops".into(),
        request_id: None,
        retry_after: None,
    };
    assert_eq!(e.to_string(), "provider error: oops");
    assert_eq!(e.retry_after(), None);
}

#[test]
fn truncate_respects_char_boundaries() {
    assert_eq!(truncate("héllo", 2), "h…");
    assert_eq!(truncate("abc", 3), "abc");
}

#[tokio::test]
async fn connect_errors_are_transport_without_url() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    // Each nextest test runs in its own process: install the TLS provider here too.
    crate::chat_completions::install_crypto_provider();
    let client = reqwest::Client::new();
    let err = client
        .get(format!("http://{addr}/v1/x?key=secret"))
        .send()
        .await
        .unwrap_err();
    let e = LlmError::from(err);
    let LlmError::Transport(text) = &e else {
        panic!("{e:?}")
    };
    assert!(!text.contains("secret"), "{text}");
    assert!(text.starts_with("cannot connect"), "{text}");
}

#[test]
fn html_error_pages_are_summarised_not_dumped() {
    let page = "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title><style>body{x}</style></head>\
                <body><h1>Bad Gateway</h1><p>nginx</p></body></html>";
    let err = LlmError::Http {
        status: 502,
        body: page.into(),
        request_id: None,
        retry_after: None,
    };
    assert_eq!(
        err.to_string(),
        "HTTP 502: an HTML error page: 502 Bad Gateway"
    );
    let plain = LlmError::Http {
        status: 413,
        body: r#"{"error":"too big"}"#.into(),
        request_id: None,
        retry_after: None,
    };
    assert_eq!(plain.to_string(), r#"HTTP 413: {"error":"too big"}"#);
}
