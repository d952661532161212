use serde_json::{Value, json};

use super::*;

fn value(raw: &str) -> (Value, Option<&'static str>) {
    let r = repair_arguments(raw);
    (serde_json::from_str(&r.json).unwrap(), r.fix)
}

#[test]
fn valid_json_is_untouched() {
    let r = repair_arguments(r#" {"path": "a.txt"} "#);
    assert_eq!(r.json, r#"{"path": "a.txt"}"#);
    assert_eq!(r.fix, None);
}

#[test]
fn empty_and_none_become_empty_object() {
    assert_eq!(value(""), (json!({}), None));
    assert_eq!(value("None"), (json!({}), Some("empty arguments")));
    assert_eq!(value("  "), (json!({}), Some("empty arguments")));
}

#[test]
fn trailing_commas_are_removed_outside_strings() {
    assert_eq!(
        value(r#"{"path": "a.txt",}"#),
        (json!({"path": "a.txt"}), Some("trailing commas"))
    );
    assert_eq!(
        value(r#"{"a": [1, 2, ], "b": ",}"}"#).0,
        json!({"a": [1, 2], "b": ",}"})
    );
}

#[test]
fn unclosed_and_extra_braces_are_balanced() {
    assert_eq!(
        value(r#"{"command": "ls", "x": [1, {"y": 2"#).0,
        json!({"command": "ls", "x": [1, {"y": 2}]})
    );
    assert_eq!(
        value(r#"{"a": 1}}"#),
        (json!({"a": 1}), Some("unbalanced braces"))
    );
    assert_eq!(
        value(r#"{"a": "unterminated"#).0,
        json!({"a": "unterminated"})
    );
    assert_eq!(value(r#"{"a": "}{", "b": 2"#).0, json!({"a": "}{", "b": 2}));
}

#[test]
fn raw_control_characters_are_escaped() {
    let (v, fix) = value("{\"content\": \"line1\nline2\ttab\u{1}\"}");
    assert_eq!(v, json!({"content": "line1\nline2\ttab\u{1}"}));
    assert_eq!(fix, Some("control characters in strings"));
}

#[test]
fn hopeless_input_becomes_empty_object() {
    assert_eq!(
        value("this is not json at all"),
        (json!({}), Some("unrepairable, replaced with {}"))
    );
}
