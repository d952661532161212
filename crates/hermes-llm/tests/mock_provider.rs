//! The chat-completions transport against the scripted mock server.

// Helpers outside `#[test]` functions are test code too.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use hermes_llm::{
    ChatCompletionsConfig, ChatCompletionsProvider, ChatRequest, LlmError, StreamDelta, complete,
};
use hermes_mock::{MockServer, Reply, check_conversation};
use hermes_protocol::{FinishReason, Message, ToolCall, ToolSchema, Usage};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn provider(server: &MockServer) -> ChatCompletionsProvider {
    provider_with(server, |_| {})
}

fn provider_with(
    server: &MockServer,
    tweak: impl FnOnce(&mut ChatCompletionsConfig),
) -> ChatCompletionsProvider {
    let mut cfg = ChatCompletionsConfig::new(format!("{}/", server.base_url()));
    cfg.api_key = Some("sk-test-key".into());
    tweak(&mut cfg);
    ChatCompletionsProvider::new("mock", cfg).unwrap()
}

fn request() -> ChatRequest {
    ChatRequest {
        model: "mock-model".into(),
        messages: vec![Message::system("You are terse."), Message::user("hi")],
        ..ChatRequest::default()
    }
}

async fn run(server: &MockServer, reply: Reply) -> Result<hermes_llm::Completion, LlmError> {
    server.push(reply);
    complete(&provider(server), &request(), &CancellationToken::new()).await
}

#[tokio::test]
async fn plain_text_stream_is_assembled() {
    let server = MockServer::start();
    let text = "Hello there! This answer is long enough to be split into many deltas.";
    let c = run(&server, Reply::text(text)).await.unwrap();
    assert_eq!(c.message.content.as_deref(), Some(text));
    assert!(c.message.tool_calls.is_empty());
    assert_eq!(c.finish_reason, Some(FinishReason::Stop));
    assert_eq!(server.remaining(), 0);
}

#[tokio::test]
async fn text_arrives_as_several_deltas() {
    let server = MockServer::start();
    server.push(Reply::text("one two three four five six"));
    let p = provider(&server);
    let req = request();
    let cancel = CancellationToken::new();
    let stream = hermes_llm::Provider::stream(&p, &req, &cancel)
        .await
        .unwrap();
    let deltas: Vec<StreamDelta> = stream.map(Result::unwrap).collect().await;
    let texts = deltas
        .iter()
        .filter(|d| matches!(d, StreamDelta::Text(_)))
        .count();
    assert!(texts > 2, "{deltas:?}");
    assert!(
        matches!(deltas.last(), Some(StreamDelta::Usage(_))),
        "{deltas:?}"
    );
}

#[tokio::test]
async fn tool_call_fragments_are_assembled() {
    let server = MockServer::start();
    let args = r#"{"path":"src/main.rs","offset":10,"limit":200}"#;
    let c = run(
        &server,
        Reply::tool_call("call_abc", "read_file", args).with_text("Reading."),
    )
    .await
    .unwrap();
    assert_eq!(
        c.message.tool_calls,
        vec![ToolCall::new("call_abc", "read_file", args)]
    );
    assert_eq!(c.message.content.as_deref(), Some("Reading."));
    assert_eq!(c.finish_reason, Some(FinishReason::ToolCalls));
}

