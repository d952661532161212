//! Time and randomness for the turn driver, injected so retries and backoff
//! can be tested without waiting and with fixed jitter.

use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;

/// The clock, sleeper and random source a turn uses.
pub trait Timing: Send + Sync {
    /// The current instant.
    fn now(&self) -> Instant;
    /// A future that resolves after `duration`.
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()>;
    /// A number in `[0, 1)` for backoff jitter.
    fn random(&self) -> f64;
}

/// Real time: tokio's sleep and the backoff module's random source.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemTiming;

impl Timing for SystemTiming {
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }

    fn random(&self) -> f64 {
        hermes_llm::backoff::unit_random()
    }
}
