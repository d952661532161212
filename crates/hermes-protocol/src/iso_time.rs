//! The one reader of ISO-8601 timestamps as Hermes files hold them: what
//! Python's `datetime.isoformat()` writes and `fromisoformat()` reads back
//! (`2026-11-25T11:30:39.931666+00:00`, `2030-01-15 09:30`, `…Z`, `…-0500`,
//! a bare date). jiff's Temporal grammar covers exactly that set; a bracketed
//! zone annotation is refused, as Python refuses it.

use jiff::fmt::temporal::{Pieces, PiecesOffset};

/// A timestamp as written: its wall clock and, when it names one, its offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IsoTimestamp {
    /// Seconds of the wall clock since 1970-01-01T00:00 of that clock.
    pub wall_secs: i64,
    /// Nanoseconds past `wall_secs`.
    pub subsec_nanos: i32,
    /// Seconds east of UTC (`None` for a naive time; `Z` is `Some(0)`).
    pub offset_secs: Option<i32>,
}

impl IsoTimestamp {
    /// Reads `text` (surrounding whitespace ignored); `None` when it is not
    /// an ISO-8601 date or date-time.
    pub fn parse(text: &str) -> Option<Self> {
        let pieces = Pieces::parse(text.trim()).ok()?;
        if pieces.time_zone_annotation().is_some() {
            return None;
        }
        let time = pieces.time().unwrap_or_default();
        let wall = pieces.date().to_datetime(time);
        let wall_secs = jiff::tz::Offset::UTC.to_timestamp(wall).ok()?.as_second();
        let offset_secs = match pieces.offset() {
            None => None,
            Some(PiecesOffset::Zulu) => Some(0),
            // Python refuses offsets of a day or more; jiff reads up to 25 h.
            Some(PiecesOffset::Numeric(n)) if n.offset().seconds().abs() < 86_400 => {
                Some(n.offset().seconds())
            }
            Some(_) => return None,
        };
        Some(Self {
            wall_secs,
            subsec_nanos: time.subsec_nanosecond(),
            offset_secs,
        })
    }

    /// Unix seconds, a naive time read as UTC.
    pub fn unix_secs(&self) -> i64 {
        self.wall_secs - i64::from(self.offset_secs.unwrap_or(0))
    }

    /// Unix seconds with the fraction, a naive time read as UTC.
    pub fn unix_secs_f64(&self) -> f64 {
        self.unix_secs() as f64 + f64::from(self.subsec_nanos) / 1e9
    }
}

#[cfg(test)]
mod tests {
    use super::IsoTimestamp;

    fn unix(text: &str) -> Option<i64> {
        IsoTimestamp::parse(text).map(|t| t.unix_secs())
    }

    #[test]
    fn reads_every_form_python_writes_or_reads() {
        let utc = unix("2030-01-15T14:30:00Z");
        assert_eq!(utc, Some(1_894_717_800));
        for form in [
            "2030-01-15T14:30:00+00:00",
            "2030-01-15 14:30:00",
            "2030-01-15T14:30",
            "2030-01-15T09:30:00-05:00",
            "2030-01-15T09:30:00-0500",
            "2030-01-15T09:30:00-05",
            "2030-01-15T20:00+0530",
            "2030-01-15t14:30:00z",
            " 2030-01-15T14:30:00.000000+00:00 ",
        ] {
            assert_eq!(unix(form), utc, "{form}");
        }
        assert_eq!(unix("1970-01-01"), Some(0));
        let t = IsoTimestamp::parse("2026-11-25T11:30:39.931666+00:00");
        assert_eq!(t.map(|t| t.subsec_nanos), Some(931_666_000));
    }

    #[test]
    fn refuses_what_is_not_a_timestamp() {
        for bad in [
            "yesterday",
            "",
            "2026-13-01T00:00:00",
            "2026-02-30",
            "2030-01-15T09:30:00-2500",
            "2030-01-15T09:30:00+24:00",
            "2030-01-15T09:30:00+05:75",
            "2030-01-15T25:00",
            "2030-01-15T09:30:00+00:00[Europe/Paris]",
        ] {
            assert_eq!(unix(bad), None, "{bad}");
        }
    }

    #[test]
    fn keeps_a_naive_time_naive() {
        let t = IsoTimestamp::parse("2030-01-15T09:30");
        assert_eq!(t.map(|t| t.offset_secs), Some(None));
        let t = IsoTimestamp::parse("2030-01-15T09:30Z");
        assert_eq!(t.map(|t| t.offset_secs), Some(Some(0)));
    }
}
