//! What to do after a failed model call, decided from the classifier's flags
//! alone (never from error text), with no I/O: compress, rotate the credential,
//! wait and retry, fall back to the next route, or fail.

use std::time::Duration;

use hermes_llm::{ClassifiedError, backoff};

/// Retry settings (`agent.api_max_retries` and the backoff curve).
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Retries of one call before giving up on a provider.
    pub max_retries: u32,
    /// Delay before the first retry (doubles each time).
    pub base_delay: Duration,
    /// Longest backoff delay.
    pub max_delay: Duration,
    /// Cap on a provider's `Retry-After`.
    pub max_retry_after: Duration,
    /// Longest time spent waiting between attempts on one route; a wait that
    /// would pass it is not taken (the route is given up instead).
    pub max_total_wait: Duration,
}

impl Default for RetryPolicy {
    /// The reference's API-error curve: 2 s doubling to 60 s, `Retry-After`
    /// honoured up to 10 minutes, two retries (three attempts).
    fn default() -> Self {
        Self {
            max_retries: 2,
            base_delay: Duration::from_secs(2),
            max_delay: Duration::from_secs(60),
            max_retry_after: Duration::from_secs(600),
            max_total_wait: Duration::from_secs(120),
        }
    }
}

/// Where the retries of one call stand.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RetryState {
    /// Retries already made on the current route.
    pub attempt: u32,
    /// Time already spent waiting on the current route.
    pub waited: Duration,
    /// The provider declined to rotate its credential for this failure.
    pub rotation_refused: bool,
    /// Another route (fallback) is left to try.
    pub can_fall_back: bool,
}

/// The decision.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Recovery {
    /// The request is too large: compress (or shrink the output cap) and call again.
    Compress,
    /// Ask the provider for its next pooled key and call again at once.
    Rotate,
    /// Wait `delay`, then retry on the same route (retry number `attempt`).
    Retry {
        /// How long to wait.
        delay: Duration,
        /// Which retry this is (1-based).
        attempt: u32,
    },
    /// Switch to the next route and call again.
    FallBack,
    /// Give up: the error ends the turn.
    Fail,
}

/// Decides what follows `verdict`. `unit` is a number in `[0, 1)` for jitter.
pub fn decide(
    verdict: &ClassifiedError,
    state: &RetryState,
    policy: &RetryPolicy,
    unit: f64,
) -> Recovery {
    if verdict.should_compress {
        return Recovery::Compress;
    }
    if verdict.should_rotate_credential && !state.rotation_refused {
        return Recovery::Rotate;
    }
    if verdict.retryable && state.attempt < policy.max_retries {
        let attempt = state.attempt + 1;
        let delay = match verdict.retry_after {
            Some(asked) => asked.min(policy.max_retry_after),
            None => backoff::jittered(attempt, policy.base_delay, policy.max_delay, 0.5, unit),
        };
        if state.waited + delay <= policy.max_total_wait {
            return Recovery::Retry { delay, attempt };
        }
    }
    if (verdict.should_fallback || verdict.retryable) && state.can_fall_back {
        return Recovery::FallBack;
    }
    Recovery::Fail
}

#[cfg(test)]
#[path = "recovery_tests.rs"]
mod tests;
