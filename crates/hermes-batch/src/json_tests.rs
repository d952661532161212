use super::*;

#[test]
fn python_separators_and_key_order_are_kept() {
    let v =
        parse(r#"{"zeta": 1, "alpha": [true, null, 2.5], "mid": {"b": "x", "a": "y"}}"#).unwrap();
    assert_eq!(
        to_python_string(&v).unwrap(),
        r#"{"zeta": 1, "alpha": [true, null, 2.5], "mid": {"b": "x", "a": "y"}}"#
    );
}

#[test]
fn non_ascii_is_kept_and_controls_are_escaped_like_python() {
    let v = Json::object([("text", Json::string("héllo 世界 \"q\" \\ \n\t\u{1f}"))]);
    assert_eq!(
        to_python_string(&v).unwrap(),
        "{\"text\": \"héllo 世界 \\\"q\\\" \\\\ \\n\\t\\u001f\"}"
    );
}

#[test]
fn a_repeated_key_keeps_its_first_place_and_last_value() {
    let v = parse(r#"{"a": 1, "b": 2, "a": 3}"#).unwrap();
    assert_eq!(to_python_string(&v).unwrap(), r#"{"a": 3, "b": 2}"#);
}

#[test]
fn empty_containers_and_scalars() {
    assert_eq!(to_python_string(&parse("[]").unwrap()).unwrap(), "[]");
    assert_eq!(to_python_string(&parse("{}").unwrap()).unwrap(), "{}");
    assert_eq!(to_python_string(&parse("-7").unwrap()).unwrap(), "-7");
    assert_eq!(to_python_string(&parse("\"s\"").unwrap()).unwrap(), "\"s\"");
}

#[test]
fn pretty_output_matches_python_indent_2() {
    let v = parse(r#"{"b": [1, 2], "a": {}, "c": []}"#).unwrap();
    assert_eq!(
        to_pretty_string(&v).unwrap(),
        "{\n  \"b\": [\n    1,\n    2\n  ],\n  \"a\": {},\n  \"c\": []\n}"
    );
}

#[test]
fn values_convert_from_serde_json() {
    let v = serde_json::json!({"k": [1, "two"]});
    assert_eq!(
        to_python_string(&Json::from(&v)).unwrap(),
        r#"{"k": [1, "two"]}"#
    );
}
