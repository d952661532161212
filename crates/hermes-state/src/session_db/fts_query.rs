//! Turning user input into a safe FTS5 `MATCH` expression, as the reference's
//! `_sanitize_fts5_query` does, plus the CJK helpers that route queries to the trigram index.

use std::sync::LazyLock;

use regex::Regex;

/// Longest query considered, in characters; the rest is ignored.
pub const MAX_FTS5_QUERY_CHARS: usize = 2048;

const PLACEHOLDER_MARK: char = '\u{0}';

static SPECIAL: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r#"[+{}():"^]"#).ok());
static STAR_RUN: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"\*+").ok());
static LEADING_STAR: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"(^|\s)\*").ok());
static LEADING_OP: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?i)^(AND|OR|NOT)\b\s*").ok());
static TRAILING_OP: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?i)\s+(AND|OR|NOT)\s*$").ok());
static JOINED_TERM: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"\b(\w+(?:[._-]\w+)+)\b").ok());

fn sub(re: &LazyLock<Option<Regex>>, text: &str, rep: &str) -> String {
    match &**re {
        Some(re) => re.replace_all(text, rep).into_owned(),
        None => text.to_owned(),
    }
}

/// Makes user input safe for FTS5 `MATCH` while keeping its useful syntax: balanced
/// `"phrases"`, `prefix*` and `AND`/`OR`/`NOT` pass through; unbalanced quotes, grouping,
/// column filters (`col:`), `+ { } ^`, leading `*` and dangling operators are removed; and
/// dotted, hyphenated or underscored terms (`chat-send`, `P2.2`) are quoted as phrases.
/// Output equals the reference's for the same input (inputs without NUL characters).
pub fn sanitize_fts5_query(query: &str) -> String {
    let query: String = query.chars().take(MAX_FTS5_QUERY_CHARS).collect();

    // Protect balanced quoted phrases behind numbered placeholders (linear scan).
    let mut phrases: Vec<&str> = Vec::new();
    let mut rest = String::with_capacity(query.len());
    let mut i = 0;
    while let Some(off) = query[i..].find('"') {
        let start = i + off;
        rest.push_str(&query[i..start]);
        match query[start + 1..].find('"') {
            Some(len) => {
                let end = start + 1 + len;
                phrases.push(&query[start..=end]);
                rest.push(PLACEHOLDER_MARK);
                rest.push('Q');
                rest.push_str(&(phrases.len() - 1).to_string());
                rest.push(PLACEHOLDER_MARK);
                i = end + 1;
            }
            None => {
                rest.push(' ');
                i = start + 1;
            }
        }
    }
    rest.push_str(&query[i..]);

    let s = sub(&SPECIAL, &rest, " ");
    let s = sub(&STAR_RUN, &s, "*");
    let s = sub(&LEADING_STAR, &s, "${1}");
    let s = sub(&LEADING_OP, s.trim(), "");
    let s = sub(&TRAILING_OP, s.trim(), "");
    let mut s = sub(&JOINED_TERM, &s, "\"${1}\"");
    for (n, phrase) in phrases.iter().enumerate() {
        s = s.replace(&format!("{PLACEHOLDER_MARK}Q{n}{PLACEHOLDER_MARK}"), phrase);
    }
    s.trim().to_owned()
}

/// Whether `query` is one of the FTS5 boolean operators.
pub fn is_operator(token: &str) -> bool {
    ["AND", "OR", "NOT"]
        .iter()
        .any(|op| token.eq_ignore_ascii_case(op))
}

/// Quotes a token as an FTS5 string (phrase), doubling inner quotes.
pub(crate) fn quote(token: &str) -> String {
    format!("\"{}\"", token.replace('"', "\"\""))
}

/// A last-resort literal form of a sanitised query that FTS5 still rejected: every
/// non-operator token becomes a quoted phrase (implicitly AND-ed). `None` when nothing is left.
pub(crate) fn literal_query(sanitized: &str) -> Option<String> {
    let parts: Vec<String> = sanitized
        .split_whitespace()
        .filter(|t| !is_operator(t))
        .map(|t| t.trim_matches('"'))
        .filter(|t| t.chars().any(char::is_alphanumeric))
        .map(quote)
        .collect();
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// Splits a sanitised query into terms, keeping `"quoted phrases"` whole.
pub fn terms(sanitized: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = sanitized.trim_start();
    while !rest.is_empty() {
        let end = if let Some(body) = rest.strip_prefix('"') {
            body.find('"').map_or(rest.len(), |i| i + 2)
        } else {
            rest.find(char::is_whitespace).unwrap_or(rest.len())
        };
        out.push(&rest[..end]);
        rest = rest[end..].trim_start();
    }
    out
}

/// A trigram (substring) form of a sanitised query: each word or phrase becomes a quoted
/// substring (prefix `*` dropped), operators kept. `None` when some term is shorter than
/// three characters (the trigram index cannot match it) or nothing is left.
pub(crate) fn trigram_query(sanitized: &str) -> Option<String> {
    let mut parts = Vec::new();
    let mut n = 0;
    for term in terms(sanitized) {
        if is_operator(term) {
            parts.push(term.to_ascii_uppercase());
            continue;
        }
        let bare = term.trim_matches(|c| c == '"' || c == '*');
        if bare.chars().count() < 3 {
            return None;
        }
        parts.push(quote(bare));
        n += 1;
    }
    (n > 0).then(|| parts.join(" "))
}

/// CJK ideographs, symbols, kana and Hangul syllables (the reference's ranges).
pub(crate) fn is_cjk(c: char) -> bool {
    matches!(u32::from(c),
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x3000..=0x303F
        | 0x3040..=0x309F | 0x30A0..=0x30FF | 0xAC00..=0xD7AF)
}

/// Whether `text` has any CJK character.
pub fn contains_cjk(text: &str) -> bool {
    text.chars().any(is_cjk)
}

/// Number of CJK characters in `text`.
pub fn count_cjk(text: &str) -> usize {
    text.chars().filter(|c| is_cjk(*c)).count()
}

#[cfg(test)]
#[path = "fts_query_tests.rs"]
mod tests;
