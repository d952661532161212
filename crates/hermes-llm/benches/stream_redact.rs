//! What masking a streamed reply costs: `cargo bench -p hermes-llm --bench stream_redact`.
//!
//! Two measurements over 1 MiB of model output (prose, code, URLs, a few
//! keys) in 8-byte pieces, as the mock and most providers stream it:
//! - the [`StreamRedactor`] alone, without and with ten known secrets
//!   (MB/s, and nanoseconds per piece);
//! - the whole streamed path: the reply served by the mock over loopback
//!   HTTP, decoded by the chat-completions transport and accumulated,
//!   with and without each text piece masked (the agent's `stream_reply`
//!   loop). Runs alternate; medians are compared.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use hermes_llm::redact::{KnownSecrets, RedactOptions, StreamRedactor};
use hermes_llm::{
    ChatCompletionsConfig, ChatCompletionsProvider, ChatRequest, Provider, StreamAccumulator,
    StreamDelta,
};
use hermes_mock::{MockServer, Reply};
use hermes_protocol::Message;
use tokio_util::sync::CancellationToken;

const PIECE: usize = 8;

/// About `size` bytes of the kind of text models write.
fn reply(size: usize) -> String {
    let paragraph = "Here is the fix: the loop in `parse_config` never checks the \
                     last line, so `port=8080` is dropped. See https://docs.example.com/config?page=2 \
                     for the format.\n\n```rust\nfn main() {\n    let cfg = Config::load(\"app.toml\")?;\n    \
                     println!(\"{}\", cfg.port);\n}\n```\nThe key sk-proj-AbCdEf0123456789xyzXYZ was \
                     rotated; Authorization: Bearer abcdefghijklmnopqrstuvwxyz stays.\n";
    paragraph.repeat(size / paragraph.len() + 1)
}

fn known() -> Arc<KnownSecrets> {
    let values: Vec<String> = (0..10)
        .map(|i| format!("prefixless-secret-value-{i:02}-{}", "x".repeat(i)))
        .collect();
    Arc::new(KnownSecrets::new(values))
}

fn pieces(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + PIECE).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[start..end]);
        start = end;
    }
    out
}

fn mask_all(chunks: &[&str], known: Option<Arc<KnownSecrets>>) -> usize {
    let mut r = StreamRedactor::with_known(RedactOptions::FILE_READ, known);
    let mut shown = 0;
    for chunk in chunks {
        shown += r.push(chunk).len();
    }
    shown + r.finish().len()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn redactor_alone(text: &str) {
    let chunks = pieces(text);
    let mb = text.len() as f64 / 1e6;
    for (label, known) in [
        ("no known secrets", None),
        ("10 known secrets", Some(known())),
    ] {
        let runs: Vec<Duration> = (0..7)
            .map(|_| {
                let start = Instant::now();
                std::hint::black_box(mask_all(&chunks, known.clone()));
                start.elapsed()
            })
            .collect();
        let m = median(runs);
        println!(
            "StreamRedactor, {label}: {:.1} MB/s, {:.0} ns per {PIECE}-byte piece ({:.1} ms per MB)",
            mb / m.as_secs_f64(),
            m.as_nanos() as f64 / chunks.len() as f64,
            m.as_secs_f64() * 1e3 / mb,
        );
    }
}

async fn one_stream(provider: &ChatCompletionsProvider, mask: bool) -> Duration {
    let request = ChatRequest {
        model: "mock-model".into(),
        messages: vec![Message::user("go")],
        tools: Arc::default(),
        max_tokens: None,
        temperature: None,
        tool_choice: Default::default(),
    };
    let cancel = CancellationToken::new();
    let start = Instant::now();
    let mut stream = provider.stream(&request, &cancel).await.unwrap();
    let mut acc = StreamAccumulator::new();
    let mut masker = StreamRedactor::with_known(RedactOptions::FILE_READ, Some(known()));
    let mut shown = 0;
    while let Some(delta) = stream.next().await {
        let delta = delta.unwrap();
        if let StreamDelta::Text(text) = &delta {
            shown += if mask {
                masker.push(text).len()
            } else {
                text.len()
            };
        }
        acc.push(&delta);
    }
    shown += masker.finish().len();
    std::hint::black_box((shown, acc.finish()));
    start.elapsed()
}

fn whole_path(text: &str) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let mock = MockServer::start();
    let provider =
        ChatCompletionsProvider::new("custom", ChatCompletionsConfig::new(mock.base_url()))
            .unwrap();
    let (mut plain, mut masked) = (Vec::new(), Vec::new());
    for round in 0..10 {
        for mask in [round % 2 == 0, round % 2 != 0] {
            mock.push(Reply::text(text));
            let took = runtime.block_on(one_stream(&provider, mask));
            if round > 0 {
                if mask { &mut masked } else { &mut plain }.push(took);
            }
        }
    }
    let mb = text.len() as f64 / 1e6;
    let (p, m) = (median(plain), median(masked));
    println!(
        "streamed over loopback ({} pieces): plain {:.1} MB/s ({p:.2?}), masked {:.1} MB/s ({m:.2?}), overhead {:+.1} %",
        pieces(text).len(),
        mb / p.as_secs_f64(),
        mb / m.as_secs_f64(),
        (m.as_secs_f64() / p.as_secs_f64() - 1.0) * 100.0,
    );
}

fn main() {
    let text = reply(1 << 20);
    redactor_alone(&text);
    whole_path(&text);
}
