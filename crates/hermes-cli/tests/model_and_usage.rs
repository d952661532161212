//! `hermes model show|list|set`, cost accounting in state.db, and the context-window
//! cache, driven through the binary against the mock.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_mock::Reply;
use hermes_state::session_db::SessionDb;
use support::*;

fn model_cmd(sb: &Sandbox, args: &[&str]) -> std::process::Output {
    sb.command().arg("model").args(args).output().unwrap()
}

#[test]
fn show_list_and_set_the_default_model() {
    let sb = Sandbox::start();
    let out = model_cmd(&sb, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("provider: custom"), "{text}");
    assert!(text.contains("model:    mock-model"), "{text}");
    assert!(
        text.contains(&format!("endpoint: {}", sb.mock.base_url())),
        "{text}"
    );

    // The custom endpoint's /models listing, with the configured model marked.
    let out = model_cmd(&sb, &["list"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("* custom"), "{text}");
    assert!(text.contains("  openrouter"), "{text}");
    assert!(text.contains("* mock-model"), "{text}");

    // A comment and an unrelated section survive the edit.
    sb.add_config("# keep this comment\nagent:\n  max_turns: 7\n");
    let out = model_cmd(&sb, &["set", "qwen3:8b"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let config = std::fs::read_to_string(sb.home.path().join("config.yaml")).unwrap();
    assert!(config.contains("  default: qwen3:8b\n"), "{config}");
    assert!(config.contains("  provider: custom\n"), "{config}");
    assert!(
        config.contains("# keep this comment\n") && config.contains("max_turns: 7"),
        "{config}"
    );
    assert!(stdout(&model_cmd(&sb, &["show"])).contains("model:    qwen3:8b"));

    // provider:model switches provider and drops the old endpoint.
    let out = model_cmd(&sb, &["set", "openrouter:anthropic/claude-sonnet-4.5"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let config = std::fs::read_to_string(sb.home.path().join("config.yaml")).unwrap();
    assert!(config.contains("  provider: openrouter\n"), "{config}");
    assert!(
        config.contains("  default: anthropic/claude-sonnet-4.5\n"),
        "{config}"
    );
    assert!(!config.contains("base_url"), "{config}");

    let out = model_cmd(&sb, &["set", "x", "--provider", "nonsense"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("unknown provider 'nonsense'"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn usage_is_priced_and_recorded_like_the_reference() {
    let sb = Sandbox::start();
    // The built-in openai id, pointed at the mock through a user-defined provider entry,
    // so the call bills on OpenAI's price list.
    let config = format!(
        "model:\n  provider: openai\n  default: gpt-4o\nproviders:\n  openai:\n    base_url: {}\n    api_key: sk-test\n",
        sb.mock.base_url()
    );
    std::fs::write(sb.home.path().join("config.yaml"), config).unwrap();
    sb.mock
        .push(Reply::text("hello").with_usage(1_000_000, 100_000));
    let out = sb.chat("hi", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let db = SessionDb::open_read_only(&sb.home.path().join("state.db")).unwrap();
    let id = db.most_recent(None).unwrap().unwrap().id;
    let row = db.export_session(&id).unwrap().unwrap();
    assert_eq!(row["input_tokens"], 1_000_000);
    assert_eq!(row["output_tokens"], 100_000);
    assert_eq!(row["api_call_count"], 1);
    // gpt-4o: $2.50 per million input, $10 per million output.
    let cost = row["estimated_cost_usd"].as_f64().unwrap();
    assert!((cost - 3.5).abs() < 1e-9, "{cost}");
    assert_eq!(row["cost_status"], "estimated");
    assert_eq!(row["cost_source"], "official_docs_snapshot");
    assert_eq!(row["pricing_version"], "openai-pricing-2026-03-16");
    assert_eq!(row["billing_provider"], "openai");

    // An unpriced route records tokens with an unknown cost.
    let sb = Sandbox::start();
    sb.mock.push(Reply::text("hello").with_usage(10, 5));
    assert!(sb.chat("hi", &[]).status.success());
    let db = SessionDb::open_read_only(&sb.home.path().join("state.db")).unwrap();
    let id = db.most_recent(None).unwrap().unwrap().id;
    let row = db.export_session(&id).unwrap().unwrap();
    assert_eq!(row["cost_status"], "unknown");
    assert_eq!(row["input_tokens"], 10);
}

#[test]
fn a_reported_context_window_is_cached_for_the_next_session() {
    let sb = Sandbox::start();
    sb.mock.push(Reply::error(
        400,
        r#"{"error":{"message":"This model's maximum context length is 16384 tokens. However, your messages resulted in 20000 tokens."}}"#,
    ));
    sb.mock.push(Reply::text("ok"));
    let out = sb.chat("hi", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "ok\n");
    let cache = std::fs::read_to_string(sb.home.path().join("context_length_cache.yaml")).unwrap();
    assert!(cache.starts_with("context_lengths:\n"), "{cache}");
    assert!(
        cache.contains(&format!("\"mock-model@{}\": 16384", sb.mock.base_url())),
        "{cache}"
    );
}

#[test]
fn reasoning_effort_reaches_the_anthropic_wire() {
    let sb = Sandbox::start();
    let config = |model: &str, effort: &str| {
        format!(
            "model:\n  provider: custom\n  base_url: {}\n  api_mode: anthropic_messages\n  \
             default: {model}\n  api_key: sk-ant-test\nagent:\n  reasoning_effort: {effort}\n",
            sb.mock.base_url()
        )
    };
    let path = sb.home.path().join("config.yaml");
    std::fs::write(&path, config("claude-opus-4-7", "high")).unwrap();
    sb.mock.push(Reply::text("a"));
    assert!(sb.chat("hi", &[]).status.success());
    std::fs::write(&path, config("claude-sonnet-4-5", "low")).unwrap();
    sb.mock.push(Reply::text("b"));
    assert!(sb.chat("hi", &[]).status.success());
    std::fs::write(&path, config("claude-sonnet-4-5", "none")).unwrap();
    sb.mock.push(Reply::text("c"));
    assert!(sb.chat("hi", &[]).status.success());
    let bodies = sb.mock.messages_requests();
    assert_eq!(bodies[0]["thinking"]["type"], "adaptive");
    assert_eq!(bodies[0]["output_config"]["effort"], "high");
    assert_eq!(bodies[1]["thinking"]["budget_tokens"], 4000);
    assert_eq!(bodies[1]["temperature"], 1);
    assert!(bodies[2].get("thinking").is_none(), "{}", bodies[2]);
}
