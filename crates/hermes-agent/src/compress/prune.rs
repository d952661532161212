//! Phase one, no model call: old tool results become one-line summaries of what the
//! tool did, repeated identical results keep only their newest copy, and long string
//! values inside old tool-call arguments are shortened inside the parsed JSON (so the
//! arguments stay valid JSON; a byte cut would leave an unterminated string that some
//! providers reject on every later turn).

use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use hermes_protocol::{Message, Role};
use serde_json::Value;

/// Replaces an older copy of a tool result repeated later in the conversation.
pub const DUPLICATE_MARKER: &str = "[Duplicate tool output — same content as a more recent call]";

/// Results shorter than this are left alone.
const MIN_PRUNE_CHARS: usize = 200;
/// Arguments longer than this are shrunk.
const MAX_ARGS_CHARS: usize = 500;
/// Longest string value kept inside shrunk arguments.
const MAX_ARG_STRING: usize = 200;

fn str_arg<'a>(args: &'a Value, key: &str) -> &'a str {
    args.get(key).and_then(Value::as_str).unwrap_or("?")
}

fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let cut: String = s.chars().take(max.saturating_sub(3)).collect();
    format!("{cut}...")
}

/// The number after `"key":` in a JSON-ish tool result.
fn json_number(content: &str, key: &str) -> Option<String> {
    let at = content.find(&format!("\"{key}\""))?;
    let rest = content[at + key.len() + 2..]
        .trim_start()
        .strip_prefix(':')?;
    let num: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '-')
        .collect();
    (!num.is_empty()).then_some(num)
}

/// One line saying what a tool call did, from its name, arguments and result.
pub fn summarize_tool_result(name: &str, arguments: &str, content: &str) -> String {
    let args: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
    let chars = content.chars().count();
    let lines = if content.trim().is_empty() {
        0
    } else {
        content.matches('\n').count() + 1
    };
    match name {
        "terminal" => {
            let exit = json_number(content, "exit_code").unwrap_or_else(|| "?".into());
            format!(
                "[terminal] ran `{}` -> exit {exit}, {lines} lines output",
                clip(str_arg(&args, "command"), 80)
            )
        }
        "read_file" => {
            let offset = args.get("offset").and_then(Value::as_u64).unwrap_or(1);
            format!(
                "[read_file] read {} from line {offset} ({chars} chars)",
                str_arg(&args, "path")
            )
        }
        "write_file" => {
            let written = args.get("content").and_then(Value::as_str).map_or_else(
                || "?".to_owned(),
                |c| (c.matches('\n').count() + 1).to_string(),
            );
            format!(
                "[write_file] wrote to {} ({written} lines)",
                str_arg(&args, "path")
            )
        }
        "search_files" => {
            let target = args
                .get("target")
                .and_then(Value::as_str)
                .unwrap_or("content");
            let path = args.get("path").and_then(Value::as_str).unwrap_or(".");
            let count = json_number(content, "total_count").unwrap_or_else(|| "?".into());
            format!(
                "[search_files] {target} search for '{}' in {path} -> {count} matches",
                str_arg(&args, "pattern")
            )
        }
        "patch" => {
            let mode = args
                .get("mode")
                .and_then(Value::as_str)
                .unwrap_or("replace");
            format!(
                "[patch] {mode} in {} ({chars} chars result)",
                str_arg(&args, "path")
            )
        }
        "web_search" => format!(
            "[web_search] query='{}' ({chars} chars result)",
            str_arg(&args, "query")
        ),
        "delegate_task" => format!(
            "[delegate_task] '{}' ({chars} chars result)",
            clip(str_arg(&args, "goal"), 60)
        ),
        "session_search" => format!(
            "[session_search] query='{}' ({chars} chars result)",
            args.get("query").and_then(Value::as_str).unwrap_or("")
        ),
        _ => format!("[{name}] ({chars} chars result)"),
    }
}

fn shrink(v: &mut Value) -> bool {
    match v {
        Value::String(s) if s.chars().count() > MAX_ARG_STRING => {
            let keep: String = s.chars().take(MAX_ARG_STRING).collect();
            *s = format!("{keep}...[truncated]");
            true
        }
        // Every leaf must be visited, so no short-circuiting `any`.
        Value::Array(items) => items.iter_mut().map(shrink).filter(|&s| s).count() > 0,
        Value::Object(map) => map.values_mut().map(shrink).filter(|&s| s).count() > 0,
        _ => false,
    }
}

/// `arguments` with long string values shortened, still valid JSON; `None` when they
/// are short, unparseable or have nothing to shorten.
pub fn shrink_arguments(arguments: &str) -> Option<String> {
    if arguments.len() <= MAX_ARGS_CHARS {
        return None;
    }
    let mut parsed: Value = serde_json::from_str(arguments).ok()?;
    shrink(&mut parsed).then(|| parsed.to_string())
}

fn content_hash(text: &str) -> u64 {
    let mut h = DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// Prunes tool output before index `boundary` (everything after it is the protected
/// tail) and dedupes repeated results everywhere. Returns how many messages changed.
pub fn prune_tool_output(messages: &mut [Message], boundary: usize) -> usize {
    let mut changed = 0;
    let calls: HashMap<String, (String, String)> = messages
        .iter()
        .flat_map(|m| m.tool_calls.iter())
        .map(|c| {
            (
                c.id.clone(),
                (c.function.name.clone(), c.function.arguments.clone()),
            )
        })
        .collect();
    let mut seen = HashMap::new();
    for i in (0..messages.len()).rev() {
        let m = &mut messages[i];
        if m.role != Role::Tool || m.text().chars().count() < MIN_PRUNE_CHARS {
            continue;
        }
        let h = content_hash(m.text());
        if seen.insert(h, i).is_some() {
            m.content = Some(DUPLICATE_MARKER.to_owned());
            changed += 1;
        }
    }
    for m in messages.iter_mut().take(boundary) {
        match m.role {
            Role::Tool => {
                let text = m.text();
                if text.chars().count() <= MIN_PRUNE_CHARS || text == DUPLICATE_MARKER {
                    continue;
                }
                let (name, args) = m
                    .tool_call_id
                    .as_ref()
                    .and_then(|id| calls.get(id))
                    .map_or(("unknown", ""), |(n, a)| (n.as_str(), a.as_str()));
                m.content = Some(summarize_tool_result(name, args, text));
                changed += 1;
            }
            Role::Assistant => {
                let mut touched = false;
                for c in &mut m.tool_calls {
                    if let Some(short) = shrink_arguments(&c.function.arguments) {
                        c.function.arguments = short;
                        touched = true;
                    }
                }
                changed += usize::from(touched);
            }
            _ => {}
        }
    }
    changed
}
