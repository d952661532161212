//! The messaging gateway on Slack, end to end: the real `emulate` emulator
//! plays Slack's Web API (people post into it, the bot's answers, edits,
//! reactions and uploads land in it); our Socket Mode endpoint relays the
//! events, since emulate has no Socket Mode. Skipped when emulate is not
//! installed (`.ci/run` installs it and sets `HERMES_CHAT_EMULATORS`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::time::{Duration, Instant};

use hermes_mock::Reply;
use serde_json::{Value, json};
use support::slack::{GENERAL, SlackPeer, configure};
use support::telegram::ChatGateway;
use support::*;

fn start(sb: &Sandbox, peer: &SlackPeer, allowed: Option<&str>) -> ChatGateway {
    let env = SlackPeer::env(allowed);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let gw = ChatGateway::start_with(sb, &env, "slack: connected as @admin");
    peer.wait_connected();
    gw
}

fn wait_until(what: &str, ok: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !ok() {
        assert!(Instant::now() < deadline, "never: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn button_value(message: &Value, index: usize) -> String {
    message["blocks"][1]["elements"][index]["value"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn a_dm_gets_a_streamed_answer_after_a_tool_call_with_a_file() {
    let Some(peer) = SlackPeer::start() else {
        return;
    };
    let sb = Sandbox::start();
    configure(
        &sb,
        &peer,
        "streaming:\n  enabled: true\n  edit_interval: 0.1\ndisplay:\n  tool_progress: all\n",
    );
    let report = sb.work_path("report.txt");
    std::fs::write(&report, "quarterly numbers\n").unwrap();
    sb.mock.push(Reply::tool_call(
        "call_1",
        "terminal",
        &json!({"command": "echo from-the-tool"}).to_string(),
    ));
    let answer = format!(
        "The command printed **from-the-tool**, and that is the whole story of this little run.\n\nMEDIA:{}",
        report.display()
    );
    sb.mock
        .push(Reply::text(answer).with_chunk_delay(Duration::from_millis(40)));
    let alice = peer.user_id("alice");
    let _gw = start(&sb, &peer, Some(&alice));
    let dm = peer.dm_with("alice");
    let (ts, envelope) = peer.say("alice", &dm, "run echo for me", None);
    // Each top-level DM is a threaded session: the answer is in its thread.
    let done = peer.wait_for(&dm, Some(&ts), "with the final answer", |t| {
        t.contains("whole story of this little run")
    });
    let text = done["text"].as_str().unwrap();
    assert!(text.contains("*from-the-tool*"), "mrkdwn bold: {text}");
    assert!(!text.contains("MEDIA:"), "the tag left the text: {text}");
    peer.wait_for(&dm, Some(&ts), "with tool progress", |t| {
        t.contains("terminal: \"echo from-the-tool\"")
    });
    let answers = peer
        .bot_messages(&dm, Some(&ts))
        .into_iter()
        .filter(|m| {
            m["text"]
                .as_str()
                .unwrap_or("")
                .contains("The command printed")
        })
        .count();
    assert_eq!(answers, 1, "streaming edited one message");
    // The tool really ran and its output reached the model.
    let requests = sb.mock.chat_requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].to_string().contains("from-the-tool"));
    // The file went up through Slack's external upload into the thread.
    wait_until("the report is uploaded", || {
        let files = peer.call(support::slack::BOT_TOKEN, "files.list", &json!({}));
        files["files"]
            .as_array()
            .is_some_and(|f| f.iter().any(|f| f["name"] == "report.txt"))
    });
    assert!(
        peer.calls()
            .contains(&"files.completeUploadExternal".to_owned())
    );
    // 👀 while working, ✅ when done; the envelope was acknowledged.
    wait_until("the message is marked done", || {
        peer.reactions(&dm, &ts) == vec!["white_check_mark".to_owned()]
    });
    assert!(peer.acked(&envelope));
    assert!(peer.calls().contains(&"reactions.add".to_owned()));
    // emulate has no assistant.threads.setStatus: asked once, then no more.
    let status_calls = peer
        .calls()
        .iter()
        .filter(|c| *c == "assistant.threads.setStatus")
        .count();
    assert!(status_calls <= 1, "{status_calls}");
    // The session carries Slack's routing.
    let db = rusqlite::Connection::open(sb.home.path().join("state.db")).unwrap();
    let (source, key): (String, String) = db
        .query_row("SELECT source, session_key FROM sessions", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(source, "slack");
    assert_eq!(key, format!("agent:main:slack:dm:{dm}:{ts}"));
}

#[test]
fn a_stranger_pairs_and_channels_answer_mentions_in_threads() {
    let Some(peer) = SlackPeer::start() else {
        return;
    };
    let sb = Sandbox::start();
    configure(&sb, &peer, "");
    sb.mock.push_all([
        Reply::text("Paired and answering."),
        Reply::text("Mentioned, so I answer in a thread."),
        Reply::text("Still in the thread."),
    ]);
    let _gw = start(&sb, &peer, None);
    let dm = peer.dm_with("bob");
    let (ts, _) = peer.say("bob", &dm, "hello?", None);
    let offer = peer.wait_for(&dm, Some(&ts), "with a pairing code", |t| {
        t.contains("pairing code")
    });
    let text = offer["text"].as_str().unwrap();
    let code = text
        .split("approve slack ")
        .nth(1)
        .unwrap()
        .trim_matches(|c: char| !c.is_ascii_alphanumeric())
        .chars()
        .take(8)
        .collect::<String>();
    assert!(sb.mock.chat_requests().is_empty());
    let approved = sb
        .command()
        .args(["pairing", "approve", "slack", &code])
        .output()
        .unwrap();
    assert!(
        stdout(&approved).contains("Approved!"),
        "{}",
        stdout(&approved)
    );
    let (ts2, _) = peer.say("bob", &dm, "now?", None);
    peer.wait_for(&dm, Some(&ts2), "after pairing", |t| {
        t.contains("Paired and answering.")
    });
    // In a channel, chatter without a mention is left alone …
    let (quiet, _) = peer.say("bob", GENERAL, "talking among ourselves", None);
    std::thread::sleep(Duration::from_millis(600));
    assert!(peer.bot_messages(GENERAL, Some(&quiet)).is_empty());
    assert_eq!(sb.mock.chat_requests().len(), 1);
    // … a mention is answered in a thread, and the thread goes on without one.
    let mention = format!("<@{}> are you there?", support::slack::BOT_USER);
    let (root, _) = peer.say("bob", GENERAL, &mention, None);
    peer.wait_for(GENERAL, Some(&root), "to the mention", |t| {
        t.contains("Mentioned, so I answer in a thread.")
    });
    assert_eq!(
        sb.mock.chat_requests().len(),
        2,
        "the mention came twice, answered once"
    );
    let asked = sb.mock.chat_requests()[1].to_string();
    assert!(asked.contains("are you there?") && !asked.contains("<@U000000001>"));
    peer.say("bob", GENERAL, "and one more thing", Some(&root));
    peer.wait_for(GENERAL, Some(&root), "in the thread", |t| {
        t.contains("Still in the thread.")
    });
    assert!(
        peer.bot_messages(GENERAL, None).is_empty(),
        "nothing at the top level"
    );
}

#[test]
fn dangerous_commands_are_approved_with_a_button_and_denied_with_a_slash_command() {
    let Some(peer) = SlackPeer::start() else {
        return;
    };
    let sb = Sandbox::start();
    configure(&sb, &peer, "");
    let doomed = sb.work_path("doomed");
    let spared = sb.work_path("spared");
    std::fs::create_dir_all(doomed.join("x")).unwrap();
    std::fs::create_dir_all(spared.join("x")).unwrap();
    sb.mock.push_all([
        Reply::tool_call(
            "c1",
            "terminal",
            &json!({"command": format!("rm -rf {}", doomed.display())}).to_string(),
        ),
        Reply::text("Deleted, as approved."),
        Reply::tool_call(
            "c2",
            "terminal",
            &json!({"command": format!("rm -rf {}", spared.display())}).to_string(),
        ),
        Reply::text("Left it alone, as you said."),
    ]);
    let alice = peer.user_id("alice");
    let _gw = start(&sb, &peer, Some(&alice));
    let dm = peer.dm_with("alice");
    let (ts, _) = peer.say("alice", &dm, "delete doomed", None);
    let ask = peer.wait_for(&dm, Some(&ts), "asking", |t| {
        t.contains("Command Approval Required")
    });
    assert!(doomed.exists());
    assert_eq!(ask["blocks"][1]["elements"].as_array().unwrap().len(), 4);
    peer.press("alice", &dm, &ask, &button_value(&ask, 0));
    peer.wait_for(&dm, Some(&ts), "after approval", |t| {
        t.contains("Deleted, as approved.")
    });
    assert!(!doomed.exists());
    let asked = peer
        .bot_messages(&dm, Some(&ts))
        .into_iter()
        .find(|m| m["ts"] == ask["ts"])
        .unwrap();
    assert!(
        asked["text"]
            .as_str()
            .unwrap()
            .contains("Approved once by alice"),
        "{asked}"
    );
    assert!(
        asked["blocks"].as_array().is_none_or(Vec::is_empty),
        "buttons gone: {asked}"
    );
    // Slack takes a leading slash as a command: /hermes deny reaches the thread.
    let (ts2, _) = peer.say("alice", &dm, "now delete spared", None);
    peer.wait_for(&dm, Some(&ts2), "asking again", |t| {
        t.contains("Command Approval Required")
    });
    peer.slash("alice", &dm, "/hermes", "deny");
    peer.wait_for(&dm, Some(&ts2), "after denial", |t| {
        t.contains("Left it alone")
    });
    assert!(spared.exists());
    let denied = sb.mock.chat_requests()[3].to_string();
    assert!(denied.to_lowercase().contains("denied"), "{denied}");
}

#[test]
fn stop_interrupts_a_running_tool() {
    let Some(peer) = SlackPeer::start() else {
        return;
    };
    let sb = Sandbox::start();
    configure(&sb, &peer, "");
    sb.mock.push_all([
        Reply::tool_call(
            "c1",
            "terminal",
            &json!({"command": "sleep 60", "timeout": 120}).to_string(),
        ),
        Reply::text("stopped early"),
    ]);
    let alice = peer.user_id("alice");
    let _gw = start(&sb, &peer, Some(&alice));
    let dm = peer.dm_with("alice");
    let (ts, _) = peer.say("alice", &dm, "sleep please", None);
    wait_until("the model is asked", || !sb.mock.chat_requests().is_empty());
    std::thread::sleep(Duration::from_millis(400));
    let started = Instant::now();
    peer.slash("alice", &dm, "/stop", "");
    peer.wait_for(&dm, Some(&ts), "confirming", |t| t.contains("Stopped"));
    // The next message in the thread is answered right away.
    peer.say("alice", &dm, "still there?", Some(&ts));
    peer.wait_for(&dm, Some(&ts), "to the next message", |t| {
        t.contains("stopped early")
    });
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the sleep was cut short"
    );
}

#[test]
fn a_gateway_killed_between_messages_answers_the_next_one_exactly_once() {
    let Some(peer) = SlackPeer::start() else {
        return;
    };
    let sb = Sandbox::start();
    configure(&sb, &peer, "");
    sb.mock
        .push(Reply::text("First answer: noted the colour blue."));
    let alice = peer.user_id("alice");
    let mut gw = start(&sb, &peer, Some(&alice));
    let dm = peer.dm_with("alice");
    let (ts, _) = peer.say("alice", &dm, "remember: my colour is blue", None);
    peer.wait_for(&dm, Some(&ts), "to the first message", |t| {
        t.contains("First answer")
    });
    // kill -9: no drain, no goodbye; the reply in the thread waits in Slack.
    gw.child.kill().unwrap();
    gw.child.wait().unwrap();
    let (_, envelope) = peer.say("alice", &dm, "what is my colour?", Some(&ts));
    sb.mock.push(Reply::text("Second answer: blue."));
    let _gw2 = start(&sb, &peer, Some(&alice));
    peer.wait_for(&dm, Some(&ts), "to the second message", |t| {
        t.contains("Second answer")
    });
    wait_until("the envelope is acknowledged", || peer.acked(&envelope));
    std::thread::sleep(Duration::from_secs(1));
    let texts: Vec<String> = peer
        .bot_messages(&dm, Some(&ts))
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
    let second = requests[1].to_string();
    assert!(
        second.contains("my colour is blue") && second.contains("First answer"),
        "{second}"
    );
    assert!(peer.connections() >= 2);
}

#[test]
fn a_file_shared_in_a_dm_is_downloaded_for_the_agent() {
    let Some(peer) = SlackPeer::start() else {
        return;
    };
    let sb = Sandbox::start();
    configure(&sb, &peer, "");
    sb.mock.push(Reply::text("The note says plum."));
    let alice = peer.user_id("alice");
    let _gw = start(&sb, &peer, Some(&alice));
    let dm = peer.dm_with("alice");
    let ts = peer.share_file(
        "alice",
        &dm,
        "notes.txt",
        "the secret word is plum\n",
        "what does this say?",
    );
    peer.wait_for(&dm, Some(&ts), "to the file", |t| {
        t.contains("The note says plum.")
    });
    let asked = sb.mock.chat_requests()[0].to_string();
    assert!(asked.contains("what does this say?"), "{asked}");
    let saved = asked
        .split("It is saved at: ")
        .nth(1)
        .and_then(|rest| rest.split(". Read it").next())
        .unwrap_or_else(|| panic!("no saved path in {asked}"));
    assert!(
        saved.contains("/cache/documents/") && saved.ends_with("notes.txt"),
        "{saved}"
    );
    assert_eq!(
        std::fs::read_to_string(saved).unwrap(),
        "the secret word is plum\n"
    );
}
