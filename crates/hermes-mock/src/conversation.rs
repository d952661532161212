//! A structural check of the `messages` of a chat-completions request.

use std::collections::HashSet;

use serde_json::Value;

/// Checks that the `messages` of a chat request form a conversation an
/// OpenAI-compatible provider accepts:
///
/// - every message has a known role (`system`, `developer`, `user`,
///   `assistant`, `tool`) and the content its role needs;
/// - the first message that is not a system message comes from the user;
/// - no two user messages are adjacent;
/// - every assistant tool call has a non-empty id (unique within its message),
///   a name and string arguments, and is answered by exactly one `tool`
///   message with that `tool_call_id` before any other kind of message;
/// - every `tool` message answers a pending call of the latest assistant
///   message.
///
/// Returns a description of the first violation, naming the message index.
pub fn check_conversation(body: &Value) -> Result<(), String> {
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .ok_or_else(|| "request has no `messages` array".to_owned())?;
    if messages.is_empty() {
        return Err("`messages` is empty".to_owned());
    }
    let mut checker = Checker::default();
    for (i, message) in messages.iter().enumerate() {
        checker
            .message(message)
            .map_err(|e| format!("messages[{i}]: {e}"))?;
    }
    if !checker.pending.is_empty() {
        return Err(format!(
            "tool calls never answered at the end of the conversation: {}",
            checker.pending.join(", ")
        ));
    }
    Ok(())
}

#[derive(Default)]
struct Checker {
    /// Ids of the latest assistant message's calls still awaiting a result.
    pending: Vec<String>,
    /// Ids of the latest assistant message's calls already answered.
    answered: HashSet<String>,
    /// Role of the previous message.
    previous: Option<String>,
    /// Whether a non-system message has been seen.
    started: bool,
}

fn is_text_content(content: Option<&Value>) -> bool {
    matches!(content, Some(Value::String(_) | Value::Array(_)))
}

impl Checker {
    fn message(&mut self, message: &Value) -> Result<(), String> {
        let role = message
            .get("role")
            .and_then(Value::as_str)
            .ok_or_else(|| "message has no string `role`".to_owned())?;
        if role != "tool" && !self.pending.is_empty() {
            return Err(format!(
                "{role} message while tool calls are unanswered: {}",
                self.pending.join(", ")
            ));
        }
        if role != "tool" {
            self.answered.clear();
        }
        match role {
            "system" | "developer" => {
                if !is_text_content(message.get("content")) {
                    return Err(format!("{role} message without text content"));
                }
            }
            "user" => {
                if !is_text_content(message.get("content")) {
                    return Err("user message without content".to_owned());
                }
                if self.previous.as_deref() == Some("user") {
                    return Err("two user messages in a row".to_owned());
                }
            }
            "assistant" => {
                if !self.started {
                    return Err("the first non-system message must come from the user".to_owned());
                }
                self.assistant(message)?;
            }
            "tool" => self.tool(message)?,
            other => return Err(format!("unknown role `{other}`")),
        }
        if !matches!(role, "system" | "developer") {
            self.started = true;
        }
        self.previous = Some(role.to_owned());
        Ok(())
    }

    fn assistant(&mut self, message: &Value) -> Result<(), String> {
        let calls = match message.get("tool_calls") {
            None | Some(Value::Null) => &[][..],
            Some(Value::Array(calls)) => calls.as_slice(),
            Some(_) => return Err("`tool_calls` is not an array".to_owned()),
        };
        let content = message.get("content");
        if calls.is_empty() && !is_text_content(content) {
            return Err("assistant message with neither content nor tool calls".to_owned());
        }
        if !matches!(
            content,
            None | Some(Value::Null | Value::String(_) | Value::Array(_))
        ) {
            return Err("assistant `content` is neither text, parts nor null".to_owned());
        }
        for (j, call) in calls.iter().enumerate() {
            let id = call.get("id").and_then(Value::as_str).unwrap_or("");
            if id.is_empty() {
                return Err(format!("tool_calls[{j}] has no id"));
            }
            if self.pending.iter().any(|p| p == id) {
                return Err(format!("tool call id `{id}` used twice in one message"));
            }
            if call
                .get("type")
                .is_some_and(|t| t.as_str() != Some("function"))
            {
                return Err(format!(
                    "tool_calls[{j}] has a type other than \"function\""
                ));
            }
            let name = call
                .pointer("/function/name")
                .and_then(Value::as_str)
                .unwrap_or("");
            if name.is_empty() {
                return Err(format!("tool_calls[{j}] has no function name"));
            }
            if !call
                .pointer("/function/arguments")
                .is_some_and(Value::is_string)
            {
                return Err(format!("tool_calls[{j}] arguments are not a string"));
            }
            self.pending.push(id.to_owned());
        }
        Ok(())
    }

    fn tool(&mut self, message: &Value) -> Result<(), String> {
        let id = message
            .get("tool_call_id")
            .and_then(Value::as_str)
            .ok_or_else(|| "tool message without `tool_call_id`".to_owned())?;
        if !is_text_content(message.get("content")) {
            return Err(format!("tool message for `{id}` without content"));
        }
        if let Some(pos) = self.pending.iter().position(|p| p == id) {
            self.pending.remove(pos);
            self.answered.insert(id.to_owned());
            return Ok(());
        }
        if self.answered.contains(id) {
            return Err(format!("tool call `{id}` answered twice"));
        }
        Err(format!(
            "tool message answers `{id}`, which no preceding assistant message called"
        ))
    }
}

#[cfg(test)]
#[path = "conversation_tests.rs"]
mod tests;
