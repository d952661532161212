//! One turn's answer on its way to a chat: streamed by editing a message
//! (at the platform's pace, with a cursor), split at the platform's limit
//! when done, and tool progress gathered in one message.

use std::time::Instant;

use super::config::Streaming;
use super::platform::{Adapter, ChatRef, Outgoing, PlatformError};
use super::split;

/// Visible characters before the first streamed message.
const MIN_FIRST_CHARS: usize = 4;
/// Edit failures (flood control) before streaming gives up and only the final answer is sent.
const MAX_STRIKES: u32 = 3;

/// The streamed answer of one turn.
#[derive(Debug)]
pub struct AnswerStream {
    enabled: bool,
    /// The message being edited.
    message_id: Option<String>,
    /// Text of the current segment (since the last tool call).
    text: String,
    /// What the message shows now.
    shown: String,
    last_edit: Option<Instant>,
    strikes: u32,
}

/// Tool progress lines, kept in one message that grows.
#[derive(Debug, Default)]
pub struct ProgressBubble {
    message_id: Option<String>,
    lines: Vec<(String, u32)>,
    last_tool: Option<String>,
}

fn len_fn(adapter: &dyn Adapter) -> split::LenFn {
    if adapter.name() == "telegram" {
        split::utf16
    } else {
        split::chars
    }
}

/// Sends `text` (markdown) as one or more messages; returns the last id.
pub async fn send_long(
    adapter: &dyn Adapter,
    chat: &ChatRef,
    text: &str,
) -> Result<Option<String>, PlatformError> {
    let max = adapter.capabilities().max_len;
    let mut last = None;
    for part in split::split(text, max.saturating_sub(64).max(64), len_fn(adapter)) {
        if part.trim().is_empty() {
            continue;
        }
        last = Some(adapter.send(chat, &Outgoing::markdown(part)).await?);
    }
    Ok(last)
}

impl AnswerStream {
    /// A stream for one turn; with `enabled` off, only the final answer is sent.
    pub fn new(enabled: bool) -> Self {
        Self {
            enabled,
            message_id: None,
            text: String::new(),
            shown: String::new(),
            last_edit: None,
            strikes: 0,
        }
    }

    /// Adds answer text.
    pub fn push(&mut self, delta: &str) {
        self.text.push_str(delta);
    }

    /// Shows what has come so far when the platform's pace allows.
    pub async fn flush(&mut self, adapter: &dyn Adapter, chat: &ChatRef, cfg: &Streaming) {
        if !self.enabled || self.strikes >= MAX_STRIKES {
            return;
        }
        let visible = self.text.trim();
        if visible.chars().count() < MIN_FIRST_CHARS || self.text == self.shown {
            return;
        }
        let interval = cfg.edit_interval.max(adapter.capabilities().edit_interval);
        let due = self.last_edit.is_none_or(|t| t.elapsed() >= interval)
            || self.text.len().saturating_sub(self.shown.len()) >= cfg.buffer_threshold
                && self
                    .last_edit
                    .is_none_or(|t| t.elapsed() >= adapter.capabilities().edit_interval);
        if !due {
            return;
        }
        let limit = adapter
            .capabilities()
            .max_len
            .saturating_sub(cfg.cursor.chars().count() + 100);
        let mut preview: String = self.text.trim_end().chars().take(limit).collect();
        preview.push_str(&cfg.cursor);
        let message = Outgoing::plain(preview);
        let result = match &self.message_id {
            None => adapter.send(chat, &message).await.map(|id| {
                self.message_id = Some(id);
            }),
            Some(id) => adapter.edit(chat, id, &message).await,
        };
        self.last_edit = Some(Instant::now());
        match result {
            Ok(()) => self.shown = self.text.clone(),
            Err(_) => self.strikes += 1,
        }
    }

    /// A tool call ends the current segment: its message keeps the text so far
    /// (formatted, without the cursor) and later text starts a new message.
    pub async fn segment_break(&mut self, adapter: &dyn Adapter, chat: &ChatRef) {
        if let Some(id) = self.message_id.take() {
            let text = self.text.trim().to_owned();
            if !text.is_empty() {
                let _ = finalize_into(adapter, chat, &id, &text).await;
            }
        }
        self.text.clear();
        self.shown.clear();
        self.last_edit = None;
    }

