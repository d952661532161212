//! What the load benches measure with: a process's memory from
//! `/proc/<pid>/status`, and percentiles of sorted latencies.

use std::time::Duration;

/// A `/proc/<pid>/status` field in KiB (`VmRSS:`, `VmHWM:`); 0 when unreadable.
pub fn kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// The `p` percentile (0–1) of `sorted`; zero when empty.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}
