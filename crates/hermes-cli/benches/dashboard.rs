//! `hermes dashboard`: start → first page served, the page's weight, and the
//! sessions page with 10 000 sessions in state.db.
//!
//! `cargo bench -p hermes-cli --bench dashboard` prints, for the release binary:
//! - spawn → `GET /` answered (median/p95 over 20 starts);
//! - bytes of the HTML, script and style sheet (raw and the total);
//! - `GET /api/sessions?limit=50` (the page's first request) and a search,
//!   median/p95, with 10 000 sessions;
//! - with `HERMES_PLAYWRIGHT` set (a node_modules with playwright-core):
//!   Chromium loading `#/sessions` until its 50 rows are on screen.
//!
//! Goals (issue 30): ≤ 50 ms to serve, ≤ 150 KB per page, sessions page ≤ 200 ms.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_hermes");
const SESSIONS: usize = 10_000;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut raw = String::new();
    stream.read_to_string(&mut raw).ok()?;
    let status = raw.split_whitespace().nth(1)?.parse().ok()?;
    let body = raw.split_once("\r\n\r\n").map(|(_, b)| b.to_owned())?;
    Some((status, body))
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn(home: &std::path::Path, port: u16) -> Running {
    Running(
        Command::new(BIN)
            .args(["dashboard", "--port", &port.to_string()])
            .env("HERMES_HOME", home)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

/// state.db with `SESSIONS` sessions of two messages each, in one transaction.
fn seed(home: &std::path::Path) {
    drop(hermes_state::SessionDb::open(&home.join("state.db")).unwrap());
    let mut db = rusqlite::Connection::open(home.join("state.db")).unwrap();
    let tx = db.transaction().unwrap();
    let start = 1_790_000_000.0_f64;
    for n in 0..SESSIONS {
        let id = format!("20261101_000000_{n:06x}");
        let at = start + n as f64 * 60.0;
        tx.execute(
            "INSERT INTO sessions (id, source, model, started_at, message_count, input_tokens, \
             output_tokens, estimated_cost_usd, title) VALUES (?1, 'cli', 'bench-model', ?2, 2, \
             ?3, 40, 0.001, ?4)",
            rusqlite::params![id, at, 1000 + n as i64, format!("Session number {n}")],
        )
        .unwrap();
        for (role, text) in [
            ("user", format!("question {n} about the kubernetes deploy")),
            ("assistant", format!("answer {n}: the rollout finished")),
        ] {
            tx.execute(
                "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?1, ?2, ?3, ?4)",
                rusqlite::params![id, role, text, at + 1.0],
            )
            .unwrap();
        }
    }
    tx.commit().unwrap();
}

fn timed(n: usize, mut run: impl FnMut()) -> (Duration, Duration) {
    run();
    let mut samples: Vec<Duration> = (0..n)
        .map(|_| {
            let t = Instant::now();
            run();
            t.elapsed()
        })
        .collect();
    samples.sort();
    (percentile(&samples, 0.5), percentile(&samples, 0.95))
}

fn main() {
    let home = tempfile::tempdir().unwrap();
    seed(home.path());

    let (median, p95) = timed(20, || {
        let port = free_port();
        let _running = spawn(home.path(), port);
        let t = Instant::now();
        while get(port, "/").is_none_or(|(s, _)| s != 200) {
            assert!(t.elapsed() < Duration::from_secs(10), "never served");
            std::thread::sleep(Duration::from_micros(500));
        }
    });
    println!("dashboard start → first page   median {median:>9.2?}  p95 {p95:>9.2?}");

    let port = free_port();
    let _running = spawn(home.path(), port);
    while get(port, "/").is_none() {
        std::thread::sleep(Duration::from_millis(5));
    }
    let weight: Vec<(String, usize)> = ["/", "/assets/app.js", "/assets/app.css"]
        .iter()
        .map(|p| (p.to_string(), get(port, p).unwrap().1.len()))
        .collect();
    let total: usize = weight.iter().map(|(_, n)| n).sum();
    for (path, bytes) in &weight {
        println!("page weight {path:<18} {bytes:>8} B");
    }
    println!(
        "page weight total              {total:>8} B ({:.1} KB)",
        total as f64 / 1024.0
    );

    let (median, p95) = timed(50, || {
        let (status, _) = get(port, "/api/sessions?limit=50").unwrap();
        assert_eq!(status, 200);
    });
    println!("sessions page API, {SESSIONS} sessions  median {median:>9.2?}  p95 {p95:>9.2?}");
    let (median, p95) = timed(50, || {
        let (status, _) = get(port, "/api/sessions/search?q=kubernetes").unwrap();
        assert_eq!(status, 200);
    });
    println!("search, {SESSIONS} sessions            median {median:>9.2?}  p95 {p95:>9.2?}");

    if let Some(modules) = std::env::var_os("HERMES_PLAYWRIGHT") {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/dashboard_render.mjs");
        let out = Command::new("node")
            .arg(script)
            .arg(format!("http://127.0.0.1:{port}/"))
            .env("HERMES_PLAYWRIGHT", modules)
            .output()
            .unwrap();
        print!("{}", String::from_utf8_lossy(&out.stdout));
        if !out.status.success() {
            print!("{}", String::from_utf8_lossy(&out.stderr));
        }
    } else {
        println!("(browser render: set HERMES_PLAYWRIGHT to time Chromium rendering #/sessions)");
    }
}
