//! The embedded model at agent context against llama.cpp's own server: the
//! request `hermes chat` sends (system prompt + 29 tool schemas, from
//! `agent_request.json`) and a long answer, on the same GGUF and thread count.
//!
//! Three engines, each reached through our `Provider` trait so they are timed
//! the same way (from the request to the first text delta, then to the last):
//! - `hermes-local+tools`: the agent's real path (compact tool list, lazy tool-call grammar);
//! - `hermes-local`: the same rendered text without the grammar;
//! - `llama-server`: that text over HTTP to a running llama.cpp server (`--server URL`).
//!
//! Every request starts the system prompt with its own number, so every engine
//! evaluates the whole prompt (no prefix cache helps either side).
//!
//! Usage: `cargo bench -p hermes-local --bench agent_context -- GGUF [THREADS] [--server URL] [--reps N] [--gen N]`
//! (`compare_server.sh` starts the server and runs this).

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use futures_util::StreamExt;
use hermes_llm::{
    ChatCompletionsConfig, ChatCompletionsProvider, ChatRequest, Provider, StreamDelta,
};
use hermes_local::{LocalConfig, LocalProvider, tools_section};
use hermes_protocol::{Message, ToolSchema};
use tokio_util::sync::CancellationToken;

const USER: &str =
    "Do not use any tool. Write a long story, at least 500 words, about a lighthouse keeper.";

/// One timed request.
struct Sample {
    prompt_tokens: u64,
    output_tokens: u64,
    first_token_secs: f64,
    gen_secs: f64,
}

impl Sample {
    fn prompt_tok_s(&self) -> f64 {
        self.prompt_tokens as f64 / self.first_token_secs
    }

    fn gen_tok_s(&self) -> f64 {
        if self.output_tokens > 1 && self.gen_secs > 0.0 {
            (self.output_tokens - 1) as f64 / self.gen_secs
        } else {
            0.0
        }
    }
}

async fn timed(provider: &dyn Provider, req: &ChatRequest) -> Sample {
    let start = Instant::now();
    let mut first = None;
    let mut last = None;
    let mut usage = None;
    let mut stream = provider
        .stream(req, &CancellationToken::new())
        .await
        .unwrap();
    while let Some(item) = stream.next().await {
        match item.unwrap() {
            StreamDelta::Text(t) if !t.is_empty() => {
                let now = start.elapsed().as_secs_f64();
                first.get_or_insert(now);
                last = Some(now);
            }
            StreamDelta::Usage(u) => usage = Some(u),
            _ => {}
        }
    }
    let u = usage.expect("the engine reported no token usage");
    let first = first.expect("the engine produced no text");
    Sample {
        prompt_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        first_token_secs: first,
        gen_secs: last.unwrap_or(first) - first,
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

struct Args {
    gguf: String,
    threads: usize,
    server: Option<String>,
    reps: usize,
    gen_tokens: u32,
}

fn args() -> Option<Args> {
    let mut positional = Vec::new();
    let mut server = None;
    let mut reps = 3;
    let mut gen_tokens = 128;
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--server" => server = it.next(),
            "--reps" => reps = it.next()?.parse().ok()?,
            "--gen" => gen_tokens = it.next()?.parse().ok()?,
            s if s.starts_with("--") => {} // cargo bench's own flags
            _ => positional.push(a),
        }
    }
    Some(Args {
        gguf: positional.first()?.clone(),
        threads: positional.get(1).and_then(|t| t.parse().ok()).unwrap_or(1),
        server,
        reps: reps.max(1),
        gen_tokens,
    })
}

/// The captured agent request: system prompt and tool schemas.
fn agent_request() -> (String, Vec<ToolSchema>) {
    let raw = include_str!("agent_request.json");
    let v: serde_json::Value = serde_json::from_str(raw).unwrap();
    let system = v["system"].as_str().unwrap().to_owned();
    let tools = serde_json::from_value(v["tools"].clone()).unwrap();
    (system, tools)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let Some(args) = args() else {
        println!(
            "usage: agent_context GGUF [THREADS] [--server URL] [--reps N] [--gen N]  (skipped: no GGUF given)"
        );
        return;
    };
    let local = LocalProvider::start(LocalConfig {
        threads: args.threads,
        ..LocalConfig::new(&args.gguf)
    })
    .unwrap();
    let server = args.server.as_ref().map(|url| {
        ChatCompletionsProvider::new("llama-server", ChatCompletionsConfig::new(url.clone()))
            .unwrap()
    });
    let (system, tools) = agent_request();
    // `tag` starts the prompt, so no engine finds it in a cache.
    let request = |tag: usize, with_tools: bool| {
        let system = format!("[{tag}] {system}");
        let (system, tools) = if with_tools {
            (system, tools.clone())
        } else {
            (format!("{system}{}", tools_section(&tools)), Vec::new())
        };
        ChatRequest {
            model: "local".into(),
            messages: vec![Message::system(system), Message::user(USER)],
            tools: tools.into(),
            max_tokens: Some(args.gen_tokens),
            temperature: Some(0.0),
            ..ChatRequest::default()
        }
    };
    // Warm-up: loads the model and touches every code path once.
    let warm = ChatRequest {
        max_tokens: Some(4),
        ..request(usize::MAX, false)
    };
    timed(&local, &warm).await;
    if let Some(s) = &server {
        timed(s, &warm).await;
    }
    let mut engines: Vec<(&str, Vec<Sample>)> = vec![
        ("hermes-local+tools", Vec::new()),
        ("hermes-local", Vec::new()),
    ];
    if server.is_some() {
        engines.push(("llama-server", Vec::new()));
    }
    // Interleaved, so a slow moment of the machine hits every engine alike.
    let mut tag = 0;
    for _ in 0..args.reps {
        for (name, samples) in &mut engines {
            tag += 1;
            let provider: &dyn Provider = match *name {
                "llama-server" => server.as_ref().unwrap(),
                _ => &local,
            };
            samples.push(timed(provider, &request(tag, *name == "hermes-local+tools")).await);
        }
    }
    let rss_kib = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF)
        .map(|u| u.max_rss())
        .unwrap_or(-1);
    let model = std::path::Path::new(&args.gguf)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    for (name, samples) in &engines {
        let last = samples.last().unwrap();
        println!(
            "engine={name} model={model} threads={} reps={} prompt_tokens={} first_token_ms={:.0} prompt_tok_s={:.1} gen_tokens={} gen_tok_s={:.1}",
            args.threads,
            samples.len(),
            last.prompt_tokens,
            median(
                samples
                    .iter()
                    .map(|s| s.first_token_secs * 1000.0)
                    .collect()
            ),
            median(samples.iter().map(Sample::prompt_tok_s).collect()),
            last.output_tokens,
            median(samples.iter().map(Sample::gen_tok_s).collect()),
        );
    }
    println!("hermes_local_peak_rss_mib={:.1}", rss_kib as f64 / 1024.0);
}
