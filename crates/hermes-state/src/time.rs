//! Unix timestamps as UTC calendar times in the formats Hermes writes (the
//! calendar itself is `jiff`'s).

/// A UTC calendar time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UtcTime {
    /// Year.
    pub year: i64,
    /// Month, 1–12.
    pub month: u32,
    /// Day of month, 1–31.
    pub day: u32,
    /// Hour, 0–23.
    pub hour: u32,
    /// Minute.
    pub minute: u32,
    /// Second.
    pub second: u32,
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// Weekday names from Sunday.
const WEEKDAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// `unix_secs` as a UTC civil date-time (clamped to jiff's range, years ±9999).
fn civil(unix_secs: i64) -> jiff::civil::DateTime {
    let at = jiff::Timestamp::from_second(unix_secs).unwrap_or(if unix_secs < 0 {
        jiff::Timestamp::MIN
    } else {
        jiff::Timestamp::MAX
    });
    jiff::tz::Offset::UTC.to_datetime(at)
}

impl UtcTime {
    /// `Sunday, November 22, 2026`: the weekday and date of `unix_secs` (UTC).
    pub fn weekday_date(unix_secs: i64) -> String {
        let weekday = WEEKDAYS[civil(unix_secs).weekday().to_sunday_zero_offset() as usize];
        let t = Self::from_unix(unix_secs);
        let month = MONTHS
            .get(t.month.saturating_sub(1) as usize)
            .copied()
            .unwrap_or("?");
        format!("{weekday}, {month} {:02}, {}", t.day, t.year)
    }

    /// The calendar time of `unix_secs` seconds since 1970-01-01 UTC.
    pub fn from_unix(unix_secs: i64) -> Self {
        let t = civil(unix_secs);
        let field = |v: i8| u32::try_from(v).unwrap_or(0);
        Self {
            year: i64::from(t.year()),
            month: field(t.month()),
            day: field(t.day()),
            hour: field(t.hour()),
            minute: field(t.minute()),
            second: field(t.second()),
        }
    }

    /// Seconds since 1970-01-01 UTC; the inverse of [`from_unix`](Self::from_unix).
    /// Days past a month's end run into the next month (as `mktime` does);
    /// a year or month outside the calendar gives the nearest end of it.
    pub fn to_unix(&self) -> i64 {
        let year = i16::try_from(self.year.clamp(-9999, 9999)).unwrap_or(1970);
        let month = i8::try_from(self.month.clamp(1, 12)).unwrap_or(1);
        let first = jiff::civil::Date::new(year, month, 1)
            .ok()
            .and_then(|d| jiff::tz::Offset::UTC.to_timestamp(d.into()).ok())
            .map_or(0, |t| t.as_second());
        first
            + (i64::from(self.day) - 1) * 86_400
            + i64::from(self.hour) * 3_600
            + i64::from(self.minute) * 60
            + i64::from(self.second)
    }

    /// `YYYYMMDD_HHMMSS`, the prefix of session ids.
    pub fn compact(&self) -> String {
        format!(
            "{:04}{:02}{:02}_{:02}{:02}{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }

    /// `YYYY-MM-DDTHH:MM:SS` (Python's `isoformat()` without a zone).
    pub fn iso(&self) -> String {
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }

    /// `YYYY-MM-DD HH:MM`.
    pub fn short(&self) -> String {
        format!(
            "{:04}-{:02}-{:02} {:02}:{:02}",
            self.year, self.month, self.day, self.hour, self.minute
        )
    }

    /// `November 22, 2026 at 04:34 AM`, the reference's human format.
    pub fn long(&self) -> String {
        let month = MONTHS
            .get(self.month.saturating_sub(1) as usize)
            .copied()
            .unwrap_or("?");
        let (h12, ampm) = match self.hour {
            0 => (12, "AM"),
            1..=11 => (self.hour, "AM"),
            12 => (12, "PM"),
            h => (h - 12, "PM"),
        };
        format!(
            "{month} {:02}, {} at {:02}:{:02} {ampm}",
            self.day, self.year, h12, self.minute
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates() {
        assert_eq!(UtcTime::from_unix(0).compact(), "19700101_000000");
        for t in [0, 951_782_400, 1_795_322_096, -86_401] {
            assert_eq!(UtcTime::from_unix(t).to_unix(), t);
        }
        assert_eq!(
            UtcTime::from_unix(1_795_322_096).compact(),
            "20261122_043456"
        );
        assert_eq!(UtcTime::from_unix(951_782_400).short(), "2000-02-29 00:00");
        assert_eq!(
            UtcTime::weekday_date(1_795_322_096),
            "Sunday, November 22, 2026"
        );
        assert_eq!(UtcTime::weekday_date(0), "Thursday, January 01, 1970");
        assert_eq!(
            UtcTime::from_unix(1_795_322_096).long(),
            "November 22, 2026 at 04:34 AM"
        );
        assert_eq!(
            UtcTime::from_unix(1_795_363_200).long(),
            "November 22, 2026 at 04:00 PM"
        );
    }
}
