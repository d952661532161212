//! Prompt templates fed by a webhook's JSON body: `{dot.path}` reads a
//! field, `{__raw__}` the whole body, `{event_type}` the event; anything
//! else in braces (or a path that leads nowhere) stays as written.

use serde_json::Value;

/// Longest `{__raw__}` (and default prompt) body, in characters.
const RAW_LIMIT: usize = 4000;
/// Longest object or list put in for one field.
const FIELD_LIMIT: usize = 2000;

fn cut(text: String, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some((at, _)) => text[..at].to_owned(),
        None => text,
    }
}

fn pretty(v: &Value, limit: usize) -> String {
    cut(serde_json::to_string_pretty(v).unwrap_or_default(), limit)
}

/// A field as the reference writes it into a prompt (Python's spelling of
/// booleans and null, JSON for objects and lists).
fn field_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(true) => "True".to_owned(),
        Value::Bool(false) => "False".to_owned(),
        Value::Null => "None".to_owned(),
        Value::Number(n) => n.to_string(),
        Value::Object(_) | Value::Array(_) => pretty(v, FIELD_LIMIT),
    }
}

fn lookup(payload: &Value, path: &str, event: &str) -> Option<String> {
    match path {
        "__raw__" => return Some(pretty(payload, RAW_LIMIT)),
        "event_type" => return Some(event.to_owned()),
        _ => {}
    }
    let mut at = payload;
    for key in path.split('.') {
        at = at.as_object()?.get(key)?;
    }
    Some(field_text(at))
}

fn is_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '.'
}

/// Renders `template` for `payload`; an empty template gives the
/// reference's default prompt (the event and its body as JSON).
pub fn render(template: &str, payload: &Value, event: &str, route: &str) -> String {
    if template.trim().is_empty() {
        return format!(
            "Webhook event '{event}' on route '{route}':\n\n```json\n{}\n```",
            pretty(payload, RAW_LIMIT)
        );
    }
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let len = after
            .find(|c: char| !is_path_char(c))
            .unwrap_or(after.len());
        if len > 0 && after[len..].starts_with('}') {
            let path = &after[..len];
            match lookup(payload, path, event) {
                Some(value) => out.push_str(&value),
                None => {
                    out.push('{');
                    out.push_str(path);
                    out.push('}');
                }
            }
            rest = &after[len + 1..];
        } else {
            out.push('{');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_raw_event_and_unknowns() {
        let body = json!({"pull_request": {"title": "Fix it", "number": 7, "draft": false},
                          "labels": ["a"], "x": null});
        let out = render(
            "PR #{pull_request.number} {pull_request.title} draft={pull_request.draft} \
             x={x} missing={nope.deep} ev={event_type} {not a path} {labels}",
            &body,
            "pull_request",
            "gh",
        );
        assert_eq!(
            out,
            "PR #7 Fix it draft=False x=None missing={nope.deep} ev=pull_request {not a path} [\n  \"a\"\n]"
        );
        assert!(render("{__raw__}", &body, "e", "r").contains("\"title\": \"Fix it\""));
    }

    #[test]
    fn an_empty_template_shows_the_event() {
        let out = render("", &json!({"k": 1}), "push", "ci");
        assert!(out.starts_with("Webhook event 'push' on route 'ci':\n\n```json\n{"));
        assert!(out.ends_with("\n```"));
    }

    #[test]
    fn long_bodies_are_cut() {
        let body = json!({"big": "y".repeat(10_000)});
        assert_eq!(
            render("{__raw__}", &body, "e", "r").chars().count(),
            RAW_LIMIT
        );
    }
}
