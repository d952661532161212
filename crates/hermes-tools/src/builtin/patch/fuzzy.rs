//! Tolerant text location for `patch`: a chain of increasingly forgiving
//! matching strategies, tried in order until one finds the pattern. Every
//! strategy reports byte spans in the original content.

/// A byte range `[start, end)` in the searched content.
pub(crate) type Span = (usize, usize);

/// The strategy that located a pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Strategy {
    /// Byte-for-byte.
    Exact,
    /// Each line compared with surrounding whitespace trimmed.
    LineTrimmed,
    /// Runs of spaces/tabs collapsed to one space.
    WhitespaceNormalized,
    /// Leading indentation ignored.
    IndentationFlexible,
    /// Literal `\n`, `\t`, `\r` in the pattern read as control characters.
    EscapeNormalized,
    /// Only the first and last lines trimmed.
    TrimmedBoundary,
    /// Smart quotes, dashes, ellipses and NBSPs folded to ASCII.
    UnicodeNormalized,
    /// First and last lines anchor the block; the middle need only be similar.
    BlockAnchor,
    /// Most lines individually similar.
    ContextAware,
}

impl Strategy {
    /// Stable name, for results and diagnostics.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Strategy::Exact => "exact",
            Strategy::LineTrimmed => "line_trimmed",
            Strategy::WhitespaceNormalized => "whitespace_normalized",
            Strategy::IndentationFlexible => "indentation_flexible",
            Strategy::EscapeNormalized => "escape_normalized",
            Strategy::TrimmedBoundary => "trimmed_boundary",
            Strategy::UnicodeNormalized => "unicode_normalized",
            Strategy::BlockAnchor => "block_anchor",
            Strategy::ContextAware => "context_aware",
        }
    }
}

type StrategyFn = fn(&str, &str) -> Vec<Span>;

const CHAIN: [(Strategy, StrategyFn); 9] = [
    (Strategy::Exact, exact),
    (Strategy::LineTrimmed, line_trimmed),
    (Strategy::WhitespaceNormalized, whitespace_normalized),
    (Strategy::IndentationFlexible, indentation_flexible),
    (Strategy::EscapeNormalized, escape_normalized),
    (Strategy::TrimmedBoundary, trimmed_boundary),
    (Strategy::UnicodeNormalized, unicode_normalized),
    (Strategy::BlockAnchor, block_anchor),
    (Strategy::ContextAware, context_aware),
];

/// Finds `pattern` in `content` with the first strategy that matches anything.
/// Spans are sorted and do not overlap.
pub(crate) fn find(content: &str, pattern: &str) -> Option<(Strategy, Vec<Span>)> {
    if pattern.is_empty() {
        return None;
    }
    CHAIN.iter().find_map(|(strategy, f)| {
        let spans = f(content, pattern);
        (!spans.is_empty()).then_some((*strategy, spans))
    })
}

/// Strategy 1: exact, non-overlapping occurrences.
pub(crate) fn exact(content: &str, pattern: &str) -> Vec<Span> {
    if pattern.is_empty() {
        return Vec::new();
    }
    content
        .match_indices(pattern)
        .map(|(i, m)| (i, i + m.len()))
        .collect()
}

/// `(start, end)` byte offsets of each `\n`-separated line (end excludes the `\n`).
pub(crate) fn line_bounds(content: &str) -> Vec<Span> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, b) in content.bytes().enumerate() {
        if b == b'\n' {
            out.push((start, i));
            start = i + 1;
        }
    }
    out.push((start, content.len()));
    out
}

/// Splits off one trailing newline of a multi-line pattern: line-based
/// strategies match the lines, then extend the span over the file's newline.
fn split_trailing_newline(pattern: &str) -> (&str, bool) {
    match pattern.strip_suffix('\n') {
        Some(body) if !body.is_empty() => (body, true),
        _ => (pattern, false),
    }
}

