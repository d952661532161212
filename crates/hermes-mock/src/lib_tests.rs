use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{MockServer, Reply};

/// Sends a raw request and returns (status line, headers+body text).
fn exchange(server: &MockServer, method: &str, path: &str, body: &str) -> (String, String) {
    let mut s = TcpStream::connect(server.addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer sk-test\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let (status, rest) = text.split_once("\r\n").unwrap_or((&text, ""));
    (status.to_owned(), rest.to_owned())
}

fn body_of(response: &str) -> &str {
    response.split_once("\r\n\r\n").map_or("", |(_, b)| b)
}

#[test]
fn base_url_points_at_v1() {
    let server = MockServer::start();
    assert_eq!(
        server.base_url(),
        format!("http://127.0.0.1:{}/v1", server.addr().port())
    );
}

#[test]
fn models_and_unknown_routes() {
    let server = MockServer::start();
    let (status, rest) = exchange(&server, "GET", "/v1/models", "");
    assert!(status.contains("200"), "{status}");
    let v: Value = serde_json::from_str(body_of(&rest)).unwrap();
    assert_eq!(v["data"][0]["id"], "mock-model");
    let (status, _) = exchange(&server, "GET", "/v1/nope", "");
    assert!(status.contains("404"), "{status}");
    assert_eq!(server.requests().len(), 2);
    assert!(server.chat_requests().is_empty());
}

#[test]
fn empty_queue_answers_500_and_records() {
    let server = MockServer::start();
    let (status, rest) = exchange(&server, "POST", "/v1/chat/completions", r#"{"model":"m"}"#);
    assert!(status.contains("500"), "{status}");
    assert!(body_of(&rest).contains("no scripted reply left"));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].header("authorization"), Some("Bearer sk-test"));
    assert_eq!(reqs[0].body, json!({"model": "m"}));
    assert_eq!(server.chat_requests(), vec![json!({"model": "m"})]);
}

#[test]
fn reserved_replies_go_to_the_request_that_carries_their_marker() {
    let server = MockServer::start();
    server.push_all([
        Reply::text("for A").for_request_containing("TASK-A"),
        Reply::text("for B").for_request_containing("TASK-B"),
        Reply::text("anyone"),
    ]);
    let answer = |body: &str| {
        let (_, rest) = exchange(&server, "POST", "/v1/chat/completions", body);
        let v: Value = serde_json::from_str(body_of(&rest)).unwrap();
        v["choices"][0]["message"]["content"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(answer(r#"{"model":"m","messages":"TASK-B"}"#), "for B");
    assert_eq!(answer(r#"{"model":"m","messages":"neither"}"#), "anyone");
    assert_eq!(answer(r#"{"model":"m","messages":"TASK-A"}"#), "for A");
    assert_eq!(server.remaining(), 0);
}

#[test]
fn replies_are_consumed_in_order() {
    let server = MockServer::start();
    server.push_all([
        Reply::text("one"),
        Reply::error(429, "slow down").with_header("retry-after", "3"),
    ]);
    assert_eq!(server.remaining(), 2);
    let (status, rest) = exchange(&server, "POST", "/v1/chat/completions", r#"{"model":"m"}"#);
    assert!(status.contains("200"));
    let v: Value = serde_json::from_str(body_of(&rest)).unwrap();
    assert_eq!(v["choices"][0]["message"]["content"], "one");
    let (status, rest) = exchange(&server, "POST", "/v1/chat/completions", "not json");
    assert!(status.contains("429"), "{status}");
    assert!(rest.to_ascii_lowercase().contains("retry-after: 3"));
    assert_eq!(body_of(&rest), "slow down");
    assert_eq!(server.remaining(), 0);
    let reqs = server.requests();
    assert_eq!(reqs[1].body, Value::Null);
    assert_eq!(reqs[1].raw_body, "not json");
}

#[test]
fn streams_sse_chunked() {
    let server = MockServer::start();
    server.push(Reply::text("hi there").with_chunk_delay(Duration::from_millis(5)));
    let body = r#"{"model":"m","stream":true,"stream_options":{"include_usage":true}}"#;
    let (status, rest) = exchange(&server, "POST", "/v1/chat/completions", body);
    assert!(status.contains("200"));
    let lower = rest.to_ascii_lowercase();
    assert!(lower.contains("content-type: text/event-stream"));
    assert!(lower.contains("transfer-encoding: chunked"));
    assert!(rest.contains(": keep-alive"));
    assert!(rest.contains("data: [DONE]"));
    assert!(rest.contains("\"usage\""));
    assert!(rest.ends_with("0\r\n\r\n"));
}

#[test]
fn cut_stream_has_no_done_and_no_last_chunk() {
    let server = MockServer::start();
    server.push(Reply::text("a long answer that keeps going").cut_after(2));
    let (_, rest) = exchange(
        &server,
        "POST",
        "/v1/chat/completions",
        r#"{"stream":true}"#,
    );
    assert_eq!(rest.matches("data: ").count(), 2);
    assert!(!rest.contains("[DONE]"));
    assert!(!rest.ends_with("0\r\n\r\n"));
}

#[test]
fn delay_holds_the_headers() {
    let server = MockServer::start();
    server.push(Reply::text("late").with_delay(Duration::from_millis(150)));
    let start = Instant::now();
    let (status, _) = exchange(&server, "POST", "/v1/chat/completions", "{}");
    assert!(status.contains("200"));
    assert!(start.elapsed() >= Duration::from_millis(150));
}

#[test]
fn drop_shuts_down() {
    let server = MockServer::start();
    let addr = server.addr();
    drop(server);
    assert!(TcpStream::connect(addr).is_err());
}

#[tokio::test]
async fn works_inside_a_tokio_runtime() {
    let server = MockServer::start();
    server.push(Reply::text("x"));
    let addr = server.addr();
    let status = tokio::task::spawn_blocking(move || {
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}")
            .unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out
    })
    .await
    .unwrap();
    assert!(status.starts_with("HTTP/1.1 200"));
    drop(server);
}

#[test]
fn a_responder_answers_what_the_queue_does_not_and_bodies_can_be_forgotten() {
    let server = MockServer::start();
    server.push(Reply::text("queued").for_request_containing("first"));
    server.respond_with(|req| {
        let n = req.body["messages"].as_array().map_or(0, Vec::len);
        (n < 3).then(|| Reply::text(format!("computed for {n}")))
    });
    let ask = |n: usize, marker: &str| {
        let messages: Vec<Value> = (0..n)
            .map(|_| json!({"role": "user", "content": marker}))
            .collect();
        let body = json!({"model": "m", "messages": messages}).to_string();
        exchange(&server, "POST", "/v1/chat/completions", &body)
    };
    let (_, r) = ask(1, "first");
    assert!(body_of(&r).contains("queued"), "{r}");
    let (_, r) = ask(2, "other");
    assert!(body_of(&r).contains("computed for 2"), "{r}");
    let (status, _) = ask(3, "other");
    assert!(status.contains("500"), "the responder declined: {status}");
    server.forget_bodies();
    let _ = ask(1, "later");
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    assert!(!requests[2].raw_body.is_empty());
    assert!(requests[3].raw_body.is_empty() && requests[3].body.is_null());
}
