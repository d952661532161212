//! Keeping long tool output inside a budget without losing its ends.

/// Cuts `text` to at most `max_bytes`, keeping `head_ratio` of the budget from the
/// start and the rest from the end, with a marker saying how much was dropped.
/// Cuts fall on UTF-8 character boundaries.
pub fn head_tail(text: &str, max_bytes: usize, head_ratio: f64) -> String {
    if text.len() <= max_bytes {
        return text.to_owned();
    }
    let head_budget = ((max_bytes as f64) * head_ratio) as usize;
    let tail_budget = max_bytes.saturating_sub(head_budget);
    let head_end = floor_char_boundary(text, head_budget);
    let tail_start = ceil_char_boundary(text, text.len().saturating_sub(tail_budget));
    let dropped = tail_start.saturating_sub(head_end);
    format!(
        "{}\n\n... [{dropped} bytes of output truncated] ...\n\n{}",
        &text[..head_end],
        &text[tail_start..]
    )
}

/// Cuts `text` to at most `max_chars` characters, noting the cut for the model.
pub fn cap_chars(text: String, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text,
        Some((byte, _)) => {
            let total = text.chars().count();
            format!(
                "{}\n\n[result truncated: {max_chars} of {total} characters shown]",
                &text[..byte]
            )
        }
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_untouched() {
        assert_eq!(head_tail("abc", 10, 0.4), "abc");
    }

    #[test]
    fn keeps_head_and_tail_in_ratio() {
        let text: String = "a".repeat(600) + &"b".repeat(400);
        let out = head_tail(&text, 100, 0.4);
        assert!(out.starts_with(&"a".repeat(40)));
        assert!(out.ends_with(&"b".repeat(60)));
        assert!(out.contains("900 bytes of output truncated"));
    }

    #[test]
    fn never_splits_a_character() {
        let text = "é".repeat(100);
        let out = head_tail(&text, 51, 0.4);
        assert!(out.starts_with('é') && out.ends_with('é'));
    }

    #[test]
    fn cap_chars_notes_the_cut() {
        let out = cap_chars("x".repeat(20), 5);
        assert!(out.starts_with("xxxxx\n"));
        assert!(out.contains("5 of 20"));
    }
}
