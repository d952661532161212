//! The gate's time per command on the spelling fuzzer's corpus: every base
//! command (destructive, dangerous, safe) respelled and wrapped 300 ways,
//! classified as the terminal tool does (`classify_on`, with a host to read
//! scripts from). Prints p50/p99/max. Goal: p99 ≤ 1 ms.
//!
//! `cargo bench -p hermes-tools --bench gate`

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use hermes_tools::approval::{Host, classify_on};

#[path = "../src/approval/spellings.rs"]
#[allow(unreachable_pub)]
mod spellings;

use spellings::{BASES, Rng, mutate};

fn main() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut corpus: Vec<String> = Vec::new();
    for (argv, _) in BASES {
        corpus.push(argv.join(" "));
        for _ in 0..300 {
            corpus.push(mutate(argv, &mut rng).0);
        }
    }
    let dir = std::env::temp_dir();
    let host = Host::new(
        Some("/home/alice".into()),
        Some(dir),
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()).collect(),
    );
    // Warm the lazily compiled tables.
    for cmd in corpus.iter().take(50) {
        classify_on(cmd, &host);
    }
    let mut times: Vec<Duration> = Vec::with_capacity(corpus.len() * 3);
    for _ in 0..3 {
        for cmd in &corpus {
            let start = Instant::now();
            std::hint::black_box(classify_on(std::hint::black_box(cmd), &host));
            times.push(start.elapsed());
        }
    }
    times.sort();
    let at = |q: f64| times[((times.len() as f64 - 1.0) * q) as usize];
    println!(
        "gate: {} commands x3: p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs",
        corpus.len(),
        at(0.50).as_secs_f64() * 1e6,
        at(0.99).as_secs_f64() * 1e6,
        times.last().unwrap().as_secs_f64() * 1e6,
    );
}
