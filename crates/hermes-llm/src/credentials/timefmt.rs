//! Conversions between `SystemTime` and the timestamp encodings found in
//! `auth.json`: float epoch seconds, epoch milliseconds, and ISO-8601 text.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hermes_protocol::iso_time::IsoTimestamp;
use serde_json::Value;

/// Epoch values above this are taken to be milliseconds.
const MILLIS_THRESHOLD: f64 = 1_000_000_000_000.0;

/// Seconds since the Unix epoch as a float (negative before the epoch).
pub(crate) fn to_epoch(t: SystemTime) -> f64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs_f64(),
        Err(e) => -e.duration().as_secs_f64(),
    }
}

/// The instant `secs` seconds after the epoch; `None` for non-finite or
/// non-positive values.
pub(crate) fn from_epoch(secs: f64) -> Option<SystemTime> {
    if !secs.is_finite() || secs <= 0.0 {
        return None;
    }
    Duration::try_from_secs_f64(secs)
        .ok()
        .and_then(|d| UNIX_EPOCH.checked_add(d))
}

/// Best-effort parse of a stored timestamp into epoch seconds: numbers
/// (seconds, or milliseconds when very large), numeric strings and ISO-8601
/// strings. Empty, zero and negative values mean "none".
pub(crate) fn parse_timestamp(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => {
            let numeric = n.as_f64()?;
            if numeric <= 0.0 {
                return None;
            }
            Some(scale_millis(numeric))
        }
        Value::String(s) => {
            let raw = s.trim();
            if raw.is_empty() {
                return None;
            }
            if let Ok(numeric) = raw.parse::<f64>() {
                return numeric.is_finite().then(|| scale_millis(numeric));
            }
            parse_iso8601(raw)
        }
        _ => None,
    }
}

fn scale_millis(numeric: f64) -> f64 {
    if numeric > MILLIS_THRESHOLD {
        numeric / 1000.0
    } else {
        numeric
    }
}

/// Epoch seconds of an ISO-8601 timestamp (or a bare date); a missing
/// offset is read as UTC.
pub(crate) fn parse_iso8601(raw: &str) -> Option<f64> {
    IsoTimestamp::parse(raw).map(|t| t.unix_secs_f64())
}

/// `2026-11-22T05:52:54.153494+00:00`, the shape Python's
/// `datetime.now(timezone.utc).isoformat()` writes.
pub(crate) fn format_iso_utc(t: SystemTime) -> String {
    let at = jiff::Timestamp::try_from(t).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    let d = jiff::tz::Offset::UTC.to_datetime(at);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}+00:00",
        d.year(),
        d.month(),
        d.day(),
        d.hour(),
        d.minute(),
        d.second(),
        d.subsec_nanosecond() / 1_000
    )
}

#[cfg(test)]
#[path = "timefmt_tests.rs"]
mod tests;
