//! Turning agent events into terminal output. Plain text by default: no escape
//! codes, so output stays clean in pipes and files. [`Renderer::rich`] (only for
//! a terminal) renders markdown, dims reasoning and summarises tool results.

use std::collections::HashMap;
use std::io::Write;

use hermes_protocol::{Event, ToolOutcome};
use hermes_state::memory::fence::StreamingContextScrubber;

use crate::markdown::Markdown;

const DIM: &str = "\x1b[2m";
const BOLD: &str = "\x1b[1m";
const RESET: &str = "\x1b[0m";

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
    /// Terminal markdown, in rich mode.
    markdown: Option<Markdown>,
    /// Reasoning text is being streamed (rich mode), dimmed on stderr.
    reasoning_open: bool,
    /// Tools started and not yet finished (the spinner stays off meanwhile).
    running: Vec<String>,
}

impl Renderer {
    /// A renderer; `emojis` maps tool names to their progress-line emoji.
    pub fn new(verbosity: Verbosity, emojis: HashMap<String, String>) -> Self {
        Self {
            verbosity,
            emojis,
            mid_line: false,
            scrubber: StreamingContextScrubber::new(),
            markdown: None,
            reasoning_open: false,
            running: Vec::new(),
        }
    }

    /// Terminal styling: markdown, dimmed reasoning, tool result summaries.
    pub fn rich(mut self) -> Self {
        self.markdown = Some(Markdown::new());
        self
    }

    /// Whether this renderer styles its output.
    pub fn is_rich(&self) -> bool {
        self.markdown.is_some()
    }

    /// What the spinner says while the model is thinking, or `None` when it
    /// must not draw: mid-line, or while a tool runs, because a tool may be
    /// asking the user for approval on this terminal and the spinner would
    /// erase the question.
    pub fn spinner_label(&self) -> Option<String> {
        if self.mid_line || self.reasoning_open || !self.running.is_empty() {
            return None;
        }
        Some("thinking…".to_owned())
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
        if self.reasoning_open && !matches!(event, Event::ReasoningDelta { .. }) {
            writeln!(err, "{RESET}")?;
            self.reasoning_open = false;
        }
        if let Event::ToolFinished { name, .. } = event {
            self.finished(name);
        }
        match event {
            Event::TextDelta { text } => {
                let visible = self.scrubber.feed(text);
                self.write_text(&visible, out)?;
            }
            Event::ToolStarted {
                name, arguments, ..
            } => self.tool_started(name, arguments, out, err)?,
            Event::ToolFinished {
                name,
                outcome,
                result,
                duration_ms,
                ..
            } => self.tool_finished(name, *outcome, result, *duration_ms, err)?,
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
            Event::ReasoningDelta { text } if self.is_rich() && !text.is_empty() => {
                self.reasoning(text, out, err)?;
            }
            Event::Nested { origin, inner } => {
                if let Some(line) = self.nested_line(origin, inner) {
                    self.end_line(out)?;
                    writeln!(err, "{line}")?;
                }
            }
            Event::Announced { text } => {
                self.end_text(out)?;
                self.end_line(out)?;
                writeln!(err, "{}", announcement(text, self.is_rich()))?;
            }
            // Questions are asked by their own prompts; outcomes of commands
            // are told by the command.
            Event::ApprovalRequested { .. } | Event::ClarifyRequested { .. } => {
                self.end_text(out)?;
                self.end_line(out)?;
            }
            Event::ReasoningDelta { .. }
            | Event::MessageAppended { .. }
            | Event::SteerUnused { .. }
            | Event::QuestionClosed { .. }
            | Event::SessionChanged { .. }
            | Event::Undone { .. }
            | Event::ModelChanged { .. }
            | Event::Compressed { .. }
            | Event::ModelCall { .. }
            | Event::Ack
            | Event::AnnouncementsWaiting
            | Event::ShutdownComplete => {}
        }
        Ok(())
    }

    /// A tool call's start line (the call's main argument when rich).
    fn tool_started(
        &mut self,
        name: &str,
        arguments: &str,
        out: &mut impl Write,
        err: &mut impl Write,
    ) -> std::io::Result<()> {
        self.end_text(out)?;
        self.end_line(out)?;
        let emoji = self.emojis.get(name).map(String::as_str).unwrap_or("⚡");
        if self.is_rich() {
            self.running.push(name.to_owned());
            writeln!(
                err,
                "  {emoji} {name}  {}",
                preview(&primary_argument(arguments), 72)
            )
        } else {
            writeln!(err, "  {emoji} {name}  {}", preview(arguments, 80))
        }
    }

    /// A tool call's outcome line (nothing for a plain success when not rich).
    fn tool_finished(
        &self,
        name: &str,
        outcome: ToolOutcome,
        result: &str,
        duration_ms: u64,
        err: &mut impl Write,
    ) -> std::io::Result<()> {
        match outcome {
            ToolOutcome::Ok if self.is_rich() => writeln!(
                err,
                "    {DIM}✓ {} · {}{RESET}",
                seconds(duration_ms),
                collapse(result)
            ),
            ToolOutcome::Ok => Ok(()),
            ToolOutcome::Error => writeln!(
                err,
                "    ✗ {name} failed ({duration_ms} ms): {}",
                preview(result, 120)
            ),
            ToolOutcome::Cancelled => writeln!(err, "    ⏹ {name} cancelled"),
        }
    }

