//! Making a stored history safe to send: every tool call answered exactly once,
//! no orphaned results, no back-to-back user messages.

use std::collections::HashSet;

use hermes_protocol::{Message, Role};

/// Text of the result inserted for a tool call that has none (e.g. after a crash).
pub const MISSING_RESULT: &str =
    r#"{"error": "No result was recorded for this tool call (it was interrupted)."}"#;

/// Returns a copy of `history` that keeps role alternation valid for providers.
pub fn sanitize(history: &[Message]) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::with_capacity(history.len());
    let mut open: Vec<(String, String)> = Vec::new(); // calls awaiting results: (id, name)
    let mut answered: HashSet<String> = HashSet::new();

    let close_open = |out: &mut Vec<Message>, open: &mut Vec<(String, String)>| {
        for (id, name) in open.drain(..) {
            out.push(Message::tool_result(id, name, MISSING_RESULT));
        }
    };

    for msg in history {
        match msg.role {
            Role::Tool => {
                let id = msg.tool_call_id.clone().unwrap_or_default();
                if let Some(pos) = open.iter().position(|(open_id, _)| *open_id == id) {
                    open.remove(pos);
                    answered.insert(id);
                    out.push(msg.clone());
                }
                // A result with no pending call is an orphan: dropped.
            }
            Role::User => {
                close_open(&mut out, &mut open);
                match out.last_mut() {
                    Some(prev) if prev.role == Role::User && prev.tool_calls.is_empty() => {
                        let merged = format!("{}\n\n{}", prev.text(), msg.text());
                        prev.content = Some(merged);
                    }
                    _ => out.push(msg.clone()),
                }
            }
            Role::Assistant | Role::System => {
                close_open(&mut out, &mut open);
                if msg.role == Role::Assistant {
                    open = msg
                        .tool_calls
                        .iter()
                        .filter(|c| !answered.contains(&c.id))
                        .map(|c| (c.id.clone(), c.function.name.clone()))
                        .collect();
                }
                out.push(msg.clone());
            }
        }
    }
    close_open(&mut out, &mut open);
    out
}

#[cfg(test)]
mod tests {
    use hermes_protocol::ToolCall;

    use super::*;

    fn calls(ids: &[&str]) -> Message {
        Message {
            tool_calls: ids
                .iter()
                .map(|id| ToolCall::new(*id, "terminal", "{}"))
                .collect(),
            content: None,
            ..Message::assistant("")
        }
    }

    #[test]
    fn complete_history_is_unchanged() {
        let h = vec![
            Message::system("s"),
            Message::user("u"),
            calls(&["a", "b"]),
            Message::tool_result("a", "terminal", "1"),
            Message::tool_result("b", "terminal", "2"),
            Message::assistant("done"),
        ];
        assert_eq!(sanitize(&h), h);
    }

    #[test]
    fn missing_results_are_filled_and_orphans_dropped() {
        let h = vec![
            Message::user("u"),
            Message::tool_result("zzz", "terminal", "orphan"),
            calls(&["a", "b"]),
            Message::tool_result("a", "terminal", "1"),
            Message::user("next"),
        ];
        let s = sanitize(&h);
        let roles: Vec<_> = s.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            vec![
                Role::User,
                Role::Assistant,
                Role::Tool,
                Role::Tool,
                Role::User
            ]
        );
        assert_eq!(s[3].tool_call_id.as_deref(), Some("b"));
        assert_eq!(s[3].text(), MISSING_RESULT);
    }

    #[test]
    fn consecutive_user_messages_merge() {
        let s = sanitize(&[Message::user("a"), Message::user("b")]);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].text(), "a\n\nb");
    }
}
