//! The environment block and the calendar date, computed from plain inputs.

use super::PromptInputs;

/// The host as the environment block shows it, e.g. `Linux (6.8.0-45)`;
/// `release` is the kernel or OS version when known.
pub fn host_description(os: &str, release: Option<&str>) -> String {
    let name = match os {
        "linux" => "Linux",
        "macos" => "macOS",
        "windows" => "Windows",
        "freebsd" => "FreeBSD",
        other => other,
    };
    match release.map(str::trim).filter(|r| !r.is_empty()) {
        Some(r) => format!("{name} ({r})"),
        None => name.to_owned(),
    }
}

/// Facts about where the tools run: host, home, working directory.
pub(super) fn environment_block(inputs: &PromptInputs) -> String {
    let mut lines = Vec::new();
    if !inputs.os.is_empty() {
        lines.push(format!("Host: {}", inputs.os));
    }
    if let Some(home) = &inputs.home_dir {
        lines.push(format!("User home directory: {}", home.display()));
    }
    lines.push(format!(
        "Current working directory: {}",
        inputs.cwd.display()
    ));
    lines.join("\n")
}

const WEEKDAYS: [&str; 7] = [
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
];
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

/// `Sunday, November 22, 2026` for a Unix time (UTC).
pub fn conversation_date(unix: i64) -> String {
    let days = unix.div_euclid(86_400);
    // 1970-01-01 was a Thursday, the first entry of WEEKDAYS.
    let weekday = WEEKDAYS[days.rem_euclid(7) as usize];
    let (year, month, day) = civil_from_days(days);
    let month_name = MONTHS[(month - 1).clamp(0, 11) as usize];
    format!("{weekday}, {month_name} {day:02}, {year}")
}

/// Proleptic Gregorian (year, month 1–12, day) for days since 1970-01-01,
/// using the era arithmetic of H. Hinnant's date algorithms.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}
