//! The context-engine seam (the reference's `context.engine`): another
//! engine may replace the built-in compressor. It gets the whole transcript
//! and returns the replacement; the loop accepts it only when the
//! invariants every compression keeps still hold, and otherwise compresses
//! with the built-in engine, saying why.

use futures_util::future::BoxFuture;
use hermes_protocol::{Message, Role};

/// What an engine is asked to compress.
#[derive(Debug, Clone, Copy)]
pub struct EngineRequest<'a> {
    /// The whole transcript, system prompt first.
    pub messages: &'a [Message],
    /// `threshold`, `overflow` or `manual`.
    pub trigger: &'a str,
    /// A `/compress <focus>` topic.
    pub focus: Option<&'a str>,
    /// What a memory provider asked the summary to keep.
    pub memory_context: &'a str,
    /// The session being compressed.
    pub session_id: &'a str,
    /// Rough token count of `messages`.
    pub current_tokens: u64,
    /// The model's context window.
    pub context_length: u64,
}

/// A context engine.
pub trait ContextEngine: Send + Sync {
    /// Its name (`context.engine`).
    fn name(&self) -> &str;

    /// The replacement transcript; `Err` says why there is none.
    fn compress<'a>(
        &'a self,
        request: EngineRequest<'a>,
    ) -> BoxFuture<'a, Result<Vec<Message>, String>>;
}

/// Whether `after` may replace `before`: the system prompt kept as it was,
/// the latest user message kept, and every tool call paired with its result
/// (in order, nothing orphaned). `Err` names the first broken rule.
pub fn check_replacement(before: &[Message], after: &[Message]) -> Result<(), String> {
    if after.is_empty() {
        return Err("it returned no messages".into());
    }
    if let Some(system) = before.first().filter(|m| m.role == Role::System) {
        let kept = after
            .first()
            .is_some_and(|m| m.role == Role::System && m.text() == system.text());
        if !kept {
            return Err("it changed or dropped the system prompt".into());
        }
    }
    if let Some(last_user) = before.iter().rfind(|m| m.role == Role::User)
        && !after
            .iter()
            .any(|m| m.role == Role::User && m.text().contains(last_user.text()))
    {
        return Err("it dropped the latest user message".into());
    }
    tool_pairs_whole(after)
}

fn tool_pairs_whole(messages: &[Message]) -> Result<(), String> {
    let mut open: Vec<&str> = Vec::new();
    for m in messages {
        match m.role {
            Role::Tool => {
                let id = m.tool_call_id.as_deref().unwrap_or("");
                let Some(at) = open.iter().position(|o| *o == id) else {
                    return Err(format!("a tool result ({id}) has no tool call before it"));
                };
                open.remove(at);
            }
            _ if !open.is_empty() => {
                return Err(format!("tool call {} has no result", open[0]));
            }
            Role::Assistant => open = m.tool_calls.iter().map(|c| c.id.as_str()).collect(),
            _ => {}
        }
    }
    match open.first() {
        Some(id) => Err(format!("tool call {id} has no result")),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hermes_protocol::{FunctionCall, ToolCall};

    fn call(id: &str) -> Message {
        let mut m = Message::assistant(String::new());
        m.tool_calls.push(ToolCall {
            id: id.into(),
            kind: "function".into(),
            function: FunctionCall {
                name: "terminal".into(),
                arguments: "{}".into(),
            },
        });
        m
    }

    fn transcript() -> Vec<Message> {
        vec![
            Message::system("sys"),
            Message::user("old question"),
            call("c1"),
            Message::tool_result("c1", "terminal", "ok"),
            Message::assistant("old answer"),
            Message::user("the latest question"),
        ]
    }

    #[test]
    fn a_shorter_transcript_keeping_the_invariants_is_accepted() {
        let before = transcript();
        let after = vec![
            Message::system("sys"),
            Message::user("[summary of earlier turns]\n\nthe latest question"),
        ];
        assert_eq!(check_replacement(&before, &after), Ok(()));
        assert_eq!(check_replacement(&before, &before), Ok(()));
    }

    #[test]
    fn each_broken_invariant_is_named() {
        let before = transcript();
        let cases: Vec<(Vec<Message>, &str)> = vec![
            (vec![], "no messages"),
            (
                vec![
                    Message::system("other"),
                    Message::user("the latest question"),
                ],
                "system prompt",
            ),
            (
                vec![Message::system("sys"), Message::user("old question")],
                "latest user message",
            ),
            (
                vec![
                    Message::system("sys"),
                    call("c9"),
                    Message::user("the latest question"),
                ],
                "c9 has no result",
            ),
            (
                vec![
                    Message::system("sys"),
                    Message::tool_result("c1", "terminal", "ok"),
                    Message::user("the latest question"),
                ],
                "no tool call before it",
            ),
        ];
        for (after, why) in cases {
            let err = check_replacement(&before, &after).unwrap_err();
            assert!(err.contains(why), "{err} / {why}");
        }
    }
}
