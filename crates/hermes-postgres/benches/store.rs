//! The PostgreSQL store next to state.db on the same corpus: durable
//! appends per second (one transaction per message, as the agent writes)
//! and session-search latency (p50 of 30) at N messages.
//!
//! ```text
//! HERMES_BENCH_DATABASE_URL=postgresql://… cargo bench -p hermes-postgres --bench store [-- N]
//! ```
//!
//! N defaults to 100 000 messages in 100 sessions (words from a skewed
//! 3 000-word vocabulary; "docker" in ~5 % of messages, "docker compose" in
//! half of those, a CJK run in ~1 %, "zanzibar" in one). The corpus is
//! written to state.db once, copied to PostgreSQL with `hermes sessions
//! migrate`'s copy (a schema of its own, dropped at the end), then both
//! stores take `HERMES_BENCH_APPENDS` (default 2 000) appends and the
//! searches. `HERMES_TEST_DATABASE_URL` serves when the BENCH one is unset.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

use std::time::{Duration, Instant};

use hermes_postgres::testing::Scratch;
use hermes_protocol::Message;
use hermes_state::session_db::{Durability, MessageExtra, NewSession, SearchQuery, SessionDb};
use hermes_state::store::SessionStore;

const SESSIONS: usize = 100;
const RUNS: usize = 30;

struct Rng(u64);

