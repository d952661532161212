//! The interactive REPL driven through a real pseudo-terminal (tmux), against
//! the mock provider. Skipped, with a message, where tmux is not installed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::time::{Duration, Instant};

use hermes_mock::Reply;
use support::Sandbox;
use support::pty::{PROMPT, Pane, tmux_available};

#[test]
fn a_streamed_answer_and_a_tool_line_render_and_exit_prints_a_summary() {
    if !tmux_available() {
        return;
    }
    let sb = Sandbox::start();
    sb.mock.push(
        Reply::tool_call("c1", "terminal", r#"{"command":"echo pty-check"}"#).with_usage(100, 10),
    );
    sb.mock
        .push(Reply::text("All **done** with `echo`.\n\n- one item").with_usage(120, 12));
    let pane = Pane::start(&sb, "stream", "chat");
    let screen = pane.wait_for(PROMPT);
    assert!(
        screen.contains("mock-model"),
        "banner names the model:\n{screen}"
    );
    pane.send_line("run the check");
    let screen = pane.wait_for("• one item");
    assert!(
        screen.contains("All done with echo."),
        "markdown rendered:\n{screen}"
    );
    assert!(!screen.contains("**done**"), "no raw markup:\n{screen}");
    assert!(
        screen.contains("terminal  echo pty-check"),
        "tool line:\n{screen}"
    );
    pane.wait_for_count(PROMPT, 2);
    pane.keys(&["C-d"]);
    let screen = pane.wait_for("hermes --resume");
    assert!(
        screen.contains("Session: 1 turn · 242 tokens"),
        "exit summary:\n{screen}"
    );
}

#[test]
fn ctrl_c_interrupts_a_running_tool_and_the_prompt_comes_back() {
    if !tmux_available() {
        return;
    }
    let sb = Sandbox::start();
    sb.mock.push(Reply::tool_call(
        "c1",
        "terminal",
        r#"{"command":"sleep 30"}"#,
    ));
    sb.mock.push(Reply::text("next answer"));
    let pane = Pane::start(&sb, "ctrlc", "chat");
    pane.wait_for(PROMPT);
    pane.send_line("sleep please");
    pane.wait_for("sleep 30");
    std::thread::sleep(Duration::from_millis(300));
    let pressed = Instant::now();
    pane.keys(&["C-c"]);
    pane.wait_for("Interrupted");
    pane.wait_for_count(PROMPT, 2);
    let took = pressed.elapsed();
    assert!(
        took < Duration::from_secs(5),
        "prompt came back after {took:?}"
    );
    // The session goes on: the next turn is answered.
    pane.send_line("and now?");
    let screen = pane.wait_for("next answer");
    assert!(
        screen.contains("terminal cancelled"),
        "the tool was cancelled:\n{screen}"
    );
    let requests = sb.requests();
    let last = requests.last().unwrap();
    let users = support::messages_with_role(last, "user");
    assert_eq!(users.last().unwrap()["content"], "and now?");
}

#[test]
fn undo_removes_the_last_turn_from_the_next_request_and_the_store() {
    if !tmux_available() {
        return;
    }
    let sb = Sandbox::start();
    sb.mock.push(Reply::text("answer one"));
    sb.mock.push(Reply::text("answer two"));
    sb.mock.push(Reply::text("answer three"));
    let pane = Pane::start(&sb, "undo", "chat");
    pane.wait_for(PROMPT);
    pane.send_line("question one");
    pane.wait_for("answer one");
    pane.send_line("question two");
    pane.wait_for("answer two");
    pane.send_line("/undo");
    pane.wait_for("Undid 2 messages");
    // The undone text is put back in the prompt for editing: clear it first.
    pane.keys(&["C-u"]);
    pane.send_line("question three");
    pane.wait_for("answer three");
    let requests = sb.requests();
    let users: Vec<String> = support::messages_with_role(requests.last().unwrap(), "user")
        .iter()
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(users, vec!["question one", "question three"]);
    pane.keys(&["C-d"]);
    pane.wait_for("hermes --resume");
    let db = hermes_state::session_db::SessionDb::open(&sb.home.path().join("state.db")).unwrap();
    let id = db.most_recent(Some("cli")).unwrap().unwrap().id;
    let active: Vec<String> = db
        .messages(&id)
        .unwrap()
        .into_iter()
        .filter_map(|m| m.content)
        .collect();
    assert_eq!(
        active,
        vec![
            "question one",
            "answer one",
            "question three",
            "answer three"
        ]
    );
    let history = std::fs::read_to_string(sb.home.path().join(".hermes_history")).unwrap();
    assert!(history.contains("question two"), "history file:\n{history}");
}

#[test]
fn model_switch_reaches_the_next_request() {
    if !tmux_available() {
        return;
    }
    let sb = Sandbox::start();
    sb.mock.push(Reply::text("switched answer"));
    sb.mock.push(Reply::text("third answer"));
    let pane = Pane::start(&sb, "model", "chat");
    pane.wait_for(PROMPT);
    pane.send_line("/modle");
    pane.wait_for("Did you mean /model?");
    pane.send_line("/model other-model");
    pane.wait_for("Model switched to other-model");
    pane.send_line("hello");
    pane.wait_for("switched answer");
    let requests = sb.requests();
    assert_eq!(requests.last().unwrap()["model"], "other-model");
    // A known provider without a key says what to set and keeps the current model.
    pane.send_line("/model openrouter:some/model");
    pane.wait_for("needs an API key");
    pane.send_line("/model custom:third-model");
    pane.wait_for("Model switched to third-model via custom");
    pane.send_line("again");
    pane.wait_for("third answer");
    assert_eq!(sb.requests().last().unwrap()["model"], "third-model");
}

#[test]
fn at_file_completion_offers_a_real_file() {
    if !tmux_available() {
        return;
    }
    let sb = Sandbox::start();
    support::write(sb.work.path(), "notes-for-completion.md", "x");
    // A history written by the reference (prompt_toolkit's format) is recalled with Up.
    support::write(
        sb.home.path(),
        ".hermes_history",
        "\n# 2025-01-01 10:00:00.123456\n+an earlier question\n",
    );
    let pane = Pane::start(&sb, "complete", "chat");
    pane.wait_for(PROMPT);
    pane.type_text("look at @notes-for");
    pane.keys(&["Tab"]);
    pane.wait_for("@notes-for-completion.md");
    pane.keys(&["C-u"]);
    pane.type_text("/he");
    pane.keys(&["Tab"]);
    pane.wait_for("/help");
    pane.keys(&["C-u", "Up"]);
    pane.wait_for("an earlier question");
}

#[test]
fn multiline_input_arrives_as_one_message() {
    if !tmux_available() {
        return;
    }
    let sb = Sandbox::start();
    sb.mock.push(Reply::text("got backslash"));
    sb.mock.push(Reply::text("got alt enter"));
    sb.mock.push(Reply::text("got paste"));
    let pane = Pane::start(&sb, "multiline", "chat");
    pane.wait_for(PROMPT);
    pane.type_text("first line\\");
    pane.keys(&["Enter"]);
    pane.send_line("second line");
    pane.wait_for("got backslash");
    pane.type_text("alt one");
    pane.keys(&["M-Enter"]);
    pane.send_line("alt two");
    pane.wait_for("got alt enter");
    pane.tmux(&["set-buffer", "pasted one\npasted two"]);
    pane.tmux(&["paste-buffer", "-p", "-t", "t"]);
    pane.keys(&["Enter"]);
    pane.wait_for("got paste");
    let requests = sb.requests();
    let users: Vec<String> = support::messages_with_role(requests.last().unwrap(), "user")
        .iter()
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        users,
        vec![
            "first line\nsecond line",
            "alt one\nalt two",
            "pasted one\npasted two"
        ]
    );
}

