//! Repairing malformed tool-call arguments, in the reference's order:
//! strict parse → trailing commas → unbalanced braces → raw control characters → `{}`.

/// What repair did to a tool call's arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepairedArgs {
    /// Arguments as valid JSON text.
    pub json: String,
    /// Which stage fixed them, or `None` when they were already valid.
    pub fix: Option<&'static str>,
}

/// Returns valid JSON arguments for `raw`, repairing what it can.
pub fn repair_arguments(raw: &str) -> RepairedArgs {
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        // Models send "" for tools without parameters: that is not a defect.
        return RepairedArgs {
            json: "{}".into(),
            fix: (!raw.is_empty()).then_some("empty arguments"),
        };
    }
    if trimmed == "None" || trimmed == "null" {
        return RepairedArgs {
            json: "{}".into(),
            fix: Some("empty arguments"),
        };
    }
    if parses(trimmed) {
        return RepairedArgs {
            json: trimmed.to_owned(),
            fix: None,
        };
    }
    let no_trailing = remove_trailing_commas(trimmed);
    if parses(&no_trailing) {
        return RepairedArgs {
            json: no_trailing,
            fix: Some("trailing commas"),
        };
    }
    let balanced = balance_brackets(&no_trailing);
    if parses(&balanced) {
        return RepairedArgs {
            json: balanced,
            fix: Some("unbalanced braces"),
        };
    }
    let escaped = escape_control_chars(&balanced);
    if parses(&escaped) {
        return RepairedArgs {
            json: escaped,
            fix: Some("control characters in strings"),
        };
    }
    RepairedArgs {
        json: "{}".into(),
        fix: Some("unrepairable, replaced with {}"),
    }
}

fn parses(s: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(s).is_ok()
}

/// Walks JSON text outside string literals, handing each structural character
/// and its byte index to `f`; returns whether the text ends inside a string.
fn for_each_structural(s: &str, mut f: impl FnMut(usize, char)) -> bool {
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        if c == '"' {
            in_string = true;
            continue;
        }
        f(i, c);
    }
    in_string
}

fn remove_trailing_commas(s: &str) -> String {
    let mut drop = Vec::new();
    let mut last_comma: Option<usize> = None;
    for_each_structural(s, |i, c| match c {
        ',' => last_comma = Some(i),
        '}' | ']' => {
            if let Some(j) = last_comma.take() {
                drop.push(j);
            }
        }
        c if c.is_whitespace() => {}
        _ => last_comma = None,
    });
    s.char_indices()
        .filter(|(i, _)| !drop.contains(i))
        .map(|(_, c)| c)
        .collect()
}

fn balance_brackets(s: &str) -> String {
    let mut stack = Vec::new();
    let mut surplus = Vec::new();
    let in_string_at_end = for_each_structural(s, |i, c| match c {
        '{' => stack.push('}'),
        '[' => stack.push(']'),
        '}' | ']' => {
            if stack.last() == Some(&c) {
                stack.pop();
            } else {
                surplus.push(i);
            }
        }
        _ => {}
    });
    let mut out: String = s
        .char_indices()
        .filter(|(i, _)| !surplus.contains(i))
        .map(|(_, c)| c)
        .collect();
    if in_string_at_end {
        out.push('"');
    }
    while let Some(close) = stack.pop() {
        out.push(close);
    }
    out
}

fn escape_control_chars(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let mut in_string = false;
    let mut escaped = false;
    for c in s.chars() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            } else if (c as u32) < 0x20 {
                match c {
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    other => out.push_str(&format!("\\u{:04x}", other as u32)),
                }
                continue;
            }
        } else if c == '"' {
            in_string = true;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
#[path = "repair_tests.rs"]
mod tests;
