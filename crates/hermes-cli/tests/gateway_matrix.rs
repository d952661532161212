//! The gateway on Matrix against a real Synapse (`support/matrix.rs`): a
//! DM answered, files both ways, a dangerous command approved and denied by
//! `!approve`/`!deny`, a room that needs a mention, and a gateway killed
//! with `kill -9` mid-answer answering exactly once after its restart.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::time::{Duration, Instant};

use hermes_mock::Reply;
use serde_json::json;
use support::matrix::{Synapse, User};
use support::telegram::ChatGateway;
use support::{Sandbox, messages_with_role};

struct Setup {
    hs: Synapse,
    bot: User,
    ann: User,
    carl: User,
    sb: Sandbox,
}

fn setup() -> Option<Setup> {
    let hs = Synapse::start()?;
    let mut users = hs.register(&["bot", "ann", "carl"]).into_iter();
    let (bot, ann, carl) = (
        users.next().unwrap(),
        users.next().unwrap(),
        users.next().unwrap(),
    );
    let sb = Sandbox::start();
    sb.no_retries();
    Some(Setup {
        hs,
        bot,
        ann,
        carl,
        sb,
    })
}

impl Setup {
    fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("MATRIX_HOMESERVER", self.hs.url()),
            ("MATRIX_ACCESS_TOKEN", self.bot.token.clone()),
            ("MATRIX_ALLOWED_USERS", self.ann.id.clone()),
        ]
    }

    fn gateway(&self) -> ChatGateway {
        let env = self.env();
        let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        ChatGateway::start_with(&self.sb, &pairs, "matrix: connected as @bot")
    }

    /// A DM between Ann and the bot, joined by the bot.
    fn dm(&self) -> String {
        let room = self.ann.open_dm(&self.bot.id);
        self.ann.wait_joined(&room, &self.bot.id);
        room
    }
}

#[test]
fn a_dm_is_answered_and_files_go_both_ways() {
    let Some(s) = setup() else {
        eprintln!("skipped: HERMES_SYNAPSE_PYTHON is not set");
        return;
    };
    let _gw = s.gateway();
    let room = s.dm();
    s.sb.mock.push(Reply::text("Hello **Ann**."));
    s.ann.say(&room, "hello there");
    let answer = s
        .ann
        .wait_for(&room, &s.bot.id, "answering hello", |t| t.contains("Hello"));
    assert_eq!(answer["content"]["body"], "Hello **Ann**.");
    assert_eq!(
        answer["content"]["formatted_body"], "Hello <strong>Ann</strong>.",
        "{answer}"
    );
    // The person's message got 👀 while worked on and ✅ when answered.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, v) = s.ann.call(
            "GET",
            &format!(
                "/_matrix/client/v3/rooms/{}/messages?dir=b&limit=50",
                support::matrix::enc(&room)
            ),
            None,
        );
        let done = v["chunk"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["type"] == "m.reaction" && e["content"]["m.relates_to"]["key"] == "✅");
        if done {
            break;
        }
        assert!(Instant::now() < deadline, "no ✅ reaction: {v}");
        std::thread::sleep(Duration::from_millis(100));
    }

    // A file in: the agent is told where it was saved, with its contents there.
    let mxc = s.ann.upload("notes.txt", "text/plain", "the code is 4217");
    let report = s.sb.work_path("report.txt");
    std::fs::write(&report, "quarterly numbers: up").unwrap();
    s.sb.mock.push(Reply::text(format!(
        "Here is the report.\nMEDIA:{}",
        report.display()
    )));
    s.ann.send(
        &room,
        &json!({"msgtype": "m.file", "body": "notes.txt", "filename": "notes.txt", "url": mxc,
                "info": {"mimetype": "text/plain", "size": 16}}),
    );
    let file = s
        .ann
        .wait_for(&room, &s.bot.id, "with the report", |t| t == "report.txt");
    assert_eq!(file["content"]["msgtype"], "m.file");
    let url = file["content"]["url"].as_str().unwrap();
    assert_eq!(s.ann.download(url), "quarterly numbers: up");
    s.ann.wait_for(&room, &s.bot.id, "with the caption", |t| {
        t.contains("Here is the report.")
    });
    let requests = s.sb.requests();
    let user = messages_with_role(requests.last().unwrap(), "user")
        .last()
        .unwrap()["content"]
        .to_string();
    let saved = user
        .split("It is saved at: ")
        .nth(1)
        .and_then(|rest| rest.split(". Read it").next())
        .unwrap_or_else(|| panic!("no saved path in {user}"))
        .to_owned();
    assert!(saved.contains("/cache/documents/"), "{saved}");
    assert_eq!(std::fs::read_to_string(&saved).unwrap(), "the code is 4217");
}

