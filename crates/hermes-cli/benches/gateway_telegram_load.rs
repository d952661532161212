//! Load benchmark of the messaging gateway on Telegram (issue 18).
//!
//! `cargo bench -p hermes-cli --bench gateway_telegram_load [-- CHATS ROUNDS]`
//! (default 100 chats, 3 rounds). Each round, every chat sends one message at
//! the same moment through the `telegram-test-api` emulator (installed by
//! `.ci/run` under `HERMES_CHAT_EMULATORS`); the mock provider answers at
//! once, so what is measured is the gateway's own cost. Prints, per round:
//! how many chats were answered (exactly once), the time from a message's
//! arrival in the emulator to the bot's answer there (p50/p90/p99/max), and
//! the gateway's RSS idle and at its peak.
//!
//! `HERMES_BENCH_GATEWAY=PATH` runs `PATH gateway run` instead of this build's
//! binary: the reference's `hermes` from a venv with
//! `hermes-agent[messaging]==0.19.0`. Both get the same config, environment
//! and emulator (which then behaves like Telegram where python-telegram-bot
//! needs it to: see the fixture).

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

#[path = "common/measure.rs"]
mod measure;
use measure::{kib, percentile};

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use hermes_mock::{MockServer, Reply};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_hermes");
const TOKEN: &str = "123456:TEST-token";
const ANSWER: &str = "Answer from the mock model";
const FIRST_CHAT: i64 = 1000;

/// One POST with a JSON body to the emulator; the parsed answer.
fn post(port: u16, path: &str, body: &Value) -> Value {
    let body = body.to_string();
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).unwrap();
    let text = raw.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    serde_json::from_str(text).unwrap_or(Value::Null)
}

struct Emulator {
    child: Child,
    port: u16,
}

impl Drop for Emulator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Emulator {
    fn start(modules: &PathBuf) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let fixture =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/telegram_emulator.cjs");
        let mut child = Command::new("node")
            .arg(fixture)
            .arg(port.to_string())
            .env("NODE_PATH", modules)
            .env("TG_EMULATOR_LIKE_TELEGRAM", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "ready", "the emulator did not start");
        Self { child, port }
    }

    /// How many answers each chat has received.
    fn answers(&self) -> HashMap<i64, usize> {
        let history = post(self.port, "/getUpdatesHistory", &json!({"token": TOKEN}));
        let mut counts = HashMap::new();
        for update in history["result"].as_array().into_iter().flatten() {
            let message = &update["message"];
            let chat = message["chat_id"]
                .as_i64()
                .or_else(|| message["chat_id"].as_str().and_then(|s| s.parse().ok()));
            let text = message["text"].as_str().unwrap_or("").replace('\\', "");
            if let Some(chat) = chat
                && text.contains(ANSWER)
            {
                *counts.entry(chat).or_default() += 1;
            }
        }
        counts
    }
}

