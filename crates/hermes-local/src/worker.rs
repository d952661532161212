//! The inference thread: owns the model and one context for the life of the
//! provider, so the model stays loaded across turns and a stable prompt prefix
//! is reused from the KV cache instead of being evaluated again.

use std::num::NonZeroU32;
use std::sync::OnceLock;
use std::sync::mpsc::Receiver;

use hermes_llm::{ChatRequest, LlmError, StreamDelta, ToolChoice};
use hermes_protocol::{FinishReason, Usage};
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use crate::LocalConfig;
use crate::grammar::{call_schema, tool_call_grammar};
use crate::prompt::{CALL_OPEN, template_messages};
use crate::prompt_cache;
use crate::split::{Piece, Splitter};

/// One request for the worker.
pub struct Job {
    /// What to generate.
    pub request: ChatRequest,
    /// Where the deltas go.
    pub out: UnboundedSender<Result<StreamDelta, LlmError>>,
    /// Stops generation between tokens.
    pub cancel: CancellationToken,
}

/// llama.cpp's backend may be initialised once per process.
fn backend() -> Result<&'static LlamaBackend, LlmError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            LlamaBackend::init()
                .map(|mut b| {
                    b.void_logs();
                    b
                })
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| LlmError::Config(format!("cannot start llama.cpp: {e}")))
}

/// Runs jobs until the provider is dropped (the channel closes).
pub fn run(config: LocalConfig, jobs: Receiver<Job>) {
    let loaded = backend().and_then(|backend| {
        let model =
            LlamaModel::load_from_file(backend, &config.model_path, &LlamaModelParams::default())
                .map_err(|e| {
                LlmError::Config(format!("cannot load {}: {e}", config.model_path.display()))
            })?;
        Ok((backend, model))
    });
    let (backend, model) = match loaded {
        Ok(pair) => pair,
        Err(e) => {
            for job in jobs {
                let _ = job.out.send(Err(e.clone()));
            }
            return;
        }
    };
    let n_ctx = config.context_length.min(model.n_ctx_train()).max(512);
    let threads = i32::try_from(config.threads).unwrap_or(1);
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(n_ctx))
        .with_n_batch(n_ctx)
        .with_n_ubatch(512)
        .with_n_threads(threads)
        .with_n_threads_batch(threads);
    let mut ctx = match model.new_context(backend, params) {
        Ok(c) => c,
        Err(e) => {
            let err = LlmError::Config(format!("cannot create a llama.cpp context: {e}"));
            for job in jobs {
                let _ = job.out.send(Err(err.clone()));
            }
            return;
        }
    };
    let template = model.chat_template(None).ok();
    let saved_state = config
        .prompt_cache
        .as_deref()
        .and_then(|dir| prompt_cache::state_file(dir, &config.model_path, n_ctx));
    let mut engine = Engine {
        model: &model,
        template,
        n_ctx,
        cached: Vec::new(),
        seed: config.seed,
        saved_state,
    };
    engine.load_saved_state(&mut ctx);
    for job in jobs {
        if let Err(e) = engine.generate(&mut ctx, &job) {
            // A failed decode leaves the cache in an unknown state.
            engine.cached.clear();
            ctx.clear_kv_cache();
            let _ = job.out.send(Err(e));
        }
    }
}

struct Engine<'m> {
    model: &'m LlamaModel,
    template: Option<LlamaChatTemplate>,
    n_ctx: u32,
    /// Tokens currently in the KV cache (sequence 0), for prefix reuse.
    cached: Vec<LlamaToken>,
    seed: u32,
    /// Where the KV state of a long prompt is kept for the next process.
    saved_state: Option<std::path::PathBuf>,
}

fn fail(what: &str, e: impl std::fmt::Display) -> LlmError {
    LlmError::Decode(format!("local model: {what}: {e}"))
}

