//! The OpenAI Responses transport against the scripted mock server.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use futures_util::StreamExt;
use hermes_llm::{
    ChatRequest, Completion, ErrorContext, FailoverReason, LlmError, Provider, ResponsesConfig,
    ResponsesProvider, StreamDelta, classify_error, complete,
};
use hermes_mock::{MockServer, Reply};
use hermes_protocol::{FinishReason, Message, ToolSchema, Usage};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn provider(server: &MockServer) -> ResponsesProvider {
    let cfg = ResponsesConfig {
        api_key: Some("sk-test".into()),
        ..ResponsesConfig::new(server.base_url())
    };
    ResponsesProvider::new("openai", cfg).unwrap()
}

fn request() -> ChatRequest {
    ChatRequest {
        model: "gpt-5-mini".into(),
        messages: vec![Message::system("You are terse."), Message::user("hi")],
        tools: vec![ToolSchema {
            name: "read_file".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }]
        .into(),
        ..ChatRequest::default()
    }
}

async fn run(server: &MockServer, reply: Reply) -> Result<Completion, LlmError> {
    server.push(reply);
    complete(&provider(server), &request(), &CancellationToken::new()).await
}

fn classify(err: &LlmError) -> hermes_llm::ClassifiedError {
    let ctx = ErrorContext {
        provider: "openai",
        model: "gpt-5-mini",
        approx_tokens: 1000,
        context_length: Some(400_000),
        num_messages: 2,
    };
    classify_error(err, &ctx)
}

#[tokio::test]
async fn text_is_streamed_in_pieces_and_the_request_is_shaped() {
    let server = MockServer::start();
    let p = provider(&server);
    assert_eq!(p.endpoint(), format!("{}/responses", server.base_url()));
    let text = "Hello there! This answer is long enough to be split into many deltas.";
    server.push(Reply::text(text).with_usage(321, 17));
    let deltas: Vec<StreamDelta> = p
        .stream(&request(), &CancellationToken::new())
        .await
        .unwrap()
        .map(Result::unwrap)
        .collect()
        .await;
    let pieces = deltas
        .iter()
        .filter(|d| matches!(d, StreamDelta::Text(_)))
        .count();
    assert!(pieces > 3, "{deltas:?}");
    assert_eq!(
        deltas.last(),
        Some(&StreamDelta::Finish(FinishReason::Stop))
    );

    let c = run(&server, Reply::text(text)).await.unwrap();
    assert_eq!(c.message.content.as_deref(), Some(text));

    let requests = server.requests();
    assert_eq!(requests[0].header("authorization"), Some("Bearer sk-test"));
    let body = &server.responses_requests()[0];
    assert_eq!(body["model"], "gpt-5-mini");
    assert_eq!(body["instructions"], "You are terse.");
    assert_eq!(body["input"], json!([{"role": "user", "content": "hi"}]));
    assert_eq!(body["store"], false);
    assert_eq!(body["stream"], true);
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(body["tool_choice"], "auto");
    assert_eq!(body["parallel_tool_calls"], true);
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(body["tools"][0]["name"], "read_file");
    assert!(body["tools"][0].get("function").is_none());
    assert_eq!(server.chat_requests().len(), 2);
}

#[tokio::test]
async fn two_parallel_tool_calls_split_across_many_deltas() {
    let server = MockServer::start();
    let a = r#"{"path":"some/rather/long/path/to/a/file.txt"}"#;
    let b = r#"{"path":"another/long/path/b.md","limit":20}"#;
    server.push(Reply::tool_calls(&[
        ("call_A", "read_file", a),
        ("call_B", "read_file", b),
    ]));
    let p = provider(&server);
    let deltas: Vec<StreamDelta> = p
        .stream(&request(), &CancellationToken::new())
        .await
        .unwrap()
        .map(Result::unwrap)
        .collect()
        .await;
    let fragments = deltas
        .iter()
        .filter(|d| matches!(d, StreamDelta::ToolCall { arguments, .. } if !arguments.is_empty()))
        .count();
    assert!(fragments > 10, "{deltas:?}");
    let mut acc = hermes_llm::StreamAccumulator::new();
    for d in &deltas {
        acc.push(d);
    }
    let c = acc.finish();
    assert_eq!(c.finish_reason, Some(FinishReason::ToolCalls));
    let calls: Vec<(&str, &str, &str)> = c
        .message
        .tool_calls
        .iter()
        .map(|t| {
            (
                t.id.as_str(),
                t.function.name.as_str(),
                t.function.arguments.as_str(),
            )
        })
        .collect();
    assert_eq!(
        calls,
        vec![("call_A", "read_file", a), ("call_B", "read_file", b)]
    );

    // The next request carries the calls and their results as items.
    let mut next = request();
    next.messages.push(c.message.clone());
    next.messages
        .push(Message::tool_result("call_A", "read_file", "A!"));
    next.messages
        .push(Message::tool_result("call_B", "read_file", "B!"));
    server.push(Reply::text("done"));
    complete(&p, &next, &CancellationToken::new())
        .await
        .unwrap();
    let body = server.responses_requests().pop().unwrap();
    assert_eq!(
        body["input"],
        json!([
            {"role": "user", "content": "hi"},
            {"type": "function_call", "call_id": "call_A", "name": "read_file", "arguments": a},
            {"type": "function_call", "call_id": "call_B", "name": "read_file", "arguments": b},
            {"type": "function_call_output", "call_id": "call_A", "output": "A!"},
            {"type": "function_call_output", "call_id": "call_B", "output": "B!"},
        ])
    );
}