/// Waits until every chat in `chats` has `want` answers (or `limit` passes);
/// the time each one got there.
fn collect(
    emulator: &Emulator,
    chats: &[i64],
    want: usize,
    limit: Duration,
) -> HashMap<i64, Instant> {
    let started = Instant::now();
    let mut done = HashMap::new();
    while done.len() < chats.len() && started.elapsed() < limit {
        let counts = emulator.answers();
        let now = Instant::now();
        for chat in chats {
            if counts.get(chat).copied().unwrap_or(0) >= want {
                done.entry(*chat).or_insert(now);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    done
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let chats: i64 = args.first().and_then(|a| a.parse().ok()).unwrap_or(100);
    let rounds: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(3);
    let Some(modules) = std::env::var_os("HERMES_CHAT_EMULATORS").map(PathBuf::from) else {
        println!(
            "telegram load: skipped (HERMES_CHAT_EMULATORS is not set; .ci/run installs the emulator)"
        );
        return;
    };

    let mock = MockServer::start();
    mock.forget_bodies();
    mock.respond_with(|_| Some(Reply::text(ANSWER)));
    let emulator = Emulator::start(&modules);
    let home = tempfile::tempdir().unwrap();
    // Keys the reference needs to stay offline are harmless to ours.
    std::fs::write(
        home.path().join("config.yaml"),
        format!(
            "model:\n  provider: custom\n  base_url: {}\n  default: mock-model\n  api_key: mock-key\n\
             agent:\n  api_max_retries: 1\n  environment_probe: false\n\
             security:\n  tirith_enabled: false\n\
             platforms:\n  telegram:\n    enabled: true\n    gateway_restart_notification: false\n    \
             extra:\n      base_url: http://127.0.0.1:{}/bot\n",
            mock.base_url(),
            emulator.port
        ),
    )
    .unwrap();
    let other = std::env::var_os("HERMES_BENCH_GATEWAY");
    let program = other.as_deref().unwrap_or(BIN.as_ref());
    let log = std::fs::File::create(home.path().join("gateway.log")).unwrap();
    let started = Instant::now();
    let mut child = Command::new(program)
        .args(["gateway", "run"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("HERMES_HOME", home.path())
        .env("TELEGRAM_BOT_TOKEN", TOKEN)
        .env("GATEWAY_ALLOW_ALL_USERS", "true")
        .env("TELEGRAM_HOME_CHANNEL", "999999")
        // The reference looks up Telegram's addresses on the internet unless told these.
        .env("TELEGRAM_FALLBACK_IPS", "149.154.167.220")
        .env("HERMES_TELEGRAM_DISABLE_FALLBACK_IPS", "1")
        .env("NO_PROXY", "127.0.0.1,localhost")
        .current_dir(home.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    let pid = child.id();
    println!(
        "telegram gateway: {}",
        other.as_deref().map_or("this build".to_owned(), |p| p
            .to_string_lossy()
            .into_owned())
    );

    // One chat first: the gateway is up once it answers.
    user_says(emulator.port, 1, "warm up");
    let first = collect(&emulator, &[1], 1, Duration::from_secs(60));
    assert!(
        !first.is_empty(),
        "the gateway never answered; its log:\n{}",
        std::fs::read_to_string(home.path().join("gateway.log")).unwrap_or_default()
    );
    println!(
        "telegram first answer after exec  {:>10.2?}  RSS {} KiB",
        started.elapsed(),
        kib(pid, "VmRSS:")
    );
    std::thread::sleep(Duration::from_millis(500));
    println!(
        "telegram idle RSS                  {:>10} KiB",
        kib(pid, "VmRSS:")
    );

    let ids: Vec<i64> = (FIRST_CHAT..FIRST_CHAT + chats).collect();
    for round in 1..=rounds {
        let barrier = Arc::new(Barrier::new(ids.len()));
        let port = emulator.port;
        let senders: Vec<_> = ids
            .iter()
            .map(|&chat| {
                let barrier = barrier.clone();
                std::thread::spawn(move || {
                    barrier.wait();
                    let at = Instant::now();
                    user_says(port, chat, &format!("message {round} from chat {chat}"));
                    (chat, at)
                })
            })
            .collect();
        let sent: HashMap<i64, Instant> = senders.into_iter().map(|t| t.join().unwrap()).collect();
        let round_started = sent.values().min().copied().unwrap_or_else(Instant::now);
        let answered = collect(&emulator, &ids, round, Duration::from_secs(180));
        let mut latencies: Vec<Duration> = answered
            .iter()
            .map(|(chat, at)| at.saturating_duration_since(sent[chat]))
            .collect();
        latencies.sort();
        let wall = answered.values().max().map_or(Duration::ZERO, |last| {
            last.saturating_duration_since(round_started)
        });
        println!(
            "telegram round {round}: {}/{} chats answered in {wall:.2?}; latency p50 {:.2?} p90 {:.2?} p99 {:.2?} max {:.2?}; RSS {} KiB",
            answered.len(),
            ids.len(),
            percentile(&latencies, 0.5),
            percentile(&latencies, 0.9),
            percentile(&latencies, 0.99),
            latencies.last().copied().unwrap_or_default(),
            kib(pid, "VmRSS:"),
        );
    }
    std::thread::sleep(Duration::from_secs(1));
    let counts = emulator.answers();
    let twice = ids
        .iter()
        .filter(|c| counts.get(c).copied().unwrap_or(0) > rounds)
        .count();
    println!(
        "telegram peak RSS {} KiB; chats answered more than once per message: {twice}",
        kib(pid, "VmHWM:")
    );
    let _ = Command::new("kill").arg(pid.to_string()).status();
    let _ = child.wait();
}

/// A person writes `text` in their private chat `chat` with the bot.
fn user_says(port: u16, chat: i64, text: &str) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    post(
        port,
        "/sendMessage",
        &json!({"botToken": TOKEN, "from": {"id": chat, "first_name": format!("User{chat}"), "is_bot": false},
                "chat": {"id": chat, "type": "private", "first_name": format!("User{chat}")},
                "date": now, "text": text}),
    );
}
