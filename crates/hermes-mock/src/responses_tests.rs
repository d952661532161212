use serde_json::Value;

use super::{error_body, mock_encrypted, render};
use crate::reply::{Rendered, Reply, RequestInfo, Wire};

fn info(stream: bool) -> RequestInfo {
    RequestInfo {
        stream,
        include_usage: false,
        model: Some("gpt-5-test".into()),
        body_len: 400,
        wire: Wire::Responses,
    }
}

fn events(reply: &Reply) -> Vec<(String, Value)> {
    match render(reply, &info(true)) {
        Rendered::NamedSse { events } => events
            .into_iter()
            .map(|(n, d)| (n, serde_json::from_str(&d).unwrap()))
            .collect(),
        other => panic!("not a named stream: {other:?}"),
    }
}

#[test]
fn text_stream_has_the_responses_event_sequence() {
    let ev = events(&Reply::text("hello there friend").with_usage(10, 4));
    let names: Vec<&str> = ev.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names[..2], ["response.created", "response.in_progress"]);
    assert_eq!(names.last(), Some(&"response.completed"));
    for (i, (name, data)) in ev.iter().enumerate() {
        assert_eq!(data["type"], name.as_str());
        assert_eq!(data["sequence_number"], i);
    }
    let text: String = ev
        .iter()
        .filter(|(n, _)| n == "response.output_text.delta")
        .map(|(_, d)| d["delta"].as_str().unwrap())
        .collect();
    assert_eq!(text, "hello there friend");
    let done = &ev.last().unwrap().1["response"];
    assert_eq!(done["status"], "completed");
    assert_eq!(done["usage"]["input_tokens"], 10);
    assert_eq!(done["usage"]["output_tokens"], 4);
}

#[test]
fn reasoning_calls_and_length_are_rendered() {
    let reply = Reply::tool_call("call_9", "read_file", r#"{"path":"some/long/file.txt"}"#)
        .with_reasoning("think hard")
        .with_usage_details(7, 3)
        .with_finish_reason("length");
    let ev = events(&reply);
    let reasoning = ev
        .iter()
        .find(|(n, d)| n == "response.output_item.done" && d["item"]["type"] == "reasoning")
        .unwrap();
    assert_eq!(
        reasoning.1["item"]["encrypted_content"],
        mock_encrypted("think hard")
    );
    let added = ev
        .iter()
        .find(|(n, d)| n == "response.output_item.added" && d["item"]["type"] == "function_call")
        .unwrap();
    assert_eq!(added.1["item"]["call_id"], "call_9");
    let deltas = ev
        .iter()
        .filter(|(n, _)| n == "response.function_call_arguments.delta")
        .count();
    assert!(deltas > 3);
    let (name, last) = ev.last().unwrap();
    assert_eq!(name, "response.incomplete");
    assert_eq!(
        last["response"]["incomplete_details"]["reason"],
        "max_output_tokens"
    );
    assert_eq!(
        last["response"]["usage"]["input_tokens_details"]["cached_tokens"],
        7
    );
}

#[test]
fn plain_json_and_errors() {
    match render(&Reply::text("hi"), &info(false)) {
        Rendered::Full { status, body, .. } => {
            assert_eq!(status, 200);
            let v: Value = serde_json::from_str(&body).unwrap();
            assert_eq!(v["object"], "response");
            assert_eq!(v["output"][0]["content"][0]["text"], "hi");
        }
        other => panic!("not JSON: {other:?}"),
    }
    match render(&Reply::error(429, "slow down"), &info(true)) {
        Rendered::Full { status, body, .. } => {
            assert_eq!(status, 429);
            assert_eq!(body, error_body(429, "slow down"));
            let v: Value = serde_json::from_str(&body).unwrap();
            assert_eq!(v["error"]["code"], "rate_limit_exceeded");
        }
        other => panic!("not JSON: {other:?}"),
    }
}
