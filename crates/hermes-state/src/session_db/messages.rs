//! Storing and loading messages.

use hermes_protocol::{Message, Role, ToolCall};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, Row};

use super::error::{Ctx, DbError};
use super::text::{is_review_harness, sanitize_context};
use super::types::{MessageExtra, StoredMessage};
use super::{SessionDb, pyjson};

/// Prefix the reference puts before JSON-encoded structured (multimodal) content.
pub const CONTENT_JSON_PREFIX: &str = "\u{0}json:";

/// Columns read into a [`StoredMessage`], in [`stored_message`]'s order.
pub const MSG_COLS: &str = "id, session_id, role, content, tool_call_id, tool_calls, \
    tool_name, timestamp, token_count, finish_reason, reasoning";

/// Text from a column of any storage class (old files are not always tidy).
pub(crate) fn text_at(row: &Row<'_>, idx: usize) -> rusqlite::Result<Option<String>> {
    Ok(match row.get_ref(idx)? {
        ValueRef::Null => None,
        ValueRef::Text(t) | ValueRef::Blob(t) => Some(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Integer(i) => Some(i.to_string()),
        ValueRef::Real(f) => Some(f.to_string()),
    })
}

/// A number from a column of any storage class (`NULL` and non-numeric text are `None`).
pub(crate) fn f64_at(row: &Row<'_>, idx: usize) -> rusqlite::Result<Option<f64>> {
    Ok(match row.get_ref(idx)? {
        ValueRef::Integer(i) => Some(i as f64),
        ValueRef::Real(f) => Some(f),
        ValueRef::Text(t) => std::str::from_utf8(t)
            .ok()
            .and_then(|s| s.trim().parse().ok()),
        ValueRef::Null | ValueRef::Blob(_) => None,
    })
}

/// An integer from a column of any storage class.
pub(crate) fn i64_at(row: &Row<'_>, idx: usize) -> rusqlite::Result<Option<i64>> {
    Ok(match row.get_ref(idx)? {
        ValueRef::Integer(i) => Some(i),
        ValueRef::Real(f) => Some(f as i64),
        ValueRef::Text(t) => std::str::from_utf8(t)
            .ok()
            .and_then(|s| s.trim().parse().ok()),
        ValueRef::Null | ValueRef::Blob(_) => None,
    })
}

/// Maps a row selected with [`MSG_COLS`].
pub(crate) fn stored_message(row: &Row<'_>) -> rusqlite::Result<StoredMessage> {
    Ok(StoredMessage {
        id: row.get(0)?,
        session_id: text_at(row, 1)?.unwrap_or_default(),
        role: text_at(row, 2)?.unwrap_or_default(),
        content: text_at(row, 3)?,
        tool_call_id: text_at(row, 4)?,
        tool_calls: text_at(row, 5)?,
        tool_name: text_at(row, 6)?,
        timestamp: f64_at(row, 7)?.unwrap_or(0.0),
        token_count: i64_at(row, 8)?,
        finish_reason: text_at(row, 9)?,
        reasoning: text_at(row, 10)?,
    })
}

/// Renders stored content as plain text: structured (multimodal) content becomes its text
/// parts joined by newlines, or `"[multimodal content]"` when it has none.
pub fn content_text(raw: &str) -> String {
    let Some(json) = raw.strip_prefix(CONTENT_JSON_PREFIX) else {
        return raw.to_owned();
    };
    match serde_json::from_str::<serde_json::Value>(json) {
        Ok(serde_json::Value::Array(parts)) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter(|p| p.get("type").and_then(|t| t.as_str()) == Some("text"))
                .filter_map(|p| p.get("text").and_then(|t| t.as_str()))
                .filter(|t| !t.is_empty())
                .collect();
            if texts.is_empty() {
                "[multimodal content]".to_owned()
            } else {
                texts.join("\n")
            }
        }
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => raw.to_owned(),
    }
}

fn parse_role(role: &str) -> Option<Role> {
    match role {
        "system" => Some(Role::System),
        "user" => Some(Role::User),
        "assistant" => Some(Role::Assistant),
        "tool" => Some(Role::Tool),
        _ => None,
    }
}

