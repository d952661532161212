//! Splitting an answer longer than a platform's limit: at a line break
//! where possible, else a space; never inside inline code; a code block cut
//! in two is closed and reopened with its language; each part ends with
//! ` (i/N)`.

/// Room kept for the ` (i/N)` suffix.
const SUFFIX_RESERVE: usize = 10;
const FENCE_CLOSE: &str = "\n```";

/// Length in the platform's units.
pub type LenFn = fn(&str) -> usize;

/// Length in Unicode scalar values (Discord, Slack).
pub fn chars(text: &str) -> usize {
    text.chars().count()
}

/// Length in UTF-16 code units (Telegram).
pub fn utf16(text: &str) -> usize {
    text.encode_utf16().count()
}

/// The longest prefix of `text` (in chars) whose length is at most `limit` units.
fn prefix_chars(text: &str, limit: usize, len: LenFn) -> usize {
    let mut used = 0;
    let mut count = 0;
    for c in text.chars() {
        let mut buf = [0u8; 4];
        used += len(c.encode_utf8(&mut buf));
        if used > limit {
            break;
        }
        count += 1;
    }
    count
}

fn byte_at(text: &str, chars: usize) -> usize {
    text.char_indices()
        .nth(chars)
        .map_or(text.len(), |(i, _)| i)
}

fn unescaped_backticks(text: &str) -> usize {
    text.matches('`').count() - text.matches("\\`").count()
}

/// Where a fenced block is open at the end of `text`: its language.
fn open_fence(text: &str, mut open: Option<String>) -> Option<String> {
    for line in text.lines() {
        if let Some(rest) = line.trim_start().strip_prefix("```") {
            open = match open {
                Some(_) => None,
                None => Some(rest.split_whitespace().next().unwrap_or("").to_owned()),
            };
        }
    }
    open
}

/// Splits `content` into parts of at most `max` units.
pub fn split(content: &str, max: usize, len: LenFn) -> Vec<String> {
    if len(content) <= max {
        return vec![content.to_owned()];
    }
    let mut parts: Vec<String> = Vec::new();
    let mut remaining = content.to_owned();
    let mut carry: Option<String> = None;
    loop {
        let prefix = carry
            .as_ref()
            .map(|lang| format!("```{lang}\n"))
            .unwrap_or_default();
        if len(&prefix) + len(&remaining) <= max.saturating_sub(SUFFIX_RESERVE) {
            parts.push(format!("{prefix}{remaining}"));
            break;
        }
        let mut room = max.saturating_sub(SUFFIX_RESERVE + len(&prefix) + len(FENCE_CLOSE));
        if room < 1 {
            room = (max / 2).max(1);
        }
        let limit = prefix_chars(&remaining, room, len).max(1);
        let region = &remaining[..byte_at(&remaining, limit)];
        let mut cut = match region.rfind('\n') {
            Some(i) if region[..i].chars().count() >= limit / 2 => i,
            _ => match region.rfind(' ') {
                Some(i) if i > 0 => i,
                _ => region.len(),
            },
        };
        // Never end a part inside `inline code`.
        if unescaped_backticks(&remaining[..cut]) % 2 == 1
            && let Some(tick) = remaining[..cut].rfind('`')
            && let Some(space) = remaining[..tick].rfind([' ', '\n'])
            && remaining[..space].chars().count() > limit / 4
        {
            cut = space;
        }
        let body = remaining[..cut].to_owned();
        let rest = remaining[cut..].trim_start().to_owned();
        let still_open = open_fence(&body, carry.clone());
        let mut part = format!("{prefix}{body}");
        if still_open.is_some() {
            part.push_str(FENCE_CLOSE);
        }
        parts.push(part);
        carry = still_open;
        remaining = rest;
        if remaining.is_empty() {
            break;
        }
    }
    let total = parts.len();
    if total > 1 {
        for (i, part) in parts.iter_mut().enumerate() {
            part.push_str(&format!(" ({}/{total})", i + 1));
        }
    }
    parts
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_one_part() {
        assert_eq!(split("hello", 100, chars), vec!["hello".to_owned()]);
    }

    #[test]
    fn long_text_splits_at_lines_with_counters() {
        let text = (0..40)
            .map(|i| format!("line number {i}"))
            .collect::<Vec<_>>()
            .join("\n");
        let parts = split(&text, 120, chars);
        assert!(parts.len() > 3);
        for (i, part) in parts.iter().enumerate() {
            assert!(chars(part) <= 120, "{part:?}");
            assert!(part.ends_with(&format!("({}/{})", i + 1, parts.len())));
        }
        let joined: String = parts
            .iter()
            .map(|p| p.rsplit_once(" (").unwrap().0.to_owned())
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(joined, text);
    }

    #[test]
    fn a_cut_code_block_is_closed_and_reopened() {
        let code = (0..30)
            .map(|i| format!("let x{i} = {i};"))
            .collect::<Vec<_>>()
            .join("\n");
        let text = format!("Here:\n```rust\n{code}\n```\ndone");
        let parts = split(&text, 150, chars);
        assert!(parts.len() > 2);
        assert!(
            parts[0].contains("```rust")
                && parts[0]
                    .trim_end_matches(|c: char| c != '`')
                    .ends_with("```")
        );
        assert!(parts[1].starts_with("```rust\n"), "{:?}", parts[1]);
        for part in &parts {
            assert_eq!(
                part.matches("```").count() % 2,
                0,
                "balanced fences in {part:?}"
            );
        }
    }

    #[test]
    fn utf16_counts_emoji_twice() {
        assert_eq!(utf16("😀a"), 3);
        let parts = split(&"😀 ".repeat(100), 50, utf16);
        assert!(parts.iter().all(|p| utf16(p) <= 50));
    }
}
