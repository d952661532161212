//! Cron schedules as the reference writes them in `jobs.json`: one-shot
//! delays (`30m`), intervals (`every 2h`), 5-field cron expressions and ISO
//! timestamps, and when each next runs. Cron expressions and times without
//! an offset are read in the configured [`Zone`] (as the reference reads
//! them in its clock's zone); times are stored with that zone's offset.
//!
//! The cron-expression reader is deliberately ours: text is a cron
//! expression only when its first five fields are digits and `*-,/` (the
//! reference's rule, so `30m` or a date never reads as one), and day of month
//! and day of week match as Vixie cron does (either, when both are
//! restricted); the cron crates take names and 6/7-field forms the
//! reference's job files would not agree with.

use hermes_protocol::iso_time::IsoTimestamp;
use hermes_state::time::UtcTime;

use super::zone::Zone;
use serde_json::{Value, json};

/// Seconds a one-shot may be overdue and still be scheduled.
pub const ONESHOT_GRACE_SECS: i64 = 120;

/// Now, in Unix seconds.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(0))
}

/// An ISO-8601 UTC timestamp as the reference stores them.
pub fn iso(unix: i64) -> String {
    format!("{}+00:00", UtcTime::from_unix(unix).iso())
}

/// Unix seconds of an ISO timestamp (`2030-01-15T09:30`, with seconds,
/// fractions, `Z` or a `±HH:MM` offset; a bare date is midnight). Naive
/// times are UTC.
pub fn parse_iso(text: &str) -> Option<i64> {
    IsoTimestamp::parse(text).map(|t| t.unix_secs())
}

/// As [`parse_iso`], with naive times read in `zone`.
pub fn parse_iso_in(text: &str, zone: &Zone) -> Option<i64> {
    let t = IsoTimestamp::parse(text)?;
    Some(match t.offset_secs {
        Some(offset) => t.wall_secs - i64::from(offset),
        None => zone.instant(t.wall_secs),
    })
}

/// Minutes in a duration such as `30m`, `2h`, `1 day`.
pub fn parse_minutes(text: &str) -> Option<u64> {
    let text = text.trim().to_ascii_lowercase();
    let split = text.find(|c: char| !c.is_ascii_digit())?;
    let n: u64 = text[..split].parse().ok()?;
    let unit = text[split..].trim();
    let per = match unit {
        "m" | "min" | "mins" | "minute" | "minutes" => 1,
        "h" | "hr" | "hrs" | "hour" | "hours" => 60,
        "d" | "day" | "days" => 1440,
        _ => return None,
    };
    Some(n * per)
}

/// The schedule object for `text`, as of `now`; `Err` says what is accepted.
pub fn parse_schedule(text: &str, now: i64, zone: &Zone) -> Result<Value, String> {
    let text = text.trim();
    let lower = text.to_ascii_lowercase();
    if let Some(rest) = lower.strip_prefix("every ") {
        let minutes = parse_minutes(rest).ok_or_else(|| invalid(text))?;
        return Ok(
            json!({"kind": "interval", "minutes": minutes, "display": format!("every {minutes}m")}),
        );
    }
    let fields: Vec<&str> = text.split_whitespace().collect();
    if fields.len() >= 5
        && fields[..5]
            .iter()
            .all(|f| f.chars().all(|c| c.is_ascii_digit() || "*-,/".contains(c)))
    {
        CronExpr::parse(text).map_err(|e| format!("Invalid cron expression '{text}': {e}"))?;
        return Ok(json!({"kind": "cron", "expr": text, "display": text}));
    }
    let looks_dated = text.contains('T')
        || (text.len() >= 10
            && text.as_bytes()[4] == b'-'
            && text[..4].bytes().all(|b| b.is_ascii_digit()));
    if looks_dated {
        let at = parse_iso_in(text, zone).ok_or_else(|| invalid(text))?;
        let t = zone.wall(at);
        return Ok(
            json!({"kind": "once", "run_at": zone.iso(at), "display": format!("once at {}", t.short())}),
        );
    }
    if let Some(minutes) = parse_minutes(text) {
        let at = now + i64::try_from(minutes).unwrap_or(0) * 60;
        return Ok(
            json!({"kind": "once", "run_at": zone.iso(at), "display": format!("once in {text}")}),
        );
    }
    Err(invalid(text))
}

fn invalid(text: &str) -> String {
    format!(
        "Invalid schedule '{text}'. Use:\n  - Duration: '30m', '2h', '1d' (one-shot)\n  - Interval: 'every 30m', 'every 2h' (recurring)\n  - Cron: '0 9 * * *' (cron expression)\n  - Timestamp: '2026-02-03T14:00:00' (one-shot at time)"
    )
}

/// When a job with `schedule` runs next after `last_run` (or from `now` when
/// it never ran); `None` for a one-shot that ran or is too far past.
pub fn next_run(schedule: &Value, last_run: Option<i64>, now: i64, zone: &Zone) -> Option<i64> {
    match schedule.get("kind")?.as_str()? {
        "once" => {
            let at = parse_iso(schedule.get("run_at")?.as_str()?)?;
            (last_run.is_none() && at >= now - ONESHOT_GRACE_SECS).then_some(at)
        }
        "interval" => {
            let minutes = i64::try_from(schedule.get("minutes")?.as_u64()?).ok()?;
            Some(last_run.unwrap_or(now) + minutes * 60)
        }
        "cron" => CronExpr::parse(schedule.get("expr")?.as_str()?)
            .ok()?
            .next_after(last_run.unwrap_or(now), zone),
        _ => None,
    }
}

