//! Start-up and tool round-trip benchmark of the real binary.
//!
//! `cargo bench -p hermes-cli --bench startup` prints, for the release binary:
//! - `hermes --version`: median and p95 wall time over many runs, and peak RSS;
//! - one-shot chat against the mock provider, plain answer vs. one `terminal`
//!   tool round-trip; the difference is the overhead of a tool round-trip.
//!
//! Targets (see the README): start-up under 10 ms and 10 MB RSS.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hermes_mock::{MockServer, Reply};

const BIN: &str = env!("CARGO_BIN_EXE_hermes");

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx]
}

fn time_runs(n: usize, mut run: impl FnMut()) -> (Duration, Duration) {
    run(); // warm the page cache
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

fn children_max_rss_kib() -> i64 {
    nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
        .map(|u| u.max_rss())
        .unwrap_or(-1)
}

fn main() {
    let (median, p95) = time_runs(100, || {
        let status = Command::new(BIN)
            .arg("--version")
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
    });
    println!(
        "startup  hermes --version        median {median:>10.2?}  p95 {p95:>10.2?}  peak RSS {} KiB",
        children_max_rss_kib()
    );

    let home = tempfile::tempdir().unwrap();
    let mock = MockServer::start();
    std::fs::write(
        home.path().join("config.yaml"),
        format!(
            "model:\n  provider: custom\n  base_url: {}\n  default: mock-model\n",
            mock.base_url()
        ),
    )
    .unwrap();
    let chat = |mock: &MockServer, replies: Vec<Reply>| {
        mock.push_all(replies);
        let out = Command::new(BIN)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", home.path())
            .env("HERMES_HOME", home.path())
            .current_dir(home.path())
            .args(["chat", "-q", "bench", "-Q"])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let (plain, plain95) = time_runs(30, || chat(&mock, vec![Reply::text("ok")]));
    println!("oneshot  plain answer (mock)     median {plain:>10.2?}  p95 {plain95:>10.2?}");
    let (tool, tool95) = time_runs(30, || {
        chat(
            &mock,
            vec![
                Reply::tool_call("c1", "terminal", r#"{"command":"true"}"#),
                Reply::text("ok"),
            ],
        )
    });
    println!("oneshot  one terminal round-trip median {tool:>10.2?}  p95 {tool95:>10.2?}");
    println!(
        "overhead of one tool round-trip: {:.2?} (includes spawning bash)",
        tool.saturating_sub(plain)
    );
    println!(
        "peak RSS of any child so far: {} KiB",
        children_max_rss_kib()
    );
}
