//! `hermes batch`: a JSONL dataset of prompts run through the shared session
//! runtime, each prompt its own session with toolsets drawn from a
//! distribution, into tool-use trajectories in the reference's ShareGPT
//! format. Records are appended one durable line at a time, so a run that
//! is killed and started again ends with every prompt exactly once; runs can
//! be split into shards and merged.
//!
//! Modules: [`dataset`] (input), [`distributions`] (toolset draws),
//! [`trajectory`] (conversion and records), [`stats`] and [`report`]
//! (statistics), [`output`] (files, resume scan, checkpoint), [`shard`] and
//! [`merge`], [`runner`] (the run) and [`session`] (one prompt as a session).
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod clock;
pub mod dataset;
pub mod distributions;
pub mod json;
pub mod merge;
pub mod output;
pub mod report;
pub mod runner;
pub mod session;
pub mod shard;
pub mod stats;
pub mod trajectory;

use std::path::Path;

pub use clock::Clock;
pub use merge::{MergeOutcome, merge};
pub use runner::{
    BatchConfig, Executor, Finished, Job, Outcome, Progress, PromptError, RunOutcome, run,
};
pub use session::{SessionExecutor, SessionSettings};
pub use shard::Shard;

/// Why a batch run or merge could not be carried out.
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    /// Bad input: the message says what to change.
    #[error("{0}")]
    Usage(String),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// What happened.
        source: std::io::Error,
    },
    /// The run cannot go on (an unusable configuration, an encoding failure).
    #[error("{0}")]
    Fatal(String),
}

impl BatchError {
    /// An I/O error on `path`.
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        BatchError::Io {
            path: path.display().to_string(),
            source,
        }
    }
}
