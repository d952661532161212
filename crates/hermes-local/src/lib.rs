//! The embedded local model: a [`Provider`] backed by llama.cpp (through
//! `llama-cpp-2`) running a GGUF on the CPU, so `hermes` answers with no API
//! key and no network.
//!
//! Inference runs on one dedicated OS thread that keeps the model loaded for
//! the provider's lifetime. Tool calls are constrained by a grammar built from
//! the offered tools' schemas, so they are always valid JSON naming a real tool.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod grammar;
pub mod models;
mod prompt;
mod prompt_cache;
mod split;
mod worker;

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::mpsc::Sender;

use futures_util::future::BoxFuture;
use hermes_llm::{ChatRequest, DeltaStream, LlmError, Provider, StreamDelta};
use tokio_util::sync::CancellationToken;

/// The compact tool list the model sees in its system message (benches compare
/// other engines on exactly this text).
pub use prompt::tools_section;

/// How to run the local model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalConfig {
    /// The GGUF file.
    pub model_path: PathBuf,
    /// Context window in tokens (capped by what the model was trained with).
    pub context_length: u32,
    /// CPU threads for prompt and generation.
    pub threads: usize,
    /// Sampling seed.
    pub seed: u32,
    /// A directory for the KV state of the last long prompt, so the next process
    /// starts with it evaluated (`None`: nothing is kept between processes).
    pub prompt_cache: Option<PathBuf>,
}

impl LocalConfig {
    /// Defaults for `model_path`: 8 192-token context, half the cores (at least one:
    /// with every core busy, generation collapses when anything else runs).
    pub fn new(model_path: impl Into<PathBuf>) -> Self {
        let cores = std::thread::available_parallelism()
            .map(usize::from)
            .unwrap_or(2);
        Self {
            model_path: model_path.into(),
            context_length: 8192,
            threads: (cores / 2).max(1),
            seed: 0x5eed,
            prompt_cache: None,
        }
    }
}

/// A [`Provider`] running a GGUF in-process.
pub struct LocalProvider {
    jobs: Mutex<Sender<worker::Job>>,
    model_name: String,
}

impl std::fmt::Debug for LocalProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalProvider")
            .field("model", &self.model_name)
            .finish_non_exhaustive()
    }
}

impl LocalProvider {
    /// Starts the inference thread; the model loads there, and a load failure is
    /// reported by the first request.
    pub fn start(config: LocalConfig) -> Result<Self, LlmError> {
        if !config.model_path.is_file() {
            return Err(LlmError::Config(format!(
                "no model file at {}: fetch the default one with `hermes model pull smollm2`, or pass -m PATH to a GGUF",
                config.model_path.display()
            )));
        }
        let model_name = config
            .model_path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "local".into());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("hermes-local-llm".into())
            .spawn(move || worker::run(config, rx))
            .map_err(|e| LlmError::Config(format!("cannot start the inference thread: {e}")))?;
        Ok(Self {
            jobs: Mutex::new(tx),
            model_name,
        })
    }

    /// The model's name (the GGUF file stem).
    pub fn model_name(&self) -> &str {
        &self.model_name
    }
}

impl Provider for LocalProvider {
    fn name(&self) -> &str {
        "local"
    }

    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<DeltaStream, LlmError>> {
        Box::pin(async move {
            if cancel.is_cancelled() {
                return Err(LlmError::Cancelled);
            }
            let (out, rx) = tokio::sync::mpsc::unbounded_channel::<Result<StreamDelta, LlmError>>();
            let job = worker::Job {
                request: request.clone(),
                out,
                cancel: cancel.clone(),
            };
            self.jobs
                .lock()
                .map_err(|_| LlmError::Config("the local model thread failed".into()))?
                .send(job)
                .map_err(|_| LlmError::Config("the local model thread has stopped".into()))?;
            let stream = futures_util::stream::unfold(rx, |mut rx| async move {
                rx.recv().await.map(|item| (item, rx))
            });
            Ok(Box::pin(stream) as DeltaStream)
        })
    }
}
