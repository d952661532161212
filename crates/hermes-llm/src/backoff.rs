//! Jittered exponential backoff, so many sessions hitting one rate-limited
//! provider do not retry in lockstep.

use std::time::Duration;

/// `min(base * 2^(attempt-1), max)` plus a uniform jitter in `[0, ratio * delay]`.
/// `attempt` is 1-based; `unit` is a number in `[0, 1)` (inject it in tests).
pub fn jittered(attempt: u32, base: Duration, max: Duration, ratio: f64, unit: f64) -> Duration {
    let exponent = attempt.saturating_sub(1).min(62);
    let delay = base
        .checked_mul(1u32 << exponent.min(31))
        .unwrap_or(max)
        .min(max);
    delay + delay.mul_f64(ratio.clamp(0.0, 1.0) * unit.clamp(0.0, 1.0))
}

/// A fresh number in `[0, 1)` from the clock and a counter (no RNG dependency).
pub fn unit_random() -> f64 {
    fastrand::f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_and_caps_with_bounded_jitter() {
        let s = Duration::from_secs;
        assert_eq!(jittered(1, s(5), s(120), 0.5, 0.0), s(5));
        assert_eq!(jittered(3, s(5), s(120), 0.5, 0.0), s(20));
        assert_eq!(jittered(10, s(5), s(120), 0.5, 0.0), s(120));
        assert_eq!(jittered(1, s(4), s(120), 0.5, 1.0), s(6));
        assert_eq!(jittered(u32::MAX, s(5), s(120), 0.5, 0.0), s(120));
    }

    #[test]
    fn unit_random_stays_in_range_and_varies() {
        let draws: Vec<f64> = (0..100).map(|_| unit_random()).collect();
        assert!(draws.iter().all(|d| (0.0..1.0).contains(d)));
        assert!(draws.windows(2).any(|w| w[0] != w[1]));
    }
}
