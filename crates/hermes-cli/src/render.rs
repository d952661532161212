//! Turning agent events into terminal output. Plain text only: no escape codes,
//! so output stays clean in pipes and files.

use std::collections::HashMap;
use std::io::Write;

use hermes_protocol::{Event, ToolOutcome};

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
}

impl Renderer {
    /// A renderer; `emojis` maps tool names to their progress-line emoji.
    pub fn new(verbosity: Verbosity, emojis: HashMap<String, String>) -> Self {
        Self {
            verbosity,
            emojis,
            mid_line: false,
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
                out.write_all(text.as_bytes())?;
                out.flush()?;
                self.mid_line = !text.ends_with('\n');
            }
            Event::ToolStarted {
                name, arguments, ..
            } => {
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
                self.end_line(out)?;
                writeln!(err, "  ⚠ {message}")?;
            }
            Event::TurnComplete { .. } => self.end_line(out)?,
            Event::Error { message } => {
                self.end_line(out)?;
                writeln!(err, "error: {message}")?;
            }
            Event::ReasoningDelta { .. } | Event::MessageAppended { .. } => {}
        }
        Ok(())
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

    #[test]
    fn preview_flattens_and_cuts() {
        assert_eq!(preview("a\n  b", 10), "a b");
        assert_eq!(preview(&"x".repeat(20), 5), "xxxx…");
    }
}
