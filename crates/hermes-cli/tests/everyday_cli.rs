//! The commands people type in their first hour: version, config, tools,
//! status, driven through the binary on a real HERMES_HOME.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_mock::Reply;
use support::{Sandbox, stderr, stdout};

fn run(sb: &Sandbox, args: &[&str]) -> std::process::Output {
    sb.command().args(args).output().unwrap()
}

fn tool_names(body: &serde_json::Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn version_subcommand_and_flag_agree() {
    let sb = Sandbox::start();
    let sub = run(&sb, &["version"]);
    let flag = run(&sb, &["--version"]);
    assert!(sub.status.success() && flag.status.success());
    let first = stdout(&sub).lines().next().unwrap().to_owned();
    assert!(first.starts_with("Hermes Agent v"), "{first}");
    assert_eq!(stdout(&flag).trim(), first);
    assert!(stdout(&sub).contains("Install directory:"));
}

#[test]
fn config_set_get_unset_round_trip_keeping_comments() {
    let sb = Sandbox::start();
    let config = sb.home.path().join("config.yaml");
    let original = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("# my notes\n{original}")).unwrap();

    let out = run(&sb, &["config", "set", "agent.max_turns", "42"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("✓ Set agent.max_turns = 42 in "),
        "{}",
        stdout(&out)
    );
    let out = run(
        &sb,
        &[
            "config",
            "set",
            "OPENROUTER_API_KEY",
            "sk-or-secret-value-123456",
        ],
    );
    assert!(
        stdout(&out).contains("✓ Set OPENROUTER_API_KEY in "),
        "{}",
        stdout(&out)
    );
    assert!(!stdout(&out).contains("secret-value"));
    run(&sb, &["config", "set", "mcp_servers.docs.command", "npx"]);

    let text = std::fs::read_to_string(&config).unwrap();
    assert!(text.starts_with("# my notes\n"), "{text}");
    assert!(text.contains("max_turns: 42"), "{text}");
    let env = std::fs::read_to_string(sb.home.path().join(".env")).unwrap();
    assert!(
        env.contains("OPENROUTER_API_KEY=sk-or-secret-value-123456"),
        "{env}"
    );

    assert_eq!(
        stdout(&run(&sb, &["config", "get", "agent.max_turns"])).trim(),
        "42"
    );
    assert_eq!(
        stdout(&run(&sb, &["config", "get", "mcp_servers", "--json"])).trim(),
        r#"{"docs":{"command":"npx"}}"#
    );
    // The model the sandbox configured, resolved as a session would.
    assert_eq!(
        stdout(&run(&sb, &["config", "get", "model.default"])).trim(),
        "mock-model"
    );
    let missing = run(&sb, &["config", "get", "no.such.key"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(stderr(&missing).contains("Config key not set: no.such.key"));

    // The setting is live: the next chat stops after 42 model calls at most.
    let out = run(&sb, &["config", "unset", "agent.max_turns"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&run(&sb, &["config", "get", "agent.max_turns"])).trim(),
        "90"
    );
    let out = run(&sb, &["config", "unset", "OPENROUTER_API_KEY"]);
    assert!(out.status.success());
    let env = std::fs::read_to_string(sb.home.path().join(".env")).unwrap();
    assert!(!env.contains("OPENROUTER_API_KEY"), "{env}");

    let usage = run(&sb, &["config", "set", "only.key"]);
    assert_eq!(usage.status.code(), Some(1));
    assert!(stdout(&usage).contains("Usage: hermes config set <key> <value>"));
    assert_eq!(
        stdout(&run(&sb, &["config", "path"])).trim(),
        config.display().to_string()
    );
}

#[test]
fn tools_disable_changes_what_the_next_chat_offers() {
    let sb = Sandbox::start();
    let out = run(&sb, &["tools", "disable", "terminal", "bogus"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("✗ Unknown toolset 'bogus'"), "{text}");
    assert!(text.contains("✓ Disabled: terminal"), "{text}");
    let listing = stdout(&run(&sb, &["tools", "list"]));
    assert!(listing.contains("✗ disabled  terminal"), "{listing}");
    assert!(listing.contains("✓ enabled  file"), "{listing}");

    sb.mock.push(Reply::text("ok"));
    let out = sb.chat("hi", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let names = tool_names(&sb.requests()[0]);
    assert!(!names.iter().any(|n| n == "terminal"), "{names:?}");
    assert!(names.iter().any(|n| n == "read_file"), "{names:?}");

    run(&sb, &["tools", "enable", "terminal"]);
    sb.mock.push(Reply::text("ok"));
    sb.chat("hi", &[]);
    assert!(
        tool_names(&sb.requests()[1])
            .iter()
            .any(|n| n == "terminal")
    );

    // agent.disabled_toolsets applies on top of any selection, -t included.
    sb.add_config("agent:\n  disabled_toolsets:\n    - file\n");
    sb.mock.push(Reply::text("ok"));
    sb.chat("hi", &["-t", "file,terminal"]);
    let names = tool_names(&sb.requests()[2]);
    assert!(!names.iter().any(|n| n == "read_file"), "{names:?}");
    assert!(names.iter().any(|n| n == "terminal"), "{names:?}");
}

#[test]
fn status_shows_the_model_and_masks_keys() {
    let sb = Sandbox::start();
    std::fs::write(
        sb.home.path().join(".env"),
        "OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwxyz\n",
    )
    .unwrap();
    let out = run(&sb, &["status"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("Model:        mock-model"), "{text}");
    assert!(text.contains("OpenAI"), "{text}");
    assert!(!text.contains("ghijklmnop"), "{text}");
    assert!(text.contains("Stored:       0"), "{text}");
    let show = stdout(&run(&sb, &["config", "show"]));
    assert!(
        show.contains("◆ Model") && show.contains("mock-model"),
        "{show}"
    );
}

#[test]
fn subcommand_help_does_not_repeat_the_chat_flags() {
    let sb = Sandbox::start();
    let help = stdout(&run(&sb, &["sessions", "--help"]));
    assert!(!help.contains("--yolo"), "{help}");
    let chat = stdout(&run(&sb, &["chat", "--help"]));
    assert!(
        chat.contains("--yolo") && chat.contains("--toolsets"),
        "{chat}"
    );
    // Flags before the subcommand still reach the chat.
    sb.mock.push(Reply::text("via top-level flags"));
    let out = run(&sb, &["-m", "other-model", "chat", "-q", "hi", "-Q"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(sb.requests()[0]["model"], "other-model");
}
