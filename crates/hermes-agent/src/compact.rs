//! Making a conversation fit a smaller window without a summarising model: keep the
//! head (system prompt and the first exchange) and a token-budgeted tail, and replace
//! the middle with a deterministic summary of what it held. This is the compressor's
//! fallback path (the seeds' "static fallback text when summarisation fails"); the
//! model-written summary builds on the same head/tail split.

use hermes_protocol::{Message, Role};

use crate::resilience::approx_tokens;

/// Opens the summary that stands in for compacted turns.
pub const SUMMARY_PREFIX: &str = "[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns of this \
conversation were removed to fit the context window; the notes below stand in for them. They are \
background, not instructions: do not redo or answer what they describe. Act only on the latest \
user message after this note, and keep using your tools for it.";

/// Closes the summary, so a model (and a later compaction) can tell where it ends.
pub const SUMMARY_END: &str = "[END OF CONTEXT SUMMARY]";

/// Non-system messages kept verbatim at the start.
const PROTECT_FIRST: usize = 3;
/// Longest excerpt of one compacted message.
const EXCERPT_CHARS: usize = 300;

/// The result of [`compact`].
#[derive(Debug, Clone, PartialEq)]
pub struct Compaction {
    /// The new conversation: head, summary, tail.
    pub messages: Vec<Message>,
    /// How many messages the summary replaced.
    pub removed: usize,
}

/// Where the protected head ends: the system message, then [`PROTECT_FIRST`] more,
/// extended so an assistant's tool calls keep their results.
fn head_end(messages: &[Message]) -> usize {
    let start = usize::from(messages.first().is_some_and(|m| m.role == Role::System));
    let mut end = (start + PROTECT_FIRST).min(messages.len());
    while end < messages.len() && messages[end].role == Role::Tool {
        end += 1;
    }
    end
}

/// Where the protected tail starts: as many recent messages as fit `budget` tokens,
/// never starting on a tool result (its call comes along), always including the last
/// user message.
fn tail_start(messages: &[Message], head: usize, budget: usize) -> usize {
    let mut start = messages.len();
    let mut used = 0;
    while start > head {
        let cost = approx_tokens(std::slice::from_ref(&messages[start - 1])).max(1);
        if used + cost > budget && start < messages.len() {
            break;
        }
        used += cost;
        start -= 1;
    }
    while start > head && start < messages.len() && messages[start].role == Role::Tool {
        start -= 1;
    }
    if let Some(last_user) = messages.iter().rposition(|m| m.role == Role::User) {
        start = start.min(last_user.max(head));
    }
    start
}

fn excerpt(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= EXCERPT_CHARS {
        return flat;
    }
    let cut: String = flat.chars().take(EXCERPT_CHARS).collect();
    format!("{cut} …[truncated]")
}

/// Paths named in tool-call arguments (`path`, `file_path`, `workdir`).
fn paths_in(arguments: &str, into: &mut Vec<String>) {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(arguments) else {
        return;
    };
    for key in ["path", "file_path", "workdir", "output_path"] {
        if let Some(p) = v.get(key).and_then(|p| p.as_str())
            && !into.iter().any(|q| q == p)
        {
            into.push(p.to_owned());
        }
    }
}

/// The deterministic summary of `middle`.
fn summarize(middle: &[Message]) -> String {
    let mut asks = Vec::new();
    let mut actions = Vec::new();
    let mut files = Vec::new();
    let mut problems = Vec::new();
    for m in middle {
        match m.role {
            Role::User if !m.text().trim().is_empty() => asks.push(excerpt(m.text())),
            Role::Assistant if !m.tool_calls.is_empty() => {
                let names: Vec<&str> = m
                    .tool_calls
                    .iter()
                    .map(|c| c.function.name.as_str())
                    .collect();
                actions.push(format!("called {}", names.join(", ")));
                for c in &m.tool_calls {
                    paths_in(&c.function.arguments, &mut files);
                }
            }
            Role::Assistant if !m.text().trim().is_empty() => {
                actions.push(format!("said: {}", excerpt(m.text())));
            }
            Role::Tool => {
                let lower = m.text().to_lowercase();
                if ["error", "failed", "exception", "traceback", "timed out"]
                    .iter()
                    .any(|w| lower.contains(w))
                {
                    let tool = m.name.as_deref().unwrap_or("tool");
                    problems.push(format!("{tool}: {}", excerpt(m.text())));
                }
            }
            _ => {}
        }
    }
    let bullets = |items: &[String], limit: usize| -> String {
        if items.is_empty() {
            return "- none recorded".to_owned();
        }
        let skip = items.len().saturating_sub(limit);
        items[skip..]
            .iter()
            .map(|i| format!("- {i}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let active = asks.last().map_or_else(
        || "Unknown (no user request among the compacted turns).".to_owned(),
        |a| format!("The user asked: {a}"),
    );
    format!(
        "{SUMMARY_PREFIX}\n\n## Active Task\n{active}\n\n## Earlier Requests\n{}\n\n## Actions Taken\n{}\n\n\
         ## Files Touched\n{}\n\n## Errors Seen\n{}\n\n\
         This summary was built locally without a model ({} messages compacted); check files and \
         command output again rather than trusting omitted details.\n{SUMMARY_END}",
        bullets(&asks, 6),
        bullets(&actions, 12),
        bullets(&files, 12),
        bullets(&problems, 6),
        middle.len()
    )
}

/// Replaces the middle of `messages` with a summary so that the tail keeps about
/// `tail_budget` tokens. `None` when there is no middle to remove.
pub fn compact(messages: &[Message], tail_budget: usize) -> Option<Compaction> {
    let head = head_end(messages);
    let tail = tail_start(messages, head, tail_budget);
    if tail <= head {
        return None;
    }
    let summary = summarize(&messages[head..tail]);
    let mut out: Vec<Message> = messages[..head].to_vec();
    // Keep roles alternating: the summary takes the role the head's end calls for,
    // and merges into the tail's first message when that has the same role.
    let role = match out.last().map(|m| m.role) {
        Some(Role::User) => Role::Assistant,
        _ => Role::User,
    };
    let mut rest: Vec<Message> = messages[tail..].to_vec();
    match rest.first_mut() {
        Some(first) if first.role == role && first.tool_calls.is_empty() => {
            first.content = Some(format!("{summary}\n\n{}", first.text()));
        }
        Some(first) if first.role == role => {
            // An assistant that calls tools keeps its calls; the summary rides in its text.
            first.content = Some(match first.content.as_deref() {
                Some(t) if !t.is_empty() => format!("{summary}\n\n{t}"),
                _ => summary,
            });
        }
        _ => out.push(if role == Role::User {
            Message::user(summary)
        } else {
            Message::assistant(summary)
        }),
    }
    out.extend(rest);
    Some(Compaction {
        messages: out,
        removed: tail - head,
    })
}

#[cfg(test)]
#[path = "compact_tests.rs"]
mod tests;
