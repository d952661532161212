//! Turning agent events into terminal output. Plain text only: no escape codes,
//! so output stays clean in pipes and files.

use std::collections::HashMap;
use std::io::Write;

use hermes_protocol::{Event, ToolOutcome};
use hermes_state::memory::fence::StreamingContextScrubber;

/// How much the user wants to see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verbosity {
    /// Stream the answer to stdout, tool progress to stderr.
    Normal,
    /// Print only the final answer (stdout), nothing while working.
    FinalOnly,
}

/// Renders events as they arrive.
#[derive(Debug)]
pub struct Renderer {
    verbosity: Verbosity,
    emojis: HashMap<String, String>,
    mid_line: bool,
    /// Keeps `<memory-context>` spans the model echoes off the screen.
    scrubber: StreamingContextScrubber,
}

impl Renderer {
    /// A renderer; `emojis` maps tool names to their progress-line emoji.
    pub fn new(verbosity: Verbosity, emojis: HashMap<String, String>) -> Self {
        Self {
            verbosity,
            emojis,
            mid_line: false,
            scrubber: StreamingContextScrubber::new(),
        }
    }

    /// Writes one event.
    pub fn render(
        &mut self,
        event: &Event,
        out: &mut impl Write,
        err: &mut impl Write,
    ) -> std::io::Result<()> {
        if self.verbosity == Verbosity::FinalOnly {
            return Ok(());
        }
        match event {
            Event::TextDelta { text } => {
                let visible = self.scrubber.feed(text);
                self.write_text(&visible, out)?;
            }
            Event::ToolStarted {
                name, arguments, ..
            } => {
                self.end_text(out)?;
                self.end_line(out)?;
                let emoji = self.emojis.get(name).map(String::as_str).unwrap_or("⚡");
                writeln!(err, "  {emoji} {name}  {}", preview(arguments, 80))?;
            }
            Event::ToolFinished {
                name,
                outcome,
                result,
                duration_ms,
                ..
            } => match outcome {
                ToolOutcome::Ok => {}
                ToolOutcome::Error => writeln!(
                    err,
                    "    ✗ {name} failed ({duration_ms} ms): {}",
                    preview(result, 120)
                )?,
                ToolOutcome::Cancelled => writeln!(err, "    ⏹ {name} cancelled")?,
            },
            Event::Status { message } => {
                // Status lines can arrive mid-response: flushing here could end
                // a span early and let the rest of it through.
                self.end_line(out)?;
                writeln!(err, "  ⚠ {message}")?;
            }
            Event::TurnComplete { .. } => {
                self.end_text(out)?;
                self.scrubber.reset();
                self.end_line(out)?;
            }
            Event::Error { message } => {
                self.end_text(out)?;
                self.end_line(out)?;
                writeln!(err, "error: {message}")?;
            }
            Event::ReasoningDelta { .. } | Event::MessageAppended { .. } => {}
        }
        Ok(())
    }

    fn write_text(&mut self, text: &str, out: &mut impl Write) -> std::io::Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        out.write_all(text.as_bytes())?;
        out.flush()?;
        self.mid_line = !text.ends_with('\n');
        Ok(())
    }

    /// A model response ended: release a held-back tail that was not a tag.
    fn end_text(&mut self, out: &mut impl Write) -> std::io::Result<()> {
        let tail = self.scrubber.flush();
        self.write_text(&tail, out)
    }

    fn end_line(&mut self, out: &mut impl Write) -> std::io::Result<()> {
        if self.mid_line {
            writeln!(out)?;
            out.flush()?;
            self.mid_line = false;
        }
        Ok(())
    }
}

/// One line, at most `max` characters, for progress displays.
pub fn preview(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let cut: String = flat.chars().take(max.saturating_sub(1)).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(events: &[Event], verbosity: Verbosity) -> (String, String) {
        let mut r = Renderer::new(
            verbosity,
            HashMap::from([("terminal".to_owned(), "💻".to_owned())]),
        );
        let (mut out, mut err) = (Vec::new(), Vec::new());
        for e in events {
            r.render(e, &mut out, &mut err).unwrap();
        }
        (
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        )
    }

    #[test]
    fn text_streams_to_stdout_and_tools_to_stderr() {
        let events = [
            Event::TextDelta {
                text: "Let me check".into(),
            },
            Event::ToolStarted {
                call_id: "1".into(),
                name: "terminal".into(),
                arguments: "{\"command\":\n\"ls\"}".into(),
            },
            Event::ToolFinished {
                call_id: "1".into(),
                name: "terminal".into(),
                outcome: ToolOutcome::Error,
                result: "{\"error\":\"boom\"}".into(),
                duration_ms: 3,
            },
            Event::TextDelta {
                text: "Done.".into(),
            },
        ];
        let (out, err) = run(&events, Verbosity::Normal);
        assert_eq!(out, "Let me check\nDone.");
        assert_eq!(
            err,
            "  💻 terminal  {\"command\": \"ls\"}\n    ✗ terminal failed (3 ms): {\"error\":\"boom\"}\n"
        );
        assert!(!out.contains('\u{1b}') && !err.contains('\u{1b}'));
    }

    #[test]
    fn final_only_prints_nothing_while_working() {
        let (out, err) = run(
            &[Event::TextDelta { text: "x".into() }],
            Verbosity::FinalOnly,
        );
        assert!(out.is_empty() && err.is_empty());
    }

    fn deltas(parts: &[&str]) -> Vec<Event> {
        let mut events: Vec<Event> = parts
            .iter()
            .map(|p| Event::TextDelta {
                text: (*p).to_owned(),
            })
            .collect();
        events.push(Event::TurnComplete {
            final_text: String::new(),
            reason: hermes_protocol::TurnEnd::Completed,
            usage: hermes_protocol::Usage::default(),
            api_calls: 1,
        });
        events
    }

    #[test]
    fn memory_context_split_across_deltas_never_reaches_the_screen() {
        let text = "Answer:\n<memory-context>\n[System note: recalled]\nSECRET\n</memory-context>\nvisible";
        for (i, _) in text.char_indices().skip(1) {
            let (a, b) = text.split_at(i);
            let (out, _) = run(&deltas(&[a, b]), Verbosity::Normal);
            assert_eq!(out, "Answer:\n\nvisible\n", "split at {i}");
        }
    }

    #[test]
    fn a_held_back_tail_is_released_when_the_response_ends() {
        let (out, _) = run(&deltas(&["1 <", "2 <"]), Verbosity::Normal);
        assert_eq!(out, "1 <2 <\n");
        let mut events = vec![Event::TextDelta {
            text: "a <mem".into(),
        }];
        events.push(Event::ToolStarted {
            call_id: "1".into(),
            name: "terminal".into(),
            arguments: "{}".into(),
        });
        let (out, _) = run(&events, Verbosity::Normal);
        assert_eq!(out, "a <mem\n");
    }

    #[test]
    fn preview_flattens_and_cuts() {
        assert_eq!(preview("a\n  b", 10), "a b");
        assert_eq!(preview(&"x".repeat(20), 5), "xxxx…");
    }
}