#[test]
fn hermes_send_reaches_a_room_without_a_model() {
    let Some(s) = setup() else {
        return;
    };
    let room = s.ann.open_dm(&s.bot.id);
    // The bot joins as a person would: by accepting the invite.
    let (status, _) = s.bot.call(
        "POST",
        &format!("/_matrix/client/v3/join/{}", support::matrix::enc(&room)),
        Some(&json!({})),
    );
    assert_eq!(status, 200);
    let env = s.env();
    let out =
        s.sb.command()
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .args([
                "send",
                "--to",
                &format!("matrix:{room}"),
                "deploy **finished**",
            ])
            .output()
            .unwrap();
    assert!(out.status.success(), "{}", support::stderr(&out));
    let sent = s
        .ann
        .wait_for(&room, &s.bot.id, "sent by hermes send", |t| {
            t.contains("deploy")
        });
    assert_eq!(
        sent["content"]["formatted_body"],
        "deploy <strong>finished</strong>"
    );
    assert!(s.sb.mock.chat_requests().is_empty());
}

#[test]
fn a_dangerous_command_is_approved_then_denied_with_bang_commands() {
    let Some(s) = setup() else {
        return;
    };
    let _gw = s.gateway();
    let room = s.dm();
    std::fs::create_dir(s.sb.work_path("build")).unwrap();
    std::fs::create_dir(s.sb.work_path("keep")).unwrap();
    let rm = |dir: &str| {
        Reply::tool_call(
            "c1",
            "terminal",
            &json!({"command": format!("rm -rf ./{dir}")}).to_string(),
        )
    };
    s.sb.mock.push(rm("build"));
    s.sb.mock.push(Reply::text("Removed build."));
    s.ann.say(&room, "clean the build");
    s.ann
        .wait_for(&room, &s.bot.id, "asking for approval", |t| {
            t.contains("requires approval") && t.contains("rm -rf ./build")
        });
    assert!(
        s.sb.work_path("build").exists(),
        "nothing runs before the answer"
    );
    s.ann.say(&room, "!approve");
    s.ann.wait_for(&room, &s.bot.id, "after the approval", |t| {
        t.contains("Removed build.")
    });
    assert!(!s.sb.work_path("build").exists());

    s.sb.mock.push(rm("keep"));
    s.sb.mock.push(Reply::text("Left it alone."));
    s.ann.say(&room, "clean keep too");
    s.ann.wait_for(&room, &s.bot.id, "asking again", |t| {
        t.contains("requires approval") && t.contains("rm -rf ./keep")
    });
    s.ann.say(&room, "!deny");
    s.ann.wait_for(&room, &s.bot.id, "after the denial", |t| {
        t.contains("Left it alone.")
    });
    assert!(s.sb.work_path("keep").exists(), "denied, it never ran");
}

