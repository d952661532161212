#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]
//! `SessionDb` benchmark: append throughput (one transaction per message, as the agent
//! writes) and full-text search latency at a given database size. `reference_bench.py` (next
//! to this file) does the same work with the reference's `SessionDB` on the same base files.
//!
//! ```text
//! cargo bench -p hermes-state --bench session_db                  # 10k and 100k messages
//! cargo bench -p hermes-state --bench session_db -- 10000 1000000 # chosen sizes
//! cargo bench -p hermes-state --bench session_db -- --json 100000 # one JSON line per size
//! cargo bench -p hermes-state --bench session_db -- --floor 100000
//! ```
//!
//! For each size N a base database with N messages in 100 sessions is built once (bench-only
//! path: large transactions straight through rusqlite, the FTS triggers fill both indexes, then
//! one `'optimize'`) and kept as `$HERMES_BENCH_DIR/base-N.db` (default `/dev/shm/hermes-bench`,
//! tmpfs, so the numbers measure CPU rather than a disk's fsync). Each run copies the base,
//! appends `HERMES_BENCH_APPENDS` (default 3 000) messages through `SessionDb::append_message`,
//! one transaction each with the default durability and maintenance cadence, then opens the file
//! again and times searches.
//!
//! `--floor` does the appends with no application code: the same schema and pragmas
//! (`synchronous=FULL`), a cached `INSERT` and `UPDATE` per `BEGIN IMMEDIATE … COMMIT`, no
//! maintenance, then times the bare FTS5 query under the common-word search.
//! `--floor-normal` is the same with `synchronous=NORMAL`, `--floor-nofts` drops the FTS
//! triggers first (what the two search indexes cost). `--build N` only builds the base.
//!
//! Experiment knobs: `HERMES_BENCH_APPENDS` (default 3 000), `HERMES_BENCH_DIR`,
//! `HERMES_BENCH_ONLY=<query label>`, `HERMES_BENCH_SETUP_SQL` (run on the copy first),
//! `HERMES_BENCH_FLOOR_SQL` (replaces the floor's search query). Wall times are p50; CPU times
//! (this thread's, from `/proc/thread-self/schedstat`) are less disturbed by other processes.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hermes_protocol::Message;
use hermes_state::session_db::{MessageExtra, NewSession, SearchQuery, SearchSort, SessionDb};
use rusqlite::Connection;

const SESSIONS: usize = 100;
const SEARCH_RUNS: usize = 30;

/// xorshift64; `reference_bench.py` has the same generator so both write identical text.
struct Rng(u64);

impl Rng {
    fn seeded(i: u64) -> Self {
        // splitmix64 of the index, so any message can be generated on its own.
        let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        Rng(z | 1)
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
            (0..n)
                .map(|_| syll[rng.below(syll.len())])
                .collect::<String>()
        })
        .collect()
}

/// Message `i`: 8–40 words from a 3 000-word vocabulary with a skewed distribution (about
/// 60–300 characters). "docker" is in ~5% of messages ("docker compose" in half of those),
/// the CJK run "部署容器服务" in ~1%, "zanzibar" in one message in 10 007.
fn message_text(i: usize, vocab: &[String]) -> String {
    let mut rng = Rng::seeded(i as u64);
    let words = 8 + rng.below(33);
    let mut out: Vec<&str> = Vec::with_capacity(words + 3);
    for _ in 0..words {
        let a = rng.below(vocab.len());
        let b = rng.below(vocab.len());
        out.push(vocab[a.min(b)].as_str());
    }
    if rng.below(20) == 0 {
        let at = rng.below(out.len());
        if rng.below(2) == 0 {
            out.insert(at, "docker compose");
        } else {
            out.insert(at, "docker");
        }
    }
    if rng.below(100) == 0 {
        let at = rng.below(out.len());
        out.insert(at, "部署容器服务");
    }
    if i.is_multiple_of(10_007) {
        out.push("zanzibar");
    }
    out.join(" ")
}

fn role(i: usize) -> &'static str {
    if i.is_multiple_of(2) {
        "user"
    } else {
        "assistant"
    }
}

/// The searches timed, as (label, query). The reference answers all but `substring`
/// (a word-query miss it does not retry on the trigram index).
const QUERIES: [(&str, &str); 6] = [
    ("common", "docker"),
    ("rare", "zanzibar"),
    ("phrase", "\"docker compose\""),
    ("prefix", "dock*"),
    ("trigram", "容器服"),
    ("substring", "anzib"),
];

