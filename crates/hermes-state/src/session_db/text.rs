//! Text clean-up shared with the reference: title sanitising, the memory-context scrubber
//! applied when a transcript is replayed, and the background-review harness filter.

use super::error::DbError;

/// Longest title accepted, in characters (after cleaning).
pub const MAX_TITLE_LENGTH: usize = 100;

fn is_removed_title_char(c: char) -> bool {
    matches!(c,
        '\u{00}'..='\u{08}' | '\u{0b}' | '\u{0c}' | '\u{0e}'..='\u{1f}' | '\u{7f}'
        | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2069}'
        | '\u{feff}' | '\u{fffc}' | '\u{fff9}'..='\u{fffb}')
}

/// Cleans a session title like the reference: drops control, zero-width and bidi-override
/// characters, collapses whitespace runs to one space and trims. Empty results become
/// `None`; more than [`MAX_TITLE_LENGTH`] characters is [`DbError::InvalidTitle`].
pub fn sanitize_title(title: &str) -> Result<Option<String>, DbError> {
    let mut out = String::with_capacity(title.len());
    let mut pending_space = false;
    for c in title.chars().filter(|c| !is_removed_title_char(*c)) {
        if c.is_whitespace() {
            pending_space = !out.is_empty();
        } else {
            if pending_space {
                out.push(' ');
                pending_space = false;
            }
            out.push(c);
        }
    }
    if out.is_empty() {
        return Ok(None);
    }
    let len = out.chars().count();
    if len > MAX_TITLE_LENGTH {
        return Err(DbError::InvalidTitle(format!(
            "title too long ({len} characters, at most {MAX_TITLE_LENGTH})"
        )));
    }
    Ok(Some(out))
}

/// Removes injected `<memory-context>` blocks, their system note and stray fence tags
/// (shared with the memory fence so both strip exactly the same shapes).
pub(crate) use crate::memory::fence::sanitize_context;

const REVIEW_HARNESS_PREFIXES: [&str; 2] = [
    "Review the conversation above and update the skill library",
    "Review the conversation above and consider saving to memory",
];

/// A background-review harness prompt that older builds leaked into real sessions.
pub(crate) fn is_review_harness(role: &str, content: Option<&str>) -> bool {
    matches!(role, "user" | "system")
        && content.is_some_and(|c| {
            let head = c.trim_start();
            REVIEW_HARNESS_PREFIXES.iter().any(|p| head.starts_with(p))
        })
}

#[cfg(test)]
#[path = "text_tests.rs"]
mod tests;