#[test]
fn a_room_answers_mentions_in_threads_and_strangers_are_not_served() {
    let Some(s) = setup() else {
        return;
    };
    let _gw = s.gateway();
    let room = s.ann.open_room("team", &[&s.bot.id, &s.carl.id]);
    s.ann.wait_joined(&room, &s.bot.id);
    let (status, _) = s.carl.call(
        "POST",
        &format!("/_matrix/client/v3/join/{}", support::matrix::enc(&room)),
        Some(&json!({})),
    );
    assert_eq!(status, 200);
    s.sb.mock.push(Reply::text("Answered in the thread."));
    s.ann.say(&room, "just chatting among ourselves");
    let asked = s.ann.say(&room, "bot: what is the plan?");
    let answer = s.ann.wait_for(&room, &s.bot.id, "to the mention", |t| {
        t.contains("Answered in the thread.")
    });
    assert_eq!(answer["content"]["m.relates_to"]["rel_type"], "m.thread");
    assert_eq!(
        answer["content"]["m.relates_to"]["event_id"],
        asked.as_str()
    );
    // Carl is not on the allowlist: his mention reaches no model.
    s.carl.say(&room, "bot: tell me a secret");
    std::thread::sleep(Duration::from_millis(1500));
    let requests = s.sb.requests();
    assert_eq!(requests.len(), 1, "only Ann's mention asked the model");
    let text = requests[0].to_string();
    assert!(text.contains("what is the plan?") && !text.contains("chatting among"));
}

#[test]
fn a_gateway_killed_mid_answer_answers_exactly_once_after_a_restart() {
    let Some(s) = setup() else {
        return;
    };
    let mut gw = s.gateway();
    let room = s.dm();
    s.sb.mock
        .push(Reply::text("Slow answer that never arrives.").with_delay(Duration::from_secs(5)));
    s.ann.say(&room, "what is the weather?");
    let deadline = Instant::now() + Duration::from_secs(20);
    while s.sb.mock.chat_requests().is_empty() {
        assert!(Instant::now() < deadline, "the model was never asked");
        std::thread::sleep(Duration::from_millis(50));
    }
    // kill -9 while the model is answering: no drain, no goodbye.
    gw.child.kill().unwrap();
    gw.child.wait().unwrap();
    s.sb.mock.push(Reply::text("Sunny, after the restart."));
    let _gw2 = s.gateway();
    s.ann.wait_for(&room, &s.bot.id, "after the restart", |t| {
        t.contains("Sunny, after the restart.")
    });
    std::thread::sleep(Duration::from_secs(2));
    let answers: Vec<String> = s
        .ann
        .messages_from(&room, &s.bot.id)
        .iter()
        .filter_map(|e| e["content"]["body"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(
        answers.iter().filter(|t| t.contains("Sunny")).count(),
        1,
        "{answers:?}"
    );
    assert!(
        !answers.iter().any(|t| t.contains("never arrives")),
        "{answers:?}"
    );
    assert_eq!(
        s.sb.mock.chat_requests().len(),
        2,
        "asked once per gateway life"
    );
}

#[test]
fn a_streamed_answer_is_one_message_edited_in_place() {
    let Some(s) = setup() else {
        return;
    };
    s.sb.add_config("streaming:\n  enabled: true\n  edit_interval: 0.1\n");
    let _gw = s.gateway();
    let room = s.dm();
    s.sb.mock.push(
        Reply::text("First part of the answer, then the second part, then the end.")
            .with_chunk_delay(Duration::from_millis(60)),
    );
    s.ann.say(&room, "stream please");
    s.ann.wait_for(&room, &s.bot.id, "the whole answer", |t| {
        t == "First part of the answer, then the second part, then the end."
    });
    let events = s.ann.messages_from(&room, &s.bot.id);
    let edits = events
        .iter()
        .filter(|e| e["content"]["m.relates_to"]["rel_type"] == "m.replace")
        .count();
    let originals = events
        .iter()
        .filter(|e| {
            e["type"] == "m.room.message" && e["content"]["m.relates_to"]["rel_type"] != "m.replace"
        })
        .count();
    assert_eq!(originals, 1, "one message, edited: {events:#?}");
    assert!(edits >= 1, "no edit: {events:#?}");
}