    /// Delivers the final answer: the streamed message becomes its first
    /// part, the rest are new messages.
    pub async fn finish(
        &mut self,
        adapter: &dyn Adapter,
        chat: &ChatRef,
        final_text: &str,
    ) -> Result<(), PlatformError> {
        let text = final_text.trim();
        match self.message_id.take() {
            Some(id) if !text.is_empty() => finalize_into(adapter, chat, &id, text).await,
            _ if text.is_empty() => Ok(()),
            _ => send_long(adapter, chat, text).await.map(|_| ()),
        }
    }
}

/// Puts `text` into message `id` (its first part) and sends the rest.
async fn finalize_into(
    adapter: &dyn Adapter,
    chat: &ChatRef,
    id: &str,
    text: &str,
) -> Result<(), PlatformError> {
    let max = adapter.capabilities().max_len.saturating_sub(64).max(64);
    let parts = split::split(text, max, len_fn(adapter));
    let mut parts = parts.into_iter().filter(|p| !p.trim().is_empty());
    if let Some(first) = parts.next()
        && adapter
            .edit(chat, id, &Outgoing::markdown(first.clone()))
            .await
            .is_err()
    {
        // The message can no longer be edited: send the whole part anew.
        adapter.send(chat, &Outgoing::markdown(first)).await?;
    }
    for part in parts {
        adapter.send(chat, &Outgoing::markdown(part)).await?;
    }
    Ok(())
}

/// The preview of a tool call's arguments: its most telling string, cut to 40.
fn preview(arguments: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(arguments).ok()?;
    let obj = value.as_object()?;
    let keys = [
        "command", "query", "path", "url", "code", "pattern", "prompt", "goal", "text",
    ];
    let text = keys
        .iter()
        .find_map(|k| obj.get(*k).and_then(|v| v.as_str()))
        .or_else(|| obj.values().find_map(|v| v.as_str()))?;
    let line = text.lines().next().unwrap_or("").trim();
    if line.is_empty() {
        return None;
    }
    let mut out: String = line.chars().take(40).collect();
    if line.chars().count() > 40 {
        out.push_str("...");
    }
    Some(out)
}

impl ProgressBubble {
    fn render(&self) -> String {
        self.lines
            .iter()
            .map(|(line, n)| {
                if *n > 1 {
                    format!("{line} (×{n})")
                } else {
                    line.clone()
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Adds a line for a tool call (`verbose` shows its arguments); `new`
    /// mode skips a call of the same tool as the last.
    pub async fn tool_started(
        &mut self,
        adapter: &dyn Adapter,
        chat: &ChatRef,
        mode: super::config::ToolProgress,
        emoji: &str,
        name: &str,
        arguments: &str,
    ) {
        use super::config::ToolProgress;
        if mode == ToolProgress::Off
            || mode == ToolProgress::New && self.last_tool.as_deref() == Some(name)
        {
            return;
        }
        self.last_tool = Some(name.to_owned());
        let line = match (mode, preview(arguments)) {
            (ToolProgress::Verbose, _) => {
                let args: String = arguments.chars().take(200).collect();
                format!("{emoji} {name}\n{args}")
            }
            (_, Some(p)) => format!("{emoji} {name}: \"{p}\""),
            (_, None) => format!("{emoji} {name}..."),
        };
        match self.lines.last_mut() {
            Some((last, count)) if *last == line => *count += 1,
            _ => self.lines.push((line, 1)),
        }
        if self.render().chars().count() > adapter.capabilities().max_len.saturating_sub(100) {
            // Full: the next lines go to a fresh message.
            let newest = self.lines.pop();
            self.lines = newest.into_iter().collect();
            self.message_id = None;
        }
        let message = Outgoing::plain(self.render());
        match &self.message_id {
            Some(id) => {
                let _ = adapter.edit(chat, id, &message).await;
            }
            None => {
                self.message_id = adapter.send(chat, &message).await.ok();
            }
        }
    }
}
