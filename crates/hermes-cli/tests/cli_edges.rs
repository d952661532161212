//! Flags, exit codes and error messages of the binary.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_mock::Reply;
use support::*;

#[test]
fn version_and_help() {
    let sb = Sandbox::start();
    let out = sb.command().arg("--version").output().unwrap();
    assert!(out.status.success());
    assert!(
        stdout(&out).starts_with("Hermes Agent v") && stdout(&out).contains("(hermes-rs)"),
        "{}",
        stdout(&out)
    );
    let out = sb.command().args(["chat", "--help"]).output().unwrap();
    let help = stdout(&out);
    for flag in [
        "--query",
        "--quiet",
        "--model",
        "--provider",
        "--toolsets",
        "--max-turns",
        "--yolo",
        "--ignore-user-config",
        "--ignore-rules",
    ] {
        assert!(help.contains(flag), "{flag} missing from help:\n{help}");
    }
}

#[test]
fn oneshot_prints_only_the_final_answer() {
    let sb = Sandbox::start();
    sb.mock
        .push(Reply::tool_call("c1", "terminal", r#"{"command":"true"}"#));
    sb.mock.push(Reply::text("Just the answer."));
    let out = sb.command().args(["-z", "do it"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Just the answer.\n");
    assert!(!stderr(&out).contains("session_id"), "{}", stderr(&out));
}

#[test]
fn no_provider_configured_explains_how_to_configure_one() {
    let sb = Sandbox::start();
    std::fs::remove_file(sb.home.path().join("config.yaml")).unwrap();
    let out = sb.chat("hi", &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("No inference provider is configured"), "{err}");
    assert!(
        err.contains("OPENROUTER_API_KEY") && err.contains("base_url"),
        "{err}"
    );
    assert!(stdout(&out).is_empty());
}

#[test]
fn api_failure_exits_1_with_the_status_and_advice() {
    let sb = Sandbox::start();
    sb.mock.push(Reply::error(
        401,
        r#"{"error":{"message":"invalid api key"}}"#,
    ));
    let out = sb.chat("hi", &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("401") && err.contains("invalid api key"),
        "{err}"
    );
    assert!(err.contains("check the API key"), "{err}");
}

#[test]
fn unreachable_server_names_the_url() {
    let sb = Sandbox::start();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/v1");
    std::fs::write(
        sb.home.path().join("config.yaml"),
        format!("model:\n  provider: custom\n  base_url: {url}\n  default: m\n"),
    )
    .unwrap();
    sb.no_retries();
    let out = sb.chat("hi", &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains(&format!("could not reach {url}")), "{err}");
}

#[test]
fn server_error_is_reported_not_hidden() {
    let sb = Sandbox::start();
    // No scripted reply: the mock answers 500.
    sb.no_retries();
    let out = sb.chat("hi", &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("500") && err.contains("server error"), "{err}");
}

#[test]
fn ignore_user_config_uses_env_only() {
    let sb = Sandbox::start();
    sb.mock.push(Reply::text("from env"));
    let mut cmd = sb.command();
    cmd.env("CUSTOM_BASE_URL", sb.mock.base_url());
    std::fs::write(
        sb.home.path().join("config.yaml"),
        "model:\n  provider: openai\n",
    )
    .unwrap();
    let out = cmd
        .args([
            "chat",
            "-q",
            "hi",
            "-Q",
            "--ignore-user-config",
            "-m",
            "envmodel",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(sb.requests()[0]["model"], "envmodel");
}

#[test]
fn malformed_config_is_reported_with_its_position() {
    let sb = Sandbox::start();
    std::fs::write(
        sb.home.path().join("config.yaml"),
        "model:\n  provider: custom\n  default: [oops\n",
    )
    .unwrap();
    let out = sb.chat("hi", &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("config.yaml") && err.contains("line"), "{err}");
}

#[test]
fn dotenv_in_home_supplies_the_endpoint() {
    let sb = Sandbox::start();
    sb.mock.push(Reply::text("dotenv works"));
    std::fs::remove_file(sb.home.path().join("config.yaml")).unwrap();
    std::fs::write(
        sb.home.path().join(".env"),
        format!(
            "CUSTOM_BASE_URL={}\nHERMES_INFERENCE_MODEL=m1\n",
            sb.mock.base_url()
        ),
    )
    .unwrap();
    let out = sb.chat("hi", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "dotenv works\n");
}

#[test]
fn prompt_can_come_from_stdin() {
    let sb = Sandbox::start();
    sb.mock.push(Reply::text("piped"));
    let mut child = sb
        .command()
        .args(["chat", "-Q"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"question from a pipe\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "piped\n");
    assert_eq!(
        sb.requests()[0]["messages"][1]["content"],
        "question from a pipe\n"
    );
}

#[test]
fn rate_limits_are_retried_and_billing_falls_back_per_config() {
    let sb = Sandbox::start();
    let backup = hermes_mock::MockServer::start();
    sb.add_config(&format!(
        "fallback_providers:\n  - provider: custom\n    model: backup-model\n    base_url: {}\n",
        backup.base_url()
    ));
    sb.mock.push(
        Reply::error(429, r#"{"error":{"message":"Rate limit exceeded"}}"#)
            .with_header("retry-after", "0"),
    );
    sb.mock.push(Reply::error(
        402,
        r#"{"error":{"message":"Insufficient credits"}}"#,
    ));
    backup.push(Reply::text("from the backup"));
    let out = sb.command().args(["chat", "-q", "hi"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "from the backup\n");
    let err = stderr(&out);
    assert!(
        err.contains("rate limited") && err.contains("retrying"),
        "{err}"
    );
    assert!(
        err.contains("falling back to custom (backup-model)"),
        "{err}"
    );
    assert_eq!(backup.chat_requests()[0]["model"], "backup-model");
}

#[test]
fn anthropic_messages_api_mode_talks_the_messages_wire() {
    let sb = Sandbox::start();
    std::fs::write(
        sb.home.path().join("config.yaml"),
        format!(
            "model:\n  provider: custom\n  base_url: {}\n  api_mode: anthropic_messages\n  default: claude-test\n  api_key: sk-ant-test-key\n",
            sb.mock.base_url()
        ),
    )
    .unwrap();
    sb.mock.push(Reply::tool_call(
        "toolu_1",
        "terminal",
        r#"{"command":"echo via-anthropic"}"#,
    ));
    sb.mock.push(Reply::text("Anthropic wire works."));
    let out = sb.chat("hi", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Anthropic wire works.\n");
    let reqs = sb.mock.requests();
    let messages: Vec<_> = reqs
        .iter()
        .filter(|r| r.path.ends_with("/messages"))
        .collect();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0].header("x-api-key"), Some("sk-ant-test-key"));
    assert!(messages[0].header("anthropic-version").is_some());
    let second = &messages[1].body;
    let blocks = second["messages"].as_array().unwrap();
    let result = blocks
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find(|b| b["type"] == "tool_result")
        .unwrap();
    assert_eq!(result["tool_use_id"], "toolu_1");
    assert!(
        result["content"].to_string().contains("via-anthropic"),
        "{result}"
    );
}

#[test]
fn pooled_keys_from_hermes_auth_rotate_on_401() {
    let sb = Sandbox::start();
    std::fs::write(
        sb.home.path().join("config.yaml"),
        "model:\n  provider: openrouter\n  default: some/model\n",
    )
    .unwrap();
    for (key, label) in [
        ("sk-or-first-000001", "first"),
        ("sk-or-second-00002", "second"),
    ] {
        let out = sb
            .command()
            .args([
                "auth",
                "add",
                "openrouter",
                "--api-key",
                key,
                "--label",
                label,
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            !stdout(&out).contains(key),
            "keys are never printed whole: {}",
            stdout(&out)
        );
    }
    let listed = stdout(&sb.command().args(["auth", "list"]).output().unwrap());
    assert!(
        listed.contains("first")
            && listed.contains("second")
            && !listed.contains("sk-or-first-000001"),
        "{listed}"
    );

    sb.mock.push(Reply::error(
        401,
        r#"{"error":{"message":"User not found."}}"#,
    ));
    sb.mock.push(Reply::text("rotated"));
    let out = sb
        .command()
        .env("OPENROUTER_BASE_URL", sb.mock.base_url())
        .args(["chat", "-q", "hi", "-Q"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "rotated\n");
    let auths: Vec<String> = sb
        .mock
        .requests()
        .iter()
        .filter(|r| r.is_chat())
        .map(|r| r.header("authorization").unwrap_or("").to_owned())
        .collect();
    assert_eq!(
        auths,
        vec!["Bearer sk-or-first-000001", "Bearer sk-or-second-00002"]
    );
    let listed = stdout(
        &sb.command()
            .args(["auth", "list", "openrouter"])
            .output()
            .unwrap(),
    );
    assert!(listed.contains("exhausted"), "{listed}");
}
