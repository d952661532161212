//! The messaging gateway on Telegram, end to end: the real
//! `telegram-test-api` emulator plays Telegram and the person; the scripted
//! mock plays the model. Skipped when the emulator is not installed
//! (`.ci/run` installs it and sets `HERMES_CHAT_EMULATORS`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::time::{Duration, Instant};

use hermes_mock::Reply;
use serde_json::json;
use support::telegram::{ChatGateway, Emulator, configure};
use support::*;

const ANN: i64 = 4242;

fn session_rows(sb: &Sandbox) -> Vec<(String, String, String, String)> {
    let db = rusqlite::Connection::open(sb.home.path().join("state.db")).unwrap();
    let mut stmt = db
        .prepare("SELECT id, source, COALESCE(session_key,''), COALESCE(chat_id,'') FROM sessions ORDER BY started_at")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn a_message_gets_a_streamed_answer_after_a_tool_call() {
    let Some(tg) = Emulator::start() else {
        return;
    };
    let sb = Sandbox::start();
    configure(
        &sb,
        &tg,
        "streaming:\n  enabled: true\n  edit_interval: 0.1\ndisplay:\n  tool_progress: all\n",
    );
    sb.mock.push(Reply::tool_call(
        "call_1",
        "terminal",
        &json!({"command": "echo from-the-tool"}).to_string(),
    ));
    let answer =
        "The command printed **from-the-tool**, and that is the whole story of this little run.";
    sb.mock
        .push(Reply::text(answer).with_chunk_delay(Duration::from_millis(40)));
    let gw = ChatGateway::start(&sb, &[("TELEGRAM_ALLOWED_USERS", &ANN.to_string())]);
    tg.user_says(ANN, "run echo for me");
    let done = tg.wait_for(ANN, "with the final answer", |t| {
        t.contains("whole story of this little run")
    });
    // The final edit is MarkdownV2: the bold survived as Telegram markup and
    // the punctuation is escaped.
    assert_eq!(done["parse_mode"], "MarkdownV2", "{done}");
    assert!(
        done["text"]
            .as_str()
            .unwrap()
            .contains("*from\\-the\\-tool*"),
        "{done}"
    );
    let progress = tg.wait_for(ANN, "with tool progress", |t| {
        t.contains("terminal: \"echo from-the-tool\"")
    });
    assert_ne!(progress["message_id"], done["message_id"]);
    // The tool really ran and its output reached the model.
    let requests = sb.mock.chat_requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].to_string().contains("from-the-tool"));
    // Streaming edited one message rather than sending one per delta.
    let answers: Vec<_> = tg
        .bot_messages(ANN)
        .into_iter()
        .filter(|m| {
            m["text"]
                .as_str()
                .unwrap_or("")
                .contains("The command printed")
        })
        .collect();
    assert_eq!(answers.len(), 1, "{answers:#?}");
    // The session is in state.db as a Telegram conversation.
    let rows = session_rows(&sb);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].1, "telegram");
    assert_eq!(rows[0].2, format!("agent:main:telegram:dm:{ANN}"));
    assert_eq!(rows[0].3, ANN.to_string());
    drop(gw);
}

