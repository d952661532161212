//! The Anthropic Messages transport against the scripted mock server.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use hermes_llm::{
    AnthropicConfig, AnthropicProvider, CacheTtl, ChatRequest, LlmError, Provider, StreamDelta,
    complete,
};
use hermes_mock::{MockServer, Reply};
use hermes_protocol::{FinishReason, Message, ToolCall, ToolSchema, Usage};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn provider(server: &MockServer) -> AnthropicProvider {
    provider_with(server, |_| {})
}

fn provider_with(
    server: &MockServer,
    tweak: impl FnOnce(&mut AnthropicConfig),
) -> AnthropicProvider {
    let mut cfg = AnthropicConfig::new(format!("http://{}/", server.addr()), "sk-ant-test");
    tweak(&mut cfg);
    AnthropicProvider::new("anthropic", cfg).unwrap()
}

fn request() -> ChatRequest {
    ChatRequest {
        model: "claude-sonnet-4-5".into(),
        messages: vec![Message::system("You are terse."), Message::user("hi")],
        ..ChatRequest::default()
    }
}

async fn run(server: &MockServer, reply: Reply) -> Result<hermes_llm::Completion, LlmError> {
    server.push(reply);
    complete(&provider(server), &request(), &CancellationToken::new()).await
}

#[tokio::test]
async fn text_stream_is_assembled() {
    let server = MockServer::start();
    let text = "Hello there! This answer is long enough to be split into many deltas.";
    let p = provider(&server);
    assert_eq!(
        p.endpoint(),
        format!("http://{}/v1/messages", server.addr())
    );
    server.push(Reply::text(text).with_usage(321, 17));
    let req = request();
    let cancel = CancellationToken::new();
    let deltas: Vec<StreamDelta> = p
        .stream(&req, &cancel)
        .await
        .unwrap()
        .map(Result::unwrap)
        .collect()
        .await;
    let pieces = deltas
        .iter()
        .filter(|d| matches!(d, StreamDelta::Text(_)))
        .count();
    assert!(pieces > 2, "{deltas:?}");
    server.push(Reply::text(text).with_usage(321, 17));
    let c = complete(&p, &req, &cancel).await.unwrap();
    assert_eq!(c.message.content.as_deref(), Some(text));
    assert_eq!(c.finish_reason, Some(FinishReason::Stop));
    assert_eq!(
        c.usage,
        Some(Usage {
            input_tokens: 321,
            output_tokens: 17,
            ..Usage::default()
        })
    );
    assert_eq!(server.remaining(), 0);
    assert_eq!(server.messages_requests().len(), 2);
}

#[tokio::test]
async fn base_url_with_v1_is_accepted() {
    let server = MockServer::start();
    let p = AnthropicProvider::new("a", AnthropicConfig::new(server.base_url(), "k")).unwrap();
    assert_eq!(
        p.endpoint(),
        format!("http://{}/v1/messages", server.addr())
    );
    assert!(AnthropicProvider::new("a", AnthropicConfig::new("ftp://x", "k")).is_err());
}

#[tokio::test]
async fn tool_call_split_across_many_deltas_is_assembled() {
    let server = MockServer::start();
    let args = r#"{"path":"src/main.rs","offset":10,"limit":200}"#;
    let c = run(
        &server,
        Reply::tool_call("toolu_abc", "read_file", args).with_text("Reading."),
    )
    .await
    .unwrap();
    assert_eq!(
        c.message.tool_calls,
        vec![ToolCall::new("toolu_abc", "read_file", args)]
    );
    assert_eq!(c.message.content.as_deref(), Some("Reading."));
    assert_eq!(c.finish_reason, Some(FinishReason::ToolCalls));
}