#[test]
fn retry_new_and_a_double_ctrl_c_exit() {
    if !tmux_available() {
        return;
    }
    let sb = Sandbox::start();
    sb.mock.push(Reply::text("first try").with_usage(10, 2));
    sb.mock.push(Reply::text("second try").with_usage(10, 2));
    sb.mock.push(Reply::text("fresh start").with_usage(10, 2));
    let pane = Pane::start(&sb, "retry", "chat");
    pane.wait_for(PROMPT);
    pane.send_line("ask once");
    pane.wait_for("first try");
    pane.send_line("/retry");
    pane.wait_for("second try");
    pane.send_line("/usage");
    pane.wait_for("API calls         2");
    pane.send_line("/new");
    pane.wait_for("New session started");
    pane.send_line("hello again");
    pane.wait_for("fresh start");
    let requests = sb.requests();
    let retried: Vec<&str> = support::messages_with_role(&requests[1], "user")
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(retried, vec!["ask once"], "retry replaces the turn");
    let fresh = support::messages_with_role(&requests[2], "user");
    assert_eq!(fresh.len(), 1, "a new session starts empty");
    // Only at an idle prompt does Ctrl+C ask to be pressed again (mid-turn it
    // interrupts): wait for the prompt to come back after the reply.
    pane.wait_until("the prompt after the reply", |screen| {
        screen
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .is_some_and(|l| l.trim() == PROMPT)
    });
    pane.keys(&["C-c"]);
    pane.wait_for("Press Ctrl+C again");
    pane.keys(&["C-c"]);
    pane.wait_for("hermes --resume");
}