impl Rng {
    fn seeded(i: u64) -> Self {
        let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Rng((z ^ (z >> 31)) | 1)
    }

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

fn vocabulary() -> Vec<String> {
    let syll = [
        "ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "qu", "dra", "sten", "mor",
    ];
    let mut rng = Rng(0x5EED);
    (0..3000)
        .map(|_| {
            let n = 2 + rng.below(3);
            (0..n).map(|_| syll[rng.below(syll.len())]).collect()
        })
        .collect()
}

fn text(i: usize, vocab: &[String]) -> String {
    let mut rng = Rng::seeded(i as u64);
    let words = 8 + rng.below(33);
    let mut out: Vec<&str> = (0..words)
        .map(|_| {
            let (a, b) = (rng.below(vocab.len()), rng.below(vocab.len()));
            vocab[a.min(b)].as_str()
        })
        .collect();
    if rng.below(20) == 0 {
        let at = rng.below(out.len());
        out.insert(
            at,
            if rng.below(2) == 0 {
                "docker compose"
            } else {
                "docker"
            },
        );
    }
    if rng.below(100) == 0 {
        let at = rng.below(out.len());
        out.insert(at, "部署容器服务");
    }
    if i == 4242 {
        out.push("zanzibar");
    }
    out.join(" ")
}

/// state.db with `n` messages in [`SESSIONS`] sessions (large transactions).
fn build(path: &std::path::Path, n: usize, vocab: &[String]) {
    drop(SessionDb::open(path).unwrap());
    let mut conn = rusqlite::Connection::open(path).unwrap();
    let tx = conn.transaction().unwrap();
    for s in 0..SESSIONS {
        tx.execute(
            "INSERT INTO sessions (id, source, model, started_at, message_count) \
             VALUES (?1, 'cli', 'bench/model', ?2, ?3)",
            rusqlite::params![format!("s{s:03}"), 1000.0 + s as f64, (n / SESSIONS) as i64],
        )
        .unwrap();
    }
    {
        let mut insert = tx
            .prepare(
                "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?1, ?2, ?3, ?4)",
            )
            .unwrap();
        for i in 0..n {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            insert
                .execute(rusqlite::params![
                    format!("s{:03}", i % SESSIONS),
                    role,
                    text(i, vocab),
                    2000.0 + i as f64
                ])
                .unwrap();
        }
    }
    tx.commit().unwrap();
}

fn p50(mut f: impl FnMut()) -> Duration {
    f();
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[RUNS / 2]
}

fn appends_per_second(append: impl Fn(usize), count: usize) -> f64 {
    let t = Instant::now();
    for i in 0..count {
        append(i);
    }
    count as f64 / t.elapsed().as_secs_f64()
}

fn main() {
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.replace('_', "").parse().ok())
        .unwrap_or(100_000);
    let appends: usize = std::env::var("HERMES_BENCH_APPENDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000);
    let Some(url) = std::env::var("HERMES_BENCH_DATABASE_URL")
        .ok()
        .or_else(hermes_postgres::testing::database_url)
    else {
        println!("SKIPPED: set HERMES_BENCH_DATABASE_URL to a PostgreSQL database");
        return;
    };
    let vocab = vocabulary();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let t = Instant::now();
    build(&path, n, &vocab);
    println!("corpus: {n} messages in state.db in {:.1?}", t.elapsed());
    let scratch = Scratch::new(&url).unwrap();
    let t = Instant::now();
    let copied = hermes_postgres::copy_sqlite_to_postgres(&path, &scratch.store).unwrap();
    println!(
        "copied to PostgreSQL (schema {}) in {:.1?}: {} messages",
        scratch.schema,
        t.elapsed(),
        copied.messages
    );

    let extra = |i: usize| MessageExtra {
        timestamp: 1e9 + i as f64,
        ..MessageExtra::default()
    };
    let new = NewSession {
        id: "bench-appends".into(),
        source: "cli".into(),
        started_at: 1e9,
        ..NewSession::default()
    };
    let mut db = SessionDb::open(&path).unwrap();
    db.create_session(&new).unwrap();
    let db = std::cell::RefCell::new(db);
    let mut next = 0;
    let mut sqlite_rate = |durability| {
        db.borrow_mut().set_durability(durability).unwrap();
        let start = next;
        next += appends;
        appends_per_second(
            |i| {
                db.borrow_mut()
                    .append_message(
                        "bench-appends",
                        &Message::user(text(n + start + i, &vocab)),
                        &extra(start + i),
                    )
                    .unwrap();
            },
            appends,
        )
    };
    // state.db's default (WAL, synchronous=NORMAL: a commit survives the
    // process, not the OS) and fsync on every commit, as PostgreSQL does.
    let sqlite_normal = sqlite_rate(Durability::Normal);
    let sqlite_full = sqlite_rate(Durability::Full);
    db.into_inner().close().unwrap();
    scratch.store.create_session(&new).unwrap();
    let pg_rate = appends_per_second(
        |i| {
            scratch
                .store
                .append_message(
                    "bench-appends",
                    &Message::user(text(n + i, &vocab)),
                    &extra(i),
                )
                .unwrap();
        },
        appends,
    );
    println!(
        "appends, one transaction each: state.db {sqlite_normal:.0}/s (default, WAL without fsync per commit); \
         fsynced per commit: state.db {sqlite_full:.0}/s, PostgreSQL {pg_rate:.0}/s ({:.0} % of state.db)",
        100.0 * pg_rate / sqlite_full
    );

    let db = SessionDb::open(&path).unwrap();
    println!("search p50 of {RUNS} at {} messages:", n + 2 * appends);
    for (label, query) in [
        ("common word", "docker"),
        ("phrase", "\"docker compose\""),
        ("prefix", "dock*"),
        ("rare word", "zanzibar"),
        ("two words", "docker kalo"),
        ("substring", "anzib"),
        ("cjk", "部署容器"),
    ] {
        let q = SearchQuery::new(query);
        let hits = (
            db.search(&q).unwrap().len(),
            scratch.store.search(&q).unwrap().len(),
        );
        let sqlite = p50(|| {
            std::hint::black_box(db.search(&q).unwrap());
        });
        let pg = p50(|| {
            std::hint::black_box(scratch.store.search(&q).unwrap());
        });
        println!(
            "  {label:<12} {query:<18} state.db {:>7.2} ms  PostgreSQL {:>7.2} ms  (hits {} / {})",
            sqlite.as_secs_f64() * 1e3,
            pg.as_secs_f64() * 1e3,
            hits.0,
            hits.1
        );
    }
    if std::env::var_os("HERMES_BENCH_KEEP_SCHEMA").is_some() {
        println!("kept schema {} (HERMES_BENCH_KEEP_SCHEMA)", scratch.schema);
        std::mem::forget(scratch);
    }
}
