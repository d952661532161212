//! `$HERMES_HOME/.hermes_history` in prompt_toolkit's `FileHistory` format, the
//! one the reference writes, so both programs can share one history:
//!
//! ```text
//!
//! # 2026-11-22 10:15:02
//! +first line of an entry
//! +second line of the same entry
//! ```

use std::io::Write;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use hermes_state::time::UtcTime;

/// Entries in file order (oldest first); a missing or unreadable file has none.
pub fn load(path: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    parse(&text)
}

/// Parses the file's text.
pub fn parse(text: &str) -> Vec<String> {
    let mut entries = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    for line in text.lines() {
        if let Some(body) = line.strip_prefix('+') {
            current.push(body);
        } else if !current.is_empty() {
            entries.push(current.join("\n"));
            current.clear();
        }
    }
    if !current.is_empty() {
        entries.push(current.join("\n"));
    }
    entries
}

/// The text one entry adds to the file.
pub fn format_entry(entry: &str, unix_secs: i64) -> String {
    let t = UtcTime::from_unix(unix_secs);
    let stamp = t.compact();
    // `YYYYMMDD_HHMMSS` → `YYYY-MM-DD HH:MM:SS`: the comment line is for people only.
    let human = format!(
        "{}-{}-{} {}:{}:{}",
        &stamp[0..4],
        &stamp[4..6],
        &stamp[6..8],
        &stamp[9..11],
        &stamp[11..13],
        &stamp[13..15]
    );
    let mut out = format!("\n# {human}\n");
    for line in entry.split('\n') {
        out.push('+');
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Appends one entry; the file is created when missing.
pub fn append(path: &Path, entry: &str) -> std::io::Result<()> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    file.write_all(format_entry(entry, now).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_in_the_reference_format() {
        let text = format!(
            "{}{}",
            format_entry("hello", 0),
            format_entry("two\nlines", 60)
        );
        assert_eq!(
            text,
            "\n# 1970-01-01 00:00:00\n+hello\n\n# 1970-01-01 00:01:00\n+two\n+lines\n"
        );
        assert_eq!(parse(&text), vec!["hello", "two\nlines"]);
    }

    #[test]
    fn a_file_written_by_prompt_toolkit_loads() {
        let text = "\n# 2025-01-01 10:00:00.123456\n+/model\n\n# 2025-01-01 10:01:00.5\n+a\n+  b\n";
        assert_eq!(parse(text), vec!["/model", "a\n  b"]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".hermes_history");
        assert!(load(&path).is_empty());
        append(&path, "x").unwrap();
        append(&path, "y\nz").unwrap();
        assert_eq!(load(&path), vec!["x", "y\nz"]);
    }
}
