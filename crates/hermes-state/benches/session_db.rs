#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]
//! `SessionDb` benchmark: append throughput (one transaction per message, as the agent
//! writes) and full-text search latency, at several database sizes.
//!
//! ```text
//! cargo bench -p hermes-state --bench session_db                 # 10k and 100k messages
//! cargo bench -p hermes-state --bench session_db -- 10000 1000000 # chosen sizes
//! HERMES_BENCH_SIZES=1000000 cargo bench -p hermes-state --bench session_db
//! ```
//! Databases live in a temporary directory under `$TMPDIR`. The database is filled with
//! `synchronous=NORMAL` (CPU-bound appends), then 2 000 more messages are appended with the
//! default `synchronous=FULL` (an fsync per commit, disk-bound) and timed separately.

use std::time::{Duration, Instant};

use hermes_protocol::Message;
use hermes_state::session_db::{
    Durability, MessageExtra, NewSession, SearchQuery, SearchSort, SessionDb,
};

const SESSIONS: usize = 100;
const SEARCH_RUNS: usize = 50;
/// Appends timed with `synchronous=FULL` (fsync per commit) on top of the filled database.
const FULL_APPENDS: usize = 2_000;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A message of 8–40 words from a 3 000-word vocabulary with a skewed distribution;
/// "docker" appears in about 5% of messages.
fn message_text(rng: &mut Rng, vocab: &[String]) -> String {
    let words = 8 + rng.below(33);
    let mut out = Vec::with_capacity(words + 1);
    for _ in 0..words {
        let a = rng.below(vocab.len());
        let b = rng.below(vocab.len());
        out.push(vocab[a.min(b)].as_str());
    }
    if rng.below(20) == 0 {
        out.insert(rng.below(out.len()), "docker");
    }
    out.join(" ")
}

fn vocabulary() -> Vec<String> {
    let syll = [
        "ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "qu", "dra", "sten", "mor",
    ];
    let mut rng = Rng(0x5EED);
    (0..3000)
        .map(|_| {
            let n = 2 + rng.below(3);
            (0..n)
                .map(|_| syll[rng.below(syll.len())])
                .collect::<String>()
        })
        .collect()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

struct Row {
    size: usize,
    appends_per_s: f64,
    full_appends_per_s: f64,
    search_p50: Duration,
    search_p95: Duration,
    newest_p50: Duration,
    hits: usize,
}

fn bench(size: usize, vocab: &[String]) -> Row {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let mut db = SessionDb::open(&path).unwrap();
    for s in 0..SESSIONS {
        db.create_session(&NewSession {
            id: format!("s{s}"),
            source: "cli".into(),
            started_at: s as f64,
            ..NewSession::default()
        })
        .unwrap();
    }
    let mut rng = Rng(0xC0FFEE ^ size as u64);
    let texts: Vec<String> = (0..size + FULL_APPENDS)
        .map(|_| message_text(&mut rng, vocab))
        .collect();
    let append = |db: &mut SessionDb, range: std::ops::Range<usize>| {
        let start = Instant::now();
        for i in range.clone() {
            let text = texts[i].as_str();
            let m = if i % 2 == 0 {
                Message::user(text)
            } else {
                Message::assistant(text)
            };
            let extra = MessageExtra {
                timestamp: i as f64,
                ..MessageExtra::default()
            };
            db.append_message(&format!("s{}", i % SESSIONS), &m, &extra)
                .unwrap();
        }
        range.len() as f64 / start.elapsed().as_secs_f64()
    };
    db.set_durability(Durability::Normal).unwrap();
    let appends_per_s = append(&mut db, 0..size);
    db.set_durability(Durability::Full).unwrap();
    let full_appends_per_s = append(&mut db, size..size + FULL_APPENDS);
    db.close().unwrap();

    // Search on a freshly opened connection, as a new CLI process would.
    let db = SessionDb::open(&path).unwrap();
    let q = SearchQuery::new("docker");
    let hits = db.search(&q).unwrap().len();
    let mut times: Vec<Duration> = (0..SEARCH_RUNS)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(db.search(&q).unwrap());
            t.elapsed()
        })
        .collect();
    times.sort();
    let newest = SearchQuery {
        sort: SearchSort::Newest,
        ..SearchQuery::new("docker")
    };
    let mut newest_times: Vec<Duration> = (0..SEARCH_RUNS)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(db.search(&newest).unwrap());
            t.elapsed()
        })
        .collect();
    newest_times.sort();
    Row {
        size: size + FULL_APPENDS,
        appends_per_s,
        full_appends_per_s,
        search_p50: percentile(&times, 0.5),
        search_p95: percentile(&times, 0.95),
        newest_p50: percentile(&newest_times, 0.5),
        hits,
    }
}

fn sizes() -> Vec<usize> {
    let from_args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.replace('_', "").parse().ok())
        .collect();
    if !from_args.is_empty() {
        return from_args;
    }
    match std::env::var("HERMES_BENCH_SIZES") {
        Ok(v) => v
            .split(',')
            .filter_map(|s| s.trim().replace('_', "").parse().ok())
            .collect(),
        Err(_) => vec![10_000, 100_000],
    }
}

fn main() {
    let vocab = vocabulary();
    println!("SessionDb benchmark (WAL, one transaction per append, 100 sessions)");
    println!("appends/s NORMAL: filling the database with synchronous=NORMAL");
    println!(
        "appends/s FULL:   {FULL_APPENDS} more with synchronous=FULL (fsync per commit; the default)"
    );
    println!("search: \"docker\" (in ~5% of messages), limit 20 with context, fresh connection");
    println!(
        "{:>10} | {:>16} | {:>14} | {:>12} | {:>12} | {:>15} | {:>4}",
        "messages",
        "appends/s NORMAL",
        "appends/s FULL",
        "search p50",
        "search p95",
        "newest-sort p50",
        "hits"
    );
    for size in sizes() {
        let r = bench(size, &vocab);
        println!(
            "{:>10} | {:>16.0} | {:>14.0} | {:>9.3} ms | {:>9.3} ms | {:>12.3} ms | {:>4}",
            r.size,
            r.appends_per_s,
            r.full_appends_per_s,
            r.search_p50.as_secs_f64() * 1e3,
            r.search_p95.as_secs_f64() * 1e3,
            r.newest_p50.as_secs_f64() * 1e3,
            r.hits
        );
    }
}
