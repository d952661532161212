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

/// `Sunday, November 22, 2026` for a Unix time (UTC).
pub fn conversation_date(unix: i64) -> String {
    hermes_state::time::UtcTime::weekday_date(unix)
}