#[tokio::test]
async fn parallel_tool_calls_keep_their_order() {
    let server = MockServer::start();
    let reply = Reply::tool_calls(&[
        ("c1", "read_file", r#"{"path":"a.txt"}"#),
        ("c2", "search_files", r#"{"pattern":"fn main","path":"."}"#),
    ]);
    let c = run(&server, reply).await.unwrap();
    assert_eq!(
        c.message.tool_calls,
        vec![
            ToolCall::new("c1", "read_file", r#"{"path":"a.txt"}"#),
            ToolCall::new("c2", "search_files", r#"{"pattern":"fn main","path":"."}"#),
        ]
    );
    assert_eq!(c.message.content, None);
}

#[tokio::test]
async fn reasoning_and_usage_are_collected() {
    let server = MockServer::start();
    let reply = Reply::text("42")
        .with_reasoning("Let me think about this carefully.")
        .with_usage(1234, 56);
    let c = run(&server, reply).await.unwrap();
    assert_eq!(
        c.message.reasoning.as_deref(),
        Some("Let me think about this carefully.")
    );
    assert_eq!(c.message.content.as_deref(), Some("42"));
    assert_eq!(
        c.usage,
        Some(Usage {
            input_tokens: 1234,
            output_tokens: 56,
            ..Usage::default()
        })
    );
}

#[tokio::test]
async fn cached_and_reasoning_tokens_from_raw_usage() {
    let server = MockServer::start();
    let chunk = |v: serde_json::Value| v.to_string();
    let reply = Reply::raw_sse(vec![
        chunk(
            json!({"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}),
        ),
        chunk(json!({"choices": [], "usage": {
            "prompt_tokens": 100, "completion_tokens": 9,
            "prompt_tokens_details": {"cached_tokens": 80},
            "completion_tokens_details": {"reasoning_tokens": 4}}})),
        "[DONE]".into(),
    ]);
    let usage = run(&server, reply).await.unwrap().usage.unwrap();
    assert_eq!(
        (
            usage.input_tokens,
            usage.cache_read_tokens,
            usage.reasoning_tokens
        ),
        (100, 80, 4)
    );
}

#[tokio::test]
async fn request_body_and_headers() {
    let server = MockServer::start();
    server.push(Reply::text("ok"));
    let p = provider_with(&server, |cfg| {
        cfg.extra_headers.push(("X-Title".into(), "Hermes".into()));
    });
    let mut req = request();
    req.tools = vec![ToolSchema {
        name: "read_file".into(),
        description: "Read a file".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    }]
    .into();
    req.max_tokens = Some(512);
    let mut assistant = Message::assistant("");
    assistant.content = None;
    assistant.reasoning = Some("hidden".into());
    assistant.tool_calls = vec![ToolCall::new("c1", "read_file", r#"{"path":"x"}"#)];
    req.messages.push(assistant);
    req.messages
        .push(Message::tool_result("c1", "read_file", "contents"));
    complete(&p, &req, &CancellationToken::new()).await.unwrap();

    let recorded = server.requests();
    assert_eq!(recorded.len(), 1);
    let r = &recorded[0];
    assert_eq!(r.method, "POST");
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(r.header("authorization"), Some("Bearer sk-test-key"));
    assert_eq!(r.header("x-title"), Some("Hermes"));
    assert!(
        r.header("content-type")
            .is_some_and(|v| v.starts_with("application/json"))
    );
    let body = &r.body;
    assert_eq!(body["model"], "mock-model");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
    assert_eq!(body["max_tokens"], 512);
    assert!(body.get("temperature").is_none());
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(body["tools"][0]["function"]["name"], "read_file");
    assert_eq!(body["tools"][0]["function"]["parameters"]["type"], "object");
    assert_eq!(body["messages"][2]["content"], serde_json::Value::Null);
    assert!(body["messages"][2].get("reasoning").is_none());
    assert_eq!(body["messages"][3]["tool_call_id"], "c1");
    check_conversation(body).unwrap();
    assert_eq!(server.chat_requests(), vec![body.clone()]);
}

#[tokio::test]
async fn no_authorization_without_key() {
    let server = MockServer::start();
    server.push(Reply::text("ok"));
    let p = provider_with(&server, |cfg| cfg.api_key = None);
    complete(&p, &request(), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(server.requests()[0].header("authorization"), None);
}

#[tokio::test]
async fn rate_limit_is_an_http_error_with_retry_after() {
    let server = MockServer::start();
    let body = r#"{"error":{"message":"Rate limit exceeded","type":"rate_limit"}}"#;
    let reply = Reply::error(429, body)
        .with_header("retry-after", "7")
        .with_header("x-request-id", "req_42");
    let err = run(&server, reply).await.unwrap_err();
    let LlmError::Http {
        status,
        body: got,
        request_id,
        retry_after,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(*status, 429);
    assert_eq!(got, body);
    assert_eq!(request_id.as_deref(), Some("req_42"));
    assert_eq!(*retry_after, Some(Duration::from_secs(7)));
    assert!(err.to_string().contains("429") && err.to_string().contains("req_42"));
}

#[tokio::test]
async fn empty_queue_is_a_500() {
    let server = MockServer::start();
    let err = complete(&provider(&server), &request(), &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(500));
}

#[tokio::test]
async fn cut_stream_is_stream_ended() {
    let server = MockServer::start();
    let err = run(
        &server,
        Reply::text("this answer will never be finished").cut_after(3),
    )
    .await
    .unwrap_err();
    // The chunked body never ends properly: the connection is lost mid-stream.
    let LlmError::StreamEnded(text) = &err else {
        panic!("{err:?}")
    };
    assert!(text.contains("mid-stream"), "{text}");
}

#[tokio::test]
async fn clean_close_without_done_or_finish_is_stream_ended() {
    let server = MockServer::start();
    let reply = Reply::raw_sse(vec![
        json!({"choices": [{"delta": {"content": "half"}}]}).to_string(),
    ]);
    let err = run(&server, reply).await.unwrap_err();
    assert!(matches!(err, LlmError::StreamEnded(_)), "{err:?}");
}

#[tokio::test]
async fn finish_without_done_is_accepted() {
    let server = MockServer::start();
    let reply = Reply::raw_sse(vec![
        json!({"choices": [{"delta": {"content": "done"}, "finish_reason": "length"}]}).to_string(),
    ]);
    let c = run(&server, reply).await.unwrap();
    assert_eq!(c.finish_reason, Some(FinishReason::Length));
}

#[tokio::test]
async fn bad_chunk_is_decode_error() {
    let server = MockServer::start();
    let err = run(
        &server,
        Reply::raw_sse(vec!["{not json".into(), "[DONE]".into()]),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, LlmError::Decode(_)), "{err:?}");
}

#[tokio::test]
async fn error_object_in_stream_is_http_error() {
    let server = MockServer::start();
    let reply = Reply::raw_sse(vec![
        json!({"choices": [{"delta": {"content": "par"}}]}).to_string(),
        json!({"error": {"message": "Provider overloaded", "code": 529}}).to_string(),
    ]);
    let err = run(&server, reply).await.unwrap_err();
    let LlmError::Http { status, body, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(*status, 529);
    assert!(body.contains("Provider overloaded"));
}

#[tokio::test]
async fn idle_timeout_between_chunks() {
    let server = MockServer::start();
    server.push(Reply::text("slow slow slow slow").with_chunk_delay(Duration::from_secs(2)));
    let p = provider_with(&server, |cfg| cfg.idle_timeout = Duration::from_millis(200));
    let start = Instant::now();
    let err = complete(&p, &request(), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::Timeout(_)), "{err:?}");
    assert!(
        start.elapsed() < Duration::from_millis(1500),
        "{:?}",
        start.elapsed()
    );
}

#[tokio::test]
async fn idle_timeout_waiting_for_headers() {
    let server = MockServer::start();
    server.push(Reply::text("late").with_delay(Duration::from_secs(2)));
    let p = provider_with(&server, |cfg| cfg.idle_timeout = Duration::from_millis(200));
    let err = complete(&p, &request(), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::Timeout(_)), "{err:?}");
}

#[tokio::test]
async fn cancellation_mid_stream_is_prompt() {
    let server = MockServer::start();
    server.push(Reply::text("a b c d e f g h").with_chunk_delay(Duration::from_secs(3)));
    let p = provider(&server);
    let req = request();
    let cancel = CancellationToken::new();
    let mut stream = hermes_llm::Provider::stream(&p, &req, &cancel)
        .await
        .unwrap();
    // The role chunk carries no delta; the first text chunk arrives only after a delay.
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
async fn cancellation_before_headers_is_prompt() {
    let server = MockServer::start();
    server.push(Reply::text("late").with_delay(Duration::from_secs(3)));
    let p = provider(&server);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let start = Instant::now();
    let err = complete(&p, &request(), &cancel).await.unwrap_err();
    assert_eq!(err, LlmError::Cancelled);
    assert!(start.elapsed() < Duration::from_secs(1));
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
async fn json_reply_to_a_stream_request_is_understood() {
    let server = MockServer::start();
    let reply = Reply::tool_call("c9", "terminal", r#"{"command":"ls"}"#)
        .with_text("Listing.")
        .with_reasoning("need files")
        .with_usage(10, 5)
        .ignore_stream();
    let c = run(&server, reply).await.unwrap();
    assert_eq!(c.message.content.as_deref(), Some("Listing."));
    assert_eq!(c.message.reasoning.as_deref(), Some("need files"));
    assert_eq!(
        c.message.tool_calls,
        vec![ToolCall::new("c9", "terminal", r#"{"command":"ls"}"#)]
    );
    assert_eq!(c.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(c.usage.map(|u| u.total()), Some(15));
}

#[tokio::test]
async fn connection_refused_is_transport() {
    let server = MockServer::start();
    let p = provider(&server);
    drop(server);
    let err = complete(&p, &request(), &CancellationToken::new())
        .await
        .unwrap_err();
    let LlmError::Transport(text) = &err else {
        panic!("{err:?}")
    };
    assert!(!text.contains("sk-test-key"), "{text}");
}

#[tokio::test]
async fn deltas_received_before_a_cut_are_delivered() {
    let server = MockServer::start();
    server.push(Reply::text("abcdefgh ijklmnop qrstuvwx").cut_after(3));
    let p = provider(&server);
    let req = request();
    let cancel = CancellationToken::new();
    let stream = hermes_llm::Provider::stream(&p, &req, &cancel)
        .await
        .unwrap();
    let items: Vec<_> = stream.collect().await;
    assert_eq!(items.len(), 3, "{items:?}");
    assert_eq!(items[0], Ok(StreamDelta::Text("abcdefgh".into())));
    assert_eq!(items[1], Ok(StreamDelta::Text(" ijklmno".into())));
    assert!(matches!(items[2], Err(LlmError::StreamEnded(_))));
}