#[test]
fn info_commands_title_and_personality() {
    if !tmux_available() {
        return;
    }
    let sb = Sandbox::start();
    sb.mock.push(Reply::text("arr"));
    let pane = Pane::start(&sb, "info", "chat");
    pane.wait_for(PROMPT);
    pane.send_line("/help");
    pane.wait_for("/compress [topic]");
    pane.send_line("/tools");
    pane.wait_for("💻 terminal");
    pane.send_line("/skills");
    pane.wait_for("/commit-messages");
    pane.send_line("/title My pty session");
    pane.wait_for("Session title set: My pty session");
    pane.send_line("/status");
    pane.wait_for("Model     mock-model via custom");
    pane.send_line("/compress");
    pane.wait_for("Not enough conversation to compress (need at least 4 messages).");
    pane.send_line("/yolo");
    pane.wait_for("YOLO mode ON");
    pane.send_line("/personality pirate");
    pane.wait_for("Personality set to 'pirate'");
    pane.send_line("ahoy");
    pane.wait_for("arr");
    let requests = sb.requests();
    let system = support::messages_with_role(requests.last().unwrap(), "system");
    let prompt = system[0]["content"].as_str().unwrap();
    assert!(
        prompt.contains("pirate"),
        "personality overlay sent:\n{prompt}"
    );
    pane.keys(&["C-d"]);
    pane.wait_for("hermes --resume");
    let db = hermes_state::session_db::SessionDb::open(&sb.home.path().join("state.db")).unwrap();
    let row = db.most_recent(Some("cli")).unwrap().unwrap();
    assert_eq!(row.title.as_deref(), Some("My pty session"));
}

#[test]
fn a_spinner_shows_while_waiting_for_the_first_token_and_is_cleared() {
    if !tmux_available() {
        return;
    }
    let sb = Sandbox::start();
    sb.mock
        .push(Reply::text("late answer").with_delay(Duration::from_millis(1500)));
    let pane = Pane::start(&sb, "spinner", "chat");
    pane.wait_for(PROMPT);
    pane.send_line("take your time");
    pane.wait_for("thinking…");
    let screen = pane.wait_for("late answer");
    assert!(!screen.contains("thinking…"), "spinner cleared:\n{screen}");
}

#[test]
fn resume_inside_the_repl_continues_a_titled_session() {
    if !tmux_available() {
        return;
    }
    let sb = Sandbox::start();
    sb.mock.push(Reply::text("first answer"));
    sb.mock.push(Reply::text("continued answer"));
    let pane = Pane::start(&sb, "resume", "chat");
    pane.wait_for(PROMPT);
    pane.send_line("remember the word kiwi");
    pane.wait_for("first answer");
    pane.send_line("/title fruit talk");
    pane.wait_for("Session title set");
    pane.send_line("/new");
    pane.wait_for("New session started");
    pane.send_line("/resume fruit talk");
    pane.wait_for("Resumed session");
    pane.send_line("which word?");
    pane.wait_for("continued answer");
    let requests = sb.requests();
    let users: Vec<String> = support::messages_with_role(requests.last().unwrap(), "user")
        .iter()
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(users, vec!["remember the word kiwi", "which word?"]);
}