#[tokio::test]
async fn two_tool_calls_keep_their_order() {
    let server = MockServer::start();
    let reply = Reply::tool_calls(&[
        ("toolu_1", "read_file", r#"{"path":"a.txt"}"#),
        (
            "toolu_2",
            "search_files",
            r#"{"pattern":"fn main","path":"."}"#,
        ),
    ]);
    let c = run(&server, reply).await.unwrap();
    assert_eq!(
        c.message.tool_calls,
        vec![
            ToolCall::new("toolu_1", "read_file", r#"{"path":"a.txt"}"#),
            ToolCall::new(
                "toolu_2",
                "search_files",
                r#"{"pattern":"fn main","path":"."}"#
            ),
        ]
    );
    assert_eq!(c.message.content, None);
}

#[tokio::test]
async fn thinking_signature_round_trips_into_the_next_request() {
    let server = MockServer::start();
    let p = provider(&server);
    let cancel = CancellationToken::new();
    server.push(
        Reply::tool_call("toolu_9", "terminal", r#"{"command":"ls"}"#)
            .with_reasoning("I should list the files first."),
    );
    let mut req = request();
    let c = complete(&p, &req, &cancel).await.unwrap();
    assert_eq!(
        c.message.reasoning.as_deref(),
        Some("I should list the files first.")
    );
    let signature = c.message.reasoning_signature.clone().unwrap();
    assert!(!signature.is_empty());
    req.messages.push(c.message);
    req.messages
        .push(Message::tool_result("toolu_9", "terminal", "a.txt\nb.txt"));
    server.push(Reply::text("Two files."));
    complete(&p, &req, &cancel).await.unwrap();
    let second = &server.messages_requests()[1];
    let assistant = &second["messages"][1];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(
        assistant["content"][0],
        json!({"type": "thinking", "thinking": "I should list the files first.", "signature": signature})
    );
    assert_eq!(assistant["content"][1]["type"], "tool_use");
    assert_eq!(assistant["content"][1]["input"], json!({"command": "ls"}));
    let result = &second["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], "toolu_9");
}

#[tokio::test]
async fn request_shape_and_headers() {
    let server = MockServer::start();
    let p = provider_with(&server, |cfg| {
        cfg.extra_betas = vec![
            "interleaved-thinking-2025-05-14".into(),
            "fine-grained-tool-streaming-2025-05-14".into(),
        ];
        cfg.cache_ttl = CacheTtl::OneHour;
    });
    let req = ChatRequest {
        model: "claude-opus-4-6".into(),
        messages: vec![
            Message::system("Be brief."),
            Message::user("list a and b"),
            Message {
                tool_calls: vec![
                    ToolCall::new("t1", "read_file", r#"{"path":"a"}"#),
                    ToolCall::new("t2", "read_file", r#"{"path":"b"}"#),
                ],
                content: None,
                ..Message::assistant("")
            },
            Message::tool_result("t1", "read_file", "A"),
            Message::tool_result("t2", "read_file", "B"),
        ],
        tools: vec![ToolSchema {
            name: "read_file".into(),
            description: "Read a file.".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }]
        .into(),
        temperature: Some(0.5),
        ..ChatRequest::default()
    };
    server.push(Reply::text("ok"));
    complete(&p, &req, &CancellationToken::new()).await.unwrap();
    let recorded = &server.requests()[0];
    assert_eq!(recorded.method, "POST");
    assert_eq!(recorded.path, "/v1/messages");
    assert_eq!(recorded.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(recorded.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(
        recorded.header("anthropic-beta"),
        Some("interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14")
    );
    assert!(
        recorded
            .header("content-type")
            .unwrap()
            .starts_with("application/json")
    );
    assert_eq!(recorded.header("authorization"), None);
    let body = &recorded.body;
    let marker = json!({"type": "ephemeral", "ttl": "1h"});
    assert_eq!(body["model"], "claude-opus-4-6");
    assert_eq!(body["max_tokens"], 128_000);
    assert_eq!(body["temperature"], 0.5);
    assert_eq!(body["stream"], true);
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "Be brief.", "cache_control": marker}])
    );
    assert_eq!(
        body["tools"],
        json!([{"name": "read_file", "description": "Read a file.",
                "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}])
    );
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{body}");
    // Both results merged into one user message.
    let results = messages[2]["content"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|b| b["type"] == "tool_result"));
    // Exactly system + the last 3 source messages carry a breakpoint.
    let mut marks = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        for (j, b) in m["content"].as_array().unwrap().iter().enumerate() {
            if let Some(cc) = b.get("cache_control") {
                assert_eq!(cc, &marker);
                marks.push((i, j));
            }
        }
    }
    assert_eq!(marks, vec![(1, 1), (2, 0), (2, 1)]);
}

#[tokio::test]
async fn rate_limit_is_an_http_error_with_retry_after() {
    let server = MockServer::start();
    let err = run(
        &server,
        Reply::error(429, "slow down").with_header("retry-after", "7"),
    )
    .await
    .unwrap_err();
    let LlmError::Http {
        status,
        body,
        retry_after,
        ..
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!(*status, 429);
    assert!(body.contains("rate_limit_error"), "{body}");
    assert_eq!(*retry_after, Some(Duration::from_secs(7)));
}

#[tokio::test]
async fn overloaded_529_keeps_status_and_retry_after() {
    let server = MockServer::start();
    let body =
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let err = run(
        &server,
        Reply::error(529, body.to_string()).with_header("retry-after", "2"),
    )
    .await
    .unwrap_err();
    assert_eq!(err.status(), Some(529));
    assert_eq!(err.retry_after(), Some(Duration::from_secs(2)));
}

#[tokio::test]
async fn error_event_in_stream_is_http_error() {
    let server = MockServer::start();
    let events = vec![
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 3}}}).to_string(),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
            .to_string(),
    ];
    let err = run(&server, Reply::raw_sse(events)).await.unwrap_err();
    assert_eq!(err.status(), Some(529), "{err:?}");
}

#[tokio::test]
async fn cut_stream_is_stream_ended() {
    let server = MockServer::start();
    let err = run(
        &server,
        Reply::text("this answer will never be finished").cut_after(4),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, LlmError::StreamEnded(_)), "{err:?}");
}

#[tokio::test]
async fn close_without_message_stop_is_stream_ended() {
    let server = MockServer::start();
    let events = vec![
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 3}}}).to_string(),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}}).to_string(),
    ];
    let err = run(&server, Reply::raw_sse(events)).await.unwrap_err();
    assert!(matches!(err, LlmError::StreamEnded(_)), "{err:?}");
}

