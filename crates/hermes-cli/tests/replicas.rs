//! Several `hermes gateway run` replicas on one PostgreSQL database and one
//! Telegram bot: one polls at a time (a lease with a fencing token), and
//! when it is killed with `kill -9` another takes over within the lease
//! time and picks up what it left unanswered. The emulator keeps updates
//! until an offset confirms them and answers a second concurrent poller
//! with Telegram's 409, logging every `getUpdates`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use hermes_mock::Reply;
use hermes_postgres::testing::{Scratch, database_url};
use serde_json::Value;
use support::telegram::{ChatGateway, Emulator, TOKEN, configure};
use support::*;

/// The lease time the replicas run with (`gateway.lease_seconds`).
const LEASE_SECS: u64 = 3;
const CHATS: i64 = 10;
const ROUNDS: usize = 10;

/// The mock answers every turn with the text of its last user message, a
/// few hundred milliseconds long.
fn echo(sb: &Sandbox) {
    sb.mock.respond_with(|req| {
        let body = &req.body;
        let last = body["messages"]
            .as_array()?
            .iter()
            .rev()
            .find(|m| m["role"] == "user")?;
        let text = match &last["content"] {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join(" "),
            _ => String::new(),
        };
        let said = text
            .split_whitespace()
            .rfind(|w| w.starts_with("m-"))
            .unwrap_or("?")
            .to_owned();
        // Slow enough that the kill mid-round lands inside running turns:
        // the next holder must wait out their turn leases, not drop them.
        Some(Reply::text(format!("answer to {said}")).with_chunk_delay(Duration::from_millis(150)))
    });
}

fn replica(emulator: &Emulator, scratch: &Scratch, url: &str) -> (Sandbox, ChatGateway) {
    let sb = Sandbox::start();
    echo(&sb);
    configure(
        &sb,
        emulator,
        &format!(
            "sessiondb:\n  provider: postgresql\n  schema: {}\ngateway:\n  lease_seconds: {LEASE_SECS}\n",
            scratch.schema
        ),
    );
    let gw = ChatGateway::start_with(
        &sb,
        &[
            ("TELEGRAM_BOT_TOKEN", TOKEN),
            ("GATEWAY_ALLOW_ALL_USERS", "true"),
            ("HERMES_DATABASE_URL", url),
        ],
        "telegram: connected as @TestNameBot",
    );
    (sb, gw)
}

/// The replica whose log says it polls (after `since` lines were seen).
fn poller(gateways: &[Option<(Sandbox, ChatGateway)>]) -> Vec<usize> {
    gateways
        .iter()
        .enumerate()
        .filter_map(|(i, g)| {
            let (_, gw) = g.as_ref()?;
            let log = gw.log();
            let polls = log.matches("this replica polls now").count();
            let lost = log.matches("lease lost").count();
            (polls > lost).then_some(i)
        })
        .collect()
}

fn answers(emulator: &Emulator) -> BTreeMap<i64, Vec<String>> {
    (1..=CHATS)
        .map(|chat| {
            let texts = emulator
                .bot_messages(chat)
                .iter()
                .filter_map(|m| m["text"].as_str().map(|t| t.replace('\\', "")))
                .filter(|t| t.starts_with("answer to "))
                .collect();
            (chat, texts)
        })
        .collect()
}

fn wait_answers(emulator: &Emulator, per_chat: usize, what: &str, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let got = answers(emulator);
        if got.values().all(|a| a.len() >= per_chat) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: not every chat has {per_chat} answers: {got:#?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_killed_poller_is_replaced_within_the_lease_and_every_message_is_answered_once() {
    let Some(url) = database_url() else {
        assert!(std::env::var_os("HERMES_TEST_REQUIRE_POSTGRES").is_none());
        eprintln!("SKIPPED: set HERMES_TEST_DATABASE_URL to a PostgreSQL database");
        return;
    };
    let log_dir = tempfile::tempdir().unwrap();
    let requests = log_dir.path().join("getUpdates.jsonl");
    let Some(emulator) = Emulator::start_with(&[
        ("TG_EMULATOR_OFFSETS", "1"),
        ("TG_EMULATOR_LOG", requests.to_str().unwrap()),
    ]) else {
        eprintln!("SKIPPED: the Telegram emulator is not installed (HERMES_CHAT_EMULATORS)");
        return;
    };
    let scratch = Scratch::new(&url).unwrap();
    let mut gateways: Vec<Option<(Sandbox, ChatGateway)>> = (0..3)
        .map(|_| Some(replica(&emulator, &scratch, &url)))
        .collect();
    let deadline = Instant::now() + Duration::from_secs(20);
    while poller(&gateways).len() != 1 {
        assert!(Instant::now() < deadline, "no replica took the lease");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut killed_at = None;
    let mut first = 0;
    for round in 0..ROUNDS {
        for chat in 1..=CHATS {
            emulator.user_says(chat, &format!("m-{chat}-{round}"));
        }
        if round == ROUNDS / 2 {
            // Mid-way, with this round's messages in flight.
            std::thread::sleep(Duration::from_millis(150));
            first = poller(&gateways)[0];
            let (_, gw) = gateways[first].as_mut().unwrap();
            nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(gw.child.id() as i32),
                nix::sys::signal::Signal::SIGKILL,
            )
            .unwrap();
            let _ = gw.child.wait();
            killed_at = Some(Instant::now());
            gateways[first] = None;
            // The takeover is timed before anything else is waited for.
            let limit = Duration::from_secs(LEASE_SECS) + Duration::from_millis(1500);
            while poller(&gateways).is_empty() {
                assert!(
                    killed_at.unwrap().elapsed() < limit,
                    "no replica took over within {limit:?}"
                );
                std::thread::sleep(Duration::from_millis(10));
            }
            let took = killed_at.unwrap().elapsed();
            eprintln!("takeover {took:?} after kill -9 (lease {LEASE_SECS} s)");
        }
        // The round of the kill: its turns ran on the dead replica, and the
        // new holder answers them once their turn leases lapse (one lease time).
        let within = if round == ROUNDS / 2 {
            Duration::from_secs(LEASE_SECS * 4)
        } else {
            Duration::from_secs(60)
        };
        wait_answers(&emulator, round + 1, &format!("round {round}"), within);
    }
    assert!(killed_at.is_some());
    let pollers = poller(&gateways);
    assert_eq!(pollers.len(), 1, "one poller at the end: {pollers:?}");
    assert_ne!(pollers[0], first);

    // Every message answered exactly once.
    for (chat, texts) in answers(&emulator) {
        let mut want: Vec<String> = (0..ROUNDS)
            .map(|r| format!("answer to m-{chat}-{r}"))
            .collect();
        let mut got = texts.clone();
        want.sort();
        got.sort();
        assert_eq!(got, want, "chat {chat}");
    }
    // One poller at any moment: no 409, no two polls at once.
    let log = std::fs::read_to_string(&requests).unwrap();
    let mut polls: Vec<(u64, u64, u64, u64)> = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|v| {
            (
                v["start"].as_u64().unwrap(),
                v["end"].as_u64().unwrap(),
                v["port"].as_u64().unwrap(),
                v["status"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(polls.len() > 20, "{} polls logged", polls.len());
    assert!(
        polls.iter().all(|p| p.3 == 200),
        "a getUpdates was refused with 409"
    );
    polls.sort();
    for pair in polls.windows(2) {
        assert!(
            pair[1].0 >= pair[0].1 || pair[1].2 == pair[0].2,
            "two pollers at once: {:?} and {:?}",
            pair[0],
            pair[1]
        );
    }
}