impl Engine<'_> {
    /// Starts from the state an earlier process saved, if it is there and loads.
    fn load_saved_state(&mut self, ctx: &mut LlamaContext<'_>) {
        let Some(path) = self.saved_state.as_ref().filter(|p| p.is_file()) else {
            return;
        };
        match ctx.state_load_file(path, self.n_ctx as usize) {
            Ok(tokens) => self.cached = tokens,
            Err(_) => {
                // Unreadable (another llama.cpp version, a damaged file): start
                // clean and let the next long prompt write a fresh one.
                ctx.clear_kv_cache();
                self.cached.clear();
                let _ = std::fs::remove_file(path);
            }
        }
    }

    /// Saves the state after a long stretch of newly evaluated prompt. Failing
    /// to save only costs the next process time, so errors are dropped.
    fn save_state(&self, ctx: &LlamaContext<'_>, evaluated: usize) {
        let Some(path) = self.saved_state.as_ref() else {
            return;
        };
        if evaluated < prompt_cache::SAVE_THRESHOLD {
            return;
        }
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let partial = prompt_cache::partial_file(path);
        if ctx.state_save_file(&partial, &self.cached).is_ok() {
            let _ = std::fs::rename(&partial, path);
        } else {
            let _ = std::fs::remove_file(&partial);
        }
    }

    fn render(&self, request: &ChatRequest) -> Result<String, LlmError> {
        let messages = template_messages(&request.messages, &request.tools);
        match &self.template {
            Some(tmpl) => {
                let chat = messages
                    .into_iter()
                    .map(|m| LlamaChatMessage::new(m.role, m.content))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| fail("message contains a NUL byte", e))?;
                self.model
                    .apply_chat_template(tmpl, &chat, true)
                    .map_err(|e| fail("chat template", e))
            }
            // No template in the GGUF: ChatML, the most common convention.
            None => {
                let mut s: String = messages
                    .iter()
                    .map(|m| format!("<|im_start|>{}\n{}<|im_end|>\n", m.role, m.content))
                    .collect();
                s.push_str("<|im_start|>assistant\n");
                Ok(s)
            }
        }
    }

    fn sampler(&self, request: &ChatRequest) -> Result<LlamaSampler, LlmError> {
        let mut chain = Vec::new();
        let constrained = !request.tools.is_empty() && request.tool_choice != ToolChoice::None;
        if constrained {
            let only = match &request.tool_choice {
                ToolChoice::Named(n) => Some(n.as_str()),
                _ => None,
            };
            let grammar = tool_call_grammar(&call_schema(&request.tools, only))
                .map_err(|e| fail("tool grammar", e))?;
            let sampler = match request.tool_choice {
                ToolChoice::Auto => {
                    LlamaSampler::grammar_lazy(self.model, &grammar, "root", [CALL_OPEN], &[])
                }
                _ => LlamaSampler::grammar(self.model, &grammar, "root"),
            }
            .map_err(|e| fail("tool grammar", e))?;
            chain.push(sampler);
        }
        let temperature = request.temperature.unwrap_or(0.2);
        if temperature <= 0.0 {
            chain.push(LlamaSampler::greedy());
        } else {
            // Small models loop without a repetition penalty.
            chain.push(LlamaSampler::penalties(
                self.model.n_vocab(),
                64,
                1.15,
                0.0,
                0.0,
            ));
            chain.push(LlamaSampler::top_k(40));
            chain.push(LlamaSampler::top_p(0.95, 1));
            chain.push(LlamaSampler::temp(temperature));
            chain.push(LlamaSampler::dist(self.seed));
        }
        Ok(LlamaSampler::chain_simple(chain))
    }

    fn generate(&mut self, ctx: &mut LlamaContext<'_>, job: &Job) -> Result<(), LlmError> {
        let prompt = self.render(&job.request)?;
        let vocab = self.model.vocab();
        let tokens = vocab.tokenize(prompt.as_bytes(), vocab.should_add_bos(), true);
        let max_new = job.request.max_tokens.unwrap_or(512).max(1) as usize;
        if tokens.len() + 1 >= self.n_ctx as usize {
            return Err(LlmError::Http {
                status: 400,
                body: format!(
                    "context length exceeded: the prompt has {} tokens and the local model's context is {} tokens",
                    tokens.len(),
                    self.n_ctx
                ),
                request_id: None,
                retry_after: None,
            });
        }
        // Reuse the cached prefix; always evaluate at least the last token to get logits.
        let common = self
            .cached
            .iter()
            .zip(&tokens)
            .take_while(|(a, b)| a == b)
            .count()
            .min(tokens.len() - 1);
        ctx.clear_kv_cache_seq(Some(0), u32::try_from(common).ok(), None)
            .map_err(|e| fail("cache", e))?;
        self.cached.truncate(common);
        let mut batch = LlamaBatch::new(self.n_ctx as usize, 1);
        let last = tokens.len() - 1;
        for (i, tok) in tokens.iter().enumerate().skip(common) {
            batch
                .add(*tok, i as i32, &[0], i == last)
                .map_err(|e| fail("batch", e))?;
        }
        ctx.decode(&mut batch)
            .map_err(|e| fail("prompt evaluation", e))?;
        self.cached.extend_from_slice(&tokens[common..]);
        self.save_state(ctx, tokens.len() - common);

        let mut sampler = self.sampler(&job.request)?;
        let mut splitter = Splitter::default();
        let mut utf8 = Utf8Buffer::default();
        let mut calls = 0usize;
        let mut generated = 0usize;
        let mut finish = FinishReason::Length;
        let mut pos = tokens.len() as i32;
        let mut logits_at = batch.n_tokens() - 1;
        while generated < max_new {
            if job.cancel.is_cancelled() {
                return Err(LlmError::Cancelled);
            }
            if pos as u32 >= self.n_ctx {
                break;
            }
            let token = sampler.sample(ctx, logits_at);
            if vocab.is_eog(token) {
                finish = FinishReason::Stop;
                break;
            }
            generated += 1;
            let text = utf8.push(&vocab.token_to_piece(token, false, None));
            for piece in splitter.push(&text) {
                calls += emit(&job.out, piece, calls)?;
            }
            if splitter.halted() {
                finish = FinishReason::Stop;
                break;
            }
            batch.clear();
            batch
                .add(token, pos, &[0], true)
                .map_err(|e| fail("batch", e))?;
            ctx.decode(&mut batch).map_err(|e| fail("generation", e))?;
            self.cached.push(token);
            pos += 1;
            logits_at = 0;
        }
        for piece in splitter.finish() {
            calls += emit(&job.out, piece, calls)?;
        }
        if calls > 0 {
            finish = FinishReason::ToolCalls;
        }
        let usage = Usage {
            input_tokens: tokens.len() as u64,
            output_tokens: generated as u64,
            // The prefix taken from the KV cache (this process's or a saved one).
            cache_read_tokens: common as u64,
            ..Usage::default()
        };
        send(&job.out, StreamDelta::Usage(usage))?;
        send(&job.out, StreamDelta::Finish(finish))?;
        Ok(())
    }
}

