//! The credential pool: several API keys for one provider, stored in
//! `auth.json` under `credential_pool.<provider>` in the reference's layout,
//! selected by a strategy, cooled down after 401/402/429 and persisted under
//! a cross-process lock so concurrent Hermes processes keep each other's
//! updates.
//!
//! Nothing here reads the environment or the real clock on its own: the
//! file path, a [`Clock`] and a [`RandomSource`] are passed in.

use std::path::PathBuf;
use std::time::SystemTime;

mod entry;
mod pool;
mod pooled;
mod store;
pub(crate) mod timefmt;

pub use entry::{
    AUTH_TYPE_API_KEY, AUTH_TYPE_OAUTH, Credential, EXHAUSTED_TTL_401, EXHAUSTED_TTL_429,
    EXHAUSTED_TTL_DEFAULT, FailureDetail, SOURCE_MANUAL, Status, TERMINAL_AUTH_REASONS,
    exhausted_ttl, mask_secret,
};
pub use pool::CredentialPool;
pub use pooled::{BuildWithKey, PooledProvider};
pub use store::{AUTH_STORE_VERSION, AuthStore};

/// The current time, injected so tests can move it.
pub trait Clock: Send + Sync {
    /// Now.
    fn now(&self) -> SystemTime;
}

impl<F> Clock for F
where
    F: Fn() -> SystemTime + Send + Sync,
{
    fn now(&self) -> SystemTime {
        self()
    }
}

/// The wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// A source of random numbers (ids for new entries, the `random` strategy).
pub trait RandomSource: Send {
    /// The next 64 random bits.
    fn next_u64(&mut self) -> u64;
}

/// A small seeded generator; the caller picks the seed.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }
}

impl RandomSource for SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        splitmix(&mut self.state)
    }
}

pub(crate) fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// How [`CredentialPool::select`] picks among available credentials
/// (config key `credential_pool_strategies.<provider>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strategy {
    /// Always the highest-priority available entry.
    #[default]
    FillFirst,
    /// The first available entry, which then moves to the back.
    RoundRobin,
    /// A uniformly random available entry.
    Random,
    /// The available entry with the fewest recorded uses.
    LeastUsed,
}

impl Strategy {
    /// Parse a configured name (case-insensitive); `None` when unknown.
    pub fn parse(name: &str) -> Option<Self> {
        match name.trim().to_lowercase().as_str() {
            "fill_first" => Some(Self::FillFirst),
            "round_robin" => Some(Self::RoundRobin),
            "random" => Some(Self::Random),
            "least_used" => Some(Self::LeastUsed),
            _ => None,
        }
    }

    /// The configured value, or `fill_first` when absent or unknown (the
    /// reference's fallback).
    pub fn resolve(configured: Option<&str>) -> Self {
        configured.and_then(Self::parse).unwrap_or_default()
    }

    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::FillFirst => "fill_first",
            Self::RoundRobin => "round_robin",
            Self::Random => "random",
            Self::LeastUsed => "least_used",
        }
    }
}

/// Failures reading or writing `auth.json`.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    /// Filesystem error on `path`.
    #[error("auth store I/O error at {path}: {source}")]
    Io {
        /// The file involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// `auth.json` is not valid JSON; it is left untouched.
    #[error("auth store {path} is not valid JSON: {source}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// The parse error.
        #[source]
        source: serde_json::Error,
    },
    /// `auth.json` is JSON but not the expected shape.
    #[error("auth store {path} has an unexpected shape: {detail}")]
    Shape {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        detail: String,
    },
    /// No credential has this id, label or index.
    #[error("no credential matching {0:?}")]
    NotFound(String),
    /// More than one credential has this label.
    #[error("credential label {0:?} is ambiguous; use the index or id")]
    Ambiguous(String),
    /// An empty key was given to add.
    #[error("no API key provided")]
    EmptyKey,
}

#[cfg(test)]
#[path = "process_tests.rs"]
mod process_tests;
