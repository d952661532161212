//! Repairs MCP input schemas so every provider accepts them, as the
//! reference does: `definitions` → `$defs`, nullable unions collapsed, object
//! nodes given `type`/`properties`, dangling `required` entries dropped.

use serde_json::{Map, Value, json};

/// The schema offered to the model for an MCP tool's `inputSchema`.
pub fn normalize(schema: Option<&Value>) -> Value {
    let Some(schema) = schema.filter(|s| s.as_object().is_some_and(|m| !m.is_empty())) else {
        return empty_object();
    };
    let rewritten = rewrite_refs(schema);
    let collapsed = collapse_nullable(&rewritten);
    let repaired = repair_objects(&collapsed);
    match repaired {
        Value::Object(mut map) => {
            if map.get("type").and_then(Value::as_str) == Some("object")
                && !map.contains_key("properties")
            {
                map.insert("properties".into(), json!({}));
            }
            Value::Object(map)
        }
        _ => empty_object(),
    }
}

fn empty_object() -> Value {
    json!({"type": "object", "properties": {}})
}

/// `definitions` as a keyword (never as a property name) becomes `$defs`.
fn rewrite_refs(node: &Value) -> Value {
    match node {
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, value) in map {
                if (key == "properties" || key == "patternProperties") && value.is_object() {
                    let props = value
                        .as_object()
                        .map(|p| {
                            p.iter()
                                .map(|(name, s)| (name.clone(), rewrite_refs(s)))
                                .collect()
                        })
                        .unwrap_or_default();
                    out.insert(key.clone(), Value::Object(props));
                } else {
                    let key = if key == "definitions" { "$defs" } else { key };
                    out.insert(key.to_owned(), rewrite_refs(value));
                }
            }
            if let Some(Value::String(reference)) = out.get("$ref")
                && let Some(rest) = reference.strip_prefix("#/definitions/")
            {
                let fixed = format!("#/$defs/{rest}");
                out.insert("$ref".into(), Value::String(fixed));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(rewrite_refs).collect()),
        other => other.clone(),
    }
}

/// `anyOf`/`oneOf: [X, {type: null}]` becomes X (with `nullable: true`).
fn collapse_nullable(node: &Value) -> Value {
    match node {
        Value::Array(items) => Value::Array(items.iter().map(collapse_nullable).collect()),
        Value::Object(map) => {
            let stripped: Map<String, Value> = map
                .iter()
                .map(|(k, v)| (k.clone(), collapse_nullable(v)))
                .collect();
            for key in ["anyOf", "oneOf"] {
                let Some(Value::Array(variants)) = stripped.get(key) else {
                    continue;
                };
                let non_null: Vec<&Value> = variants
                    .iter()
                    .filter(|v| v.get("type").and_then(Value::as_str) != Some("null"))
                    .collect();
                if non_null.len() == 1 && non_null.len() != variants.len() {
                    let mut replacement = non_null[0].as_object().cloned().unwrap_or_default();
                    replacement.entry("nullable").or_insert(Value::Bool(true));
                    for meta in ["title", "description", "default", "examples"] {
                        if meta == "default" && replacement.contains_key("$ref") {
                            continue;
                        }
                        if let Some(v) = stripped.get(meta)
                            && !replacement.contains_key(meta)
                        {
                            replacement.insert(meta.into(), v.clone());
                        }
                    }
                    return collapse_nullable(&Value::Object(replacement));
                }
            }
            Value::Object(stripped)
        }
        other => other.clone(),
    }
}

fn repair_objects(node: &Value) -> Value {
    match node {
        Value::Array(items) => Value::Array(items.iter().map(repair_objects).collect()),
        Value::Object(map) => {
            let mut out: Map<String, Value> = map
                .iter()
                .map(|(k, v)| (k.clone(), repair_objects(v)))
                .collect();
            let untyped = out.get("type").is_none_or(|t| t.is_null());
            if untyped && (out.contains_key("properties") || out.contains_key("required")) {
                out.insert("type".into(), json!("object"));
            }
            if out.get("type").and_then(Value::as_str) == Some("object") {
                if !out.get("properties").is_some_and(Value::is_object) {
                    out.insert("properties".into(), json!({}));
                }
                if let Some(Value::Array(required)) = out.get("required") {
                    let props = out.get("properties").and_then(Value::as_object);
                    let valid: Vec<Value> = required
                        .iter()
                        .filter(|r| {
                            r.as_str()
                                .is_some_and(|n| props.is_some_and(|p| p.contains_key(n)))
                        })
                        .cloned()
                        .collect();
                    if valid.len() != required.len() {
                        if valid.is_empty() {
                            out.remove("required");
                        } else {
                            out.insert("required".into(), Value::Array(valid));
                        }
                    }
                }
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn missing_schema_is_an_empty_object() {
        assert_eq!(normalize(None), empty_object());
        assert_eq!(normalize(Some(&json!({}))), empty_object());
    }

    #[test]
    fn definitions_become_defs_but_property_names_stay() {
        let input = json!({
            "type": "object",
            "properties": {
                "definitions": {"type": "array", "items": {"$ref": "#/definitions/Id"}}
            },
            "definitions": {"Id": {"type": "string"}}
        });
        let out = normalize(Some(&input));
        assert!(out["properties"]["definitions"].is_object());
        assert_eq!(
            out["properties"]["definitions"]["items"]["$ref"],
            "#/$defs/Id"
        );
        assert_eq!(out["$defs"]["Id"]["type"], "string");
        assert!(out.get("definitions").is_none());
    }

    #[test]
    fn nullable_unions_collapse_and_required_is_pruned() {
        let input = json!({
            "properties": {
                "name": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "title": "Name"}
            },
            "required": ["name", "ghost"]
        });
        let out = normalize(Some(&input));
        assert_eq!(out["type"], "object");
        assert_eq!(
            out["properties"]["name"],
            json!({"type": "string", "nullable": true, "title": "Name", "default": null})
        );
        assert_eq!(out["required"], json!(["name"]));
    }

    #[test]
    fn nested_objects_get_properties() {
        let out = normalize(Some(
            &json!({"type": "object", "properties": {"o": {"type": "object"}}}),
        ));
        assert_eq!(out["properties"]["o"]["properties"], json!({}));
    }
}
