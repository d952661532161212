//! Load benchmark of the messaging gateway on Matrix: the Telegram load
//! bench's measure, against a real Synapse (`HERMES_SYNAPSE_PYTHON`, as
//! `.ci/run` installs it).
//!
//! `cargo bench -p hermes-cli --bench gateway_matrix_load [-- ROOMS ROUNDS]`
//! (default 100 rooms, 3 rounds). One person has a direct room with the bot
//! per chat; each round every room gets one message at the same moment; the
//! mock provider answers at once, so what is measured is the gateway's own
//! cost plus Synapse's. Prints, per round: rooms answered (exactly once),
//! the time from a message's send to the bot's answer reaching the person's
//! `/sync` (p50/p90/p99/max), and the gateway's RSS idle and at its peak.
//! `MATRIX_REACTIONS=false` leaves out the 👀/✅ reactions (a third of the
//! events Synapse must store).

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]
#![allow(dead_code)]

#[path = "common/measure.rs"]
mod measure;
use measure::{kib, percentile};

#[path = "../tests/support/mod.rs"]
mod support;

use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use hermes_mock::{MockServer, Reply};
use support::matrix::{Synapse, User, enc};

const BIN: &str = env!("CARGO_BIN_EXE_hermes");
const ANSWER: &str = "Answer from the mock model";

/// Follows `person`'s `/sync` and reports each answer from `bot` (room, when seen).
fn watch_answers(person: User, bot: String) -> mpsc::Receiver<(String, Instant)> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let (_, first) = person.call("GET", "/_matrix/client/v3/sync?timeout=0", None);
        let mut since = first["next_batch"].as_str().unwrap_or_default().to_owned();
        loop {
            let auth = format!("Bearer {}", person.token);
            let path = format!("/_matrix/client/v3/sync?timeout=1000&since={}", enc(&since));
            // The homeserver going away at the end ends the watch.
            let Ok((_, _, body)) = support::gateway::http_try(
                person.port,
                "GET",
                &path,
                &[("Authorization", &auth)],
                "",
            ) else {
                return;
            };
            let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
            let now = Instant::now();
            if let Some(next) = v["next_batch"].as_str() {
                since = next.to_owned();
            }
            for (room, joined) in v["rooms"]["join"].as_object().into_iter().flatten() {
                for e in joined["timeline"]["events"]
                    .as_array()
                    .into_iter()
                    .flatten()
                {
                    let is_answer = e["type"] == "m.room.message"
                        && e["sender"] == bot.as_str()
                        && e["content"]["body"]
                            .as_str()
                            .is_some_and(|b| b.contains(ANSWER));
                    if is_answer && tx.send((room.clone(), now)).is_err() {
                        return;
                    }
                }
            }
        }
    });
    rx
}

/// Gathers answers until every room in `rooms` has `want` of them (or `limit` passes).
fn collect(
    answers: &mpsc::Receiver<(String, Instant)>,
    counts: &mut HashMap<String, usize>,
    rooms: &[String],
    want: usize,
    limit: Duration,
) -> HashMap<String, Instant> {
    let started = Instant::now();
    let mut done = HashMap::new();
    while done.len() < rooms.len() && started.elapsed() < limit {
        let Ok((room, at)) = answers.recv_timeout(Duration::from_millis(200)) else {
            continue;
        };
        let n = counts.entry(room.clone()).or_default();
        *n += 1;
        if *n >= want && rooms.contains(&room) {
            done.entry(room).or_insert(at);
        }
    }
    done
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let n_rooms: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(100);
    let rounds: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(3);
    let Some(hs) = Synapse::start() else {
        println!(
            "matrix load: skipped (HERMES_SYNAPSE_PYTHON is not set; .ci/run installs Synapse)"
        );
        return;
    };
    let mut users = hs.register(&["bot", "ann"]).into_iter();
    let (bot, ann) = (users.next().unwrap(), users.next().unwrap());
    let mut rooms: Vec<String> = (0..=n_rooms).map(|_| ann.open_dm(&bot.id)).collect();
    let warm_room = rooms.remove(0);

    let mock = MockServer::start();
    mock.forget_bodies();
    mock.respond_with(|_| Some(Reply::text(ANSWER)));
    let home = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let mut child = spawn_gateway(&mock, home.path(), &hs, &bot, &ann);
    let pid = child.id();
    let answers = watch_answers(ann.clone(), bot.id.clone());
    let mut counts = HashMap::new();
    ann.wait_joined(&warm_room, &bot.id);
    ann.say(&warm_room, "warm up");
    let first = collect(
        &answers,
        &mut counts,
        std::slice::from_ref(&warm_room),
        1,
        Duration::from_secs(60),
    );
    assert!(
        !first.is_empty(),
        "the gateway never answered; its log:\n{}",
        std::fs::read_to_string(home.path().join("gateway.log")).unwrap_or_default()
    );
    println!(
        "matrix first answer after exec  {:>10.2?}  RSS {} KiB",
        started.elapsed(),
        kib(pid, "VmRSS:")
    );
    for room in &rooms {
        ann.wait_joined(room, &bot.id);
    }
    std::thread::sleep(Duration::from_millis(500));
    println!(
        "matrix idle RSS                  {:>10} KiB",
        kib(pid, "VmRSS:")
    );

    for round in 1..=rounds {
        run_round(round, &ann, &rooms, &answers, &mut counts, pid);
    }
    // Late duplicates would show up now.
    let _ = collect(&answers, &mut counts, &[], 1, Duration::from_secs(2));
    let twice = rooms
        .iter()
        .filter(|r| counts.get(*r).copied().unwrap_or(0) > rounds)
        .count();
    println!(
        "matrix peak RSS {} KiB; rooms answered more than once per message: {twice}",
        kib(pid, "VmHWM:")
    );
    let _ = Command::new("kill").arg(pid.to_string()).status();
    let _ = child.wait();
}

