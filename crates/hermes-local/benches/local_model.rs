//! Throughput of the embedded model: prompt processing and generation tokens/s
//! and peak RSS, on the same GGUF and prompts as `benches/llama_cpp_python.py`
//! (run both with `benches/compare_local.sh`).
//!
//! Usage: `cargo bench -p hermes-local --bench local_model -- GGUF [THREADS]`.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use futures_util::StreamExt;
use hermes_llm::{ChatRequest, Provider, StreamDelta};
use hermes_local::{LocalConfig, LocalProvider};
use hermes_protocol::Message;
use tokio_util::sync::CancellationToken;

/// About 950 tokens of system prompt, like a trimmed tool-bearing agent prompt.
fn long_system() -> String {
    let para = "You are Hermes, an agent that works in the user's terminal. You read files, run commands, \
                and keep a task list. Prefer tools over guessing, keep answers short, and report what you did. ";
    para.repeat(24)
}

struct Run {
    prompt_tokens: u64,
    output_tokens: u64,
    prompt_secs: f64,
    gen_secs: f64,
}

async fn run(p: &LocalProvider, system: &str, user: &str, max_tokens: u32) -> Run {
    let req = ChatRequest {
        model: "local".into(),
        messages: vec![Message::system(system), Message::user(user)],
        max_tokens: Some(max_tokens),
        temperature: Some(0.0),
        ..ChatRequest::default()
    };
    let start = Instant::now();
    let mut first = None;
    let mut usage = None;
    let mut stream = p.stream(&req, &CancellationToken::new()).await.unwrap();
    while let Some(item) = stream.next().await {
        match item.unwrap() {
            StreamDelta::Text(_) if first.is_none() => first = Some(start.elapsed().as_secs_f64()),
            StreamDelta::Usage(u) => usage = Some(u),
            _ => {}
        }
    }
    let total = start.elapsed().as_secs_f64();
    let u = usage.unwrap();
    let first = first.unwrap_or(total);
    Run {
        prompt_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        prompt_secs: first,
        gen_secs: total - first,
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let Some(gguf) = args.first() else {
        println!("usage: local_model GGUF [THREADS]  (skipped: no GGUF given)");
        return;
    };
    let threads = args.get(1).and_then(|t| t.parse().ok()).unwrap_or(1);
    let provider = LocalProvider::start(LocalConfig {
        threads,
        ..LocalConfig::new(gguf)
    })
    .unwrap();
    // Warm-up: loads the model; then each measurement starts from an empty cache
    // by changing the first message.
    run(&provider, "warm up", "Say hi.", 4).await;
    let mut best_prompt = 0.0f64;
    let mut best_gen = 0.0f64;
    let mut prompt_tokens = 0;
    let mut gen_tokens = 0;
    for i in 0..3 {
        let long = run(
            &provider,
            &format!("[{i}] {}", long_system()),
            "Reply with one word.",
            1,
        )
        .await;
        prompt_tokens = long.prompt_tokens;
        best_prompt = best_prompt.max(long.prompt_tokens as f64 / long.prompt_secs);
        let story = run(
            &provider,
            &format!("[{i}] You are a storyteller."),
            "Write a long story about a lighthouse keeper.",
            256,
        )
        .await;
        gen_tokens = story.output_tokens;
        if story.output_tokens > 1 {
            best_gen = best_gen.max((story.output_tokens - 1) as f64 / story.gen_secs);
        }
    }
    let rss_kib = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF)
        .map(|u| u.max_rss())
        .unwrap_or(-1);
    println!(
        "engine=hermes-local threads={threads} prompt_tokens={prompt_tokens} prompt_tok_s={best_prompt:.1} gen_tokens={gen_tokens} gen_tok_s={best_gen:.1} peak_rss_mib={:.1}",
        rss_kib as f64 / 1024.0
    );
}