pub(crate) fn query_messages(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<StoredMessage>, DbError> {
    let mut stmt = conn.prepare_cached(sql).ctx("reading messages")?;
    let rows = stmt
        .query_map(params, stored_message)
        .ctx("reading messages")?;
    rows.collect::<Result<_, _>>().ctx("reading messages")
}

/// A message's columns as both stores write them (the reference's
/// `append_message`): `tool_calls` as the JSON text of the OpenAI list,
/// `tool_name` from [`Message::name`], thinking blocks and Responses items
/// on assistant messages only.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageRecord {
    /// `role`.
    pub role: &'static str,
    /// `content`.
    pub content: Option<String>,
    /// `tool_call_id`.
    pub tool_call_id: Option<String>,
    /// `tool_calls` (JSON text).
    pub tool_calls: Option<String>,
    /// `tool_name`.
    pub tool_name: Option<String>,
    /// `reasoning`.
    pub reasoning: Option<String>,
    /// `reasoning_details` (JSON text).
    pub reasoning_details: Option<String>,
    /// `codex_reasoning_items` (JSON text).
    pub codex_reasoning_items: Option<String>,
    /// How much the session's `tool_call_count` grows.
    pub tool_call_count: i64,
}

impl MessageRecord {
    /// The columns of `m`.
    pub fn of(m: &Message) -> Result<Self, DbError> {
        let tool_calls = if m.tool_calls.is_empty() {
            None
        } else {
            Some(pyjson::dumps(&m.tool_calls, "tool calls")?)
        };
        let (reasoning_details, codex_reasoning_items) = if m.role == Role::Assistant {
            (
                thinking_details(m)
                    .map(|d| pyjson::dumps(&d, "reasoning details"))
                    .transpose()?,
                (!m.codex_reasoning_items.is_empty())
                    .then(|| pyjson::dumps(&m.codex_reasoning_items, "reasoning items"))
                    .transpose()?,
            )
        } else {
            (None, None)
        };
        Ok(Self {
            role: m.role.as_str(),
            content: m.content.clone(),
            tool_call_id: m.tool_call_id.clone(),
            tool_calls,
            tool_name: m.name.clone(),
            reasoning: m.reasoning.clone(),
            reasoning_details,
            codex_reasoning_items,
            tool_call_count: i64::try_from(m.tool_calls.len()).unwrap_or(i64::MAX),
        })
    }
}

/// Active message rows (with their `reasoning_details` and
/// `codex_reasoning_items`), in id order, as a replayable conversation, like
/// the reference's `get_messages_as_conversation`: `tool_calls` parsed back
/// (unparseable → none), `tool_name` → `name`, reasoning kept on assistant
/// messages, injected memory-context blocks scrubbed from user/assistant
/// text, structured content flattened to its text, leaked
/// background-review harness turns dropped. Rows with roles this protocol
/// does not know are skipped.
pub fn replay(rows: Vec<(StoredMessage, Option<String>, Option<String>)>) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::new();
    let mut skip_next_assistant = false;
    for (row, details, codex_items) in rows {
        if is_review_harness(&row.role, row.content.as_deref()) {
            skip_next_assistant = true;
            continue;
        }
        if std::mem::take(&mut skip_next_assistant) && row.role == "assistant" {
            continue;
        }
        let Some(role) = parse_role(&row.role) else {
            continue;
        };
        let mut content = row.content.as_deref().map(content_text);
        if matches!(role, Role::User | Role::Assistant) {
            content = content.map(|c| sanitize_context(&c).trim().to_owned());
        }
        let tool_calls = row
            .tool_calls
            .as_deref()
            .filter(|t| !t.is_empty())
            .and_then(|t| serde_json::from_str::<Vec<ToolCall>>(t).ok())
            .unwrap_or_default();
        let assistant = role == Role::Assistant;
        let mut reasoning = row.reasoning.filter(|s| !s.is_empty() && assistant);
        let mut reasoning_signature = None;
        if assistant && let Some((thinking, signature)) = signed_thinking(details.as_deref()) {
            // The signature covers the block's own text, so that is what is replayed.
            reasoning = Some(thinking);
            reasoning_signature = Some(signature);
        }
        let codex_reasoning_items = codex_items
            .filter(|_| assistant)
            .and_then(|t| serde_json::from_str::<Vec<serde_json::Value>>(&t).ok())
            .unwrap_or_default();
        out.push(Message {
            role,
            content,
            tool_calls,
            tool_call_id: row.tool_call_id.filter(|s| !s.is_empty()),
            name: row.tool_name.filter(|s| !s.is_empty()),
            reasoning,
            reasoning_signature,
            codex_reasoning_items,
            // Images are not stored: a resumed session sees the text only.
            images: Vec::new(),
        });
    }
    out
}

