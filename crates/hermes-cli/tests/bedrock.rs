//! `model.provider: bedrock` through the real binary against the mock's
//! Converse event-stream route.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_mock::{RecordedRequest, Reply};
use serde_json::{Value, json};
use support::*;

/// A sandbox whose config selects Bedrock at the mock, with keys in `.env`.
fn bedrock_sandbox(env_file: &str) -> Sandbox {
    let sb = Sandbox::start();
    let config = format!(
        "model:\n  provider: bedrock\n  base_url: {}\n  default: us.amazon.nova-pro-v1:0\nbedrock:\n  region: eu-central-1\n",
        sb.mock.base_url()
    );
    std::fs::write(sb.home.path().join("config.yaml"), config).unwrap();
    std::fs::write(sb.home.path().join(".env"), env_file).unwrap();
    sb
}

fn converse_calls(sb: &Sandbox) -> Vec<RecordedRequest> {
    sb.mock
        .requests()
        .into_iter()
        .filter(RecordedRequest::is_bedrock)
        .collect()
}

#[test]
fn tool_round_trip_over_bedrock_converse() {
    let sb = bedrock_sandbox(
        "AWS_ACCESS_KEY_ID=AKIDEXAMPLE\nAWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY\n",
    );
    sb.mock.push(Reply::tool_call(
        "tooluse_1",
        "terminal",
        r#"{"command": "echo hermes-bedrock"}"#,
    ));
    sb.mock
        .push(Reply::text("It printed hermes-bedrock.").with_usage(50, 8));
    let out = sb.chat("run echo", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "It printed hermes-bedrock.\n");
    assert!(!stderr(&out).contains("EXAMPLEKEY"));

    let calls = converse_calls(&sb);
    assert_eq!(calls.len(), 2);
    for r in &calls {
        assert_eq!(
            r.path,
            "/v1/model/us.amazon.nova-pro-v1%3A0/converse-stream"
        );
        let auth = r.header("authorization").unwrap();
        assert!(
            auth.starts_with(
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/" // date follows
            ),
            "{auth}"
        );
        assert!(
            auth.contains("/eu-central-1/bedrock/aws4_request, SignedHeaders="),
            "{auth}"
        );
        let date = r.header("x-amz-date").unwrap();
        assert_eq!(date.len(), 16, "{date}");
        assert!(date.ends_with('Z') && date.as_bytes()[8] == b'T', "{date}");
    }

    let second = &calls[1].body;
    assert!(
        second["system"][0]["text"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );
    let messages = second["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
    assert_eq!(
        messages[1]["content"][0],
        json!({"toolUse": {"toolUseId": "tooluse_1", "name": "terminal",
                           "input": {"command": "echo hermes-bedrock"}}})
    );
    let result = &messages[2]["content"][0]["toolResult"];
    assert_eq!(result["toolUseId"], "tooluse_1");
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text["output"], "hermes-bedrock");
    assert_eq!(text["exit_code"], 0);
}

#[test]
fn missing_aws_credentials_say_what_to_set() {
    let sb = bedrock_sandbox("");
    let out = sb.chat("hello", &[]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("No AWS credentials found for Bedrock"),
        "{err}"
    );
    assert!(err.contains("AWS_ACCESS_KEY_ID"), "{err}");
    assert!(err.contains("AWS_BEARER_TOKEN_BEDROCK"), "{err}");
    assert!(converse_calls(&sb).is_empty());
}

#[test]
fn bedrock_api_key_is_sent_as_a_bearer_token() {
    let sb = bedrock_sandbox("AWS_BEARER_TOKEN_BEDROCK=bedrock-key-123\n");
    sb.mock.push(Reply::text("hi from bedrock"));
    let out = sb.chat("hello", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "hi from bedrock\n");
    let calls = converse_calls(&sb);
    assert_eq!(
        calls[0].header("authorization"),
        Some("Bearer bedrock-key-123")
    );
}