#[test]
fn an_unknown_user_pairs_with_a_code_the_owner_approves() {
    let Some(tg) = Emulator::start() else {
        return;
    };
    let sb = Sandbox::start();
    configure(&sb, &tg, "");
    sb.mock.push(Reply::text("Hello, paired friend."));
    let _gw = ChatGateway::start(&sb, &[]);
    let stranger = 7777;
    tg.user_says(stranger, "hello?");
    let offer = tg.wait_for(stranger, "with a pairing code", |t| {
        t.contains("pairing code")
    });
    let text = offer["text"].as_str().unwrap().replace('\\', "");
    let code = text
        .split("hermes pairing approve telegram ")
        .nth(1)
        .unwrap()
        .trim_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_owned();
    assert_eq!(code.len(), 8, "{text}");
    assert_eq!(
        sb.mock.chat_requests().len(),
        0,
        "strangers never reach the model"
    );
    // A second message in the quiet period gets nothing.
    tg.user_says(stranger, "hello again?");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(tg.bot_messages(stranger).len(), 1);
    let wrong = sb
        .command()
        .args(["pairing", "approve", "telegram", "ZZZZZZZZ"])
        .output()
        .unwrap();
    assert!(!wrong.status.success());
    assert!(
        stderr(&wrong).contains("Code 'ZZZZZZZZ' not found or expired for platform 'telegram'.")
    );
    let listed = sb.command().args(["pairing", "list"]).output().unwrap();
    assert!(
        stdout(&listed).contains("Pending Pairing Requests (1):"),
        "{}",
        stdout(&listed)
    );
    let approved = sb
        .command()
        .args(["pairing", "approve", "telegram", &code.to_lowercase()])
        .output()
        .unwrap();
    assert!(
        stdout(&approved).contains(&format!(
            "Approved! User User{stranger} ({stranger}) on telegram"
        )),
        "{}",
        stdout(&approved)
    );
    tg.user_says(stranger, "now can we talk?");
    tg.wait_for(stranger, "answered by the agent", |t| {
        t.contains("paired friend")
    });
    let revoked = sb
        .command()
        .args(["pairing", "revoke", "telegram", &stranger.to_string()])
        .output()
        .unwrap();
    assert!(stdout(&revoked).contains(&format!("Revoked access for user {stranger} on telegram.")));
}