#[test]
fn steer_typed_while_a_tool_runs_reaches_the_next_tool_result() {
    if !tmux_available() {
        return;
    }
    let sb = Sandbox::start();
    sb.mock.push(Reply::tool_call(
        "c1",
        "terminal",
        r#"{"command":"sleep 3"}"#,
    ));
    sb.mock.push(Reply::text("steered answer"));
    let pane = Pane::start(&sb, "steer", "chat");
    pane.wait_for(PROMPT);
    pane.send_line("read the file");
    pane.wait_for("sleep 3");
    pane.send_line("/steer use the other file");
    pane.wait_for("steer noted");
    pane.wait_for("steered answer");
    pane.wait_for_count(PROMPT, 2);
    let requests = sb.requests();
    assert_eq!(requests.len(), 2);
    let tools = support::messages_with_role(&requests[1], "tool");
    let content = tools.last().unwrap()["content"].as_str().unwrap();
    assert!(content.contains("use the other file"), "{content}");
    assert!(content.contains("USER STEER"), "{content}");
    // A steer is not a user message.
    let users = support::messages_with_role(&requests[1], "user");
    assert_eq!(users.len(), 1);
}

#[test]
fn queue_typed_while_a_turn_runs_is_sent_when_it_ends() {
    if !tmux_available() {
        return;
    }
    let sb = Sandbox::start();
    sb.mock.push(Reply::tool_call(
        "c1",
        "terminal",
        r#"{"command":"sleep 3"}"#,
    ));
    sb.mock.push(Reply::text("first answer"));
    sb.mock.push(Reply::text("second answer"));
    let pane = Pane::start(&sb, "queue", "chat");
    pane.wait_for(PROMPT);
    pane.send_line("first question");
    pane.wait_for("sleep 3");
    pane.send_line("/queue second question");
    pane.wait_for("queued for after this turn");
    pane.send_line("/usage");
    pane.wait_for("has to wait");
    let screen = pane.wait_for("second answer");
    assert!(screen.contains("first answer"), "{screen}");
    // The deferred command runs after the queued message, in typing order.
    let screen = pane.wait_for("API calls");
    let answer = screen.find("second answer").unwrap();
    assert!(screen[answer..].contains("API calls"), "{screen}");
    let requests = sb.requests();
    assert_eq!(requests.len(), 3);
    let users = support::messages_with_role(&requests[2], "user");
    assert_eq!(users.last().unwrap()["content"], "second question");
    // The prompt is back and takes input as usual.
    pane.wait_until("an idle prompt", |s| s.trim_end().ends_with(PROMPT));
}

#[test]
fn stop_typed_mid_turn_interrupts_and_idle_steer_is_sent_as_a_message() {
    if !tmux_available() {
        return;
    }
    let sb = Sandbox::start();
    sb.mock.push(Reply::tool_call(
        "c1",
        "terminal",
        r#"{"command":"sleep 30"}"#,
    ));
    sb.mock.push(Reply::text("after the stop"));
    let pane = Pane::start(&sb, "stop", "chat");
    pane.wait_for(PROMPT);
    pane.send_line("sleep please");
    pane.wait_for("sleep 30");
    let typed = Instant::now();
    pane.send_line("/stop");
    pane.wait_for("Interrupted");
    pane.wait_for_count(PROMPT, 2);
    assert!(typed.elapsed() < Duration::from_secs(10));
    pane.send_line("/steer hello there");
    let screen = pane.wait_for("after the stop");
    assert!(screen.contains("No turn is running"), "{screen}");
    let requests = sb.requests();
    let users = support::messages_with_role(requests.last().unwrap(), "user");
    assert_eq!(users.last().unwrap()["content"], "hello there");
}

