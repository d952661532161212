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
    let days = days_from_civil(year, month, day);
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

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of a day count since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `2026-11-22T05:52:54.153494+00:00`, the shape Python's
/// `datetime.now(timezone.utc).isoformat()` writes.
pub(crate) fn format_iso_utc(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let micros = d.subsec_micros();
    let (year, month, day) = civil_from_days(secs.div_euclid(86_400));
    let sod = secs.rem_euclid(86_400);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{micros:06}+00:00",
        sod / 3600,
        (sod % 3600) / 60,
        sod % 60
    )
}

#[cfg(test)]
#[path = "timefmt_tests.rs"]
mod tests;
