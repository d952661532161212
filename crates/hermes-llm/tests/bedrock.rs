//! The Bedrock ConverseStream transport against the scripted mock server:
//! binary event-stream frames, SigV4-signed requests, AWS errors.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use futures_util::StreamExt;
use hermes_llm::bedrock::sigv4::{self, AwsCredentials, SigningRequest};
use hermes_llm::{
    BedrockAuth, BedrockConfig, BedrockProvider, ChatRequest, ErrorContext, FailoverReason,
    LlmError, Provider, StreamDelta, classify_error, complete,
};
use hermes_mock::{MockServer, RecordedRequest, Reply};
use hermes_protocol::{FinishReason, Message, ToolSchema, Usage};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const MODEL: &str = "amazon.nova-pro-v1:0";

fn credentials() -> AwsCredentials {
    AwsCredentials {
        access_key_id: "AKIDEXAMPLE".into(),
        secret_access_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
        session_token: Some("SESSION-TOKEN".into()),
    }
}

fn provider_with(server: &MockServer, auth: BedrockAuth) -> BedrockProvider {
    let mut cfg = BedrockConfig::new(server.base_url(), "eu-west-1", auth);
    // 2015-08-30T12:36:00Z, so the signature is reproducible.
    cfg.clock = Arc::new(|| UNIX_EPOCH + Duration::from_secs(1_440_938_160));
    cfg.idle_timeout = Duration::from_secs(5);
    BedrockProvider::new("bedrock", cfg).unwrap()
}

fn provider(server: &MockServer) -> BedrockProvider {
    provider_with(server, BedrockAuth::SigV4(credentials()))
}

