//! Separating streamed prose from `<tool_call>…</tool_call>` blocks, so text
//! deltas never show half a tag and tool calls arrive whole. Small models
//! often write a call as a fenced JSON block instead; a fence holding
//! `{"name": …, "arguments": {…}}` counts as a call too. A model that starts
//! writing the tool's answer itself (`<tool_response>`) is stopped there.

use crate::prompt::{CALL_CLOSE, CALL_OPEN};

/// Opens a fenced block that may hold a call.
const FENCE_OPEN: &str = "```";
/// Where a model begins inventing a tool's result.
const RESPONSE_OPEN: &str = "<tool_response>";

/// What a chunk of model output turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Prose for the user.
    Text(String),
    /// The JSON inside one complete tool-call block.
    Call(String),
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum State {
    #[default]
    Prose,
    InCall,
    InFence,
}

/// Incremental splitter; feed it decoded text, then call [`Splitter::finish`].
#[derive(Debug, Default)]
pub struct Splitter {
    pending: String,
    state: State,
    halted: bool,
}

/// The JSON of a fenced block when it is a call (`{"name": …, "arguments": {…}}`).
fn fenced_call(block: &str) -> Option<String> {
    let body = block.trim_start_matches(|c: char| c.is_ascii_alphanumeric());
    let value: serde_json::Value = serde_json::from_str(body.trim()).ok()?;
    (value.get("name")?.is_string() && value.get("arguments")?.is_object())
        .then(|| value.to_string())
}

impl Splitter {
    /// Whether the model began writing a tool's result itself: generation
    /// should stop (what came before is already out).
    pub fn halted(&self) -> bool {
        self.halted
    }

    /// Adds text; returns what can be emitted now.
    pub fn push(&mut self, text: &str) -> Vec<Piece> {
        if self.halted {
            return Vec::new();
        }
        self.pending.push_str(text);
        let mut out = Vec::new();
        loop {
            match self.state {
                State::InCall => match self.pending.find(CALL_CLOSE) {
                    Some(end) => {
                        out.push(Piece::Call(self.pending[..end].trim().to_owned()));
                        self.pending.drain(..end + CALL_CLOSE.len());
                        self.state = State::Prose;
                    }
                    None => return out,
                },
                State::InFence => match self.pending.find(FENCE_OPEN) {
                    Some(end) => {
                        let block: String = self.pending.drain(..end + FENCE_OPEN.len()).collect();
                        let inner = &block[..end];
                        out.push(match fenced_call(inner) {
                            Some(json) => Piece::Call(json),
                            None => Piece::Text(format!("{FENCE_OPEN}{block}")),
                        });
                        self.state = State::Prose;
                    }
                    None => return out,
                },
                State::Prose => {
                    let next = [CALL_OPEN, FENCE_OPEN, RESPONSE_OPEN]
                        .iter()
                        .filter_map(|m| self.pending.find(m).map(|at| (at, *m)))
                        .min_by_key(|(at, _)| *at);
                    match next {
                        Some((start, marker)) => {
                            if start > 0 {
                                out.push(Piece::Text(self.pending[..start].to_owned()));
                            }
                            self.pending.drain(..start + marker.len());
                            if marker == RESPONSE_OPEN {
                                self.halted = true;
                                self.pending.clear();
                                return out;
                            }
                            self.state = if marker == CALL_OPEN {
                                State::InCall
                            } else {
                                State::InFence
                            };
                        }
                        None => {
                            // Hold back a suffix that could be the start of a marker.
                            let keep = partial_marker_suffix(&self.pending);
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
    }

    /// Flushes what is left: held-back text, or an unterminated call.
    pub fn finish(mut self) -> Vec<Piece> {
        let rest = std::mem::take(&mut self.pending);
        if rest.trim().is_empty() {
            return Vec::new();
        }
        match self.state {
            State::InCall => vec![Piece::Call(rest.trim().to_owned())],
            State::InFence => match fenced_call(&rest) {
                Some(json) => vec![Piece::Call(json)],
                None => vec![Piece::Text(format!("{FENCE_OPEN}{rest}"))],
            },
            State::Prose => vec![Piece::Text(rest)],
        }
    }
}

/// Length of the longest suffix of `s` that is a proper prefix of a marker.
fn partial_marker_suffix(s: &str) -> usize {
    [CALL_OPEN, FENCE_OPEN, RESPONSE_OPEN]
        .iter()
        .map(|marker| {
            (1..marker.len())
                .rev()
                .find(|&n| {
                    s.len() >= n
                        && s.is_char_boundary(s.len() - n)
                        && marker.starts_with(&s[s.len() - n..])
                })
                .unwrap_or(0)
        })
        .max()
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
    fn a_fenced_json_call_is_a_call_and_other_fences_stay_text() {
        let text = "Listing.\n```json\n{\"name\": \"terminal\", \"arguments\": {\"command\": \"ls\"}}\n```\n";
        for cut in 1..text.len() {
            let pieces = run(&[&text[..cut], &text[cut..]]);
            // Key order depends on whether serde_json keeps insertion order in this build.
            let wanted = serde_json::json!({"name": "terminal", "arguments": {"command": "ls"}});
            assert!(
                pieces.iter().any(|p| matches!(p, Piece::Call(c)
                    if serde_json::from_str::<serde_json::Value>(c).ok().as_ref() == Some(&wanted))),
                "cut at {cut}: {pieces:?}"
            );
        }
        let code = "Here:\n```rust\nfn main() {}\n```\ndone";
        assert_eq!(run(&[code]).concat_text(), code);
    }

    #[test]
    fn an_invented_tool_response_stops_the_output() {
        let mut s = Splitter::default();
        let out = s.push("I ran it.\n<tool_response>\nfake listing");
        assert_eq!(out, vec![Piece::Text("I ran it.\n".into())]);
        assert!(s.halted());
        assert!(s.push("more").is_empty());
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
