//! Text as PostgreSQL can hold it. Its `text` type refuses NUL, which
//! state.db holds (the reference marks structured content with a leading
//! `\0json:`, and tool output may carry any byte): NUL is stored as U+FFFF
//! followed by `0`, and U+FFFF itself doubled, so every string comes back
//! exactly as it went in.

use std::borrow::Cow;

const ESCAPE: char = '\u{FFFF}';

/// `text` as stored.
pub(crate) fn enc(text: &str) -> Cow<'_, str> {
    if !text.contains(['\0', ESCAPE]) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\0' => {
                out.push(ESCAPE);
                out.push('0');
            }
            ESCAPE => {
                out.push(ESCAPE);
                out.push(ESCAPE);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// An optional text as stored.
pub(crate) fn enc_opt(text: Option<&str>) -> Option<Cow<'_, str>> {
    text.map(enc)
}

/// Stored text as it was written.
pub(crate) fn dec(text: String) -> String {
    if !text.contains(ESCAPE) {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != ESCAPE {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('0') => out.push('\0'),
            Some(ESCAPE) | None => out.push(ESCAPE),
            Some(other) => {
                out.push(ESCAPE);
                out.push(other);
            }
        }
    }
    out
}

/// An optional stored text as it was written.
pub(crate) fn dec_opt(text: Option<String>) -> Option<String> {
    text.map(dec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_string_round_trips() {
        for s in [
            "plain",
            "\0json:[1]",
            "a\u{FFFF}b",
            "\u{FFFF}0",
            "\0\0\u{FFFF}",
        ] {
            let stored = enc(s);
            assert!(!stored.contains('\0'));
            assert_eq!(dec(stored.into_owned()), s);
        }
    }
}