/// How late a recurring job may fire and still count as on time: half its
/// period, between 2 minutes and 2 hours.
pub fn grace_secs(schedule: &Value, now: i64, zone: &Zone) -> i64 {
    let period = match schedule.get("kind").and_then(Value::as_str) {
        Some("interval") => schedule.get("minutes").and_then(Value::as_i64).unwrap_or(0) * 60,
        Some("cron") => next_run(schedule, Some(now), now, zone)
            .and_then(|a| next_run(schedule, Some(a), now, zone).map(|b| b - a))
            .unwrap_or(0),
        _ => 0,
    };
    (period / 2).clamp(120, 7200)
}

/// A 5-field cron expression (minute, hour, day of month, month, day of week).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CronExpr {
    minutes: Vec<bool>,
    hours: Vec<bool>,
    days: Vec<bool>,
    months: Vec<bool>,
    weekdays: Vec<bool>,
    any_day: bool,
    any_weekday: bool,
}

fn field(text: &str, lo: u32, hi: u32) -> Result<Vec<bool>, String> {
    let mut set = vec![false; hi as usize + 1];
    for part in text.split(',') {
        let (range, step) = match part.split_once('/') {
            Some((r, s)) => (
                r,
                s.parse::<u32>()
                    .map_err(|_| format!("bad step in '{part}'"))?,
            ),
            None => (part, 1),
        };
        if step == 0 {
            return Err(format!("bad step in '{part}'"));
        }
        let (a, b) = if range == "*" {
            (lo, hi)
        } else if let Some((a, b)) = range.split_once('-') {
            let a = a
                .parse::<u32>()
                .map_err(|_| format!("bad range '{part}'"))?;
            let b = b
                .parse::<u32>()
                .map_err(|_| format!("bad range '{part}'"))?;
            (a, b)
        } else {
            let a = range
                .parse::<u32>()
                .map_err(|_| format!("bad value '{part}'"))?;
            (a, if part.contains('/') { hi } else { a })
        };
        if a < lo || b > hi || a > b {
            return Err(format!("'{part}' is out of range {lo}-{hi}"));
        }
        for v in (a..=b).step_by(step as usize) {
            set[v as usize] = true;
        }
    }
    Ok(set)
}

impl CronExpr {
    /// Parses the first five fields (Sunday is 0 or 7).
    pub fn parse(text: &str) -> Result<Self, String> {
        let f: Vec<&str> = text.split_whitespace().collect();
        if f.len() < 5 {
            return Err("expected five fields: minute hour day-of-month month day-of-week".into());
        }
        let mut weekdays = field(f[4], 0, 7)?;
        if weekdays[7] {
            weekdays[0] = true;
        }
        Ok(Self {
            minutes: field(f[0], 0, 59)?,
            hours: field(f[1], 0, 23)?,
            days: field(f[2], 1, 31)?,
            months: field(f[3], 1, 12)?,
            weekdays,
            any_day: f[2] == "*",
            any_weekday: f[4] == "*",
        })
    }

    fn day_matches(&self, t: &UtcTime, wall: i64) -> bool {
        // 1970-01-01 was a Thursday (4).
        let weekday = ((wall.div_euclid(86_400) + 4).rem_euclid(7)) as usize;
        let dom = self.days[t.day as usize];
        let dow = self.weekdays[weekday];
        // As cron does: with both restricted, either one matching is enough.
        match (self.any_day, self.any_weekday) {
            (true, true) => true,
            (true, false) => dow,
            (false, true) => dom,
            (false, false) => dom || dow,
        }
    }

    /// The first minute strictly after `unix` whose wall clock in `zone` matches.
    pub fn next_after(&self, unix: i64, zone: &Zone) -> Option<i64> {
        let mut t = (unix.div_euclid(60) + 1) * 60;
        // Four years of minutes bounds the search (29 February included).
        let end = t + 4 * 366 * 86_400;
        while t < end {
            let offset = zone.offset_at(t);
            let wall = t + offset;
            let c = UtcTime::from_unix(wall);
            if !self.months[c.month as usize] || !self.day_matches(&c, wall) {
                // To the next local midnight; an hour early, in case the
                // offset changes that night (the loop checks again).
                let midnight = (wall.div_euclid(86_400) + 1) * 86_400 - offset - 3600;
                t = (midnight.div_euclid(60) * 60).max(t + 60);
                continue;
            }
            if !self.hours[c.hour as usize] {
                let hour = (wall.div_euclid(3600) + 1) * 3600 - offset;
                t = (hour.div_euclid(60) * 60).max(t + 60);
                continue;
            }
            if self.minutes[c.minute as usize] {
                return Some(t);
            }
            t += 60;
        }
        None
    }
}

#[cfg(test)]
#[path = "schedule_tests.rs"]
mod tests;