#[test]
fn dangerous_commands_are_approved_with_a_button_and_denied_with_a_command() {
    let Some(tg) = Emulator::start() else {
        return;
    };
    let sb = Sandbox::start();
    configure(&sb, &tg, "");
    let victim = sb.work_path("victim");
    std::fs::create_dir_all(victim.join("inner")).unwrap();
    let other = sb.work_path("other");
    std::fs::create_dir_all(other.join("inner")).unwrap();
    sb.mock.push_all([
        Reply::tool_call(
            "c1",
            "terminal",
            &json!({"command": format!("rm -rf {}", victim.display())}).to_string(),
        ),
        Reply::text("Removed it as you approved."),
        Reply::tool_call(
            "c2",
            "terminal",
            &json!({"command": format!("rm -rf {}", other.display())}).to_string(),
        ),
        Reply::text("Understood, I left it alone."),
    ]);
    let _gw = ChatGateway::start(&sb, &[("TELEGRAM_ALLOWED_USERS", &ANN.to_string())]);
    tg.user_says(ANN, "clean up victim");
    let ask = tg.wait_for(ANN, "asking for approval", |t| {
        t.contains("Command Approval Required")
    });
    let buttons = ask["reply_markup"]["inline_keyboard"][0]
        .as_array()
        .unwrap()
        .clone();
    let labels: Vec<_> = buttons
        .iter()
        .map(|b| b["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        labels,
        ["✅ Allow Once", "✅ Session", "✅ Always", "❌ Deny"]
    );
    assert!(victim.exists(), "nothing runs before the answer");
    tg.press(ANN, &ask, buttons[0]["callback_data"].as_str().unwrap());
    tg.wait_for(ANN, "after the approved run", |t| {
        t.contains("Removed it as you approved.")
    });
    assert!(!victim.exists(), "the approved command ran");
    let edited = tg
        .bot_messages(ANN)
        .into_iter()
        .find(|m| m["message_id"] == ask["message_id"])
        .unwrap();
    assert!(
        edited["text"]
            .as_str()
            .unwrap()
            .contains("Approved once by User4242"),
        "{edited}"
    );

    tg.user_says(ANN, "and the other one");
    tg.wait_for(ANN, "asking again", |t| {
        t.contains("Command Approval Required") && t.contains(&other.display().to_string())
    });
    tg.user_says(ANN, "/deny");
    tg.wait_for(ANN, "confirming the denial", |t| {
        t == "❌ Command denied." || t.contains("Command denied")
    });
    tg.wait_for(ANN, "after the denial", |t| t.contains("I left it alone"));
    assert!(other.exists(), "the denied command never ran");
    let requests = sb.mock.chat_requests();
    let last = requests.last().unwrap().to_string();
    assert!(
        last.to_lowercase().contains("denied") || last.contains("BLOCKED"),
        "{last}"
    );
}

#[test]
fn stop_interrupts_a_running_tool() {
    let Some(tg) = Emulator::start() else {
        return;
    };
    let sb = Sandbox::start();
    configure(&sb, &tg, "");
    sb.mock.push_all([
        Reply::tool_call(
            "c1",
            "terminal",
            &json!({"command": "sleep 60", "timeout": 120}).to_string(),
        ),
        Reply::text("after stop"),
        Reply::text("Fresh answer."),
    ]);
    let _gw = ChatGateway::start(&sb, &[("GATEWAY_ALLOW_ALL_USERS", "true")]);
    tg.user_says(ANN, "sleep a minute");
    // Wait for the tool to start (the model was asked once).
    let deadline = Instant::now() + Duration::from_secs(20);
    while sb.mock.chat_requests().is_empty() {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    let stopped_at = Instant::now();
    tg.user_says(ANN, "/stop");
    tg.wait_for(ANN, "confirming the stop", |t| t.contains("⚡ Stopped"));
    tg.user_says(ANN, "what now?");
    tg.wait_for(ANN, "answering the next message", |t| {
        t.contains("Fresh answer.") || t.contains("after stop")
    });
    assert!(
        stopped_at.elapsed() < Duration::from_secs(20),
        "the sleep was cut short"
    );
}

#[test]
fn a_background_job_that_ends_is_answered_in_its_chat_without_a_new_message() {
    let Some(tg) = Emulator::start() else {
        return;
    };
    let sb = Sandbox::start();
    configure(&sb, &tg, "");
    sb.mock.push_all([
        Reply::tool_call(
            "c1",
            "terminal",
            &json!({"command": "sleep 1; echo done", "background": true, "notify_on_complete": true})
                .to_string(),
        ),
        Reply::text("The job is running."),
        Reply::text("The background job finished and printed done."),
    ]);
    let _gw = ChatGateway::start(&sb, &[("TELEGRAM_ALLOWED_USERS", &ANN.to_string())]);
    tg.user_says(ANN, "run the job in the background");
    tg.wait_for(ANN, "the first answer", |t| {
        t.contains("The job is running.")
    });
    tg.wait_for(ANN, "the job's own answer", |t| {
        t.contains("The background job finished and printed done.")
    });
    let requests = sb.mock.chat_requests();
    assert_eq!(requests.len(), 3, "{requests:#?}");
    let users: Vec<&str> = requests[2]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(users.len(), 2, "{users:?}");
    assert!(
        users[0].ends_with("run the job in the background"),
        "{users:?}"
    );
    assert!(
        users[1].starts_with("[IMPORTANT: Background process proc_")
            && users[1].ends_with("Command: sleep 1; echo done\nOutput:\ndone]"),
        "{users:?}"
    );
    // The news itself is the model's to tell: it is not echoed in the chat.
    assert!(
        tg.bot_messages(ANN)
            .iter()
            .all(|m| !m["text"].as_str().unwrap_or("").contains("IMPORTANT")),
        "{:#?}",
        tg.bot_messages(ANN)
    );
}

#[test]
fn a_gateway_killed_between_messages_answers_the_next_one_exactly_once() {
    let Some(tg) = Emulator::start() else {
        return;
    };
    let sb = Sandbox::start();
    configure(&sb, &tg, "");
    sb.mock
        .push(Reply::text("First answer: noted the colour blue."));
    let env = [("TELEGRAM_ALLOWED_USERS", "4242")];
    let mut gw = ChatGateway::start(&sb, &env);
    tg.user_says(ANN, "remember: my colour is blue");
    tg.wait_for(ANN, "to the first message", |t| t.contains("First answer"));
    // kill -9: no drain, no goodbye.
    gw.child.kill().unwrap();
    gw.child.wait().unwrap();
    tg.user_says(ANN, "what is my colour?");
    std::thread::sleep(Duration::from_millis(300));
    sb.mock.push(Reply::text("Second answer: blue."));
    let gw2 = ChatGateway::start(&sb, &env);
    tg.wait_for(ANN, "to the second message", |t| {
        t.contains("Second answer")
    });
    std::thread::sleep(Duration::from_secs(2));
    let texts: Vec<String> = tg
        .bot_messages(ANN)
        .iter()
        .map(|m| m["text"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(
        texts.iter().filter(|t| t.contains("First answer")).count(),
        1,
        "{texts:?}"
    );
    assert_eq!(
        texts.iter().filter(|t| t.contains("Second answer")).count(),
        1,
        "{texts:?}"
    );
    let requests = sb.mock.chat_requests();
    assert_eq!(requests.len(), 2, "each message reached the model once");
    // The conversation went on: the second request carries the first exchange.
    let second = requests[1].to_string();
    assert!(
        second.contains("my colour is blue") && second.contains("First answer"),
        "{second}"
    );
    assert_eq!(session_rows(&sb).len(), 1, "one session across the restart");
    drop(gw2);
}

#[test]
fn a_job_made_in_a_chat_delivers_its_answers_there() {
    let Some(tg) = Emulator::start() else {
        return;
    };
    let sb = Sandbox::start();
    configure(&sb, &tg, "");
    sb.mock.push_all([
        Reply::tool_call(
            "c1",
            "cronjob",
            &json!({"action": "create", "schedule": "every 2h", "name": "weather",
                    "prompt": "Report the weather"})
            .to_string(),
        ),
        Reply::text("Scheduled: weather every 2 hours."),
        Reply::text("Sunny all day."),
        Reply::text("[SILENT]"),
    ]);
    let gw = ChatGateway::start(&sb, &[("TELEGRAM_ALLOWED_USERS", &ANN.to_string())]);
    tg.user_says(ANN, "tell me the weather every two hours");
    tg.wait_for(ANN, "confirming the job", |t| {
        t.contains("Scheduled: weather")
    });
    let jobs: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(sb.home.path().join("cron/jobs.json")).unwrap(),
    )
    .unwrap();
    let job = &jobs["jobs"][0];
    assert_eq!(job["deliver"], "origin", "{job}");
    assert_eq!(job["origin"]["platform"], "telegram");
    assert_eq!(job["origin"]["chat_id"], ANN.to_string());
    // Run now from the command line (the token in .env, as a user keeps it):
    // the answer still reaches the chat.
    std::fs::write(
        sb.home.path().join(".env"),
        format!("TELEGRAM_BOT_TOKEN={}\n", support::telegram::TOKEN),
    )
    .unwrap();
    let ran = sb
        .command()
        .args(["cron", "run", "weather"])
        .output()
        .unwrap();
    assert!(
        stdout(&ran).contains("succeeded"),
        "{}{}",
        stdout(&ran),
        stderr(&ran)
    );
    assert!(
        !stdout(&ran).contains("Delivery failed"),
        "{}",
        stdout(&ran)
    );
    let delivered = tg.wait_for(ANN, "with the job's answer", |t| {
        t.contains("Sunny all day.")
    });
    let text = delivered["text"].as_str().unwrap().replace('\\', "");
    // The reference's header (its rule line makes it a heading: bold here).
    assert!(
        text.contains("Cronjob Response: weather") && text.contains("(job_id: "),
        "{text}"
    );
    // A [SILENT] answer is kept in the output, not sent.
    let before = tg.bot_messages(ANN).len();
    let ran = sb
        .command()
        .args(["cron", "run", "weather"])
        .output()
        .unwrap();
    assert!(stdout(&ran).contains("succeeded"), "{}", stdout(&ran));
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(tg.bot_messages(ANN).len(), before);
    let jobs: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(sb.home.path().join("cron/jobs.json")).unwrap(),
    )
    .unwrap();
    assert!(jobs["jobs"][0]["last_delivery_error"].is_null());
    drop(gw);
}

#[test]
fn the_gateway_tick_delivers_to_a_named_chat_and_records_failures() {
    let Some(tg) = Emulator::start() else {
        return;
    };
    let sb = Sandbox::start();
    configure(&sb, &tg, "cron:\n  wrap_response: false\n");
    // Two jobs already due: one for Ann's chat, one for a platform that is not set up.
    let due = "2020-01-01T00:00:00+00:00";
    let jobs = json!({"jobs": [
        {"id": "aaaaaaaaaaaa", "name": "digest", "prompt": "Summarise the day", "enabled": true,
         "state": "scheduled", "deliver": format!("telegram:{ANN}"),
         "schedule": {"kind": "interval", "minutes": 1440, "display": "every 1440m"},
         "repeat": {"times": null, "completed": 0}, "next_run_at": due, "created_at": due},
        {"id": "bbbbbbbbbbbb", "name": "elsewhere", "prompt": "Say hi", "enabled": true,
         "state": "scheduled", "deliver": "discord",
         "schedule": {"kind": "interval", "minutes": 1440, "display": "every 1440m"},
         "repeat": {"times": null, "completed": 0}, "next_run_at": due, "created_at": due}
    ]});
    std::fs::create_dir_all(sb.home.path().join("cron")).unwrap();
    std::fs::write(sb.home.path().join("cron/jobs.json"), jobs.to_string()).unwrap();
    sb.mock
        .push_all([Reply::text("Today was quiet."), Reply::text("hi")]);
    let gw = ChatGateway::start(&sb, &[("TELEGRAM_ALLOWED_USERS", &ANN.to_string())]);
    let delivered = tg.wait_for(ANN, "with the digest", |t| t.contains("Today was quiet."));
    assert_eq!(
        delivered["text"].as_str().unwrap().replace('\\', ""),
        "Today was quiet.",
        "wrap_response: false sends the answer as it is"
    );
    gw.wait_log("cron job elsewhere ran");
    let jobs: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(sb.home.path().join("cron/jobs.json")).unwrap(),
    )
    .unwrap();
    let by_id = |id: &str| {
        jobs["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["id"] == id)
            .cloned()
            .unwrap()
    };
    assert!(
        by_id("aaaaaaaaaaaa")["last_delivery_error"].is_null(),
        "{jobs}"
    );
    let failed = by_id("bbbbbbbbbbbb")["last_delivery_error"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(failed.contains("discord"), "{jobs}");
}

#[test]
fn a_pre_gateway_dispatch_hook_drops_and_rewrites_messages() {
    let Some(tg) = Emulator::start() else {
        return;
    };
    let sb = Sandbox::start();
    let hook = sb.home.path().join("dispatch.py");
    std::fs::write(
        &hook,
        r#"#!/usr/bin/env python3
import json, sys
p = json.load(sys.stdin)
text = p["extra"]["text"]
if "spam" in text:
    print(json.dumps({"action": "skip", "reason": "spam"}))
elif "secret" in text:
    print(json.dumps({"action": "rewrite", "text": text.replace("secret", "[redacted]")}))
"#,
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    configure(
        &sb,
        &tg,
        &format!(
            "hooks_auto_accept: true\nhooks:\n  pre_gateway_dispatch:\n    - command: {}\n",
            hook.display()
        ),
    );
    sb.mock.push(Reply::text("Noted."));
    let _gw = ChatGateway::start(&sb, &[("TELEGRAM_ALLOWED_USERS", &ANN.to_string())]);
    tg.user_says(ANN, "buy spam now");
    tg.user_says(ANN, "my secret is 42");
    tg.wait_for(ANN, "the answer", |t| t.contains("Noted."));
    let reqs = sb.requests();
    assert_eq!(reqs.len(), 1, "the spam never reached the model");
    let users = messages_with_role(&reqs[0], "user");
    let sent = users.last().unwrap()["content"].to_string();
    assert!(sent.contains("my [redacted] is 42"), "{sent}");
    assert!(!sent.contains("secret"), "{sent}");
}
