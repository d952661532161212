use serde_json::{Value, json};

use super::{Rendered, Reply, RequestInfo, Wire, pieces};

fn streaming(include_usage: bool) -> RequestInfo {
    RequestInfo {
        stream: true,
        include_usage,
        model: Some("m1".into()),
        body_len: 400,
        wire: Wire::Chat,
    }
}

fn payloads(reply: &Reply, info: &RequestInfo) -> Vec<String> {
    match reply.render(info) {
        Rendered::Sse { payloads } => payloads,
        Rendered::Full { .. } | Rendered::NamedSse { .. } | Rendered::EventStream { .. } => {
            Vec::new()
        }
    }
}

fn chunks(payloads: &[String]) -> Vec<Value> {
    payloads
        .iter()
        .filter(|p| p.as_str() != "[DONE]")
        .filter_map(|p| serde_json::from_str(p).ok())
        .collect()
}

fn deltas(chunks: &[Value], key: &str) -> String {
    chunks
        .iter()
        .filter_map(|c| c.pointer(&format!("/choices/0/delta/{key}"))?.as_str())
        .collect()
}

#[test]
fn pieces_are_short_and_lossless() {
    let text = "Hello wörld, this is a longer sentence with ünïcödé.";
    let parts = pieces(text, 8);
    assert!(parts.len() > 4);
    assert!(parts.iter().all(|p| p.chars().count() <= 8));
    assert_eq!(parts.concat(), text);
    assert!(pieces("", 8).is_empty());
}

#[test]
fn text_stream_has_openai_shape() {
    let p = payloads(
        &Reply::text("Hello there, general Kenobi").with_reasoning("thinking hard"),
        &streaming(true),
    );
    assert_eq!(p.last().map(String::as_str), Some("[DONE]"));
    let c = chunks(&p);
    assert_eq!(c[0]["object"], "chat.completion.chunk");
    assert_eq!(c[0]["model"], "m1");
    assert_eq!(c[0]["choices"][0]["delta"]["role"], "assistant");
    assert_eq!(deltas(&c, "content"), "Hello there, general Kenobi");
    assert_eq!(deltas(&c, "reasoning_content"), "thinking hard");
    let first_reasoning = c
        .iter()
        .position(|c| c.pointer("/choices/0/delta/reasoning_content").is_some());
    let first_text = c.iter().position(|c| {
        c.pointer("/choices/0/delta/content")
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty())
    });
    assert!(first_reasoning < first_text);
    let finish = &c[c.len() - 2];
    assert_eq!(finish["choices"][0]["finish_reason"], "stop");
    assert_eq!(finish["choices"][0]["delta"], json!({}));
    let usage = &c[c.len() - 1];
    assert_eq!(usage["choices"], json!([]));
    assert_eq!(usage["usage"]["prompt_tokens"], 100);
    assert!(
        usage["usage"]["completion_tokens"]
            .as_u64()
            .is_some_and(|n| n > 0)
    );
}

#[test]
fn usage_chunk_only_when_asked() {
    let p = payloads(&Reply::text("x").with_usage(7, 3), &streaming(false));
    assert!(chunks(&p).iter().all(|c| c.get("usage").is_none()));
    let p = payloads(&Reply::text("x").with_usage(7, 3), &streaming(true));
    let c = chunks(&p);
    let usage = &c[c.len() - 1]["usage"];
    assert_eq!(
        usage,
        &json!({"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10})
    );
}

#[test]
fn tool_calls_stream_like_openai() {
    let reply = Reply::tool_calls(&[("c1", "read", r#"{"path":"a.txt"}"#), ("c2", "ls", "{}")]);
    let c = chunks(&payloads(&reply, &streaming(false)));
    let mut args = [String::new(), String::new()];
    let mut heads = Vec::new();
    for chunk in &c {
        let Some(calls) = chunk
            .pointer("/choices/0/delta/tool_calls")
            .and_then(Value::as_array)
        else {
            continue;
        };
        for call in calls {
            let index = call["index"].as_u64().unwrap_or(9) as usize;
            if let Some(id) = call.get("id") {
                assert_eq!(call["type"], "function");
                assert_eq!(call["function"]["arguments"], "");
                heads.push((index, id.clone(), call["function"]["name"].clone()));
            } else {
                assert!(call["function"].get("name").is_none());
                let piece = call["function"]["arguments"].as_str().unwrap_or("");
                assert!(piece.chars().count() <= 5);
                args[index].push_str(piece);
            }
        }
    }
    assert_eq!(
        heads,
        vec![
            (0, json!("c1"), json!("read")),
            (1, json!("c2"), json!("ls"))
        ]
    );
    assert_eq!(args, [r#"{"path":"a.txt"}"#.to_owned(), "{}".to_owned()]);
    assert_eq!(c[c.len() - 1]["choices"][0]["finish_reason"], "tool_calls");
}

#[test]
fn non_stream_is_a_full_completion() {
    let reply = Reply::tool_call("c1", "read", "{}")
        .with_text("Looking")
        .with_usage(5, 6);
    let Rendered::Full { status, body, .. } = reply.render(&RequestInfo::default()) else {
        unreachable!("expected a full body");
    };
    assert_eq!(status, 200);
    let v: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    assert_eq!(v["object"], "chat.completion");
    assert_eq!(v["model"], "mock-model");
    let choice = &v["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    assert_eq!(choice["message"]["content"], "Looking");
    assert_eq!(
        choice["message"]["tool_calls"][0]["function"]["name"],
        "read"
    );
    assert_eq!(v["usage"]["total_tokens"], 11);
}

#[test]
fn errors_and_raw_sse_render_verbatim() {
    let Rendered::Full { status, body, .. } = Reply::error(429, "{\"error\":1}")
        .with_text("ignored")
        .render(&streaming(true))
    else {
        unreachable!("expected a full body");
    };
    assert_eq!((status, body.as_str()), (429, "{\"error\":1}"));
    let raw = Reply::raw_sse(vec!["a".into(), "[DONE]".into()]);
    assert_eq!(payloads(&raw, &RequestInfo::default()), vec!["a", "[DONE]"]);
}

#[test]
fn finish_reason_override() {
    let c = chunks(&payloads(
        &Reply::text("cut").with_finish_reason("length"),
        &streaming(false),
    ));
    assert_eq!(c[c.len() - 1]["choices"][0]["finish_reason"], "length");
}

#[test]
fn ignore_stream_forces_json() {
    let rendered = Reply::text("x").ignore_stream().render(&streaming(true));
    assert!(matches!(rendered, Rendered::Full { status: 200, .. }));
}
