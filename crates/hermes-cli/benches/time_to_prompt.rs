//! Time from launching `hermes` (interactive, in a pseudo-terminal) until its
//! prompt is drawn (goal: under 50 ms), and a REPL turn's latency: from the
//! answer's last word on screen until the prompt is back (the reader of lines
//! typed ahead must let go at once, not at its next poll).
//!
//! `cargo bench -p hermes-cli --bench time_to_prompt` runs the binary under
//! util-linux `script`, which gives it a terminal while we read its output
//! through a pipe, and stops the clock at the first prompt character. Skipped
//! with a message where `script` is missing.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hermes_mock::MockServer;

const BIN: &str = env!("CARGO_BIN_EXE_hermes");
const RUNS: usize = 30;

/// `hermes chat` in a pseudo-terminal (util-linux `script`), its output piped to us.
fn spawn_repl(home: &std::path::Path) -> std::process::Child {
    Command::new("script")
        .args(["-qfec", &format!("'{BIN}' chat"), "/dev/null"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("HERMES_HOME", home)
        .env("TERM", "xterm-256color")
        .current_dir(home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn one_run(home: &std::path::Path) -> Duration {
    let started = Instant::now();
    let mut child = spawn_repl(home);
    let mut out = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let prompt = "❯".as_bytes();
    let elapsed = loop {
        let n = out.read(&mut buf).unwrap();
        assert!(
            n > 0,
            "hermes exited before its prompt: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
        if seen.windows(prompt.len()).any(|w| w == prompt) {
            break started.elapsed();
        }
    };
    // Ctrl+D at the empty prompt ends the session.
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin.write_all(b"\x04");
    drop(stdin);
    let _ = std::io::copy(&mut out, &mut std::io::sink());
    let _ = child.wait();
    elapsed
}

fn main() {
    if Command::new("script").arg("-V").output().is_err() {
        println!("time_to_prompt: SKIPPED (util-linux `script` is not installed)");
        return;
    }
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
    one_run(home.path()); // warm the page cache
    let mut samples: Vec<Duration> = (0..RUNS).map(|_| one_run(home.path())).collect();
    samples.sort();
    let median = samples[RUNS / 2];
    let p95 = samples[(RUNS - 1) * 95 / 100];
    println!(
        "time to prompt  hermes chat (pty)  median {median:>10.2?}  p95 {p95:>10.2?}  goal < 50 ms"
    );
    mock.respond_with(|_| Some(hermes_mock::Reply::text("short answer END-OF-ANSWER")));
    let mut back = turn_latencies(home.path(), RUNS);
    back.sort();
    println!(
        "REPL turn       answer → prompt    median {:>10.2?}  p95 {:>10.2?}  ({RUNS} turns)",
        back[RUNS / 2],
        back[(RUNS - 1) * 95 / 100]
    );
}

/// For `turns` questions in one REPL: the time from the answer's end on
/// screen to the next prompt.
fn turn_latencies(home: &std::path::Path, turns: usize) -> Vec<Duration> {
    let mut child = spawn_repl(home);
    let mut out = child.stdout.take().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let mut wait_for = |needle: &[u8], from: usize, seen: &mut Vec<u8>| -> (usize, Instant) {
        loop {
            if let Some(at) = seen[from..].windows(needle.len()).position(|w| w == needle) {
                return (from + at + needle.len(), Instant::now());
            }
            let n = out.read(&mut buf).unwrap();
            assert!(n > 0, "hermes exited: {}", String::from_utf8_lossy(seen));
            seen.extend_from_slice(&buf[..n]);
        }
    };
    let prompt = "❯".as_bytes();
    let (mut at, _) = wait_for(prompt, 0, &mut seen);
    let mut latencies = Vec::with_capacity(turns);
    for i in 0..turns {
        stdin
            .write_all(format!("question {i}\r").as_bytes())
            .unwrap();
        stdin.flush().unwrap();
        let (after_answer, answered) = wait_for(b"END-OF-ANSWER", at, &mut seen);
        let (after_prompt, prompted) = wait_for(prompt, after_answer, &mut seen);
        latencies.push(prompted - answered);
        at = after_prompt;
    }
    let _ = stdin.write_all(b"\x04");
    drop(stdin);
    let _ = std::io::copy(&mut out, &mut std::io::sink());
    let _ = child.wait();
    latencies
}
