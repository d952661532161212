//! Compression pre-pass over a long session: `cargo bench -p hermes-agent --bench compress`.
//!
//! Builds a 2 000-message history shaped like a real coding session (user asks, tool
//! calls with JSON arguments, large tool results with repeats, answers) and times the
//! phases that run without a model: pruning + boundary search (`plan`), the summarizer
//! request (`summary_request`) and assembly with a ready summary (`assemble`). Prints
//! the median and p95 of each over many runs.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use hermes_agent::compress::{CompressorConfig, ContextCompressor};
use hermes_protocol::{Message, ToolCall};

fn history(n: usize) -> Vec<Message> {
    let mut v = vec![Message::system("You are Hermes.".repeat(40))];
    let mut i = 0;
    while v.len() < n {
        v.push(Message::user(format!(
            "step {i}: fix the failing test in module {}",
            i % 17
        )));
        let mut call = Message::assistant("");
        call.content = None;
        let (name, args) = match i % 3 {
            0 => ("read_file", format!(r#"{{"path":"src/mod{}.rs"}}"#, i % 23)),
            1 => (
                "terminal",
                r#"{"command":"cargo test --workspace"}"#.to_owned(),
            ),
            _ => (
                "write_file",
                format!(
                    r#"{{"path":"src/new{i}.rs","content":"{}"}}"#,
                    "fn x() {}\\n".repeat(200)
                ),
            ),
        };
        call.tool_calls = vec![ToolCall::new(format!("c{i}"), name, args)];
        v.push(call);
        // Every fourth result repeats an earlier one (re-reading the same file).
        let body = if i % 4 == 0 {
            "same file contents\n".repeat(150)
        } else {
            format!(
                "{{\"output\":\"{}\",\"exit_code\":{}}}",
                "test result line\\n".repeat(120),
                i % 2
            )
        };
        v.push(Message::tool_result(format!("c{i}"), name, body));
        v.push(Message::assistant(format!(
            "Done with step {i}; the tests pass now."
        )));
        i += 1;
    }
    v.truncate(n);
    v
}

fn time(n: usize, mut f: impl FnMut()) -> (Duration, Duration) {
    f();
    let mut samples: Vec<Duration> = (0..n)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    samples.sort();
    (samples[n / 2], samples[(n * 95) / 100])
}

fn main() {
    let messages = history(2_000);
    let compressor = ContextCompressor::new(CompressorConfig::default(), 200_000, Some(8_000));
    let runs = 50;
    let (p50, p95) = time(runs, || {
        std::hint::black_box(compressor.plan(&messages, None));
    });
    println!("plan (prune + boundaries), 2000 messages: median {p50:?}, p95 {p95:?}");
    let plan = compressor.plan(&messages, None).unwrap();
    println!(
        "  span {}..{} of {} messages",
        plan.head,
        plan.tail,
        plan.messages.len()
    );
    let (p50, p95) = time(runs, || {
        std::hint::black_box(compressor.summary_request(&plan, Some("tests")));
    });
    println!("summary_request (serialize + redact): median {p50:?}, p95 {p95:?}");
    let (p50, p95) = time(runs, || {
        let mut c = compressor.clone();
        std::hint::black_box(c.assemble(plan.clone(), "## Active Task\nNone."));
    });
    println!("assemble: median {p50:?}, p95 {p95:?}");
}