/// `hermes gateway run` for the bot on `hs`, answering from `mock`, in `home`.
fn spawn_gateway(
    mock: &MockServer,
    home: &std::path::Path,
    hs: &Synapse,
    bot: &User,
    ann: &User,
) -> std::process::Child {
    std::fs::write(
        home.join("config.yaml"),
        format!(
            "model:\n  provider: custom\n  base_url: {}\n  default: mock-model\n\
             agent:\n  api_max_retries: 1\n",
            mock.base_url()
        ),
    )
    .unwrap();
    let log = std::fs::File::create(home.join("gateway.log")).unwrap();
    Command::new(BIN)
        .args(["gateway", "run"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("HERMES_HOME", home)
        .env("MATRIX_HOMESERVER", hs.url())
        .env("MATRIX_ACCESS_TOKEN", &bot.token)
        .env("MATRIX_ALLOWED_USERS", &ann.id)
        // `MATRIX_REACTIONS=false cargo bench …` leaves out the 👀/✅ events.
        .env(
            "MATRIX_REACTIONS",
            std::env::var("MATRIX_REACTIONS").unwrap_or_else(|_| "true".into()),
        )
        .current_dir(home)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap()
}

/// One round: a message in every room at once, then the answers' latencies.
fn run_round(
    round: usize,
    ann: &User,
    rooms: &[String],
    answers: &mpsc::Receiver<(String, Instant)>,
    counts: &mut HashMap<String, usize>,
    pid: u32,
) {
    let barrier = Arc::new(Barrier::new(rooms.len()));
    let senders: Vec<_> = rooms
        .iter()
        .map(|room| {
            let (barrier, ann, room) = (barrier.clone(), ann.clone(), room.clone());
            std::thread::spawn(move || {
                barrier.wait();
                let at = Instant::now();
                ann.say(&room, &format!("message {round}"));
                (room, at)
            })
        })
        .collect();
    let sent: HashMap<String, Instant> = senders.into_iter().map(|t| t.join().unwrap()).collect();
    let round_started = sent.values().min().copied().unwrap_or_else(Instant::now);
    let answered = collect(answers, counts, rooms, round, Duration::from_secs(180));
    let mut latencies: Vec<Duration> = answered
        .iter()
        .map(|(room, at)| at.saturating_duration_since(sent[room]))
        .collect();
    latencies.sort();
    let wall = answered.values().max().map_or(Duration::ZERO, |last| {
        last.saturating_duration_since(round_started)
    });
    println!(
        "matrix round {round}: {}/{} rooms answered in {wall:.2?}; latency p50 {:.2?} p90 {:.2?} p99 {:.2?} max {:.2?}; RSS {} KiB",
        answered.len(),
        rooms.len(),
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.9),
        percentile(&latencies, 0.99),
        latencies.last().copied().unwrap_or_default(),
        kib(pid, "VmRSS:"),
    );
}
