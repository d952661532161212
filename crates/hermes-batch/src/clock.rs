//! Timestamps as the reference writes them: local wall-clock time,
//! ISO-8601 without a zone, microseconds when non-zero (Python's
//! `datetime.now().isoformat()`).

use std::time::{SystemTime, UNIX_EPOCH};

use hermes_session::cron::zone::Zone;

/// Stamps times in one zone.
#[derive(Debug, Clone, Default)]
pub struct Clock {
    zone: Zone,
}

impl Clock {
    /// A clock in `zone`.
    pub fn new(zone: Zone) -> Self {
        Self { zone }
    }

    /// A clock in the zone the setup's clock uses (`HERMES_TIMEZONE`,
    /// `timezone:`, else the server's local time).
    pub fn for_setup(setup: &hermes_session::Setup) -> Self {
        Self::new(Zone::for_setup(setup).0)
    }

    /// `t` as `YYYY-MM-DDTHH:MM:SS[.ffffff]` local time.
    pub fn stamp_at(&self, t: SystemTime) -> String {
        let since = t.duration_since(UNIX_EPOCH).unwrap_or_default();
        let secs = i64::try_from(since.as_secs()).unwrap_or(i64::MAX);
        let wall = self.zone.wall(secs).iso();
        match since.subsec_micros() {
            0 => wall,
            micros => format!("{wall}.{micros:06}"),
        }
    }

    /// Now, stamped.
    pub fn now(&self) -> String {
        self.stamp_at(SystemTime::now())
    }
}

#[cfg(test)]
#[path = "clock_tests.rs"]
mod tests;
