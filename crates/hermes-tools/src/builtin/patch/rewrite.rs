//! Turning located matches into edited text: uniqueness rules, indentation
//! and escape repair of the replacement, and "did you mean" hints.

use super::fuzzy::{self, Span, Strategy};

/// Why a find-and-replace did not happen.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum MatchError {
    /// `old_string` was empty.
    Empty,
    /// `old_string` and `new_string` are the same.
    Identical,
    /// No strategy found the text.
    NotFound,
    /// Found more than once without `replace_all`.
    Ambiguous(usize),
    /// The replacement carries transport escape artefacts (`\'`, `\"`).
    EscapeDrift(String),
}

impl MatchError {
    /// The message shown to the model.
    pub(crate) fn message(&self) -> String {
        match self {
            MatchError::Empty => "old_string cannot be empty".into(),
            MatchError::Identical => "old_string and new_string are identical".into(),
            MatchError::NotFound => "Could not find a match for old_string in the file".into(),
            MatchError::Ambiguous(n) => format!(
                "Found {n} matches for old_string. Provide more surrounding context to make it \
                 unique, or set replace_all=true to change every occurrence."
            ),
            MatchError::EscapeDrift(msg) => msg.clone(),
        }
    }
}

/// A successful replacement.
#[derive(Debug, Clone)]
pub(crate) struct Replaced {
    /// The edited content.
    pub content: String,
    /// How many places were replaced.
    pub count: usize,
    /// Which strategy found them.
    pub strategy: Strategy,
}

