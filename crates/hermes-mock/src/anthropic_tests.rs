use serde_json::Value;

use super::{error_body, mock_signature, render};
use crate::reply::{Rendered, Reply, RequestInfo, Wire};

fn info() -> RequestInfo {
    RequestInfo {
        stream: true,
        include_usage: false,
        model: Some("claude-test".into()),
        body_len: 400,
        wire: Wire::Anthropic,
    }
}

fn events(reply: &Reply) -> Vec<(String, Value)> {
    match render(reply, &info()) {
        Rendered::NamedSse { events } => events
            .into_iter()
            .map(|(n, d)| (n, serde_json::from_str(&d).unwrap()))
            .collect(),
        other => panic!("not a named stream: {other:?}"),
    }
}

#[test]
fn text_stream_has_the_anthropic_event_sequence() {
    let ev = events(&Reply::text("hello there friend").with_usage(10, 4));
    let names: Vec<&str> = ev.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names.first(), Some(&"message_start"));
    assert_eq!(&names[names.len() - 2..], ["message_delta", "message_stop"]);
    for (name, data) in &ev {
        assert_eq!(data["type"], name.as_str());
    }
    assert_eq!(ev[0].1["message"]["usage"]["input_tokens"], 10);
    let delta = &ev[ev.len() - 2].1;
    assert_eq!(delta["delta"]["stop_reason"], "end_turn");
    assert_eq!(delta["usage"]["output_tokens"], 4);
    let text: String = ev
        .iter()
        .filter_map(|(_, d)| d["delta"]["text"].as_str())
        .collect();
    assert_eq!(text, "hello there friend");
}

#[test]
fn tool_input_is_split_and_thinking_is_signed() {
    let args = r#"{"path":"src/main.rs","limit":20}"#;
    let ev =
        events(&Reply::tool_call("toolu_1", "read_file", args).with_reasoning("hmm, let me see"));
    let fragments: Vec<&str> = ev
        .iter()
        .filter_map(|(_, d)| d["delta"]["partial_json"].as_str())
        .collect();
    assert!(fragments.len() > 3);
    assert_eq!(fragments.concat(), args);
    let sig = ev
        .iter()
        .find_map(|(_, d)| d["delta"]["signature"].as_str())
        .unwrap();
    assert_eq!(sig, mock_signature("hmm, let me see"));
    let start = ev
        .iter()
        .find(|(_, d)| d["content_block"]["type"] == "tool_use")
        .unwrap();
    assert_eq!(start.1["index"], 1);
    assert_eq!(start.1["content_block"]["id"], "toolu_1");
    let stop = ev.iter().rev().find(|(n, _)| n == "message_delta").unwrap();
    assert_eq!(stop.1["delta"]["stop_reason"], "tool_use");
}

#[test]
fn plain_text_errors_get_the_anthropic_shape() {
    let Rendered::Full { status, body, .. } = render(&Reply::error(529, "busy"), &info()) else {
        panic!("not full");
    };
    assert_eq!(status, 529);
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["error"]["type"], "overloaded_error");
    assert_eq!(v["error"]["message"], "busy");
    assert_eq!(body, error_body(529, "busy"));
}
