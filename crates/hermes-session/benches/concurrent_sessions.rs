//! Many concurrent conversations in one process against the mock, each making
//! one tool call (`write_file`) and answering: wall time, peak RSS and the
//! runtime's per-turn overhead.
//!
//! `cargo bench -p hermes-session --bench concurrent_sessions [-- N]` (default 500).
//! The mock runs in a child process (this binary with `--mock`), so the peak
//! RSS reported is the runtime's own.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use hermes_mock::{MockServer, RecordedRequest, Reply};
use hermes_protocol::{Event, Op};
use hermes_session::{SessionManager, SessionSpec, Setup};
use hermes_state::Env;

fn main() {
    if std::env::args().any(|a| a == "--mock") {
        return serve_mock();
    }
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(500);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run(n));
}

/// The child process: serves the scripted mock until stdin closes, printing
/// its base URL first and the number of model calls it answered last.
fn serve_mock() {
    let mock = MockServer::start();
    mock.forget_bodies();
    mock.respond_with(script);
    println!("{}", mock.base_url());
    let mut sink = String::new();
    while std::io::stdin().read_line(&mut sink).unwrap_or(0) > 0 {}
    println!("{}", mock.requests().iter().filter(|r| r.is_chat()).count());
}

struct Bench {
    _dir: tempfile::TempDir,
    work: PathBuf,
    mock: std::process::Child,
    manager: SessionManager,
}

fn bench() -> Bench {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let mut mock = std::process::Command::new(std::env::current_exe().unwrap())
        .arg("--mock")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut base_url = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(mock.stdout.as_mut().unwrap()),
        &mut base_url,
    )
    .unwrap();
    std::fs::write(
        home.join("config.yaml"),
        format!(
            "model:\n  provider: custom\n  base_url: {}\n  default: mock-model\n",
            base_url.trim()
        ),
    )
    .unwrap();
    let env = Env::from_pairs([
        ("HERMES_HOME".to_owned(), home.display().to_string()),
        ("HOME".to_owned(), dir.path().display().to_string()),
    ]);
    let manager = SessionManager::new(Setup::load(env, false).unwrap());
    Bench {
        _dir: dir,
        work,
        mock,
        manager,
    }
}

/// First call: write `out/<marker>.txt`; after the tool result: answer.
fn script(req: &RecordedRequest) -> Option<Reply> {
    let messages = req.body["messages"].as_array()?;
    let marker = messages
        .iter()
        .find(|m| m["role"] == "user")?
        .get("content")?
        .as_str()?
        .to_owned();
    let last = messages.last()?["role"].as_str()?.to_owned();
    Some(if last == "user" {
        Reply::tool_call(
            "c1",
            "write_file",
            &serde_json::json!({"path": format!("out/{marker}.txt"), "content": marker})
                .to_string(),
        )
    } else {
        Reply::text(format!("done {marker}"))
    })
}

/// One conversation: start, one turn with a tool call, shut down. Returns the
/// turn's wall time.
async fn conversation(manager: SessionManager, work: PathBuf, marker: String) -> Duration {
    let mut conv = manager
        .start(SessionSpec::new("bench", work))
        .await
        .unwrap();
    let started = Instant::now();
    let last = conv
        .request(
            Op::UserInput {
                text: marker.clone(),
            },
            |_| {},
        )
        .await
        .unwrap();
    let took = started.elapsed();
    match last {
        Event::TurnComplete { final_text, .. } => assert_eq!(final_text, format!("done {marker}")),
        other => panic!("turn failed: {other:?}"),
    }
    conv.shutdown("bench").await.unwrap();
    took
}

async fn run(n: usize) {
    let mut b = bench();
    let before = peak_rss_kib();

    // Sequential turns: the runtime's own cost per turn, two model calls and a tool each.
    let sequential = 50;
    let started = Instant::now();
    let mut turns = Vec::with_capacity(sequential);
    for i in 0..sequential {
        turns.push(conversation(b.manager.clone(), b.work.clone(), format!("seq-{i}")).await);
    }
    let seq_wall = started.elapsed();
    turns.sort();
    let median = turns[turns.len() / 2];

    // Held open at once, idle: what a session costs while it waits.
    let idle_before = current_rss_kib();
    let mut open = Vec::with_capacity(n);
    for _ in 0..n {
        open.push(
            b.manager
                .start(SessionSpec::new("bench", b.work.clone()))
                .await
                .unwrap(),
        );
    }
    let idle_after = current_rss_kib();
    for conv in open {
        conv.shutdown("bench").await.unwrap();
    }

    // All at once.
    let started = Instant::now();
    let runs = (0..n).map(|i| {
        tokio::spawn(conversation(
            b.manager.clone(),
            b.work.clone(),
            format!("task-{i}"),
        ))
    });
    let mut latencies: Vec<Duration> = join_all(runs)
        .await
        .into_iter()
        .map(|r| r.unwrap())
        .collect();
    let wall = started.elapsed();
    latencies.sort();
    let after = peak_rss_kib();
    let written = std::fs::read_dir(b.work.join("out")).unwrap().count();
    assert_eq!(written, n + sequential);
    drop(b.mock.stdin.take());
    let output = b.mock.wait_with_output().unwrap();
    let answered: usize = String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .unwrap();
    assert_eq!(answered, 2 * (n + sequential));

    println!("concurrent conversations (one tool call each), mock on loopback, 2 worker threads");
    println!(
        "  sequential: {sequential} conversations in {:.0} ms; median turn {:.2} ms (2 model calls + write_file + state.db)",
        ms(seq_wall),
        ms(median)
    );
    println!(
        "  concurrent: {n} conversations in {:.0} ms ({:.0} turns/s)",
        ms(wall),
        n as f64 / wall.as_secs_f64()
    );
    println!(
        "  turn latency under load: median {:.0} ms, p95 {:.0} ms, max {:.0} ms",
        ms(latencies[n / 2]),
        ms(latencies[n * 95 / 100]),
        ms(latencies[n - 1])
    );
    println!(
        "  {n} idle sessions held open: {:.1} KiB each",
        idle_after.saturating_sub(idle_before) as f64 / n as f64
    );
    println!(
        "  peak RSS: {:.1} MiB before, {:.1} MiB after ({:.1} KiB per concurrent conversation)",
        before as f64 / 1024.0,
        after as f64 / 1024.0,
        (after.saturating_sub(before)) as f64 / n as f64
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Peak resident memory (VmHWM), KiB; 0 where there is no /proc.
fn peak_rss_kib() -> u64 {
    proc_status("VmHWM:")
}

/// Resident memory now (VmRSS), KiB.
fn current_rss_kib() -> u64 {
    proc_status("VmRSS:")
}

fn proc_status(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}