#[tokio::test]
async fn reasoning_items_are_captured_and_replayed_next_turn() {
    let server = MockServer::start();
    let c = run(
        &server,
        Reply::tool_call("call_1", "read_file", r#"{"path":"a"}"#)
            .with_reasoning("I should read the file first."),
    )
    .await
    .unwrap();
    assert_eq!(
        c.message.reasoning.as_deref(),
        Some("I should read the file first.")
    );
    assert_eq!(c.message.codex_reasoning_items.len(), 1);
    let item = &c.message.codex_reasoning_items[0];
    assert_eq!(item["type"], "reasoning");
    let encrypted = item["encrypted_content"].as_str().unwrap().to_owned();
    assert!(encrypted.starts_with("gAAAA-mock-enc-"), "{item}");

    let mut next = request();
    next.messages.push(c.message);
    next.messages
        .push(Message::tool_result("call_1", "read_file", "contents"));
    server.push(Reply::text("ok"));
    complete(&provider(&server), &next, &CancellationToken::new())
        .await
        .unwrap();
    let body = server.responses_requests().pop().unwrap();
    let input = body["input"].as_array().unwrap();
    assert_eq!(
        input[1],
        json!({"type": "reasoning", "encrypted_content": encrypted,
               "summary": [{"type": "summary_text", "text": "I should read the file first."}]})
    );
    assert_eq!(input[2]["role"], "assistant");
    assert_eq!(input[3]["type"], "function_call");
}

#[tokio::test]
async fn usage_maps_cached_and_reasoning_tokens() {
    let server = MockServer::start();
    let c = run(
        &server,
        Reply::text("hi")
            .with_usage(1200, 80)
            .with_usage_details(1024, 48),
    )
    .await
    .unwrap();
    assert_eq!(
        c.usage,
        Some(Usage {
            input_tokens: 1200,
            output_tokens: 80,
            cache_read_tokens: 1024,
            cache_write_tokens: 0,
            reasoning_tokens: 48,
        })
    );
}

#[tokio::test]
async fn incomplete_is_length() {
    let server = MockServer::start();
    let c = run(&server, Reply::text("cut sh").with_finish_reason("length"))
        .await
        .unwrap();
    assert_eq!(c.finish_reason, Some(FinishReason::Length));
    assert_eq!(c.message.content.as_deref(), Some("cut sh"));
}

#[tokio::test]
async fn rate_limit_429_with_retry_after_is_classified() {
    let server = MockServer::start();
    let err = run(
        &server,
        Reply::error(429, "Rate limit reached for gpt-5-mini").with_header("retry-after", "7"),
    )
    .await
    .unwrap_err();
    assert_eq!(err.status(), Some(429));
    assert_eq!(err.retry_after(), Some(Duration::from_secs(7)));
    let verdict = classify(&err);
    assert_eq!(verdict.reason, FailoverReason::RateLimit);
    assert!(verdict.retryable);
    assert_eq!(verdict.retry_after, Some(Duration::from_secs(7)));
}

#[tokio::test]
async fn context_overflow_is_classified_over_http_and_in_stream() {
    let server = MockServer::start();
    let body = json!({"error": {
        "message": "Your input exceeds the context window of this model.",
        "type": "invalid_request_error", "param": "input", "code": "context_length_exceeded"}});
    let err = run(&server, Reply::error(400, body.to_string()))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(400));
    let verdict = classify(&err);
    assert_eq!(verdict.reason, FailoverReason::ContextOverflow);
    assert!(verdict.should_compress);

    // The same failure reported as a `response.failed` event.
    let failed = json!({"type": "response.failed", "sequence_number": 3, "response": {
        "id": "resp_1", "status": "failed",
        "error": {"code": "context_length_exceeded", "message": "Input too long."}}});
    let err = run(&server, Reply::raw_sse(vec![failed.to_string()]))
        .await
        .unwrap_err();
    assert_eq!(classify(&err).reason, FailoverReason::ContextOverflow);

    // And a rate limit as a bare `error` event.
    let event = json!({"type": "error", "code": "rate_limit_exceeded",
                       "message": "Too many requests", "param": null});
    let err = run(&server, Reply::raw_sse(vec![event.to_string()]))
        .await
        .unwrap_err();
    assert_eq!(classify(&err).reason, FailoverReason::RateLimit);
}