impl SessionDb {
    /// Appends a message and bumps the session's `message_count` (and `tool_call_count` by the
    /// number of tool calls) in the same transaction. Returns the message id.
    ///
    /// Stored like the reference's `append_message`: `tool_calls` as the JSON text of the
    /// OpenAI list, `tool_name` from [`Message::name`], `active = 1`.
    pub fn append_message(
        &mut self,
        session_id: &str,
        m: &Message,
        extra: &MessageExtra,
    ) -> Result<i64, DbError> {
        const CTX: &str = "appending a message";
        let r = MessageRecord::of(m)?;
        self.write(CTX, |c| {
            let mut insert = c
                .prepare_cached(
                    "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, \
                     tool_name, effect_disposition, timestamp, token_count, finish_reason, \
                     reasoning, reasoning_content, reasoning_details, codex_reasoning_items, \
                     codex_message_items, platform_message_id, observed, active, api_content) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL, ?7, ?8, ?9, ?10, NULL, ?11, ?12, \
                     NULL, NULL, 0, 1, NULL)",
                )
                .ctx(CTX)?;
            insert
                .execute(rusqlite::params![
                    session_id,
                    r.role,
                    r.content,
                    r.tool_call_id,
                    r.tool_calls,
                    r.tool_name,
                    extra.timestamp,
                    extra.token_count,
                    extra.finish_reason,
                    r.reasoning,
                    r.reasoning_details,
                    r.codex_reasoning_items,
                ])
                .map_err(|e| no_such_session(e, session_id, CTX))?;
            let id = c.last_insert_rowid();
            let mut bump = c
                .prepare_cached(
                    "UPDATE sessions SET message_count = message_count + 1, \
                     tool_call_count = tool_call_count + ?1 WHERE id = ?2",
                )
                .ctx(CTX)?;
            bump.execute(rusqlite::params![r.tool_call_count, session_id])
                .ctx(CTX)?;
            Ok(id)
        })
    }

    /// Soft-deletes the session's last `count` active messages (`active = 0`), as the
    /// reference's rewind does for `/undo`: hidden from replay and search, kept on
    /// disk. Returns how many rows changed.
    pub fn deactivate_last_messages(
        &mut self,
        session_id: &str,
        count: usize,
    ) -> Result<usize, DbError> {
        const CTX: &str = "rewinding messages";
        let limit = i64::try_from(count).unwrap_or(i64::MAX);
        self.write(CTX, |c| {
            c.execute(
                "UPDATE messages SET active = 0 WHERE id IN (SELECT id FROM messages \
                 WHERE session_id = ?1 AND active = 1 ORDER BY id DESC LIMIT ?2)",
                rusqlite::params![session_id, limit],
            )
            .ctx(CTX)
        })
    }

    /// The session's active messages in insertion order.
    pub fn messages(&self, session_id: &str) -> Result<Vec<StoredMessage>, DbError> {
        query_messages(
            &self.conn,
            &format!(
                "SELECT {MSG_COLS} FROM messages WHERE session_id = ?1 AND active = 1 ORDER BY id"
            ),
            [session_id],
        )
    }

    /// The session's active messages as a replayable conversation, like the reference's
    /// `get_messages_as_conversation`: `tool_calls` parsed back (unparseable → none),
    /// `tool_name` → `name`, reasoning kept on assistant messages, injected memory-context
    /// blocks scrubbed from user/assistant text, structured content flattened to its text,
    /// leaked background-review harness turns dropped. Rows with roles this protocol does
    /// not know are skipped.
    pub fn conversation(&self, session_id: &str) -> Result<Vec<Message>, DbError> {
        let sql = format!(
            "SELECT {MSG_COLS}, reasoning_details, codex_reasoning_items FROM messages \
             WHERE session_id = ?1 AND active = 1 ORDER BY id"
        );
        let mut stmt = self.conn.prepare_cached(&sql).ctx("reading messages")?;
        let rows = stmt
            .query_map([session_id], |row| {
                Ok((stored_message(row)?, text_at(row, 11)?, text_at(row, 12)?))
            })
            .ctx("reading messages")?
            .collect::<Result<Vec<_>, _>>()
            .ctx("reading messages")?;
        Ok(replay(rows))
    }