/// The span of lines `first..=last`, extended over the following newline when asked.
fn lines_span(content: &str, bounds: &[Span], first: usize, last: usize, newline: bool) -> Span {
    let end = bounds[last].1;
    let end = if newline && end < content.len() {
        end + 1
    } else {
        end
    };
    (bounds[first].0, end)
}

/// Where a line sits in a multi-line window.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pos {
    First,
    Middle,
    Last,
    Only,
}

fn pos(i: usize, n: usize) -> Pos {
    match (i, n) {
        (_, 1) => Pos::Only,
        (0, _) => Pos::First,
        (i, n) if i + 1 == n => Pos::Last,
        _ => Pos::Middle,
    }
}

/// Slides a window of the pattern's line count over the content, comparing
/// lines after `norm`; returns non-overlapping spans of matching windows.
fn window_match(content: &str, pattern: &str, norm: fn(&str, Pos) -> &str) -> Vec<Span> {
    let (pattern, newline) = split_trailing_newline(pattern);
    let bounds = line_bounds(content);
    let lines: Vec<&str> = bounds.iter().map(|&(s, e)| &content[s..e]).collect();
    let pat: Vec<&str> = pattern.split('\n').collect();
    let n = pat.len();
    if n > lines.len() {
        return Vec::new();
    }
    let pat_norm: Vec<&str> = pat
        .iter()
        .enumerate()
        .map(|(i, l)| norm(l, pos(i, n)))
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i + n <= lines.len() {
        let hit = (0..n).all(|j| norm(lines[i + j], pos(j, n)) == pat_norm[j]);
        if hit {
            out.push(lines_span(content, &bounds, i, i + n - 1, newline));
            i += n;
        } else {
            i += 1;
        }
    }
    out
}

/// Strategy 2: every line trimmed on both sides.
pub(crate) fn line_trimmed(content: &str, pattern: &str) -> Vec<Span> {
    window_match(content, pattern, |l, _| l.trim())
}

/// Strategy 4: leading indentation ignored.
pub(crate) fn indentation_flexible(content: &str, pattern: &str) -> Vec<Span> {
    window_match(content, pattern, |l, _| l.trim_start())
}

/// Strategy 6: only the first and last lines trimmed.
pub(crate) fn trimmed_boundary(content: &str, pattern: &str) -> Vec<Span> {
    window_match(content, pattern, |l, p| {
        if p == Pos::Middle { l } else { l.trim() }
    })
}

/// A normalised copy of a text with, for each normalised byte, the original
/// byte range it came from.
struct Normalized {
    text: String,
    origin: Vec<Span>,
}

impl Normalized {
    /// Maps a span of the normalised text back to the original.
    fn to_original(&self, (s, e): Span) -> Option<Span> {
        if s >= e || e > self.origin.len() {
            return None;
        }
        Some((self.origin[s].0, self.origin[e - 1].1))
    }
}

/// Collapses each run of spaces/tabs to a single space.
fn collapse_ws(text: &str) -> Normalized {
    let mut out = Normalized {
        text: String::with_capacity(text.len()),
        origin: Vec::new(),
    };
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b' ' || bytes[i] == b'\t' {
            let start = i;
            while i < bytes.len() && (bytes[i] == b' ' || bytes[i] == b'\t') {
                i += 1;
            }
            out.text.push(' ');
            out.origin.push((start, i));
        } else {
            let start = i;
            let ch_len = text[i..].chars().next().map_or(1, char::len_utf8);
            out.text.push_str(&text[i..i + ch_len]);
            out.origin
                .extend((start..start + ch_len).map(|b| (b, b + 1)));
            i += ch_len;
        }
    }
    out
}

/// Strategy 3: runs of spaces/tabs compared as one space.
pub(crate) fn whitespace_normalized(content: &str, pattern: &str) -> Vec<Span> {
    let norm_content = collapse_ws(content);
    let norm_pattern = collapse_ws(pattern).text;
    exact(&norm_content.text, &norm_pattern)
        .into_iter()
        .filter_map(|span| norm_content.to_original(span))
        .collect()
}