fn bench_dir() -> PathBuf {
    std::env::var_os("HERMES_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/dev/shm/hermes-bench"))
}

fn remove_db(path: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(p));
    }
}

/// Builds (once) the base database with `size` messages; returns its path.
fn base_db(size: usize, vocab: &[String]) -> PathBuf {
    let dir = bench_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("base-{size}.db"));
    if path.exists() {
        return path;
    }
    let tmp = dir.join(format!("base-{size}.db.building"));
    remove_db(&tmp);
    let started = Instant::now();
    let mut db = SessionDb::open(&tmp).unwrap();
    for s in 0..SESSIONS {
        db.create_session(&NewSession {
            id: format!("s{s}"),
            source: "cli".into(),
            started_at: s as f64,
            ..NewSession::default()
        })
        .unwrap();
    }
    db.close().unwrap();
    // Bench-only fill: big transactions, no per-row commit.
    let mut conn = Connection::open(&tmp).unwrap();
    conn.execute_batch("PRAGMA synchronous=OFF; PRAGMA cache_size=-1000000;")
        .unwrap();
    const BATCH: usize = 50_000;
    let mut i = 0;
    while i < size {
        let tx = conn.transaction().unwrap();
        {
            let mut insert = tx
                .prepare(
                    "INSERT INTO messages (session_id, role, content, timestamp, observed, active) \
                     VALUES (?1, ?2, ?3, ?4, 0, 1)",
                )
                .unwrap();
            for j in i..(i + BATCH).min(size) {
                insert
                    .execute(rusqlite::params![
                        format!("s{}", j % SESSIONS),
                        role(j),
                        message_text(j, vocab),
                        j as f64
                    ])
                    .unwrap();
            }
        }
        tx.commit().unwrap();
        i += BATCH;
    }
    conn.execute_batch(
        "UPDATE sessions SET message_count = \
             (SELECT COUNT(*) FROM messages WHERE messages.session_id = sessions.id); \
         INSERT INTO messages_fts(messages_fts) VALUES('optimize'); \
         INSERT INTO messages_fts_trigram(messages_fts_trigram) VALUES('optimize'); \
         PRAGMA wal_checkpoint(TRUNCATE);",
    )
    .unwrap();
    drop(conn);
    remove_db(&path);
    std::fs::rename(&tmp, &path).unwrap();
    remove_db(&tmp);
    eprintln!(
        "built {} ({size} messages) in {:.1} s",
        path.display(),
        started.elapsed().as_secs_f64()
    );
    path
}

/// A fresh copy of the base to run on. `HERMES_BENCH_SETUP_SQL` (experiments only) is run on
/// the copy first, e.g. an FTS5 configuration change.
fn run_copy(base: &Path, name: &str) -> PathBuf {
    let path = bench_dir().join(name);
    remove_db(&path);
    std::fs::copy(base, &path).unwrap();
    if let Ok(sql) = std::env::var("HERMES_BENCH_SETUP_SQL") {
        Connection::open(&path)
            .unwrap()
            .execute_batch(&sql)
            .unwrap();
    }
    path
}

fn appends() -> usize {
    std::env::var("HERMES_BENCH_APPENDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3_000)
}

/// CPU time of this thread (`/proc/thread-self/schedstat`, ns): unlike wall time it does not
/// grow when other processes take the CPU. Python's `time.thread_time()` reads the same clock.
fn cpu_now() -> Duration {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .map(Duration::from_nanos)
        .unwrap_or_default()
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize].as_secs_f64() * 1e3
}

struct Appends {
    per_s: f64,
    per_cpu_s: f64,
    p50_ms: f64,
    p99_ms: f64,
    max_ms: f64,
}

fn summarize(mut lat: Vec<Duration>, total: Duration, cpu: Duration) -> Appends {
    let n = lat.len();
    lat.sort();
    Appends {
        per_s: n as f64 / total.as_secs_f64(),
        per_cpu_s: n as f64 / cpu.as_secs_f64(),
        p50_ms: pct(&lat, 0.5),
        p99_ms: pct(&lat, 0.99),
        max_ms: pct(&lat, 1.0),
    }
}