    /// Reasoning text, dimmed, opened by 💭 once per span.
    fn reasoning(
        &mut self,
        text: &str,
        out: &mut impl Write,
        err: &mut impl Write,
    ) -> std::io::Result<()> {
        if !self.reasoning_open {
            self.end_text(out)?;
            self.end_line(out)?;
            write!(err, "{DIM}💭 ")?;
            self.reasoning_open = true;
        }
        write!(err, "{text}")?;
        err.flush()
    }

    /// One indented progress line for something a script or subagent did;
    /// text deltas and bookkeeping inside it are not drawn.
    fn nested_line(&self, origin: &str, inner: &Event) -> Option<String> {
        let body = match inner {
            Event::ToolStarted {
                name, arguments, ..
            } => {
                let emoji = self.emojis.get(name).map(String::as_str).unwrap_or("⚡");
                format!(
                    "{emoji} {name}  {}",
                    preview(&primary_argument(arguments), 60)
                )
            }
            Event::ToolFinished {
                name,
                outcome: ToolOutcome::Error,
                result,
                ..
            } => format!("✗ {name}: {}", preview(result, 100)),
            Event::ToolFinished {
                name,
                outcome: ToolOutcome::Cancelled,
                ..
            } => format!("⏹ {name} cancelled"),
            Event::Status { message } => message.clone(),
            Event::TurnComplete { api_calls, .. } => format!("finished ({api_calls} API calls)"),
            Event::Error { message } => format!("failed: {}", preview(message, 100)),
            Event::Nested {
                origin: inner_origin,
                inner,
            } => {
                return self.nested_line(&format!("{origin} › {inner_origin}"), inner);
            }
            _ => return None,
        };
        Some(if self.is_rich() {
            format!("    {DIM}↳ {origin}: {body}{RESET}")
        } else {
            format!("    ↳ {origin}: {body}")
        })
    }

    /// The event stream ended (possibly mid-answer, on an interrupt): draws
    /// what is still held back and ends the line.
    pub fn finish(&mut self, out: &mut impl Write, err: &mut impl Write) -> std::io::Result<()> {
        if self.verbosity == Verbosity::FinalOnly {
            return Ok(());
        }
        if self.reasoning_open {
            writeln!(err, "{RESET}")?;
            self.reasoning_open = false;
        }
        self.end_text(out)?;
        self.end_line(out)
    }

    fn finished(&mut self, name: &str) {
        if let Some(i) = self.running.iter().rposition(|n| n == name) {
            self.running.remove(i);
        }
    }