/// Finds `old` in `content` tolerantly and replaces it with `new`.
pub(crate) fn find_and_replace(
    content: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<Replaced, MatchError> {
    if old.is_empty() {
        return Err(MatchError::Empty);
    }
    if old == new {
        return Err(MatchError::Identical);
    }
    let (strategy, spans) = fuzzy::find(content, old).ok_or(MatchError::NotFound)?;
    if spans.len() > 1 && !replace_all {
        return Err(MatchError::Ambiguous(spans.len()));
    }
    let content = apply(content, &spans, strategy, old, new)?;
    Ok(Replaced {
        content,
        count: spans.len(),
        strategy,
    })
}

/// Replaces each span with `new`, adapted to the file when the match was not exact.
pub(crate) fn apply(
    content: &str,
    spans: &[Span],
    strategy: Strategy,
    old: &str,
    new: &str,
) -> Result<String, MatchError> {
    let regions: String = spans.iter().map(|&(s, e)| &content[s..e]).collect();
    let mut effective = new.to_owned();
    if strategy != Strategy::Exact {
        if let Some(msg) = escape_drift(&regions, old, new) {
            return Err(MatchError::EscapeDrift(msg));
        }
        effective = unescape_controls(&effective, &regions);
    }
    let mut out = String::with_capacity(content.len() + new.len());
    let mut last = 0;
    for &(s, e) in spans {
        out.push_str(&content[last..s]);
        let region = &content[s..e];
        if strategy == Strategy::Exact {
            out.push_str(&effective);
        } else {
            let mut piece = effective.clone();
            if strategy == Strategy::UnicodeNormalized {
                piece = keep_typography(region, &piece);
            }
            out.push_str(&reindent(region, old, &piece));
        }
        last = e;
    }
    out.push_str(&content[last..]);
    Ok(out)
}

/// Flags `\'` / `\"` present in both strings but absent from the matched file
/// text: a serialisation artefact that would corrupt the file if written.
fn escape_drift(regions: &str, old: &str, new: &str) -> Option<String> {
    for suspect in ["\\'", "\\\""] {
        if new.contains(suspect) && old.contains(suspect) && !regions.contains(suspect) {
            let plain = &suspect[1..];
            return Some(format!(
                "Escape-drift detected: old_string and new_string contain the literal sequence \
                 {suspect} but the matched region of the file does not. This is almost always a \
                 tool-call serialisation artefact. Re-read the file and pass old_string / \
                 new_string without backslash-escaping {plain} characters."
            ));
        }
    }
    None
}

/// Turns literal `\t` / `\r` in the replacement into real control characters,
/// but only when the replaced file text itself uses them.
fn unescape_controls(new: &str, regions: &str) -> String {
    let mut out = new.to_owned();
    if out.contains("\\t") && regions.contains('\t') {
        out = out.replace("\\t", "\t");
    }
    if out.contains("\\r") && regions.contains('\r') {
        out = out.replace("\\r", "\r");
    }
    out
}

/// Keeps the file's typographic characters on replacement lines the model did
/// not change (those equal to a file line once both are folded to ASCII).
fn keep_typography(region: &str, new: &str) -> String {
    let originals: Vec<(&str, String)> = region
        .split('\n')
        .map(|l| (l, fuzzy::unicode_fold(l)))
        .collect();
    new.split('\n')
        .map(|line| {
            let folded = fuzzy::unicode_fold(line);
            originals
                .iter()
                .find(|(_, f)| *f == folded)
                .map_or(line, |(orig, _)| *orig)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn leading_ws(line: &str) -> &str {
    let end = line.len() - line.trim_start_matches([' ', '\t']).len();
    &line[..end]
}

fn first_meaningful(text: &str) -> Option<&str> {
    text.split('\n').find(|l| !l.trim().is_empty())
}

/// Shifts `new`'s indentation from the model's base indent (that of `old`'s first
/// non-blank line) to the file's (that of `region`'s first non-blank line).
pub(crate) fn reindent(region: &str, old: &str, new: &str) -> String {
    if new.is_empty() {
        return String::new();
    }
    let (Some(old_first), Some(file_first)) = (first_meaningful(old), first_meaningful(region))
    else {
        return new.to_owned();
    };
    let (old_indent, file_indent) = (leading_ws(old_first), leading_ws(file_first));
    if old_indent == file_indent {
        return new.to_owned();
    }
    new.split('\n')
        .map(|line| {
            if line.trim().is_empty() {
                line.to_owned()
            } else if let Some(rest) = line.strip_prefix(old_indent) {
                format!("{file_indent}{rest}")
            } else {
                format!("{file_indent}{}", line.trim_start_matches([' ', '\t']))
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Files longer than this get no "did you mean" hint (cost bound).
const HINT_MAX_LINES: usize = 20_000;

/// The first 200 characters of `s`, for cheap similarity scoring.
fn clip(s: &str) -> &str {
    s.char_indices().nth(200).map_or(s, |(i, _)| &s[..i])
}

/// Up to three snippets of `content` resembling `old`'s first non-blank line,
/// numbered like read_file output, separated by `---`.
pub(crate) fn closest_lines(old: &str, content: &str) -> String {
    let old_lines: Vec<&str> = old.lines().collect();
    let content_lines: Vec<&str> = content.lines().collect();
    let Some(anchor) = old_lines.iter().map(|l| l.trim()).find(|l| !l.is_empty()) else {
        return String::new();
    };
    if content_lines.len() > HINT_MAX_LINES {
        return String::new();
    }
    let anchor = clip(anchor);
    let mut scored: Vec<(f64, usize)> = content_lines
        .iter()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .filter(|(_, l)| fuzzy::similarity_upper_bound(anchor, clip(l.trim())) > 0.3)
        .map(|(i, l)| (fuzzy::similarity(anchor, clip(l.trim())), i))
        .filter(|(r, _)| *r > 0.3)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut parts: Vec<String> = Vec::new();
    let mut seen = Vec::new();
    for &(_, idx) in scored.iter().take(3) {
        let start = idx.saturating_sub(2);
        let end = (idx + old_lines.len() + 2).min(content_lines.len());
        if seen.contains(&(start, end)) {
            continue;
        }
        seen.push((start, end));
        let snippet: Vec<String> = (start..end)
            .map(|j| format!("{:>4}| {}", j + 1, content_lines[j]))
            .collect();
        parts.push(snippet.join("\n"));
    }
    parts.join("\n---\n")
}

/// The "did you mean" suffix for a not-found error, or an empty string.
pub(crate) fn no_match_hint(old: &str, content: &str) -> String {
    let hint = closest_lines(old, content);
    if hint.is_empty() {
        String::new()
    } else {
        format!("\n\nDid you mean one of these sections?\n{hint}")
    }
}