fn append_ours(path: &Path, size: usize, vocab: &[String]) -> Appends {
    let texts: Vec<String> = (size..size + appends())
        .map(|i| message_text(i, vocab))
        .collect();
    let mut db = SessionDb::open(path).unwrap();
    let mut lat = Vec::with_capacity(texts.len());
    let cpu = cpu_now();
    let start = Instant::now();
    for (k, text) in texts.iter().enumerate() {
        let i = size + k;
        let t = Instant::now();
        let m = if role(i) == "user" {
            Message::user(text.as_str())
        } else {
            Message::assistant(text.as_str())
        };
        let extra = MessageExtra {
            timestamp: i as f64,
            ..MessageExtra::default()
        };
        db.append_message(&format!("s{}", i % SESSIONS), &m, &extra)
            .unwrap();
        lat.push(t.elapsed());
    }
    let total = start.elapsed();
    let cpu = cpu_now() - cpu;
    db.close().unwrap();
    summarize(lat, total, cpu)
}

#[derive(Clone, Copy, PartialEq)]
enum Floor {
    Full,
    Normal,
    NoFts,
}

/// The same inserts with no application code: cached statements in a bare loop.
fn append_floor(path: &Path, size: usize, vocab: &[String], kind: Floor) -> Appends {
    let texts: Vec<String> = (size..size + appends())
        .map(|i| message_text(i, vocab))
        .collect();
    let conn = Connection::open(path).unwrap();
    let sync = if kind == Floor::Normal {
        "NORMAL"
    } else {
        "FULL"
    };
    conn.execute_batch(&format!(
        "PRAGMA journal_mode=WAL; PRAGMA synchronous={sync}; PRAGMA foreign_keys=ON;"
    ))
    .unwrap();
    if kind == Floor::NoFts {
        conn.execute_batch(
            "DROP TRIGGER messages_fts_insert; DROP TRIGGER messages_fts_trigram_insert;",
        )
        .unwrap();
    }
    let mut lat = Vec::with_capacity(texts.len());
    let cpu = cpu_now();
    let start = Instant::now();
    for (k, text) in texts.iter().enumerate() {
        let i = size + k;
        let t = Instant::now();
        let sid = format!("s{}", i % SESSIONS);
        conn.execute_batch("BEGIN IMMEDIATE").unwrap();
        conn.prepare_cached(
            "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, \
             tool_name, effect_disposition, timestamp, token_count, finish_reason, \
             reasoning, reasoning_content, reasoning_details, codex_reasoning_items, \
             codex_message_items, platform_message_id, observed, active, api_content) \
             VALUES (?1, ?2, ?3, NULL, NULL, NULL, NULL, ?4, NULL, NULL, NULL, NULL, NULL, \
             NULL, NULL, NULL, 0, 1, NULL)",
        )
        .unwrap()
        .execute(rusqlite::params![sid, role(i), text, i as f64])
        .unwrap();
        conn.prepare_cached("UPDATE sessions SET message_count = message_count + 1 WHERE id = ?1")
            .unwrap()
            .execute([&sid])
            .unwrap();
        conn.execute_batch("COMMIT").unwrap();
        lat.push(t.elapsed());
    }
    let total = start.elapsed();
    summarize(lat, total, cpu_now() - cpu)
}

/// The bare FTS5 query under the common-word search, with no join, filter, snippet or
/// context: what SQLite itself needs to rank the matches and return the top 20.
/// `HERMES_BENCH_FLOOR_SQL` replaces the query (experiments).
fn search_floor(path: &Path) -> Vec<(&'static str, f64, f64, usize)> {
    let conn = Connection::open(path).unwrap();
    conn.pragma_update(None, "cache_size", -32768).unwrap();
    let sql = std::env::var("HERMES_BENCH_FLOOR_SQL").unwrap_or_else(|_| {
        "SELECT rowid FROM messages_fts WHERE messages_fts MATCH 'docker' \
         ORDER BY rank LIMIT 20"
            .to_owned()
    });
    let mut stmt = conn.prepare(&sql).unwrap();
    let mut run = || stmt.query_map([], |r| r.get::<_, i64>(0)).unwrap().count();
    let hits = run();
    let (wall, cpu) = time_search(|| {
        std::hint::black_box(run());
    });
    vec![("common", wall, cpu, hits)]
}

