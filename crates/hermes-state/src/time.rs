//! Calendar arithmetic for Unix timestamps (UTC), without a date-time dependency.

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

/// 1970-01-01 was a Thursday.
const WEEKDAYS: [&str; 7] = [
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
];

impl UtcTime {
    /// `Sunday, November 22, 2026`: the weekday and date of `unix_secs` (UTC).
    pub fn weekday_date(unix_secs: i64) -> String {
        let weekday = WEEKDAYS[unix_secs.div_euclid(86_400).rem_euclid(7) as usize];
        let t = Self::from_unix(unix_secs);
        let month = MONTHS
            .get(t.month.saturating_sub(1) as usize)
            .copied()
            .unwrap_or("?");
        format!("{weekday}, {month} {:02}, {}", t.day, t.year)
    }

    /// The calendar time of `unix_secs` seconds since 1970-01-01 UTC.
    pub fn from_unix(unix_secs: i64) -> Self {
        let days = unix_secs.div_euclid(86_400);
        let rem = unix_secs.rem_euclid(86_400) as u32;
        // Howard Hinnant's days-to-civil algorithm.
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = yoe + era * 400 + i64::from(month <= 2);
        Self {
            year,
            month,
            day,
            hour: rem / 3600,
            minute: (rem % 3600) / 60,
            second: rem % 60,
        }
    }

    /// Seconds since 1970-01-01 UTC; the inverse of [`from_unix`](Self::from_unix).
    pub fn to_unix(&self) -> i64 {
        // Howard Hinnant's civil-to-days algorithm.
        let (m, d) = (i64::from(self.month), i64::from(self.day));
        let y = if m <= 2 { self.year - 1 } else { self.year };
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        let days = era * 146_097 + doe - 719_468;
        days * 86_400
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