/// Strategy 5: the pattern's literal escape sequences read as control characters.
pub(crate) fn escape_normalized(content: &str, pattern: &str) -> Vec<Span> {
    let unescaped = pattern
        .replace("\\n", "\n")
        .replace("\\t", "\t")
        .replace("\\r", "\r");
    if unescaped == pattern {
        return Vec::new();
    }
    exact(content, &unescaped)
}

/// The ASCII stand-in for a typographic character, if it has one.
pub(crate) fn unicode_ascii(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{201c}' | '\u{201d}' => "\"",
        '\u{2018}' | '\u{2019}' => "'",
        '\u{2014}' => "--",
        '\u{2013}' => "-",
        '\u{2026}' => "...",
        '\u{00a0}' => " ",
        _ => return None,
    })
}

fn fold_unicode(text: &str) -> Normalized {
    let mut out = Normalized {
        text: String::with_capacity(text.len()),
        origin: Vec::new(),
    };
    for (i, c) in text.char_indices() {
        let end = i + c.len_utf8();
        match unicode_ascii(c) {
            Some(rep) => {
                out.text.push_str(rep);
                out.origin.extend(std::iter::repeat_n((i, end), rep.len()));
            }
            None => {
                out.text.push(c);
                out.origin.extend((i..end).map(|b| (b, b + 1)));
            }
        }
    }
    out
}

/// Folds typographic characters to ASCII (for comparisons only).
pub(crate) fn unicode_fold(text: &str) -> String {
    fold_unicode(text).text
}

/// Strategy 7: typographic characters folded to ASCII on both sides, then exact
/// or line-trimmed matching.
pub(crate) fn unicode_normalized(content: &str, pattern: &str) -> Vec<Span> {
    let norm_content = fold_unicode(content);
    let norm_pattern = unicode_fold(pattern);
    if norm_content.text == content && norm_pattern == pattern {
        return Vec::new();
    }
    let mut spans = exact(&norm_content.text, &norm_pattern);
    if spans.is_empty() {
        spans = line_trimmed(&norm_content.text, &norm_pattern);
    }
    spans
        .into_iter()
        .filter_map(|s| norm_content.to_original(s))
        .collect()
}

/// Strategy 8: first and last lines match (trimmed, unicode-folded) and the
/// middle is similar enough: 0.5 when there is one candidate, 0.7 otherwise.
pub(crate) fn block_anchor(content: &str, pattern: &str) -> Vec<Span> {
    let (pattern, newline) = split_trailing_newline(pattern);
    let norm_pattern = unicode_fold(pattern);
    let pat: Vec<&str> = norm_pattern.split('\n').collect();
    let n = pat.len();
    if n < 2 {
        return Vec::new();
    }
    let bounds = line_bounds(content);
    if n > bounds.len() {
        return Vec::new();
    }
    let lines: Vec<String> = bounds
        .iter()
        .map(|&(s, e)| unicode_fold(&content[s..e]))
        .collect();
    let (first, last) = (pat[0].trim(), pat[n - 1].trim());
    let candidates: Vec<usize> = (0..=lines.len() - n)
        .filter(|&i| lines[i].trim() == first && lines[i + n - 1].trim() == last)
        .collect();
    let threshold = if candidates.len() == 1 { 0.5 } else { 0.7 };
    let pat_middle = pat[1..n - 1].join("\n");
    let mut out: Vec<Span> = Vec::new();
    for i in candidates {
        let sim = if n <= 2 {
            1.0
        } else {
            similarity(&lines[i + 1..i + n - 1].join("\n"), &pat_middle)
        };
        let span = lines_span(content, &bounds, i, i + n - 1, newline);
        if sim >= threshold && out.last().is_none_or(|prev| prev.1 < span.0) {
            out.push(span);
        }
    }
    out
}