/// Sends one piece; returns how many tool calls it added.
fn emit(
    out: &UnboundedSender<Result<StreamDelta, LlmError>>,
    piece: Piece,
    index: usize,
) -> Result<usize, LlmError> {
    match piece {
        Piece::Text(text) => {
            send(out, StreamDelta::Text(text))?;
            Ok(0)
        }
        Piece::Call(json) => {
            let parsed: serde_json::Value = serde_json::from_str(&json).unwrap_or_default();
            let name = parsed
                .get("name")
                .and_then(|n| n.as_str())
                .unwrap_or("")
                .to_owned();
            let arguments = parsed
                .get("arguments")
                .map(ToString::to_string)
                .unwrap_or_else(|| json.clone());
            send(
                out,
                StreamDelta::ToolCall {
                    index,
                    id: Some(format!("call_local_{index}")),
                    name: Some(name),
                    arguments,
                },
            )?;
            Ok(1)
        }
    }
}

fn send(
    out: &UnboundedSender<Result<StreamDelta, LlmError>>,
    delta: StreamDelta,
) -> Result<(), LlmError> {
    // A closed channel means the caller went away: stop like a cancellation.
    out.send(Ok(delta)).map_err(|_| LlmError::Cancelled)
}

/// Joins token bytes into valid UTF-8, holding back an incomplete character.
#[derive(Debug, Default)]
struct Utf8Buffer {
    bytes: Vec<u8>,
}

impl Utf8Buffer {
    fn push(&mut self, piece: &[u8]) -> String {
        self.bytes.extend_from_slice(piece);
        match std::str::from_utf8(&self.bytes) {
            Ok(s) => {
                let out = s.to_owned();
                self.bytes.clear();
                out
            }
            Err(e) if e.error_len().is_none() => {
                let valid = e.valid_up_to();
                let out = String::from_utf8_lossy(&self.bytes[..valid]).into_owned();
                self.bytes.drain(..valid);
                out
            }
            Err(_) => {
                let out = String::from_utf8_lossy(&self.bytes).into_owned();
                self.bytes.clear();
                out
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Utf8Buffer;

    #[test]
    fn utf8_characters_split_across_tokens_are_joined() {
        let mut b = Utf8Buffer::default();
        let bytes = "é日".as_bytes();
        assert_eq!(b.push(&bytes[..1]), "");
        assert_eq!(b.push(&bytes[1..3]), "é");
        assert_eq!(b.push(&bytes[3..]), "日");
        assert_eq!(b.push(&[0xff, b'a']), "\u{fffd}a");
    }
}
