//! Text helpers for the classifier: secret redaction, the short message, and
//! wait times spelled out in error text.

use std::time::Duration;

/// Longest [`super::ClassifiedError::message`], in characters.
pub(crate) const MAX_MESSAGE_CHARS: usize = 500;

/// Longest wait the classifier reports (a pathological `retry-after` is
/// clamped rather than trusted).
pub(crate) const MAX_RETRY_AFTER: Duration = Duration::from_secs(600);

/// What replaces a secret.
const REDACTED: &str = "[REDACTED]";

/// Vendor key prefixes and the fewest token characters that must follow.
const KEY_PREFIXES: &[(&str, usize)] = &[
    ("sk-", 10),
    ("sk_", 10),
    ("ghp_", 10),
    ("github_pat_", 10),
    ("gho_", 10),
    ("ghu_", 10),
    ("ghs_", 10),
    ("ghr_", 10),
    ("xoxb-", 10),
    ("xoxa-", 10),
    ("xoxp-", 10),
    ("xoxr-", 10),
    ("xoxs-", 10),
    ("xapp-", 10),
    ("AIza", 30),
    ("pplx-", 10),
    ("hf_", 10),
    ("gsk_", 10),
    ("r8_", 10),
    ("xai-", 30),
    ("fw-", 30),
    ("fw_", 30),
    ("fpk_", 30),
    ("tvly-", 10),
    ("exa_", 10),
    ("nvapi-", 10),
    ("AKIA", 16),
];

/// Parameter names whose `name=value` or `"name": "value"` value is secret.
const SECRET_PARAMS: &[&str] = &[
    "api_key",
    "apikey",
    "api-key",
    "x-api-key",
    "access_token",
    "refresh_token",
    "id_token",
    "client_secret",
    "password",
    "secret",
    "token",
    "key",
];

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// `text` with API keys, bearer tokens and secret parameters replaced.
pub(crate) fn redact(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        let at_boundary = i == 0 || !is_token_byte(bytes[i - 1]);
        if at_boundary
            && text.is_char_boundary(i)
            && let Some((keep, end)) = secret_at(text, i)
        {
            out.push_str(&text[copied..i + keep]);
            out.push_str(REDACTED);
            copied = end;
            i = end;
            continue;
        }
        i += 1;
    }
    out.push_str(&text[copied..]);
    out
}

/// A secret starting at `i`: how many bytes of lead-in to keep and where the
/// secret ends.
fn secret_at(text: &str, i: usize) -> Option<(usize, usize)> {
    let rest = &text[i..];
    let bytes = rest.as_bytes();
    let run = |from: usize, ok: fn(u8) -> bool| {
        from + bytes[from..].iter().take_while(|b| ok(**b)).count()
    };
    for (prefix, min) in KEY_PREFIXES {
        if rest.starts_with(prefix) {
            let end = run(prefix.len(), is_token_byte);
            if end - prefix.len() >= *min {
                return Some((0, i + end));
            }
        }
    }
    if starts_with_ignore_case(rest, "bearer") {
        let spaces = run(6, |b| b == b' ');
        let end = run(spaces, |b| {
            !b.is_ascii_whitespace() && !b"\"',;".contains(&b)
        });
        if spaces > 6 && end > spaces {
            return Some((spaces, i + end));
        }
    }
    for name in SECRET_PARAMS {
        if !starts_with_ignore_case(rest, name) {
            continue;
        }
        let after = name.len();
        if bytes.get(after) == Some(&b'=') {
            let end = run(after + 1, |b| !b"&\"' ,;)\r\n\t".contains(&b));
            if end > after + 1 {
                return Some((after + 1, i + end));
            }
        } else if bytes.get(after) == Some(&b'"') && i > 0 && text.as_bytes()[i - 1] == b'"' {
            // JSON: "name": "value"
            let colon = run(after + 1, |b| b == b' ');
            if bytes.get(colon) != Some(&b':') {
                continue;
            }
            let quote = run(colon + 1, |b| b == b' ');
            if bytes.get(quote) != Some(&b'"') {
                continue;
            }
            let end = run(quote + 1, |b| b != b'"');
            if end > quote + 1 {
                return Some((quote + 1, i + end));
            }
        }
    }
    None
}

fn starts_with_ignore_case(text: &str, prefix: &str) -> bool {
    text.len() >= prefix.len()
        && text.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

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
