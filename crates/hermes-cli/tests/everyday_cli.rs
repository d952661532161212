//! The commands people type in their first hour: version, config, tools,
//! status, driven through the binary on a real HERMES_HOME.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_mock::Reply;
use support::{Sandbox, stderr, stdout, tool_names};

fn run(sb: &Sandbox, args: &[&str]) -> std::process::Output {
    sb.command().args(args).output().unwrap()
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
    // The API server's key is a secret too: .env, never echoed or in config.yaml.
    let key = run(
        &sb,
        &["config", "set", "API_SERVER_KEY", "0123abcd4567ef89"],
    );
    assert!(key.status.success(), "{}", stderr(&key));
    assert!(
        !stdout(&key).contains("0123abcd4567ef89"),
        "{}",
        stdout(&key)
    );
    let env = std::fs::read_to_string(sb.home.path().join(".env")).unwrap();
    assert!(env.contains("API_SERVER_KEY=0123abcd4567ef89"), "{env}");
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(!text.contains("0123abcd"), "{text}");

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
    // The known one is changed; the unknown one fails the command.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("✗ Unknown toolset 'bogus'"), "{text}");
    assert!(text.contains("✓ Disabled: terminal"), "{text}");
    let listing = stdout(&run(&sb, &["tools", "list"]));
    assert!(listing.contains("✗ disabled  terminal"), "{listing}");
    assert!(listing.contains("✓ enabled  file"), "{listing}");
    let unknown = run(&sb, &["tools", "enable", "nonsense"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(stdout(&unknown).contains("✗ Unknown toolset 'nonsense'"));

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

#[test]
fn doctor_lists_each_problem_of_a_broken_home_with_its_fix() {
    let sb = Sandbox::start();
    sb.mock.require_key("the-right-key");
    sb.add_config("toolsets:\n  - hermes-cli\n  - not-a-toolset\n");
    std::fs::write(sb.home.path().join(".env"), "CUSTOM_API_KEY=a-wrong-key\n").unwrap();
    std::fs::write(sb.home.path().join("state.db"), "this is not SQLite").unwrap();
    let config = std::fs::read_to_string(sb.home.path().join("config.yaml")).unwrap();
    std::fs::write(
        sb.home.path().join("config.yaml"),
        config.replace(
            "default: mock-model",
            "default: mock-model\n  api_key: a-wrong-key",
        ),
    )
    .unwrap();
    let out = run(&sb, &["doctor"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("refused the API key"), "{text}");
    assert!(text.contains("state.db is damaged"), "{text}");
    assert!(text.contains("hermes sessions repair"), "{text}");
    assert!(
        text.contains("Unknown toolsets in config.yaml: not-a-toolset"),
        "{text}"
    );
    assert!(text.contains("Found 3 issue(s) to address"), "{text}");
    assert!(
        !text.contains("a-wrong-key"),
        "the key must not be printed: {text}"
    );

    // A dead endpoint, and a config.yaml that does not parse.
    let dead = Sandbox::start();
    std::fs::write(
        dead.home.path().join("config.yaml"),
        "model:\n  provider: custom\n  base_url: http://127.0.0.1:9/v1\n  default: m\n",
    )
    .unwrap();
    let text = stdout(&run(&dead, &["doctor"]));
    assert!(text.contains("cannot be reached"), "{text}");
    assert!(text.contains("correct model.base_url"), "{text}");
    std::fs::write(dead.home.path().join("config.yaml"), "model: [unclosed\n").unwrap();
    let text = stdout(&run(&dead, &["doctor"]));
    assert!(text.contains("config.yaml cannot be used"), "{text}");
    assert!(text.contains("hermes config edit"), "{text}");
}

#[test]
fn doctor_on_a_healthy_home_passes_and_fix_creates_what_is_missing() {
    let sb = Sandbox::start();
    let out = run(&sb, &["doctor", "--fix"]);
    let text = stdout(&out);
    assert!(
        text.contains("Provider custom · model mock-model"),
        "{text}"
    );
    assert!(text.contains(" answers"), "{text}");
    assert!(text.contains("All checks passed"), "{text}");
    assert!(sb.home.path().join(".env").is_file());
    assert!(sb.home.path().join("skills").is_dir());
}

#[test]
fn logs_show_filter_and_explain_missing_files() {
    let sb = Sandbox::start();
    let missing = run(&sb, &["logs"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stdout(&missing).contains("Log file not found"),
        "{}",
        stdout(&missing)
    );
    let logs = sb.home.path().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::write(
        logs.join("agent.log"),
        "2026-01-01 10:00:00,000 INFO [s1] agent: one\n\
         2026-01-01 10:00:01,000 WARNING [s2] tools.terminal: two\n\
         2026-01-01 10:00:02,000 ERROR [s1] agent: three\n",
    )
    .unwrap();
    let all = stdout(&run(&sb, &["logs", "-n", "2"]));
    assert!(
        !all.contains("one") && all.contains("two") && all.contains("three"),
        "{all}"
    );
    let warn = stdout(&run(
        &sb,
        &["logs", "--level", "warning", "--session", "s1"],
    ));
    assert!(warn.contains("three") && !warn.contains("two"), "{warn}");
    let tools = stdout(&run(&sb, &["logs", "--component", "tools"]));
    assert!(tools.contains("two") && !tools.contains("three"), "{tools}");
    let bad = run(&sb, &["logs", "--since", "5x"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(stdout(&bad).contains("Invalid --since value: '5x'"));
    assert!(stdout(&run(&sb, &["logs", "list"])).contains("agent.log"));
}

#[test]
fn completion_scripts_load_in_bash() {
    let sb = Sandbox::start();
    for shell in ["bash", "zsh", "fish"] {
        let out = run(&sb, &["completion", shell]);
        assert!(out.status.success(), "{shell}: {}", stderr(&out));
        assert!(stdout(&out).contains("hermes"), "{shell}");
    }
    let script = sb.home.path().join("hermes.bash");
    std::fs::write(&script, stdout(&run(&sb, &["completion", "bash"]))).unwrap();
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source '{}' && complete -p hermes",
            script.display()
        ))
        .output()
        .unwrap();
    assert!(stdout(&out).contains("complete"), "{}", stderr(&out));
    assert_eq!(run(&sb, &["completion", "tcsh"]).status.code(), Some(2));
}

#[test]
fn output_cut_short_by_its_reader_ends_quietly() {
    use std::io::Read;
    use std::process::Stdio;
    let sb = Sandbox::start();
    // `hermes completion bash | head -c 10`: the reader goes away early.
    let mut child = sb
        .command()
        .args(["completion", "bash"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 10];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "exit {status}: {err}");
    assert!(!err.contains("Broken pipe"), "{err}");
}