#[tokio::test]
async fn cancellation_mid_stream_is_prompt() {
    let server = MockServer::start();
    server.push(Reply::text("a b c d e f g h").with_chunk_delay(Duration::from_secs(3)));
    let p = provider(&server);
    let req = request();
    let cancel = CancellationToken::new();
    let mut stream = p.stream(&req, &cancel).await.unwrap();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let start = Instant::now();
    let first = stream.next().await;
    assert!(matches!(first, Some(Err(LlmError::Cancelled))), "{first:?}");
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    assert!(stream.next().await.is_none());
}

#[tokio::test]
async fn already_cancelled_sends_nothing() {
    let server = MockServer::start();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let err = complete(&provider(&server), &request(), &cancel)
        .await
        .unwrap_err();
    assert_eq!(err, LlmError::Cancelled);
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn idle_timeout_between_events() {
    let server = MockServer::start();
    server.push(Reply::text("a b c d").with_chunk_delay(Duration::from_secs(3)));
    let p = provider_with(&server, |cfg| cfg.idle_timeout = Duration::from_millis(200));
    let err = complete(&p, &request(), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::Timeout(_)), "{err:?}");
}

#[tokio::test]
async fn json_reply_to_a_stream_request_is_understood() {
    let server = MockServer::start();
    let reply = Reply::tool_call("toolu_j", "read_file", r#"{"path":"a.txt"}"#)
        .with_text("Looking.")
        .with_reasoning("First read it.")
        .with_usage(40, 9)
        .ignore_stream();
    let c = run(&server, reply).await.unwrap();
    assert_eq!(c.message.content.as_deref(), Some("Looking."));
    assert_eq!(c.message.reasoning.as_deref(), Some("First read it."));
    assert!(c.message.reasoning_signature.is_some());
    assert_eq!(
        c.message.tool_calls,
        vec![ToolCall::new("toolu_j", "read_file", r#"{"path":"a.txt"}"#)]
    );
    assert_eq!(c.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(
        c.usage.map(|u| (u.input_tokens, u.output_tokens)),
        Some((40, 9))
    );
}
