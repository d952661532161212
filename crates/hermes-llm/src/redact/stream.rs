//! Masking text that arrives in pieces (a model's streamed answer): a key
//! split across two chunks must be masked as if it had come whole, and what
//! a client concatenates must equal the masked whole text.
//!
//! The redactor holds back only the end that may still grow into a secret:
//! the trailing run of ASCII graphic characters (every key shape, URL and
//! encoded run is one), capped at [`RUN_CAP`]; up to three words before it
//! when one is a label whose value follows a blank (`Authorization: Basic …`,
//! `Bearer …`); the start of a known secret that holds a blank; an open
//! private-key block and a wrapped base64/hex block (each capped at
//! [`BLOCK_CAP`]). Everything before that is masked and released at once.

use std::sync::Arc;

use super::{KnownSecrets, RedactOptions, installed_known_secrets, redact_with_known};

/// Longest trailing run of graphic characters held back (longer runs are
/// released in front of the cap).
pub const RUN_CAP: usize = 4096;

/// Longest private-key or wrapped encoded block held back.
pub const BLOCK_CAP: usize = 64 * 1024;

/// Words looked back over for a label.
const LABEL_WORDS: usize = 3;

/// Widths at which base64 and hex dumpers wrap their lines.
const WRAPS: &[usize] = &[76, 64, 60, 32];

/// Masks a stream of text chunks; see the module documentation.
#[derive(Debug)]
pub struct StreamRedactor {
    options: RedactOptions,
    known: Option<Arc<KnownSecrets>>,
    pending: String,
}

impl StreamRedactor {
    /// A redactor masking as [`super::redact_with`] does under `options`,
    /// with the process's installed known secrets.
    pub fn new(options: RedactOptions) -> Self {
        Self::with_known(options, installed_known_secrets())
    }

    /// A redactor with an explicit set of known secrets (or none).
    pub fn with_known(options: RedactOptions, known: Option<Arc<KnownSecrets>>) -> Self {
        Self {
            options,
            known,
            pending: String::new(),
        }
    }

    /// Takes the next chunk; returns the masked text that can be shown now
    /// (possibly empty).
    pub fn push(&mut self, chunk: &str) -> String {
        self.pending.push_str(chunk);
        let cut = self.hold_start();
        if cut == 0 {
            return String::new();
        }
        let rest = self.pending.split_off(cut);
        let ready = std::mem::replace(&mut self.pending, rest);
        self.mask(&ready)
    }

    /// Ends the message: the masked rest of what was held back.
    pub fn finish(&mut self) -> String {
        let rest = std::mem::take(&mut self.pending);
        self.mask(&rest)
    }

    /// How many bytes are held back now.
    pub fn held(&self) -> usize {
        self.pending.len()
    }

    fn mask(&self, text: &str) -> String {
        redact_with_known(text, self.options, self.known.as_deref())
    }

    /// Where the part that must wait begins.
    fn hold_start(&self) -> usize {
        let text = self.pending.as_str();
        let len = text.len();
        let run = trailing_run_start(text);
        let mut start = label_start(text, run);
        let capped = len - start > RUN_CAP;
        if capped {
            start = floor_char_boundary(text, len - RUN_CAP);
        }
        if let Some(known) = &self.known {
            start = start.min(len - known.partial_suffix(text, capped));
            start = known.straddled(text, start);
        }
        start = private_key_cut(text, start);
        if let Some(block) = wrapped_block_start(text) {
            start = start.min(block);
        }
        start
    }
}

/// Start of the run of ASCII graphic characters that ends `text`.
fn trailing_run_start(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut start = bytes.len();
    while start > 0 && bytes[start - 1].is_ascii_graphic() {
        start -= 1;
    }
    start
}

/// `start` moved back so that no label on its line is cut off from its
/// value (`Authorization: Basic` from the credential after it): the words
/// before the cut are looked at until [`LABEL_WORDS`] past the last move.
fn label_start(text: &str, start: usize) -> usize {
    let bytes = text.as_bytes();
    let mut held = start;
    // Index of the word the cut is in front of; the trailing run is -1.
    let mut cut_word: isize = -1;
    let mut at = start;
    let mut index: isize = 0;
    while index <= cut_word + LABEL_WORDS as isize {
        let mut end = at;
        while end > 0 && matches!(bytes[end - 1], b' ' | b'\t') {
            end -= 1;
        }
        if (end == at && at != start) || end == 0 {
            break;
        }
        let mut word = end;
        while word > 0 && !bytes[word - 1].is_ascii_whitespace() {
            word -= 1;
        }
        if word == end {
            break;
        }
        let value = value_words(&bytes[word..end]) as isize;
        if value > 0 && cut_word >= index - value {
            held = word;
            cut_word = index;
        }
        at = word;
        index += 1;
    }
    held
}

/// How many words of value follow a label: two after `Authorization:`
/// (scheme and credential), one after `Name:`, `NAME=` or `Bearer`, none
/// after an ordinary word.
fn value_words(word: &[u8]) -> usize {
    let header = word
        .windows(14)
        .any(|w| w.eq_ignore_ascii_case(b"authorization:"));
    match word.last() {
        Some(b':') if header => 2,
        Some(b':' | b'=') => 1,
        _ if header || word.eq_ignore_ascii_case(b"bearer") => 1,
        _ => 0,
    }
}

/// `cut` moved in front of the last `-----BEGIN … PRIVATE KEY-----` block
/// when it falls inside it (an open block is held up to [`BLOCK_CAP`]).
fn private_key_cut(text: &str, cut: usize) -> usize {
    let Some(begin) = text.rfind("-----BEGIN") else {
        return cut;
    };
    let tail = &text[begin..];
    let block_end = tail.find("-----END").and_then(|end| {
        tail[end..]
            .find("KEY-----")
            .map(|key| begin + end + key + "KEY-----".len())
    });
    match block_end {
        Some(block_end) if cut > begin && cut < block_end => begin,
        None if cut > begin && tail.len() <= BLOCK_CAP => begin,
        _ => cut,
    }
}

/// Start of a wrapped base64/hex block `text` ends in: full lines of one
/// wrap width, then the current line of the same characters.
fn wrapped_block_start(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let class = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_' | b'=');
    let mut line_start = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
    if !bytes[line_start..].iter().all(|&b| class(b)) {
        return None;
    }
    let mut width = None;
    let mut block = None;
    while line_start > 0 && bytes.len() - line_start <= BLOCK_CAP {
        let end = line_start - 1;
        let start = bytes[..end]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        let line = &bytes[start..end];
        let fits = WRAPS.contains(&line.len()) && width.is_none_or(|w| w == line.len());
        if !fits || !line.iter().all(|&b| class(b)) {
            break;
        }
        width = Some(line.len());
        block = Some(start);
        line_start = start;
    }
    block
}

/// The largest char boundary of `text` at or below `at`.
fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    while at > 0 && !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
