//! Turning a chat request into the messages the GGUF's chat template renders.
//!
//! Small local models see a compact tool list (first sentence of each
//! description, parameter names and types) and call tools by writing
//! `<tool_call>{"name": …, "arguments": {…}}</tool_call>`, the convention
//! ChatML-family instruct models were tuned on.

use hermes_protocol::{Message, Role, ToolSchema};
use serde_json::{Value, json};

/// Opening tag of a tool call in the model's output.
pub const CALL_OPEN: &str = "<tool_call>";
/// Closing tag of a tool call.
pub const CALL_CLOSE: &str = "</tool_call>";

/// One message for the chat template: role and text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateMessage {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: String,
    /// Rendered text.
    pub content: String,
}

/// The messages to render, tools folded into the system message.
pub fn template_messages(messages: &[Message], tools: &[ToolSchema]) -> Vec<TemplateMessage> {
    let mut out = Vec::with_capacity(messages.len() + 1);
    let tool_text = tools_section(tools);
    let mut system_seen = false;
    for m in messages {
        let content = match m.role {
            Role::System => {
                system_seen = true;
                format!("{}{tool_text}", m.text())
            }
            Role::Assistant => assistant_text(m),
            Role::Tool => format!(
                "<tool_response>\n{}\n</tool_response>",
                json!({"name": m.name.as_deref().unwrap_or("tool"), "content": m.text()})
            ),
            Role::User => m.text().to_owned(),
        };
        out.push(TemplateMessage {
            role: m.role.as_str().to_owned(),
            content,
        });
    }
    if !system_seen && !tool_text.is_empty() {
        out.insert(
            0,
            TemplateMessage {
                role: "system".into(),
                content: tool_text.trim_start().to_owned(),
            },
        );
    }
    out
}

fn assistant_text(m: &Message) -> String {
    let mut text = m.text().to_owned();
    for call in &m.tool_calls {
        let args: Value =
            serde_json::from_str(&call.function.arguments).unwrap_or_else(|_| json!({}));
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&format!(
            "{CALL_OPEN}\n{}\n{CALL_CLOSE}",
            json!({"name": call.function.name, "arguments": args})
        ));
    }
    text
}

/// The tool list appended to the system prompt; empty without tools.
pub fn tools_section(tools: &[ToolSchema]) -> String {
    if tools.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "\n\n# Tools\nYou may call one tool by replying with only\n<tool_call>\n{\"name\": \"TOOL\", \"arguments\": {...}}\n</tool_call>\nThe result comes back in <tool_response>. Otherwise answer the user directly.\nTools:\n",
    );
    for t in tools {
        let params = t.parameters.get("properties").and_then(Value::as_object);
        let required: Vec<&str> = t
            .parameters
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let args: Vec<String> = params
            .map(|p| {
                p.iter()
                    .filter(|(name, _)| required.is_empty() || required.contains(&name.as_str()))
                    .map(|(name, spec)| {
                        format!(
                            "{name}: {}",
                            spec.get("type").and_then(Value::as_str).unwrap_or("any")
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        s.push_str(&format!(
            "- {}({}): {}\n",
            t.name,
            args.join(", "),
            first_sentence(&t.description)
        ));
    }
    s
}

fn first_sentence(text: &str) -> &str {
    let line = text.lines().next().unwrap_or("").trim();
    match line.find(". ") {
        Some(i) => &line[..=i],
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use hermes_protocol::ToolCall;

    use super::*;

    fn terminal() -> ToolSchema {
        ToolSchema {
            name: "terminal".into(),
            description: "Run a shell command. Long explanation follows.".into(),
            parameters: json!({"type": "object", "properties": {"command": {"type": "string"}, "timeout": {"type": "integer"}}, "required": ["command"]}),
        }
    }

    #[test]
    fn tools_are_listed_compactly_in_the_system_message() {
        let msgs = template_messages(
            &[Message::system("Be brief."), Message::user("hi")],
            &[terminal()],
        );
        assert_eq!(msgs.len(), 2);
        assert!(msgs[0].content.starts_with("Be brief.\n\n# Tools"));
        assert!(
            msgs[0]
                .content
                .contains("- terminal(command: string): Run a shell command.\n")
        );
        assert!(!msgs[0].content.contains("Long explanation"));
    }

    #[test]
    fn tool_history_is_rendered_as_tags() {
        let mut call = Message::assistant("");
        call.tool_calls = vec![ToolCall::new("c1", "terminal", r#"{"command":"ls"}"#)];
        let msgs = template_messages(
            &[
                Message::user("go"),
                call,
                Message::tool_result("c1", "terminal", "a.txt"),
            ],
            &[],
        );
        // Key order depends on whether serde_json keeps insertion order in this build.
        let body = msgs[1]
            .content
            .strip_prefix("<tool_call>\n")
            .and_then(|b| b.strip_suffix("\n</tool_call>"))
            .unwrap();
        let call: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(
            call,
            serde_json::json!({"name": "terminal", "arguments": {"command": "ls"}})
        );
        assert_eq!(msgs[2].role, "tool");
        assert!(msgs[2].content.contains("<tool_response>") && msgs[2].content.contains("a.txt"));
    }

    #[test]
    fn no_tools_no_section() {
        let msgs = template_messages(&[Message::user("hi")], &[]);
        assert_eq!(
            msgs,
            vec![TemplateMessage {
                role: "user".into(),
                content: "hi".into()
            }]
        );
    }
}