/// `data:`-only lines, as LiteLLM sends them: the type is only in the JSON.
#[tokio::test]
async fn data_only_sse_lines_are_understood() {
    let server = MockServer::start();
    let events: Vec<String> = [
        json!({"type": "response.created", "response": {"id": "r1", "status": "in_progress"}}),
        json!({"type": "response.output_item.added", "output_index": 0,
               "item": {"id": "fc_1", "type": "function_call", "call_id": "call_9",
                        "name": "read_file", "arguments": ""}}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1",
               "output_index": 0, "delta": "{\"path\":"}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1",
               "output_index": 0, "delta": "\"x\"}"}),
        json!({"type": "response.function_call_arguments.done", "item_id": "fc_1",
               "output_index": 0, "arguments": "{\"path\":\"x\"}"}),
        json!({"type": "response.completed", "response": {"id": "r1", "status": "completed",
               "usage": {"input_tokens": 5, "output_tokens": 2}}}),
    ]
    .iter()
    .map(Value::to_string)
    .collect();
    let c = run(&server, Reply::raw_sse(events)).await.unwrap();
    assert_eq!(c.message.tool_calls.len(), 1);
    assert_eq!(c.message.tool_calls[0].id, "call_9");
    assert_eq!(
        c.message.tool_calls[0].function.arguments,
        r#"{"path":"x"}"#
    );
    assert_eq!(c.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(c.usage.map(|u| u.input_tokens), Some(5));
}

#[tokio::test]
async fn non_streamed_json_reply_is_understood() {
    let server = MockServer::start();
    let c = run(
        &server,
        Reply::tool_call("call_1", "read_file", r#"{"path":"a"}"#)
            .with_text("Looking.")
            .with_reasoning("plan")
            .ignore_stream(),
    )
    .await
    .unwrap();
    assert_eq!(c.message.content.as_deref(), Some("Looking."));
    assert_eq!(c.message.reasoning.as_deref(), Some("plan"));
    assert_eq!(c.message.codex_reasoning_items.len(), 1);
    assert_eq!(c.message.tool_calls[0].id, "call_1");
    assert_eq!(c.finish_reason, Some(FinishReason::ToolCalls));
}

#[tokio::test]
async fn a_cut_stream_is_stream_ended() {
    let server = MockServer::start();
    let err = run(&server, Reply::text("hello there friend").cut_after(4))
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::StreamEnded(_)), "{err:?}");
}

#[tokio::test]
async fn undecryptable_reasoning_is_dropped_and_the_call_repeated_once() {
    let server = MockServer::start();
    let rejected = json!({"error": {"message": "The encrypted content could not be decrypted.",
        "type": "invalid_request_error", "param": null, "code": "invalid_encrypted_content"}});
    let mut req = request();
    req.messages.push(Message {
        codex_reasoning_items: vec![json!({"type": "reasoning", "id": "rs_old",
            "encrypted_content": "from-another-endpoint", "summary": []})],
        ..Message::assistant("earlier")
    });
    req.messages.push(Message::user("again"));
    server.push(Reply::error(400, rejected.to_string()));
    server.push(Reply::text("recovered"));
    let c = complete(&provider(&server), &req, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(c.message.content.as_deref(), Some("recovered"));
    let bodies = server.responses_requests();
    assert_eq!(bodies.len(), 2);
    let has_reasoning = |b: &Value| {
        b["input"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["type"] == "reasoning")
    };
    assert!(has_reasoning(&bodies[0]));
    assert!(!has_reasoning(&bodies[1]));

    // Without reasoning to drop, the error is reported as is.
    server.push(Reply::error(400, rejected.to_string()));
    let err = run(&server, Reply::text("unused")).await.unwrap_err();
    assert_eq!(err.status(), Some(400));
    assert_eq!(
        classify(&err).reason,
        FailoverReason::InvalidEncryptedContent
    );
}