fn request() -> ChatRequest {
    ChatRequest {
        model: MODEL.into(),
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

fn classify(err: &LlmError) -> hermes_llm::ClassifiedError {
    let ctx = ErrorContext {
        provider: "bedrock",
        model: MODEL,
        ..ErrorContext::default()
    };
    classify_error(err, &ctx)
}

fn model_calls(server: &MockServer) -> Vec<RecordedRequest> {
    server
        .requests()
        .into_iter()
        .filter(RecordedRequest::is_bedrock)
        .collect()
}

#[tokio::test]
async fn text_stream_is_assembled_and_the_request_is_signed() {
    let server = MockServer::start();
    let text = "Hello there! This answer is long enough to be split into many deltas.";
    server.push(
        Reply::text(text)
            .with_usage(321, 17)
            .with_usage_details(21, 0),
    );
    let p = provider(&server);
    let c = complete(&p, &request(), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(c.message.content.as_deref(), Some(text));
    assert_eq!(c.finish_reason, Some(FinishReason::Stop));
    assert_eq!(
        c.usage,
        Some(Usage {
            input_tokens: 321,
            output_tokens: 17,
            cache_read_tokens: 21,
            ..Usage::default()
        })
    );

    let calls = model_calls(&server);
    assert_eq!(calls.len(), 1);
    let r = &calls[0];
    assert_eq!(r.path, "/v1/model/amazon.nova-pro-v1%3A0/converse-stream");
    assert_eq!(r.bedrock_model().as_deref(), Some(MODEL));
    assert_eq!(r.body["system"], json!([{"text": "You are terse."}]));
    assert_eq!(
        r.body["messages"],
        json!([{"role": "user", "content": [{"text": "hi"}]}])
    );
    assert_eq!(
        r.body["toolConfig"]["tools"][0]["toolSpec"]["name"],
        "read_file"
    );
    assert_eq!(
        r.header("accept"),
        Some("application/vnd.amazon.eventstream")
    );

    // The signature headers are well formed …
    assert_eq!(r.header("x-amz-date"), Some("20150830T123600Z"));
    assert_eq!(r.header("x-amz-security-token"), Some("SESSION-TOKEN"));
    let content_sha = sigv4::sha256_hex(r.raw_body.as_bytes());
    assert_eq!(r.header("x-amz-content-sha256"), Some(content_sha.as_str()));
    let auth = r.header("authorization").unwrap();
    assert!(
        auth.starts_with(
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/eu-west-1/bedrock/aws4_request, \
             SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token, \
             Signature="
        ),
        "{auth}"
    );
    let signature = auth.rsplit("Signature=").next().unwrap();
    assert_eq!(signature.len(), 64);
    assert!(signature.bytes().all(|b| b.is_ascii_hexdigit()));

    // … and the signature is the one for what the server received.
    let host = r.header("host").unwrap().to_owned();
    let expected = sigv4::sign(
        &credentials(),
        "eu-west-1",
        "bedrock",
        UNIX_EPOCH + Duration::from_secs(1_440_938_160),
        &SigningRequest {
            method: &r.method,
            host: &host,
            path: &r.path,
            query: "",
            headers: &[
                ("content-type", r.header("content-type").unwrap()),
                ("x-amz-content-sha256", &content_sha),
            ],
            payload: r.raw_body.as_bytes(),
        },
    );
    assert_eq!(auth, expected.authorization);
}

#[tokio::test]
async fn tool_call_split_across_many_deltas() {
    let server = MockServer::start();
    let args = r#"{"path":"some/rather/long/directory/name/file.txt"}"#;
    server.push(Reply::tool_call("tooluse_abc123", "read_file", args).with_text("Looking."));
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
    assert!(fragments > 5, "{deltas:?}");

    server.push(Reply::tool_call("tooluse_abc123", "read_file", args).with_text("Looking."));
    let c = complete(&p, &request(), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(c.message.content.as_deref(), Some("Looking."));
    assert_eq!(c.message.tool_calls.len(), 1);
    let call = &c.message.tool_calls[0];
    assert_eq!(call.id, "tooluse_abc123");
    assert_eq!(call.function.name, "read_file");
    assert_eq!(call.function.arguments, args);
    assert_eq!(c.finish_reason, Some(FinishReason::ToolCalls));

    // The call and its result go back as toolUse / toolResult blocks.
    server.push(Reply::text("done"));
    let mut next = request();
    next.messages.push(c.message.clone());
    next.messages.push(Message::tool_result(
        "tooluse_abc123",
        "read_file",
        "{\"content\":\"x\"}",
    ));
    complete(&p, &next, &CancellationToken::new())
        .await
        .unwrap();
    let body = &model_calls(&server)[2].body;
    assert_eq!(
        body["messages"][1]["content"][1],
        json!({"toolUse": {"toolUseId": "tooluse_abc123", "name": "read_file",
                           "input": {"path": "some/rather/long/directory/name/file.txt"}}})
    );
    assert_eq!(
        body["messages"][2],
        json!({"role": "user", "content": [{"toolResult": {"toolUseId": "tooluse_abc123",
                                                              "content": [{"text": "{\"content\":\"x\"}"}]}}]})
    );
}

#[tokio::test]
async fn reasoning_with_signature_is_kept_and_replayed() {
    let server = MockServer::start();
    server.push(Reply::text("42").with_reasoning("Let me think about this carefully."));
    let p = provider(&server);
    let c = complete(&p, &request(), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        c.message.reasoning.as_deref(),
        Some("Let me think about this carefully.")
    );
    let signature = c.message.reasoning_signature.clone().unwrap();
    assert!(signature.starts_with("mock-sig-"), "{signature}");

    server.push(Reply::text("ok"));
    let mut next = request();
    next.messages.push(c.message.clone());
    next.messages.push(Message::user("and?"));
    complete(&p, &next, &CancellationToken::new())
        .await
        .unwrap();
    let body = &model_calls(&server)[1].body;
    assert_eq!(
        body["messages"][1]["content"][0],
        json!({"reasoningContent": {"reasoningText": {
            "text": "Let me think about this carefully.", "signature": signature}}})
    );
}

#[tokio::test]
async fn throttling_mid_stream_is_a_rate_limit_after_the_text() {
    let server = MockServer::start();
    server.push(
        Reply::text("partial answer before the throttle")
            .with_stream_exception("throttlingException", "Too many requests, please wait."),
    );
    let items: Vec<Result<StreamDelta, LlmError>> = provider(&server)
        .stream(&request(), &CancellationToken::new())
        .await
        .unwrap()
        .collect()
        .await;
    let (last, before) = items.split_last().unwrap();
    assert!(before.iter().all(Result::is_ok));
    assert!(before.iter().any(|d| matches!(d, Ok(StreamDelta::Text(_)))));
    let err = last.as_ref().unwrap_err();
    assert_eq!(err.status(), Some(429));
    let classified = classify(err);
    assert_eq!(classified.reason, FailoverReason::RateLimit);
    assert!(classified.retryable);
}

#[tokio::test]
async fn http_400_input_too_long_is_a_context_overflow() {
    let server = MockServer::start();
    server.push(Reply::error(400, "Input is too long for requested model."));
    let err = match provider(&server)
        .stream(&request(), &CancellationToken::new())
        .await
    {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    };
    assert_eq!(err.status(), Some(400));
    let LlmError::Http { body, .. } = &err else {
        panic!("{err:?}");
    };
    assert!(body.contains("ValidationException"), "{body}");
    let classified = classify(&err);
    assert_eq!(classified.reason, FailoverReason::ContextOverflow);
    assert!(classified.should_compress);
    // The secret never shows in the error.
    assert!(!err.to_string().contains("EXAMPLEKEY"));
}

#[tokio::test]
async fn bearer_token_and_denied_streaming_falls_back_to_converse() {
    let server = MockServer::start();
    server.push(Reply::error(
        403,
        "User: arn:aws:iam::123456789012:user/x is not authorized to perform: \
         bedrock:InvokeModelWithResponseStream on resource: model",
    ));
    server.push(Reply::tool_call("t1", "read_file", r#"{"path":"a"}"#).with_text("via converse"));
    let p = provider_with(&server, BedrockAuth::Bearer("bedrock-api-key".into()));
    let c = complete(&p, &request(), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(c.message.content.as_deref(), Some("via converse"));
    assert_eq!(
        c.message.tool_calls[0].function.arguments,
        r#"{"path":"a"}"#
    );
    assert_eq!(c.finish_reason, Some(FinishReason::ToolCalls));
    let calls = model_calls(&server);
    assert!(calls[0].path.ends_with("/converse-stream"));
    assert!(calls[1].path.ends_with("/converse"));
    for r in &calls {
        assert_eq!(r.header("authorization"), Some("Bearer bedrock-api-key"));
        assert_eq!(r.header("x-amz-date"), None);
    }
    assert!(!format!("{p:?}").contains("bedrock-api-key"));
}

#[tokio::test]
async fn a_cut_stream_ends_early() {
    let server = MockServer::start();
    server.push(Reply::text("this answer will be cut off in the middle").cut_after(3));
    let err = complete(&provider(&server), &request(), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::StreamEnded(_)), "{err:?}");
}

#[tokio::test]
async fn cancelling_stops_the_binary_stream() {
    let server = MockServer::start();
    server.push(
        Reply::text("a slow answer that arrives in many small pieces over time")
            .with_chunk_delay(Duration::from_millis(300)),
    );
    let cancel = CancellationToken::new();
    let p = provider(&server);
    let req = request();
    let mut stream = p.stream(&req, &cancel).await.unwrap();
    let first = stream.next().await.unwrap();
    assert!(first.is_ok(), "{first:?}");
    cancel.cancel();
    let next = stream.next().await.unwrap();
    assert_eq!(next, Err(LlmError::Cancelled));
    assert!(stream.next().await.is_none());
}
