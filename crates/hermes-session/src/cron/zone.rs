//! The time zone cron schedules are read in, resolved as the reference's
//! clock does: `HERMES_TIMEZONE`, else `timezone:` in config.yaml (an IANA
//! name), else the server's local time (`TZ`, else `/etc/localtime`); a name
//! that does not resolve falls back to local time with a warning.

use hermes_state::time::UtcTime;

/// A time zone: UTC, or rules from the tz database.
#[derive(Clone, Default)]
pub struct Zone {
    /// `jiff`'s rules (its zones are cheap to clone).
    rules: Option<jiff::tz::TimeZone>,
    name: String,
}

impl std::fmt::Debug for Zone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Zone").field(&self.name()).finish()
    }
}

impl Zone {
    /// The zone of `setup`'s clock (see the module docs), with a warning
    /// when its configured name was not understood.
    pub fn for_setup(setup: &crate::Setup) -> (Self, Option<String>) {
        let configured = setup
            .env
            .get("HERMES_TIMEZONE")
            .map(str::to_owned)
            .or_else(|| {
                setup
                    .config
                    .raw
                    .pointer("/timezone")
                    .and_then(serde_json::Value::as_str)
                    .map(str::to_owned)
            });
        Self::resolve(configured.as_deref(), setup.env.get("TZ"))
    }

    /// Coordinated Universal Time.
    pub fn utc() -> Self {
        Self::default()
    }

    /// An IANA zone (`Europe/Paris`) or POSIX TZ string (`CET-1CEST,M3.5.0,M10.5.0/3`).
    pub fn named(name: &str) -> Result<Self, String> {
        let name = name.trim().trim_start_matches(':');
        if name.is_empty() || name.contains("..") {
            return Err(format!("invalid time zone {name:?}"));
        }
        if name.eq_ignore_ascii_case("utc") || name == "Etc/UTC" || name == "Z" {
            return Ok(Self::utc());
        }
        // An IANA name from the system's zoneinfo, else a POSIX TZ string.
        let rules = jiff::tz::TimeZone::get(name)
            .or_else(|_| jiff::tz::TimeZone::posix(name))
            .map_err(|e| format!("unknown time zone {name:?} ({e})"))?;
        Ok(Self {
            rules: Some(rules),
            name: name.to_owned(),
        })
    }

    /// The zone the reference's clock uses: `hermes_timezone` (the variable
    /// or the config key), else the server's (`tz_env`, else
    /// /etc/localtime). Returns a warning when a configured name was not
    /// understood.
    pub fn resolve(hermes_timezone: Option<&str>, tz_env: Option<&str>) -> (Self, Option<String>) {
        let mut warning = None;
        if let Some(name) = hermes_timezone.map(str::trim).filter(|n| !n.is_empty()) {
            match Self::named(name) {
                Ok(zone) => return (zone, None),
                Err(e) => warning = Some(format!("{e}: using the server's local time")),
            }
        }
        let local = match tz_env.map(str::trim).filter(|n| !n.is_empty()) {
            Some(tz) => Self::named(tz).ok(),
            None => std::fs::read("/etc/localtime")
                .ok()
                .and_then(|bytes| jiff::tz::TimeZone::tzif("localtime", &bytes).ok())
                .map(|rules| Self {
                    rules: Some(rules),
                    name: "localtime".to_owned(),
                }),
        };
        (local.unwrap_or_default(), warning)
    }

    /// Its name (`UTC` for UTC).
    pub fn name(&self) -> &str {
        if self.rules.is_none() {
            "UTC"
        } else {
            &self.name
        }
    }

    /// Seconds east of UTC at the instant `unix`.
    pub fn offset_at(&self, unix: i64) -> i64 {
        let (Some(rules), Ok(at)) = (&self.rules, jiff::Timestamp::from_second(unix)) else {
            return 0;
        };
        i64::from(rules.to_offset(at).seconds())
    }

    /// The wall clock at `unix`.
    pub fn wall(&self, unix: i64) -> UtcTime {
        UtcTime::from_unix(unix + self.offset_at(unix))
    }

    /// The instant a wall-clock time (as Unix seconds of that wall clock in
    /// UTC) names here. In a gap (clocks put forward) it is the instant the
    /// wall clock would have shown it with the earlier offset; in an overlap,
    /// the first of the two.
    pub fn instant(&self, wall: i64) -> i64 {
        let before = self.offset_at(wall - 86_400);
        let first = wall - before;
        if self.offset_at(first) == before {
            return first;
        }
        let after = self.offset_at(wall + 86_400);
        let second = wall - after;
        if self.offset_at(second) == after {
            second
        } else {
            first
        }
    }

    /// ISO-8601 with this zone's offset, as the reference stores times.
    pub fn iso(&self, unix: i64) -> String {
        let offset = self.offset_at(unix);
        let sign = if offset < 0 { '-' } else { '+' };
        let abs = offset.abs();
        format!(
            "{}{sign}{:02}:{:02}",
            UtcTime::from_unix(unix + offset).iso(),
            abs / 3600,
            abs % 3600 / 60
        )
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    const CET: &str = "CET-1CEST,M3.5.0,M10.5.0/3";

    #[test]
    fn offsets_follow_summer_time() {
        let paris = Zone::named(CET).unwrap();
        // 2026-01-15T12:00Z is winter (+1), 2026-07-15T12:00Z summer (+2).
        assert_eq!(paris.offset_at(1_768_478_400), 3600);
        assert_eq!(paris.offset_at(1_784_116_800), 7200);
        assert_eq!(paris.iso(1_768_478_400), "2026-01-15T13:00:00+01:00");
        assert_eq!(Zone::utc().iso(1_768_478_400), "2026-01-15T12:00:00+00:00");
    }

    #[test]
    fn wall_times_map_back_to_instants_across_changes() {
        let paris = Zone::named(CET).unwrap();
        // 09:00 local on 2026-07-15 is 07:00Z.
        let wall = UtcTime {
            year: 2026,
            month: 7,
            day: 15,
            hour: 9,
            minute: 0,
            second: 0,
        }
        .to_unix();
        assert_eq!(paris.instant(wall), wall - 7200);
        // 02:30 on 2026-03-29 does not exist in Paris (02:00 → 03:00): the
        // earlier offset places it at 01:30Z.
        let gap = UtcTime {
            year: 2026,
            month: 3,
            day: 29,
            hour: 2,
            minute: 30,
            second: 0,
        }
        .to_unix();
        assert_eq!(paris.instant(gap), gap - 3600);
    }

    #[test]
    fn unknown_names_fall_back_with_a_warning() {
        let (zone, warning) = Zone::resolve(Some("Mars/Olympus"), Some("UTC"));
        assert_eq!(zone.name(), "UTC");
        assert!(warning.unwrap().contains("Mars/Olympus"));
        let (zone, warning) = Zone::resolve(None, Some(CET));
        assert_eq!(zone.name(), CET);
        assert!(warning.is_none());
        assert!(Zone::named("../etc/passwd").is_err());
    }
}
