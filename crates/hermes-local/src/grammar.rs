//! A JSON-Schema for "one call of one of these tools", bounded so a small model
//! cannot ramble, and its conversion to a llama.cpp grammar.

use hermes_protocol::ToolSchema;
use serde_json::{Map, Value, json};

use crate::prompt::{CALL_CLOSE, CALL_OPEN};

/// Longest string argument the grammar allows.
pub const MAX_STRING: u64 = 256;

/// The schema of `{"name": …, "arguments": {…}}` over `tools` (or only `only`).
pub fn call_schema(tools: &[ToolSchema], only: Option<&str>) -> Value {
    let variants: Vec<Value> = tools
        .iter()
        .filter(|t| only.is_none_or(|o| o == t.name))
        .map(|t| {
            json!({
                "type": "object",
                "properties": {"name": {"const": t.name}, "arguments": bounded_arguments(&t.parameters)},
                "required": ["name", "arguments"],
                "additionalProperties": false
            })
        })
        .collect();
    if variants.len() == 1 {
        variants.into_iter().next().unwrap_or(Value::Null)
    } else {
        json!({"oneOf": variants})
    }
}

/// Keeps the required properties (all of them when none are required), bounds
/// strings and arrays, and forbids extra keys.
fn bounded_arguments(params: &Value) -> Value {
    let props = params
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let required: Vec<String> = params
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let kept: Map<String, Value> = props
        .into_iter()
        .filter(|(k, _)| required.is_empty() || required.contains(k))
        .map(|(k, v)| (k, bound(v)))
        .collect();
    json!({"type": "object", "properties": kept, "required": required, "additionalProperties": false})
}

fn bound(mut v: Value) -> Value {
    if let Some(obj) = v.as_object_mut() {
        obj.remove("description");
        obj.remove("default");
        match obj.get("type").and_then(Value::as_str) {
            Some("string") if !obj.contains_key("enum") && !obj.contains_key("pattern") => {
                obj.entry("maxLength").or_insert(json!(MAX_STRING));
            }
            Some("array") => {
                obj.entry("maxItems").or_insert(json!(8));
                if let Some(items) = obj.remove("items") {
                    obj.insert("items".into(), bound(items));
                }
            }
            Some("object") => {
                if let Some(p) = obj.get("properties").cloned() {
                    return bounded_arguments(
                        &json!({"properties": p, "required": obj.get("required").cloned().unwrap_or(json!([]))}),
                    );
                }
            }
            _ => {}
        }
    }
    v
}

/// A GBNF grammar whose root is `<tool_call>` JSON `</tool_call>`.
pub fn tool_call_grammar(schema: &Value) -> Result<String, String> {
    let json_grammar =
        llama_cpp_2::json_schema_to_grammar(&schema.to_string()).map_err(|e| e.to_string())?;
    let mut renamed = String::with_capacity(json_grammar.len() + 64);
    for line in json_grammar.lines() {
        match line.strip_prefix("root ::=") {
            Some(rest) => renamed.push_str(&format!("call-json ::={rest}")),
            None => renamed.push_str(line),
        }
        renamed.push('\n');
    }
    Ok(format!(
        "root ::= \"{CALL_OPEN}\" [ \\n]* call-json [ \\n]* \"{CALL_CLOSE}\"\n{renamed}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> Vec<ToolSchema> {
        vec![
            ToolSchema {
                name: "terminal".into(),
                description: "d".into(),
                parameters: json!({"type": "object", "properties": {"command": {"type": "string", "description": "x"}, "pty": {"type": "boolean"}}, "required": ["command"]}),
            },
            ToolSchema {
                name: "todo".into(),
                description: "d".into(),
                parameters: json!({"type": "object", "properties": {"todos": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}}}, "required": []}),
            },
        ]
    }

    #[test]
    fn schema_keeps_required_args_and_bounds_strings() {
        let s = call_schema(&tools(), None);
        let terminal = &s["oneOf"][0]["properties"]["arguments"];
        assert_eq!(terminal["properties"]["command"]["maxLength"], MAX_STRING);
        assert!(terminal["properties"].get("pty").is_none());
        let todo = &s["oneOf"][1]["properties"]["arguments"];
        assert_eq!(todo["properties"]["todos"]["maxItems"], 8);
        assert_eq!(
            todo["properties"]["todos"]["items"]["properties"]["id"]["maxLength"],
            MAX_STRING
        );
    }

    #[test]
    fn a_named_tool_narrows_the_schema() {
        let s = call_schema(&tools(), Some("terminal"));
        assert_eq!(s["properties"]["name"]["const"], "terminal");
    }

    #[test]
    fn grammar_wraps_the_json_in_tags() {
        let g = tool_call_grammar(&call_schema(&tools(), None)).unwrap();
        assert!(g.starts_with("root ::= \"<tool_call>\""), "{g}");
        assert!(g.contains("call-json ::="), "{g}");
        assert_eq!(
            g.matches("\nroot ::=").count(),
            0,
            "only one root rule: {g}"
        );
    }
}