#[test]
fn a_command_and_ctrl_d_typed_ahead_during_a_turn_run_after_it() {
    if !tmux_available() {
        return;
    }
    let sb = Sandbox::start();
    sb.mock.push(Reply::tool_call(
        "c1",
        "terminal",
        r#"{"command":"sleep 2"}"#,
    ));
    sb.mock.push(Reply::text("slow answer"));
    let pane = Pane::start(&sb, "ahead", "chat");
    pane.wait_for(PROMPT);
    pane.send_line("take your time");
    pane.wait_for("sleep 2");
    pane.send_line("/usage");
    pane.wait_for("has to wait");
    pane.keys(&["C-d"]);
    let screen = pane.wait_for("hermes --resume");
    let answer = screen.find("slow answer").unwrap();
    assert!(screen[answer..].contains("API calls"), "{screen}");
}

#[test]
fn a_skill_name_as_a_command_loads_the_skill_with_the_request() {
    if !tmux_available() {
        return;
    }
    let sb = Sandbox::start();
    write_deploy_check_skill(&sb);
    sb.mock.push(Reply::text("checked"));
    let pane = Pane::start(&sb, "skillcmd", "chat");
    pane.wait_for(PROMPT);
    pane.send_line("/skills");
    pane.wait_for("Checks a deployment before it ships.");
    pane.send_line("/deploy-check staging please");
    pane.wait_for("checked");
    let requests = sb.requests();
    let users = support::messages_with_role(requests.last().unwrap(), "user");
    let text = users.last().unwrap()["content"].as_str().unwrap();
    assert!(
        text.contains("invoked the \"deploy-check\" skill"),
        "{text}"
    );
    assert!(text.contains("1. Run the smoke tests first."), "{text}");
    assert!(
        text.ends_with("The user's request: staging please"),
        "{text}"
    );
    // A name that is neither a command nor a skill still gets a suggestion
    // (typed at the prompt, once the turn is over: mid-turn it would be type-ahead).
    pane.wait_for_count(PROMPT, 3);
    pane.send_line("/modle");
    pane.wait_for("Did you mean /model?");
}

/// The mock's first reply asks `clarify` which target; the second ends the turn.
fn clarify_sandbox() -> Sandbox {
    let sb = Sandbox::start();
    sb.mock.push(Reply::tool_call(
        "c1",
        "clarify",
        r#"{"question":"Which target?","choices":["staging","prod"]}"#,
    ));
    sb.mock.push(Reply::text("deploying as told"));
    sb
}

/// The `clarify` tool result the model got in the second request.
fn clarify_result(sb: &Sandbox) -> serde_json::Value {
    let requests = sb.requests();
    assert_eq!(requests.len(), 2);
    let tools = support::messages_with_role(&requests[1], "tool");
    support::tool_content(tools.last().unwrap())
}

#[test]
fn clarify_list_is_shown_and_arrow_keys_pick_a_choice() {
    if !tmux_available() {
        return;
    }
    let sb = clarify_sandbox();
    let pane = Pane::start(&sb, "clarify", "chat");
    pane.wait_for(PROMPT);
    pane.send_line("deploy it");
    let screen = pane.wait_for("Other (type your answer)");
    assert!(screen.contains("❓ Which target?"), "question:\n{screen}");
    assert!(
        screen.contains("❯ 1. staging"),
        "first row marked:\n{screen}"
    );
    assert!(screen.contains("2. prod"), "second row:\n{screen}");
    assert!(screen.contains("3. Other (type your answer)"), "{screen}");
    pane.keys(&["Down"]);
    pane.wait_for("❯ 2. prod");
    pane.keys(&["Enter"]);
    let screen = pane.wait_for("deploying as told");
    assert!(
        screen.contains("Clarify: Which target? → prod"),
        "the decision stays in the scrollback:\n{screen}"
    );
    pane.wait_for_count(PROMPT, 2);
    let result = clarify_result(&sb);
    assert_eq!(result["user_response"], "prod", "{result}");
    assert_eq!(
        result["choices_offered"],
        serde_json::json!(["staging", "prod"])
    );
}

#[test]
fn clarify_other_row_reads_free_text() {
    if !tmux_available() {
        return;
    }
    let sb = clarify_sandbox();
    let pane = Pane::start(&sb, "clarify-other", "chat");
    pane.wait_for(PROMPT);
    pane.send_line("deploy it");
    pane.wait_for("Other (type your answer)");
    pane.keys(&["3"]);
    pane.wait_for("Your answer:");
    pane.type_text("canary eu");
    pane.wait_for("Your answer: canary eu");
    pane.keys(&["Enter"]);
    pane.wait_for("deploying as told");
    pane.wait_for_count(PROMPT, 2);
    assert_eq!(clarify_result(&sb)["user_response"], "canary eu");
}

