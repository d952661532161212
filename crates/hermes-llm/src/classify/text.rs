//! Text helpers for the classifier: the short message and wait times spelled
//! out in error text (secret redaction lives in [`crate::redact`]).

use std::time::Duration;

/// Longest [`super::ClassifiedError::message`], in characters.
pub(crate) const MAX_MESSAGE_CHARS: usize = 500;

/// Longest wait the classifier reports (a pathological `retry-after` is
/// clamped rather than trusted).
pub(crate) const MAX_RETRY_AFTER: Duration = Duration::from_secs(600);

/// The first [`MAX_MESSAGE_CHARS`] characters of `text`, trimmed.
pub(crate) fn short(text: &str) -> String {
    text.trim().chars().take(MAX_MESSAGE_CHARS).collect()
}

/// Phrases after which providers spell out how long to wait.
const WAIT_PHRASES: &[&str] = &[
    "retry after",
    "retry-after",
    "try again in",
    "retry in",
    "quotaresetdelay",
];

/// A wait spelled out in lower-cased error text ("try again in 5 minutes",
/// "please retry after 30s", "quotaResetDelay: 1500ms").
pub(crate) fn wait_in_text(haystack: &str) -> Option<Duration> {
    WAIT_PHRASES.iter().find_map(|phrase| {
        haystack
            .match_indices(phrase)
            .find_map(|(at, _)| parse_wait(&haystack[at + phrase.len()..]))
    })
}

/// Parses `[: "=]* NUMBER [ ]* UNIT?` at the start of `text`.
fn parse_wait(text: &str) -> Option<Duration> {
    let text = text.trim_start_matches([' ', ':', '=', '"']);
    let digits = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let value: f64 = text[..digits].parse().ok()?;
    let rest = text[digits..].trim_start();
    let unit_len = rest
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    let scale = match &rest[..unit_len] {
        "ms" | "msec" | "millisecond" | "milliseconds" => 0.001,
        "m" | "min" | "mins" | "minute" | "minutes" => 60.0,
        "h" | "hr" | "hrs" | "hour" | "hours" => 3600.0,
        _ => 1.0,
    };
    let secs = value * scale;
    (secs.is_finite() && secs > 0.0).then(|| clamp_wait(Duration::from_secs_f64(secs.min(1e9))))
}

/// `wait` clamped to [`MAX_RETRY_AFTER`].
pub(crate) fn clamp_wait(wait: Duration) -> Duration {
    wait.min(MAX_RETRY_AFTER)
}
