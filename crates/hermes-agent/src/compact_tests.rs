use hermes_protocol::ToolCall;

use super::*;

fn assistant_calls(id: &str, path: &str) -> Message {
    let mut m = Message::assistant("");
    m.content = None;
    m.tool_calls = vec![ToolCall::new(
        id,
        "read_file",
        format!(r#"{{"path":"{path}"}}"#),
    )];
    m
}

/// A long session: system, then `rounds` of user → tool call → result → answer.
fn session(rounds: usize) -> Vec<Message> {
    let mut v = vec![Message::system("sys")];
    for i in 0..rounds {
        v.push(Message::user(format!(
            "task {i}: look at file {i} {}",
            "x".repeat(200)
        )));
        v.push(assistant_calls(&format!("c{i}"), &format!("src/f{i}.rs")));
        let body = if i == 2 {
            "Error: no such file".to_owned()
        } else {
            "y".repeat(400)
        };
        v.push(Message::tool_result(format!("c{i}"), "read_file", body));
        v.push(Message::assistant(format!("done {i}")));
    }
    v
}

fn roles_alternate(v: &[Message]) -> bool {
    v.windows(2).all(|w| {
        let (a, b) = (w[0].role, w[1].role);
        !(a == b && a != Role::Tool)
    })
}

fn no_orphans(v: &[Message]) -> bool {
    let mut open: Vec<String> = Vec::new();
    for m in v {
        match m.role {
            Role::Assistant => open = m.tool_calls.iter().map(|c| c.id.clone()).collect(),
            Role::Tool => {
                let Some(pos) = open
                    .iter()
                    .position(|id| Some(id.as_str()) == m.tool_call_id.as_deref())
                else {
                    return false;
                };
                open.remove(pos);
            }
            _ => {
                if !open.is_empty() {
                    return false;
                }
            }
        }
    }
    open.is_empty()
}

#[test]
fn keeps_head_tail_and_the_last_request() {
    let mut msgs = session(20);
    msgs.push(Message::user("the current task: fix src/main.rs"));
    let before = approx_tokens(&msgs);
    let c = compact(&msgs, 300).unwrap();
    assert!(
        approx_tokens(&c.messages) < before / 2,
        "{} vs {before}",
        approx_tokens(&c.messages)
    );
    assert_eq!(c.messages[0], Message::system("sys"));
    // System + first 3 messages, then the summary.
    assert_eq!(c.messages[1], msgs[1]);
    assert_eq!(c.messages[3], msgs[3]);
    let last = c.messages.last().unwrap();
    assert_eq!(last.text(), "the current task: fix src/main.rs");
    assert!(
        roles_alternate(&c.messages),
        "{:#?}",
        c.messages.iter().map(|m| m.role).collect::<Vec<_>>()
    );
    assert!(no_orphans(&c.messages));
    let summary = c
        .messages
        .iter()
        .find(|m| m.text().contains(SUMMARY_PREFIX))
        .unwrap();
    let text = summary.text();
    assert!(text.contains("## Active Task"), "{text}");
    assert!(text.contains("src/f15.rs"), "{text}");
    assert!(text.contains("Error: no such file"), "{text}");
    assert!(text.contains(SUMMARY_END));
    assert_eq!(c.removed + c.messages.len() - 1, msgs.len());
}

#[test]
fn summary_merges_into_a_same_role_tail() {
    // Head ends with the tool result of the first round (role Tool) → summary is a
    // user message; a tail that starts with a user message absorbs it.
    let msgs = session(10);
    for budget in [1, 50, 200, 400, 800] {
        let c = compact(&msgs, budget).unwrap();
        assert!(roles_alternate(&c.messages), "budget {budget}");
        assert!(no_orphans(&c.messages), "budget {budget}");
        assert!(
            c.messages.iter().any(|m| m.text().contains(SUMMARY_END)),
            "budget {budget}"
        );
    }
}

#[test]
fn nothing_to_remove_in_a_short_conversation() {
    let msgs = session(1);
    assert_eq!(compact(&msgs, 10), None);
    assert_eq!(compact(&[], 10), None);
}
