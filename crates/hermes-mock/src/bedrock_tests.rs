use serde_json::Value;

use super::{crc32, render};
use crate::reply::{Rendered, Reply, RequestInfo, Wire};

fn info(stream: bool) -> RequestInfo {
    RequestInfo {
        stream,
        include_usage: false,
        model: Some("amazon.nova-pro-v1:0".into()),
        body_len: 400,
        wire: Wire::Bedrock,
    }
}

fn be(bytes: &[u8]) -> usize {
    u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize
}

/// `(message type, event or exception type, payload)` of one checked frame.
fn decode(frame: &[u8]) -> (String, String, Value) {
    let total = be(&frame[0..]);
    let headers_len = be(&frame[4..]);
    assert_eq!(total, frame.len());
    assert_eq!(crc32(&frame[..8]) as usize, be(&frame[8..]), "prelude CRC");
    assert_eq!(
        crc32(&frame[..total - 4]) as usize,
        be(&frame[total - 4..]),
        "message CRC"
    );
    let mut headers = Vec::new();
    let mut rest = &frame[12..12 + headers_len];
    while !rest.is_empty() {
        let n = usize::from(rest[0]);
        let name = String::from_utf8(rest[1..1 + n].to_vec()).unwrap();
        assert_eq!(rest[1 + n], 7, "string header");
        let len = usize::from(u16::from_be_bytes([rest[2 + n], rest[3 + n]]));
        let value = String::from_utf8(rest[4 + n..4 + n + len].to_vec()).unwrap();
        headers.push((name, value));
        rest = &rest[4 + n + len..];
    }
    let get = |k: &str| {
        headers
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let kind = get(":event-type") + &get(":exception-type");
    let payload = serde_json::from_slice(&frame[12 + headers_len..total - 4]).unwrap();
    (get(":message-type"), kind, payload)
}

fn frames(reply: &Reply) -> Vec<(String, String, Value)> {
    match render(reply, &info(true)) {
        Rendered::EventStream { frames } => frames.iter().map(|f| decode(f)).collect(),
        other => panic!("not an event stream: {other:?}"),
    }
}

#[test]
fn crc_is_the_ieee_one() {
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
}

#[test]
fn tool_call_stream_has_the_converse_sequence() {
    let ev = frames(
        &Reply::tool_call("t1", "read_file", r#"{"path":"a.txt"}"#)
            .with_reasoning("thinking hard")
            .with_usage(100, 20)
            .with_usage_details(30, 0),
    );
    let kinds: Vec<&str> = ev.iter().map(|(_, k, _)| k.as_str()).collect();
    assert_eq!(kinds.first(), Some(&"messageStart"));
    assert_eq!(&kinds[kinds.len() - 2..], ["messageStop", "metadata"]);
    let args: String = ev
        .iter()
        .filter_map(|(_, _, p)| p.pointer("/delta/toolUse/input").and_then(Value::as_str))
        .collect();
    assert_eq!(args, r#"{"path":"a.txt"}"#);
    let arg_deltas = ev
        .iter()
        .filter(|(_, _, p)| p.pointer("/delta/toolUse").is_some())
        .count();
    assert!(arg_deltas > 2, "arguments split across deltas");
    assert!(
        ev.iter()
            .any(|(_, _, p)| { p.pointer("/start/toolUse/toolUseId") == Some(&Value::from("t1")) })
    );
    assert!(
        ev.iter()
            .any(|(_, _, p)| { p.pointer("/delta/reasoningContent/signature").is_some() })
    );
    let stop = &ev[ev.len() - 2].2;
    assert_eq!(stop["stopReason"], "tool_use");
    let usage = &ev[ev.len() - 1].2["usage"];
    assert_eq!(usage["inputTokens"], 70);
    assert_eq!(usage["cacheReadInputTokens"], 30);
    assert_eq!(usage["outputTokens"], 20);
}

#[test]
fn stream_exception_replaces_the_end() {
    let ev = frames(
        &Reply::text("partial").with_stream_exception("throttlingException", "Too many requests"),
    );
    let (message_type, kind, payload) = ev.last().unwrap();
    assert_eq!(message_type, "exception");
    assert_eq!(kind, "throttlingException");
    assert_eq!(payload["message"], "Too many requests");
    assert!(!ev.iter().any(|(_, k, _)| k == "messageStop"));
}

#[test]
fn errors_and_full_bodies() {
    let Rendered::Full { status, body, .. } = render(&Reply::error(400, "too long"), &info(true))
    else {
        panic!("not full");
    };
    assert_eq!(status, 400);
    assert_eq!(body, r#"{"message":"too long"}"#);
    let Rendered::Full { status, body, .. } = render(&Reply::text("hi"), &info(false)) else {
        panic!("not full");
    };
    assert_eq!(status, 200);
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["output"]["message"]["content"][0]["text"], "hi");
    assert_eq!(body["stopReason"], "end_turn");
    assert_eq!(
        super::error_header(429).1.split(':').next(),
        Some("ThrottlingException")
    );
}