/// Pairs of lines compared by [`context_aware`] before it gives up (cost bound).
const CONTEXT_AWARE_MAX_PAIRS: usize = 400_000;

/// Strategy 9: at least half of the window's lines are ≥ 80 % similar (trimmed).
pub(crate) fn context_aware(content: &str, pattern: &str) -> Vec<Span> {
    let (pattern, newline) = split_trailing_newline(pattern);
    let pat: Vec<&str> = pattern.split('\n').map(str::trim).collect();
    let bounds = line_bounds(content);
    let n = pat.len();
    if n > bounds.len() || n.saturating_mul(bounds.len()) > CONTEXT_AWARE_MAX_PAIRS {
        return Vec::new();
    }
    let lines: Vec<&str> = bounds.iter().map(|&(s, e)| content[s..e].trim()).collect();
    let needed = n.div_ceil(2);
    let mut out = Vec::new();
    let mut i = 0;
    while i + n <= lines.len() {
        let mut hits = 0;
        for j in 0..n {
            if hits + (n - j) < needed {
                break;
            }
            if similarity_at_least(pat[j], lines[i + j], 0.8) {
                hits += 1;
            }
        }
        if hits >= needed {
            out.push(lines_span(content, &bounds, i, i + n - 1, newline));
            i += n;
        } else {
            i += 1;
        }
    }
    out
}

/// `similarity(a, b) >= min`, skipping the full computation when a cheap
/// upper bound already rules it out.
pub(crate) fn similarity_at_least(a: &str, b: &str, min: f64) -> bool {
    similarity_upper_bound(a, b) >= min && similarity(a, b) >= min
}

/// An upper bound on [`similarity`]: the LCS cannot exceed the shared
/// character counts. Linear time.
pub(crate) fn similarity_upper_bound(a: &str, b: &str) -> f64 {
    let (mut ca, mut cb) = ([0u32; 128], [0u32; 128]);
    let (mut other_a, mut other_b) = (0u32, 0u32);
    let (mut la, mut lb) = (0u32, 0u32);
    for c in a.chars() {
        la += 1;
        match usize::try_from(c as u32).ok().filter(|&i| i < 128) {
            Some(i) => ca[i] += 1,
            None => other_a += 1,
        }
    }
    for c in b.chars() {
        lb += 1;
        match usize::try_from(c as u32).ok().filter(|&i| i < 128) {
            Some(i) => cb[i] += 1,
            None => other_b += 1,
        }
    }
    if la + lb == 0 {
        return 1.0;
    }
    let shared: u32 = ca.iter().zip(&cb).map(|(x, y)| x.min(y)).sum::<u32>() + other_a.min(other_b);
    2.0 * f64::from(shared) / f64::from(la + lb)
}

/// Similarity in `[0, 1]`: `2·matches / (|a| + |b|)` over characters (over
/// lines for very long inputs), as difflib's `SequenceMatcher.ratio`.
pub(crate) fn similarity(a: &str, b: &str) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let mut config = similar::TextDiff::configure();
    config.timeout(std::time::Duration::from_secs(1));
    let long = a.chars().count().saturating_mul(b.chars().count()) > 2_000_000;
    let diff = if long {
        config.diff_lines(a, b)
    } else {
        config.diff_chars(a, b)
    };
    // Counted here in f64 (`TextDiff::ratio` rounds to f32).
    let matched: usize = diff
        .ops()
        .iter()
        .filter(|op| op.tag() == similar::DiffTag::Equal)
        .map(|op| op.old_range().len())
        .sum();
    let total = diff.old_slices().len() + diff.new_slices().len();
    if total == 0 {
        return 1.0;
    }
    2.0 * matched as f64 / total as f64
}

#[cfg(test)]
#[path = "fuzzy_tests.rs"]
mod tests;
