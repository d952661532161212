//! Separating streamed prose from `<tool_call>…</tool_call>` blocks, so text
//! deltas never show half a tag and tool calls arrive whole.

use crate::prompt::{CALL_CLOSE, CALL_OPEN};

/// What a chunk of model output turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Prose for the user.
    Text(String),
    /// The JSON inside one complete tool-call block.
    Call(String),
}

/// Incremental splitter; feed it decoded text, then call [`Splitter::finish`].
#[derive(Debug, Default)]
pub struct Splitter {
    pending: String,
    in_call: bool,
}

impl Splitter {
    /// Adds text; returns what can be emitted now.
    pub fn push(&mut self, text: &str) -> Vec<Piece> {
        self.pending.push_str(text);
        let mut out = Vec::new();
        loop {
            if self.in_call {
                match self.pending.find(CALL_CLOSE) {
                    Some(end) => {
                        out.push(Piece::Call(self.pending[..end].trim().to_owned()));
                        self.pending.drain(..end + CALL_CLOSE.len());
                        self.in_call = false;
                    }
                    None => return out,
                }
            } else {
                match self.pending.find(CALL_OPEN) {
                    Some(start) => {
                        if start > 0 {
                            out.push(Piece::Text(self.pending[..start].to_owned()));
                        }
                        self.pending.drain(..start + CALL_OPEN.len());
                        self.in_call = true;
                    }
                    None => {
                        // Hold back a suffix that could be the start of the tag.
                        let keep = partial_tag_suffix(&self.pending);
                        let emit = self.pending.len() - keep;
                        if emit > 0 {
                            out.push(Piece::Text(self.pending[..emit].to_owned()));
                            self.pending.drain(..emit);
                        }
                        return out;
                    }
                }
            }
        }
    }

    /// Flushes what is left: held-back text, or an unterminated call.
    pub fn finish(mut self) -> Vec<Piece> {
        let rest = std::mem::take(&mut self.pending);
        match (self.in_call, rest.trim().is_empty()) {
            (_, true) => Vec::new(),
            (true, false) => vec![Piece::Call(rest.trim().to_owned())],
            (false, false) => vec![Piece::Text(rest)],
        }
    }
}

/// Length of the longest suffix of `s` that is a proper prefix of the open tag.
fn partial_tag_suffix(s: &str) -> usize {
    (1..CALL_OPEN.len())
        .rev()
        .find(|&n| {
            s.len() >= n
                && s.is_char_boundary(s.len() - n)
                && CALL_OPEN.starts_with(&s[s.len() - n..])
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(chunks: &[&str]) -> Vec<Piece> {
        let mut s = Splitter::default();
        let mut out: Vec<Piece> = chunks.iter().flat_map(|c| s.push(c)).collect();
        out.extend(s.finish());
        out
    }

    #[test]
    fn prose_passes_through() {
        assert_eq!(
            run(&["Hello ", "world"]),
            vec![Piece::Text("Hello ".into()), Piece::Text("world".into())]
        );
    }

    #[test]
    fn a_call_split_anywhere_comes_out_whole() {
        let text = "Sure.<tool_call>\n{\"name\":\"t\",\"arguments\":{}}\n</tool_call>";
        for cut in 1..text.len() {
            let pieces = run(&[&text[..cut], &text[cut..]]);
            let text_out: String = pieces
                .iter()
                .filter_map(|p| match p {
                    Piece::Text(t) => Some(t.as_str()),
                    _ => None,
                })
                .collect();
            assert_eq!(text_out, "Sure.", "cut at {cut}");
            assert!(
                pieces.contains(&Piece::Call("{\"name\":\"t\",\"arguments\":{}}".into())),
                "cut at {cut}: {pieces:?}"
            );
        }
    }

    #[test]
    fn a_lone_angle_bracket_is_not_swallowed() {
        assert_eq!(run(&["a < b", " and c"]).concat_text(), "a < b and c");
    }

    trait ConcatText {
        fn concat_text(&self) -> String;
    }

    impl ConcatText for Vec<Piece> {
        fn concat_text(&self) -> String {
            self.iter()
                .map(|p| match p {
                    Piece::Text(t) | Piece::Call(t) => t.as_str(),
                })
                .collect()
        }
    }
}