    /// Up to `window` messages before `message_id`, the message itself and up to `window`
    /// after, in id order (all rows, like the reference). Empty when the id is not in the
    /// session.
    pub fn messages_around(
        &self,
        session_id: &str,
        message_id: i64,
        window: usize,
    ) -> Result<Vec<StoredMessage>, DbError> {
        let w = i64::try_from(window).unwrap_or(i64::MAX - 1);
        let mut before = query_messages(
            &self.conn,
            &format!(
                "SELECT {MSG_COLS} FROM messages WHERE session_id = ?1 AND id <= ?2 \
                 AND EXISTS (SELECT 1 FROM messages WHERE id = ?2 AND session_id = ?1) \
                 ORDER BY id DESC LIMIT ?3"
            ),
            rusqlite::params![session_id, message_id, w + 1],
        )?;
        if before.is_empty() {
            return Ok(before);
        }
        before.reverse();
        let after = query_messages(
            &self.conn,
            &format!(
                "SELECT {MSG_COLS} FROM messages WHERE session_id = ?1 AND id > ?2 \
                 ORDER BY id ASC LIMIT ?3"
            ),
            rusqlite::params![session_id, message_id, w],
        )?;
        before.extend(after);
        Ok(before)
    }

    /// Number of stored messages (all rows), in one session or overall.
    pub fn message_count(&self, session_id: Option<&str>) -> Result<u64, DbError> {
        let n: i64 = match session_id {
            Some(id) => self.conn.query_row(
                "SELECT COUNT(*) FROM messages WHERE session_id = ?1",
                [id],
                |r| r.get(0),
            ),
            None => self
                .conn
                .query_row("SELECT COUNT(*) FROM messages", [], |r| r.get(0)),
        }
        .ctx("counting messages")?;
        Ok(u64::try_from(n).unwrap_or(0))
    }
}

/// The reference's `reasoning_details` for a signed Anthropic thinking block:
/// a one-element list `[{"type":"thinking","thinking":…,"signature":…}]`.
fn thinking_details(m: &Message) -> Option<serde_json::Value> {
    let thinking = m.reasoning.as_deref().filter(|t| !t.is_empty())?;
    let signature = m.reasoning_signature.as_deref().filter(|s| !s.is_empty())?;
    Some(serde_json::json!([
        {"type": "thinking", "thinking": thinking, "signature": signature}
    ]))
}

/// The thinking text and signature of stored `reasoning_details`, when they
/// hold exactly one signed `thinking` block (one signature cannot cover
/// several blocks joined into one text, so those are not replayed).
fn signed_thinking(details: Option<&str>) -> Option<(String, String)> {
    let parsed: serde_json::Value = serde_json::from_str(details?).ok()?;
    let mut blocks = parsed
        .as_array()?
        .iter()
        .filter(|d| d.get("type").and_then(|t| t.as_str()) == Some("thinking"));
    let block = blocks.next()?;
    if blocks.next().is_some() {
        return None;
    }
    let text = |k: &str| {
        block
            .get(k)
            .and_then(|v| v.as_str())
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    Some((text("thinking")?, text("signature")?))
}

/// Maps a foreign-key failure on insert to [`DbError::NoSuchSession`].
pub(crate) fn no_such_session(
    e: rusqlite::Error,
    session_id: &str,
    context: &'static str,
) -> DbError {
    let fk = e.sqlite_error_code() == Some(rusqlite::ErrorCode::ConstraintViolation)
        && e.to_string().contains("FOREIGN KEY");
    if fk {
        DbError::NoSuchSession(session_id.to_owned())
    } else {
        DbError::Sqlite { context, source: e }
    }
}

#[cfg(test)]
#[path = "messages_tests.rs"]
mod tests;