    fn write_text(&mut self, text: &str, out: &mut impl Write) -> std::io::Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        if let Some(md) = self.markdown.as_mut() {
            // Markdown is drawn in whole lines, so the cursor is never left mid-line.
            let drawn = md.feed(text);
            out.write_all(drawn.as_bytes())?;
            return out.flush();
        }
        out.write_all(text.as_bytes())?;
        out.flush()?;
        self.mid_line = !text.ends_with('\n');
        Ok(())
    }

    /// A model response ended: release a held-back tail that was not a tag.
    fn end_text(&mut self, out: &mut impl Write) -> std::io::Result<()> {
        let tail = self.scrubber.flush();
        self.write_text(&tail, out)?;
        if let Some(md) = self.markdown.as_mut() {
            out.write_all(md.finish().as_bytes())?;
            out.flush()?;
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

/// The argument worth showing for a tool call: the command, path, query… when
/// the arguments have one, else the whole JSON.
fn primary_argument(arguments: &str) -> String {
    const KEYS: &[&str] = &[
        "command",
        "path",
        "file_path",
        "query",
        "question",
        "goal",
        "url",
        "pattern",
        "code",
        "action",
        "name",
    ];
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str(arguments) else {
        return arguments.to_owned();
    };
    KEYS.iter()
        .find_map(|k| map.get(*k).and_then(serde_json::Value::as_str))
        .map_or_else(|| arguments.to_owned(), str::to_owned)
}

/// A tool result folded to one line: its first line and how much more there is.
fn collapse(result: &str) -> String {
    let text = serde_json::from_str::<serde_json::Value>(result)
        .ok()
        .and_then(|v| {
            ["output", "content", "result"].iter().find_map(|k| {
                v.get(*k)
                    .and_then(serde_json::Value::as_str)
                    .map(str::to_owned)
            })
        })
        .unwrap_or_else(|| result.to_owned());
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    match lines.len() {
        0 => "no output".to_owned(),
        1 => preview(lines[0], 80),
        n => format!("{} (+{} more lines)", preview(lines[0], 60), n - 1),
    }
}

/// `0.3s`, `12s`.
fn seconds(ms: u64) -> String {
    if ms < 10_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        format!("{}s", ms / 1000)
    }
}

/// A message the user did not type (background-process news), drawn as the
/// reference's CLI draws a submitted message: a rule, then `● ` and the text,
/// two head and two tail lines of a longer one around a count of the rest.
pub fn announcement(text: &str, rich: bool) -> String {
    const HEAD: usize = 2;
    const TAIL: usize = 2;
    let lines: Vec<&str> = text.split('\n').collect();
    let hidden = lines.len().saturating_sub(HEAD + TAIL);
    let mut shown: Vec<String> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if hidden > 0 && i == HEAD {
            let noun = if hidden == 1 { "line" } else { "lines" };
            shown.push(if rich {
                format!("{DIM}... (+{hidden} more {noun}){RESET}")
            } else {
                format!("... (+{hidden} more {noun})")
            });
        }
        if hidden > 0 && (HEAD..HEAD + hidden).contains(&i) {
            continue;
        }
        let bullet = if i == 0 { "● " } else { "" };
        shown.push(if rich {
            format!("{BOLD}{bullet}{line}{RESET}")
        } else {
            format!("{bullet}{line}")
        });
    }
    format!("{}\n{}", "─".repeat(40), shown.join("\n"))
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

/// `now`, `42s ago`, `5m ago`, `3h ago`, `2d ago` for a Unix time in seconds.
pub(crate) fn ago(secs: u64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    match now.saturating_sub(secs) {
        0 => "now".into(),
        s if s < 60 => format!("{s}s ago"),
        s if s < 3600 => format!("{}m ago", s / 60),
        s if s < 86_400 => format!("{}h ago", s / 3600),
        s => format!("{}d ago", s / 86_400),
    }
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
    fn rich_mode_styles_reasoning_tools_and_markdown() {
        let mut r = Renderer::new(
            Verbosity::Normal,
            HashMap::from([("terminal".to_owned(), "💻".to_owned())]),
        )
        .rich();
        let events = [
            Event::ReasoningDelta {
                text: "Checking the ".into(),
            },
            Event::ReasoningDelta {
                text: "files.".into(),
            },
            Event::ToolStarted {
                call_id: "1".into(),
                name: "terminal".into(),
                arguments: r#"{"command":"ls -la /tmp","timeout":5}"#.into(),
            },
            Event::ToolFinished {
                call_id: "1".into(),
                name: "terminal".into(),
                outcome: ToolOutcome::Ok,
                result: r#"{"output":"a\nb\nc\nd","exit_code":0}"#.into(),
                duration_ms: 420,
            },
            Event::ToolStarted {
                call_id: "2".into(),
                name: "read_file".into(),
                arguments: r#"{"path":"README.md"}"#.into(),
            },
            Event::ToolFinished {
                call_id: "2".into(),
                name: "read_file".into(),
                outcome: ToolOutcome::Cancelled,
                result: String::new(),
                duration_ms: 1,
            },
            Event::TextDelta {
                text: "Found **4** files".into(),
            },
            Event::TurnComplete {
                final_text: String::new(),
                reason: hermes_protocol::TurnEnd::Completed,
                usage: hermes_protocol::Usage::default(),
                api_calls: 2,
            },
        ];
        let (mut out, mut err) = (Vec::new(), Vec::new());
        for e in &events {
            r.render(e, &mut out, &mut err).unwrap();
        }
        let shown = format!(
            "--- stdout\n{}--- stderr\n{}",
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap()
        )
        .replace('\u{1b}', "␛");
        insta::assert_snapshot!("rich_tool_lines", shown);
        assert_eq!(r.spinner_label().as_deref(), Some("thinking…"));
    }

    #[test]
    fn long_tool_output_is_collapsed_to_one_line() {
        let many: Vec<String> = (1..=40).map(|i| format!("line {i}")).collect();
        let result = serde_json::json!({ "output": many.join("\n") }).to_string();
        assert_eq!(collapse(&result), "line 1 (+39 more lines)");
        assert_eq!(collapse(r#"{"output":""}"#), "no output");
        assert_eq!(primary_argument(r#"{"query":"rust"}"#), "rust");
        assert_eq!(primary_argument("not json"), "not json");
    }

    #[test]
    fn announcements_are_drawn_as_the_reference_draws_a_submitted_message() {
        let short = "[IMPORTANT: Background process proc_1 completed normally (exit code 0).\nCommand: x\nOutput:\ndone]";
        assert_eq!(
            announcement(short, false),
            format!(
                "{}\n● [IMPORTANT: Background process proc_1 completed normally (exit code 0).\nCommand: x\nOutput:\ndone]",
                "─".repeat(40)
            )
        );
        let long = "a\nb\nc\nd\ne\nf";
        assert_eq!(
            announcement(long, false),
            format!("{}\n● a\nb\n... (+2 more lines)\ne\nf", "─".repeat(40))
        );
    }

    #[test]
    fn preview_flattens_and_cuts() {
        assert_eq!(preview("a\n  b", 10), "a b");
        assert_eq!(preview(&"x".repeat(20), 5), "xxxx…");
    }
}