/// Times `f` `SEARCH_RUNS` times: (wall p50 ms, mean CPU ms).
fn time_search(mut f: impl FnMut()) -> (f64, f64) {
    let cpu = cpu_now();
    let mut times: Vec<Duration> = (0..SEARCH_RUNS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    let cpu = (cpu_now() - cpu).as_secs_f64() * 1e3 / SEARCH_RUNS as f64;
    times.sort();
    (pct(&times, 0.5), cpu)
}

/// (label, wall p50 ms, mean CPU ms, hits) per query, on a freshly opened connection (as a
/// new CLI process would).
fn searches(path: &Path) -> Vec<(&'static str, f64, f64, usize)> {
    let db = SessionDb::open(path).unwrap();
    // HERMES_BENCH_ONLY=label times one query only (for profiling).
    let only = std::env::var("HERMES_BENCH_ONLY").ok();
    let wanted = |label: &str| only.as_deref().is_none_or(|o| o == label);
    QUERIES
        .iter()
        .filter(|(label, _)| wanted(label))
        .map(|(label, query)| {
            let q = SearchQuery::new(*query);
            let hits = db.search(&q).unwrap().len();
            let (wall, cpu) = time_search(|| {
                std::hint::black_box(db.search(&q).unwrap());
            });
            (*label, wall, cpu, hits)
        })
        .chain(wanted("common_newest").then(|| {
            let q = SearchQuery {
                sort: SearchSort::Newest,
                ..SearchQuery::new("docker")
            };
            let hits = db.search(&q).unwrap().len();
            let (wall, cpu) = time_search(|| {
                std::hint::black_box(db.search(&q).unwrap());
            });
            ("common_newest", wall, cpu, hits)
        }))
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let json = args.iter().any(|a| a == "--json");
    let floor = if args.iter().any(|a| a == "--floor") {
        Some(Floor::Full)
    } else if args.iter().any(|a| a == "--floor-normal") {
        Some(Floor::Normal)
    } else if args.iter().any(|a| a == "--floor-nofts") {
        Some(Floor::NoFts)
    } else {
        None
    };
    let build_only = args.iter().any(|a| a == "--build");
    let mut sizes: Vec<usize> = args
        .iter()
        .filter_map(|a| a.replace('_', "").parse().ok())
        .collect();
    if sizes.is_empty() {
        sizes = vec![10_000, 100_000];
    }
    let vocab = vocabulary();
    let impl_name = match floor {
        None => "ours",
        Some(Floor::Full) => "floor",
        Some(Floor::Normal) => "floor_normal",
        Some(Floor::NoFts) => "floor_nofts",
    };
    if !json && !build_only {
        println!(
            "SessionDb ({impl_name}): {} appends (one transaction each) on a copy of a base of N \
             messages, then search p50 on a fresh connection; files under {}",
            appends(),
            bench_dir().display()
        );
    }
    for size in sizes {
        let base = base_db(size, &vocab);
        if build_only {
            continue;
        }
        let path = run_copy(&base, &format!("run-{impl_name}-{}.db", std::process::id()));
        let a = match floor {
            None => append_ours(&path, size, &vocab),
            Some(kind) => append_floor(&path, size, &vocab, kind),
        };
        let s = if floor.is_none() {
            searches(&path)
        } else {
            search_floor(&path)
        };
        remove_db(&path);
        if json {
            let search: Vec<String> = s
                .iter()
                .map(|(l, ms, cpu, hits)| {
                    format!(
                        "\"{l}\": {{\"p50_ms\": {ms:.4}, \"cpu_ms\": {cpu:.4}, \"hits\": {hits}}}"
                    )
                })
                .collect();
            println!(
                "{{\"impl\": \"{impl_name}\", \"size\": {size}, \"appends\": {}, \
                 \"appends_per_s\": {:.1}, \"appends_per_cpu_s\": {:.1}, \"append_p50_ms\": {:.4}, \"append_p99_ms\": {:.4}, \
                 \"append_max_ms\": {:.3}, \"search\": {{{}}}}}",
                appends(),
                a.per_s,
                a.per_cpu_s,
                a.p50_ms,
                a.p99_ms,
                a.max_ms,
                search.join(", ")
            );
        } else {
            println!(
                "N={size}: {:.0} appends/s wall, {:.0} per CPU-second (p50 {:.3} ms, p99 {:.3} ms, \
                 max {:.1} ms)",
                a.per_s, a.per_cpu_s, a.p50_ms, a.p99_ms, a.max_ms
            );
            for (label, ms, cpu, hits) in s {
                println!("  search {label:<14} p50 {ms:>8.3} ms  cpu {cpu:>8.3} ms  ({hits} hits)");
            }
        }
    }
}