#[test]
fn clarify_esc_cancels_and_the_model_is_told() {
    if !tmux_available() {
        return;
    }
    let sb = clarify_sandbox();
    let pane = Pane::start(&sb, "clarify-esc", "chat");
    pane.wait_for(PROMPT);
    pane.send_line("deploy it");
    pane.wait_for("Other (type your answer)");
    pane.keys(&["Escape"]);
    pane.wait_for("deploying as told");
    pane.wait_for_count(PROMPT, 2);
    let result = clarify_result(&sb);
    assert_eq!(
        result["error"], "Failed to get user input: cancelled by the user",
        "{result}"
    );
}

#[test]
fn clarify_times_out_with_the_reference_text() {
    if !tmux_available() {
        return;
    }
    let sb = clarify_sandbox();
    sb.add_config("clarify:\n  timeout: 1\n");
    let pane = Pane::start(&sb, "clarify-timeout", "chat");
    pane.wait_for(PROMPT);
    pane.send_line("deploy it");
    pane.wait_for("clarify timed out after 1s");
    pane.wait_for("deploying as told");
    pane.wait_for_count(PROMPT, 2);
    let requests = sb.requests();
    let tools = support::messages_with_role(&requests[1], "tool");
    let content = tools.last().unwrap()["content"].as_str().unwrap();
    assert!(
        content.contains("The user did not provide a response within the time limit."),
        "{content}"
    );
}

#[test]
fn clarify_in_a_one_shot_run_is_not_available() {
    let sb = clarify_sandbox();
    let out = sb.chat("deploy it", &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result = clarify_result(&sb);
    assert_eq!(
        result["error"],
        "Clarify tool is not available in this execution context."
    );
}

#[test]
fn clarify_with_output_piped_asks_with_a_numbered_list() {
    if !tmux_available() {
        return;
    }
    let sb = clarify_sandbox();
    let pane = Pane::start(&sb, "clarify-plain", "chat 2>&1 | cat");
    pane.wait_for("/help for commands");
    pane.send_line("deploy it");
    let screen = pane.wait_for("Choice (number, or type your answer):");
    assert!(screen.contains("  2. prod"), "numbered list:\n{screen}");
    assert!(screen.contains("  3. Other (type your answer)"), "{screen}");
    pane.send_line("2");
    pane.wait_for("deploying as told");
    assert_eq!(clarify_result(&sb)["user_response"], "prod");
}

#[test]
fn skills_preloaded_with_s_ride_in_front_of_the_first_message_only() {
    if !tmux_available() {
        return;
    }
    let sb = Sandbox::start();
    write_deploy_check_skill(&sb);
    sb.mock.push(Reply::text("first answer"));
    sb.mock.push(Reply::text("second answer"));
    let pane = Pane::start(&sb, "preload", "chat -s deploy-check");
    pane.wait_for(PROMPT);
    pane.send_line("ship it");
    pane.wait_for("first answer");
    pane.wait_for_count(PROMPT, 2);
    pane.send_line("and now?");
    pane.wait_for("second answer");
    let requests = sb.requests();
    let users = support::messages_with_role(requests.last().unwrap(), "user");
    assert_eq!(users.len(), 2);
    let first = users[0]["content"].as_str().unwrap();
    assert!(
        first.contains("\"deploy-check\" skill preloaded"),
        "{first}"
    );
    assert!(first.contains("1. Run the smoke tests first.") && first.ends_with("ship it"));
    assert_eq!(users[1]["content"], "and now?");
}

/// A user skill `deploy-check` in the sandbox's HERMES_HOME.
fn write_deploy_check_skill(sb: &Sandbox) {
    let dir = sb.home.path().join("skills").join("deploy-check");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: deploy-check\ndescription: Checks a deployment before it ships.\n---\n\n# Deploy check\n\n1. Run the smoke tests first.\n",
    )
    .unwrap();
}
