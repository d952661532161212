//! Start-up and tool round-trip benchmark of the real binary.
//!
//! `cargo bench -p hermes-cli --bench startup` prints, for the release binary:
//! - `hermes --version`: median and p95 wall time, and peak RSS;
//! - one-shot chat against the mock provider, plain answer vs. one `terminal`
//!   tool round-trip; the difference is the overhead of a tool round-trip;
//! - the binary's size.
//!
//! `HERMES_BENCH_BINARY=target/release/hermes` measures that binary instead
//! of the bench's own build (whose dependency features, unified with the
//! benches' dev-dependencies, give other symbol names than the shipped
//! `cargo build --release -p hermes-cli`, so its start-up layout is off).
//!
//! With `HERMES_BENCH_BASELINE=/path/to/an/older/hermes` every scenario runs
//! both binaries interleaved (A, B, A, B …) in one process, so a noisy machine
//! slows both alike and the ratio is what to read.
//!
//! Peak RSS is per binary: each is measured in a helper process of its own
//! (this bench re-run with `HERMES_BENCH_RSS_CHILD=1`), whose
//! `RUSAGE_CHILDREN` maximum then belongs to that binary alone.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

#[allow(dead_code)] // `kib` serves the load benches
#[path = "common/measure.rs"]
mod measure;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hermes_mock::{MockServer, Reply};
use measure::percentile;

const BIN: &str = env!("CARGO_BIN_EXE_hermes");
const RSS_CHILD: &str = "HERMES_BENCH_RSS_CHILD";
const RSS_RUNS: usize = 3;

/// One binary under measure.
struct Subject {
    label: &'static str,
    path: PathBuf,
}

/// What each scenario runs and the replies one run consumes.
struct Scenario {
    name: &'static str,
    args: &'static [&'static str],
    replies: fn() -> Vec<Reply>,
    runs: usize,
}

fn children_max_rss_kib() -> i64 {
    nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
        .map(|u| u.max_rss())
        .unwrap_or(-1)
}

/// The helper: run argv[1..] `RSS_RUNS` times, print the peak RSS in KiB.
fn rss_child() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    for _ in 0..RSS_RUNS {
        let status = Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "{argv:?} failed");
    }
    println!("{}", children_max_rss_kib());
}

fn command(bin: &Path, home: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(bin);
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("HERMES_HOME", home)
        .current_dir(home)
        .args(args)
        .stdin(Stdio::null());
    cmd
}

fn run_once(bin: &Path, home: &Path, args: &[&str]) {
    let out = command(bin, home, args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn peak_rss_kib(bin: &Path, home: &Path, args: &[&str]) -> i64 {
    let me = std::env::current_exe().unwrap();
    let mut helper = command(&me, home, &[]);
    helper.env(RSS_CHILD, "1").arg(bin).args(args);
    let out = helper.output().unwrap();
    assert!(out.status.success(), "rss helper failed");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(-1)
}

fn measure(subjects: &[Subject], home: &Path, mock: &MockServer, scenario: &Scenario) {
    let mut samples: Vec<Vec<Duration>> = subjects.iter().map(|_| Vec::new()).collect();
    for round in 0..=scenario.runs {
        // Alternate who goes first, so neither always runs on a cache the
        // other just warmed.
        let mut order: Vec<_> = subjects.iter().zip(samples.iter_mut()).collect();
        if round % 2 == 1 {
            order.reverse();
        }
        for (subject, times) in order {
            mock.push_all((scenario.replies)());
            let start = Instant::now();
            run_once(&subject.path, home, scenario.args);
            // Round 0 only warms the page cache.
            if round > 0 {
                times.push(start.elapsed());
            }
        }
    }
    let mut medians = Vec::new();
    for (subject, times) in subjects.iter().zip(samples.iter_mut()) {
        times.sort();
        for _ in 0..RSS_RUNS {
            mock.push_all((scenario.replies)());
        }
        let rss = peak_rss_kib(&subject.path, home, scenario.args);
        let median = percentile(times, 0.5);
        medians.push(median);
        println!(
            "{:<28} {:<9} median {median:>10.2?}  p95 {:>10.2?}  peak RSS {rss} KiB",
            scenario.name,
            subject.label,
            percentile(times, 0.95)
        );
    }
    if let [this, baseline] = medians[..] {
        println!(
            "{:<28} this/baseline time {:.3}",
            scenario.name,
            this.as_secs_f64() / baseline.as_secs_f64()
        );
    }
}

/// The binaries, copied side by side into `dir`: where a binary lies changes
/// its start-up (the same file ran 10 % slower from the build tree than from
/// /tmp here), so both must start from the same directory.
fn subjects(dir: &Path) -> Vec<Subject> {
    // The bench's own build unifies dev-dependency features, so its symbols
    // differ from `cargo build --release -p hermes-cli`'s (the shipped
    // binary, whose start-up layout is tuned): that one can stand in here.
    let this =
        std::env::var_os("HERMES_BENCH_BINARY").map_or_else(|| PathBuf::from(BIN), PathBuf::from);
    let mut sources = vec![("this", this)];
    if let Some(path) = std::env::var_os("HERMES_BENCH_BASELINE") {
        sources.push(("baseline", PathBuf::from(path)));
    }
    sources
        .into_iter()
        .map(|(label, source)| {
            let path = dir.join(label);
            std::fs::copy(&source, &path).unwrap();
            println!(
                "binary {label:<9} {:>6.1} MiB  {}",
                std::fs::metadata(&path).unwrap().len() as f64 / (1024.0 * 1024.0),
                source.display()
            );
            Subject { label, path }
        })
        .collect()
}

fn main() {
    if std::env::var_os(RSS_CHILD).is_some() {
        return rss_child();
    }
    let bins = tempfile::tempdir().unwrap();
    let subjects = subjects(bins.path());
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
    let scenarios = [
        Scenario {
            name: "hermes --version",
            args: &["--version"],
            replies: Vec::new,
            runs: 100,
        },
        Scenario {
            name: "oneshot plain answer (mock)",
            args: &["chat", "-q", "bench", "-Q"],
            replies: || vec![Reply::text("ok")],
            runs: 30,
        },
        Scenario {
            name: "oneshot one terminal call",
            args: &["chat", "-q", "bench", "-Q"],
            replies: || {
                vec![
                    Reply::tool_call("c1", "terminal", r#"{"command":"true"}"#),
                    Reply::text("ok"),
                ]
            },
            runs: 30,
        },
    ];
    for scenario in &scenarios {
        measure(&subjects, home.path(), &mock, scenario);
    }
}
