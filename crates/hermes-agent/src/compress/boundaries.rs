//! Where compression may cut: a protected head (system prompt and the first
//! exchange) and a token-budgeted tail, neither splitting an assistant's tool calls
//! from their results, the tail always holding the latest user message.

use hermes_protocol::{Message, Role};

use crate::resilience::approx_tokens;

/// Messages always kept in the tail, whatever the budget.
const MIN_TAIL: usize = 3;

/// Index after the protected head: the system message, `protect_first` more, then
/// past any tool results so the compressed span starts on a user or assistant turn.
pub fn head_end(messages: &[Message], protect_first: usize) -> usize {
    let start = usize::from(messages.first().is_some_and(|m| m.role == Role::System));
    let mut end = (start + protect_first).min(messages.len());
    while end < messages.len() && messages[end].role == Role::Tool {
        end += 1;
    }
    end
}

/// Tokens one message costs in the estimate.
pub fn message_tokens(m: &Message) -> usize {
    approx_tokens(std::slice::from_ref(m)).max(1)
}

/// Index where the protected tail starts: recent messages within `budget` tokens (at
/// least [`MIN_TAIL`]), moved back so it never opens on a tool result, and far enough
/// back to include the last user message. Never before `head`.
pub fn tail_start(messages: &[Message], head: usize, budget: usize) -> usize {
    let mut start = messages.len();
    let mut used = 0;
    while start > head {
        let cost = message_tokens(&messages[start - 1]);
        let kept = messages.len() - start;
        if used + cost > budget && kept >= MIN_TAIL {
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

/// Drops tool results whose call is not in the list and tool calls whose result is
/// missing (an assistant left with neither text nor calls goes too), so a request
/// never carries an orphan the provider would reject.
pub fn sanitize_tool_pairs(messages: Vec<Message>) -> Vec<Message> {
    use std::collections::HashSet;
    let called: HashSet<String> = messages
        .iter()
        .flat_map(|m| m.tool_calls.iter().map(|c| c.id.clone()))
        .collect();
    let answered: HashSet<String> = messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .filter_map(|m| m.tool_call_id.clone())
        .collect();
    messages
        .into_iter()
        .filter_map(|mut m| match m.role {
            Role::Tool => m
                .tool_call_id
                .as_ref()
                .is_some_and(|id| called.contains(id))
                .then_some(m),
            Role::Assistant if !m.tool_calls.is_empty() => {
                m.tool_calls.retain(|c| answered.contains(&c.id));
                let empty = m.tool_calls.is_empty() && m.text().trim().is_empty();
                (!empty).then_some(m)
            }
            _ => Some(m),
        })
        .collect()
}
