//! A stored session as a person reads it — Markdown or a self-contained HTML
//! page — with tool calls and their results; optionally with secrets
//! redacted by the caller's function. Used by `hermes sessions export` and
//! the dashboard's export.

use serde_json::Value;

use crate::session_db::content_text;
use crate::{SessionRow, StoredMessage};

/// One tool call of an assistant message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The call's id.
    pub id: String,
    /// The tool.
    pub name: String,
    /// Its arguments (JSON text).
    pub arguments: String,
}

/// The tool calls stored with a message (`tool_calls` JSON).
pub fn calls(message: &StoredMessage) -> Vec<Call> {
    message
        .tool_calls
        .as_deref()
        .and_then(|t| serde_json::from_str::<Value>(t).ok())
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default()
        .iter()
        .map(|c| Call {
            id: c["id"].as_str().unwrap_or_default().to_owned(),
            name: c["function"]["name"].as_str().unwrap_or("?").to_owned(),
            arguments: c["function"]["arguments"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        })
        .collect()
}

/// A message's text (multimodal content flattened).
pub fn text(message: &StoredMessage) -> String {
    message
        .content
        .as_deref()
        .map(content_text)
        .unwrap_or_default()
}

/// The session as Markdown; every text goes through `clean` (redaction).
pub fn markdown(
    row: &SessionRow,
    messages: &[StoredMessage],
    clean: &dyn Fn(&str) -> String,
) -> String {
    let mut out = format!(
        "# {}\n\n- Session: `{}`\n- Source: {}\n- Model: {}\n",
        clean(row.title.as_deref().unwrap_or("Untitled session")),
        row.id,
        row.source,
        row.model.as_deref().unwrap_or("?")
    );
    for m in messages {
        let content = clean(&text(m));
        if m.role == "tool" {
            out.push_str(&format!(
                "\n### Result of {}\n\n```\n{content}\n```\n",
                m.tool_name.as_deref().unwrap_or("a tool")
            ));
            continue;
        }
        out.push_str(&format!("\n## {}\n\n{content}\n", m.role));
        for call in calls(m) {
            out.push_str(&format!(
                "\n**Tool call** `{}`\n\n```json\n{}\n```\n",
                call.name,
                clean(&call.arguments)
            ));
        }
    }
    out
}

/// `text` safe inside HTML.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font:15px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#222}\
header{border-bottom:1px solid #ddd;margin-bottom:1rem}.meta{color:#666;font-size:13px}\
.msg{border-radius:8px;padding:.6rem .9rem;margin:.6rem 0;white-space:pre-wrap}\
.user{background:#e8f0fe}.assistant{background:#f4f4f5}.system{background:#fff8e1}\
.role{font-weight:600;font-size:12px;text-transform:uppercase;color:#555;display:block}\
details{margin:.4rem 0}pre{background:#f7f7f8;padding:.5rem;overflow:auto;white-space:pre-wrap}\
@media (prefers-color-scheme:dark){body{background:#111;color:#ddd}.user{background:#1d2a44}\
.assistant{background:#222}.system{background:#332b12}pre{background:#1a1a1a}}";

/// The session as one HTML page (no script, no outside resources); every
/// text goes through `clean` (redaction), then is escaped.
pub fn html(
    row: &SessionRow,
    messages: &[StoredMessage],
    clean: &dyn Fn(&str) -> String,
) -> String {
    let title = escape(&clean(row.title.as_deref().unwrap_or("Untitled session")));
    let mut body = String::new();
    for m in messages {
        let content = escape(&clean(&text(m)));
        if m.role == "tool" {
            body.push_str(&format!(
                "<details class=\"tool-result\"><summary>Result of {}</summary><pre>{content}</pre></details>\n",
                escape(m.tool_name.as_deref().unwrap_or("a tool"))
            ));
            continue;
        }
        let role = escape(&m.role);
        body.push_str(&format!(
            "<div class=\"msg {role}\"><span class=\"role\">{role}</span>{content}"
        ));
        for call in calls(m) {
            body.push_str(&format!(
                "<details class=\"tool\"><summary>⚙ {}</summary><pre>{}</pre></details>",
                escape(&call.name),
                escape(&clean(&call.arguments))
            ));
        }
        body.push_str("</div>\n");
    }
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title}</title><style>{STYLE}</style></head><body>\
         <header><h1>{title}</h1><p class=\"meta\">Session <code>{id}</code> · {source} · {model} · \
         {n} messages</p></header>\n<main>\n{body}</main></body></html>\n",
        id = escape(&row.id),
        source = escape(&row.source),
        model = escape(row.model.as_deref().unwrap_or("?")),
        n = messages.len(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(role: &str, content: &str) -> StoredMessage {
        StoredMessage {
            role: role.into(),
            content: Some(content.into()),
            ..StoredMessage::default()
        }
    }

    #[test]
    fn markup_in_messages_is_text_and_calls_are_shown() {
        let row = SessionRow {
            id: "s1".into(),
            source: "cli".into(),
            title: Some("<b>Deploy</b>".into()),
            ..SessionRow::default()
        };
        let mut asked = message("assistant", "Running it.");
        asked.tool_calls = Some(
            r#"[{"id":"c1","function":{"name":"terminal","arguments":"{\"command\":\"ls\"}"}}]"#
                .into(),
        );
        let messages = vec![message("user", "<script>alert(1)</script>"), asked];
        let page = html(&row, &messages, &|t| t.to_owned());
        assert!(!page.contains("<script>alert") && page.contains("&lt;script&gt;"));
        assert!(page.contains("⚙ terminal") && page.contains("&lt;b&gt;Deploy"));
        let md = markdown(&row, &messages, &|t| t.replace("alert", "•"));
        assert!(md.contains("**Tool call** `terminal`") && md.contains("•(1)"));
    }
}
