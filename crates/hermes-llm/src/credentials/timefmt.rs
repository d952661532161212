//! Conversions between `SystemTime` and the timestamp encodings found in
//! `auth.json`: float epoch seconds, epoch milliseconds, and ISO-8601 text.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

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

/// Parse `YYYY-MM-DD[T ]HH:MM[:SS[.frac]][Z|±HH[:MM]]` (or a bare date) to
/// epoch seconds. A missing offset is read as UTC.
pub(crate) fn parse_iso8601(raw: &str) -> Option<f64> {
    let b = raw.as_bytes();
    let year: i64 = digits(b, 0, 4)?;
    expect(b, 4, b'-')?;
    let month: i64 = digits(b, 5, 2)?;
    expect(b, 7, b'-')?;
    let day: i64 = digits(b, 8, 2)?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let mut secs_of_day = 0.0;
    let mut pos = 10;
    if b.len() > 10 {
        if b[10] != b'T' && b[10] != b't' && b[10] != b' ' {
            return None;
        }
        let hour: i64 = digits(b, 11, 2)?;
        expect(b, 13, b':')?;
        let minute: i64 = digits(b, 14, 2)?;
        pos = 16;
        let mut second = 0.0;
        if b.get(pos) == Some(&b':') {
            let whole: i64 = digits(b, pos + 1, 2)?;
            pos += 3;
            let mut frac = String::from("0");
            if b.get(pos) == Some(&b'.') || b.get(pos) == Some(&b',') {
                frac.push('.');
                pos += 1;
                while let Some(c) = b.get(pos).filter(|c| c.is_ascii_digit()) {
                    frac.push(char::from(*c));
                    pos += 1;
                }
            }
            second = whole as f64 + frac.parse::<f64>().ok()?;
        }
        if hour > 23 || minute > 59 || second >= 61.0 {
            return None;
        }
        secs_of_day = (hour * 3600 + minute * 60) as f64 + second;
    }
    let offset = match b.get(pos) {
        None => 0,
        Some(b'Z') | Some(b'z') if pos + 1 == b.len() => 0,
        Some(sign @ (b'+' | b'-')) => {
            let hours: i64 = digits(b, pos + 1, 2)?;
            let rest = pos + 3;
            let minutes: i64 = match b.get(rest) {
                None => 0,
                Some(b':') if rest + 3 == b.len() => digits(b, rest + 1, 2)?,
                Some(_) if rest + 2 == b.len() => digits(b, rest, 2)?,
                Some(_) => return None,
            };
            let total = hours * 3600 + minutes * 60;
            if *sign == b'-' { -total } else { total }
        }
        Some(_) => return None,
    };
    let days = days_from_civil(year, month, day)?;
    Some((days * 86_400 - offset) as f64 + secs_of_day)
}

fn digits(b: &[u8], start: usize, len: usize) -> Option<i64> {
    let slice = b.get(start..start + len)?;
    if !slice.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(slice).ok()?.parse().ok()
}

fn expect(b: &[u8], at: usize, want: u8) -> Option<()> {
    (b.get(at) == Some(&want)).then_some(())
}

/// Days since 1970-01-01 of a Gregorian date (`None` outside the calendar).
fn days_from_civil(year: i64, month: i64, day: i64) -> Option<i64> {
    let date = jiff::civil::Date::new(
        i16::try_from(year).ok()?,
        i8::try_from(month).ok()?,
        i8::try_from(day).ok()?,
    )
    .ok()?;
    let midnight = jiff::tz::Offset::UTC.to_timestamp(date.into()).ok()?;
    Some(midnight.as_second().div_euclid(86_400))
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
