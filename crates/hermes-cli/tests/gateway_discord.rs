//! The messaging gateway on Discord, against a fake Discord of our own (no
//! emulator exists): the gateway WebSocket handshake and events, REST for
//! answers, buttons as message components.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::time::{Duration, Instant};

use hermes_mock::Reply;
use serde_json::json;
use support::discord::{BOT_ID, FakeDiscord, TOKEN};
use support::telegram::ChatGateway;
use support::*;

const DM: &str = "dm-channel-1";

fn start(sb: &Sandbox, discord: &FakeDiscord, env: &[(&str, &str)]) -> ChatGateway {
    sb.no_retries();
    sb.add_config(&discord.config());
    let mut all = vec![("DISCORD_BOT_TOKEN", TOKEN)];
    all.extend_from_slice(env);
    let gw = ChatGateway::start_with(sb, &all, "discord: connected as @hermes-test");
    discord.wait_identified();
    gw
}

#[test]
fn a_dm_gets_a_streamed_answer_with_tool_progress_and_approvals_by_button_and_command() {
    let discord = FakeDiscord::start();
    let sb = Sandbox::start();
    sb.add_config("streaming:\n  enabled: true\n  edit_interval: 0.1\n");
    let doomed = sb.work_path("doomed");
    let spared = sb.work_path("spared");
    std::fs::create_dir_all(doomed.join("x")).unwrap();
    std::fs::create_dir_all(spared.join("x")).unwrap();
    sb.mock.push_all([
        Reply::tool_call(
            "c1",
            "terminal",
            &json!({"command": "echo discord-tool"}).to_string(),
        ),
        Reply::text("The tool said discord-tool, and that is all there is to say about this run.")
            .with_chunk_delay(Duration::from_millis(40)),
        Reply::tool_call(
            "c2",
            "terminal",
            &json!({"command": format!("rm -rf {}", doomed.display())}).to_string(),
        ),
        Reply::text("Deleted, as approved."),
        Reply::tool_call(
            "c3",
            "terminal",
            &json!({"command": format!("rm -rf {}", spared.display())}).to_string(),
        ),
        Reply::text("Left it alone, as you said."),
    ]);
    let _gw = start(&sb, &discord, &[("DISCORD_ALLOWED_USERS", "42")]);
    discord.user_says(DM, "42", "run the echo", None);
    discord.wait_for(DM, "with the answer", |t| {
        t.contains("all there is to say about this run.")
    });
    // Streamed: one message, edited as the answer grew.
    let answers = discord
        .messages(DM)
        .into_iter()
        .filter(|m| {
            m["content"]
                .as_str()
                .unwrap_or("")
                .contains("The tool said")
        })
        .count();
    assert_eq!(answers, 1);
    // Discord shows tool progress by default.
    discord.wait_for(DM, "with progress", |t| {
        t.contains("terminal: \"echo discord-tool\"")
    });
    discord.user_says(DM, "42", "now delete doomed", None);
    let ask = discord.wait_for(DM, "asking", |t| t.contains("Command Approval Required"));
    let buttons = ask["components"][0]["components"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(buttons.len(), 4);
    assert!(doomed.exists());
    discord.press(DM, "42", buttons[0]["custom_id"].as_str().unwrap());
    discord.wait_for(DM, "after approval", |t| {
        t.contains("Deleted, as approved.")
    });
    assert!(!doomed.exists());
    assert!(
        discord.callbacks() >= 1,
        "the button press was acknowledged"
    );
    let asked = discord
        .messages(DM)
        .into_iter()
        .find(|m| m["id"] == ask["id"])
        .unwrap();
    assert!(
        asked["content"]
            .as_str()
            .unwrap()
            .contains("Approved once by user42"),
        "{asked}"
    );
    // The next one is denied with a command instead of a button.
    discord.user_says(DM, "42", "and delete spared", None);
    discord.wait_for(DM, "asking again", |t| {
        t.contains("Command Approval Required") && t.contains("spared")
    });
    discord.user_says(DM, "42", "/deny", None);
    discord.wait_for(DM, "after the denial", |t| t.contains("Left it alone"));
    assert!(spared.exists());
    assert!(
        sb.mock.chat_requests()[5]
            .to_string()
            .to_lowercase()
            .contains("denied")
    );
}

#[test]
fn guild_channels_need_a_mention_and_strangers_pair_in_dms() {
    let discord = FakeDiscord::start();
    let sb = Sandbox::start();
    sb.mock.push(Reply::text("Mentioned, so I answer."));
    let _gw = start(&sb, &discord, &[("DISCORD_ALLOWED_USERS", "42")]);
    discord.user_says("general", "42", "talking among ourselves", Some("guild-1"));
    std::thread::sleep(Duration::from_millis(600));
    assert!(discord.messages("general").is_empty());
    assert!(sb.mock.chat_requests().is_empty());
    discord.user_says(
        "general",
        "42",
        &format!("<@{BOT_ID}> are you there?"),
        Some("guild-1"),
    );
    discord.wait_for("general", "to the mention", |t| {
        t.contains("Mentioned, so I answer.")
    });
    let asked = sb.mock.chat_requests()[0].to_string();
    assert!(
        asked.contains("are you there?") && !asked.contains(&format!("<@{BOT_ID}>")),
        "the mention is stripped"
    );
    // An allowlist is set, so a stranger's DM is ignored (the reference's default).
    discord.user_says("dm-stranger", "77", "hi", None);
    std::thread::sleep(Duration::from_millis(600));
    assert!(discord.messages("dm-stranger").is_empty());
}

#[test]
fn without_an_allowlist_a_stranger_gets_a_pairing_code_and_stop_works() {
    let discord = FakeDiscord::start();
    let sb = Sandbox::start();
    sb.mock.push_all([
        Reply::tool_call(
            "c1",
            "terminal",
            &json!({"command": "sleep 60", "timeout": 120}).to_string(),
        ),
        Reply::text("stopped early"),
    ]);
    let _gw = start(&sb, &discord, &[]);
    discord.user_says("dm-9", "9", "hello", None);
    let offer = discord.wait_for("dm-9", "with a code", |t| t.contains("pairing code"));
    let text = offer["content"].as_str().unwrap();
    let code = text
        .split("approve discord ")
        .nth(1)
        .unwrap()
        .trim_matches(|c: char| !c.is_ascii_alphanumeric());
    let approved = sb
        .command()
        .args(["pairing", "approve", "discord", code])
        .output()
        .unwrap();
    assert!(
        stdout(&approved).contains("Approved!"),
        "{}",
        stdout(&approved)
    );
    discord.user_says("dm-9", "9", "sleep please", None);
    let deadline = Instant::now() + Duration::from_secs(20);
    while sb.mock.chat_requests().is_empty() {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(400));
    let started = Instant::now();
    discord.user_says("dm-9", "9", "/stop", None);
    discord.wait_for("dm-9", "confirming", |t| t.contains("⚡ Stopped"));
    discord.user_says("dm-9", "9", "still there?", None);
    discord.wait_for("dm-9", "to the next message", |t| {
        t.contains("stopped early")
    });
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn a_file_named_in_the_answer_is_uploaded_and_reactions_mark_the_message() {
    let discord = FakeDiscord::start();
    let sb = Sandbox::start();
    let chart = sb.work_path("chart.csv");
    std::fs::write(&chart, "day,rain\nmon,3\n").unwrap();
    sb.mock.push(Reply::text(format!(
        "Here is the table you asked for.\nMEDIA:{}",
        chart.display()
    )));
    let _gw = start(&sb, &discord, &[("DISCORD_ALLOWED_USERS", "42")]);
    let asked = discord.user_says(DM, "42", "send me the rain table", None);
    discord.wait_for(DM, "with the answer", |t| t.contains("Here is the table"));
    let deadline = Instant::now() + Duration::from_secs(20);
    let upload = loop {
        let found = discord
            .messages(DM)
            .into_iter()
            .find(|m| m["files"].as_array().is_some_and(|f| !f.is_empty()));
        if let Some(m) = found {
            break m;
        }
        assert!(
            Instant::now() < deadline,
            "no upload: {:#?}",
            discord.messages(DM)
        );
        std::thread::sleep(Duration::from_millis(30));
    };
    assert_eq!(upload["files"][0]["filename"], "chart.csv");
    assert_eq!(upload["files"][0]["content"], "day,rain\nmon,3\n");
    let answer = discord
        .messages(DM)
        .into_iter()
        .find(|m| {
            m["content"]
                .as_str()
                .unwrap_or("")
                .contains("Here is the table")
        })
        .unwrap();
    assert!(
        !answer["content"].as_str().unwrap().contains("MEDIA:"),
        "{answer}"
    );
    // 👀 while working, then ✅ in its place.
    let deadline = Instant::now() + Duration::from_secs(20);
    while discord.reactions().len() < 3 {
        assert!(Instant::now() < deadline, "{:?}", discord.reactions());
        std::thread::sleep(Duration::from_millis(30));
    }
    assert_eq!(
        discord.reactions(),
        vec![
            format!("PUT {asked} %F0%9F%91%80"),
            format!("DELETE {asked} %F0%9F%91%80"),
            format!("PUT {asked} %E2%9C%85"),
        ]
    );
}
