//! What observability costs a one-shot turn: `hermes chat -q … -Q` against
//! the mock (one tool call, two model calls) with OTLP tracing on (content
//! included, spans sent to a loopback receiver before exit) vs off, runs
//! interleaved so a noisy machine slows both alike.
//!
//! `cargo bench -p hermes-cli --bench observe_overhead [-- RUNS]` (goal:
//! ≤ 5 % more time with tracing on).

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

#[allow(dead_code)] // `kib` serves the load benches
#[path = "common/measure.rs"]
mod measure;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hermes_mock::{MockServer, Reply};
use measure::percentile;

const BIN: &str = env!("CARGO_BIN_EXE_hermes");

/// A loopback OTLP/HTTP sink: reads each request, answers 200, counts it.
fn receiver() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let seen = seen.clone();
            std::thread::spawn(move || {
                let mut writer = conn.try_clone().unwrap();
                let mut reader = BufReader::new(conn);
                let mut line = String::new();
                let mut length = 0usize;
                while reader.read_line(&mut line).unwrap_or(0) > 0 {
                    let header = line.trim_end().to_ascii_lowercase();
                    if let Some(v) = header.strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                    if header.is_empty() {
                        let mut body = vec![0; length];
                        if reader.read_exact(&mut body).is_err() {
                            return;
                        }
                        seen.fetch_add(1, Ordering::Relaxed);
                        let _ = writer.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n");
                        length = 0;
                    }
                    line.clear();
                }
            });
        }
    });
    (port, count)
}

fn home(mock: &MockServer, extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("config.yaml"),
        format!(
            "model:\n  provider: custom\n  base_url: {}\n  default: mock-model\n{extra}",
            mock.base_url()
        ),
    )
    .unwrap();
    dir
}

fn one_turn(mock: &MockServer, home: &Path) -> Duration {
    mock.push_all(vec![
        Reply::tool_call("c1", "terminal", r#"{"command":"true"}"#),
        Reply::text("ok"),
    ]);
    let started = Instant::now();
    let out = Command::new(BIN)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("HERMES_HOME", home)
        .current_dir(home)
        .args(["chat", "-q", "bench", "-Q"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    started.elapsed()
}

fn main() {
    let runs: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(40);
    let mock = MockServer::start();
    let (port, exports) = receiver();
    let off = home(&mock, "");
    let on = home(
        &mock,
        &format!(
            "observability:\n  include_content: true\n  otlp:\n    endpoint: http://127.0.0.1:{port}\n"
        ),
    );
    let (mut plain, mut traced) = (Vec::new(), Vec::new());
    for round in 0..=runs {
        let pair = if round % 2 == 0 {
            let a = one_turn(&mock, off.path());
            (a, one_turn(&mock, on.path()))
        } else {
            let b = one_turn(&mock, on.path());
            (one_turn(&mock, off.path()), b)
        };
        // Round 0 only warms the page cache.
        if round > 0 {
            plain.push(pair.0);
            traced.push(pair.1);
        }
    }
    plain.sort();
    traced.sort();
    let (p50, t50) = (percentile(&plain, 0.5), percentile(&traced, 0.5));
    println!(
        "one-shot turn, observability off  median {p50:>9.2?}  p95 {:>9.2?}",
        percentile(&plain, 0.95)
    );
    println!(
        "one-shot turn, OTLP tracing on    median {t50:>9.2?}  p95 {:>9.2?}  ({} exports received)",
        percentile(&traced, 0.95),
        exports.load(Ordering::Relaxed)
    );
    println!(
        "overhead {:+.1} %",
        (t50.as_secs_f64() / p50.as_secs_f64() - 1.0) * 100.0
    );
}
