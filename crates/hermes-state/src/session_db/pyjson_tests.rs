use super::dumps;

#[test]
fn matches_python_defaults() {
    let v = serde_json::json!([{"a": 1, "b": "日本 é 🎉", "c": [true, null]}]);
    let s = dumps(&v, "test").unwrap();
    assert_eq!(
        s,
        r#"[{"a": 1, "b": "\u65e5\u672c \u00e9 \ud83c\udf89", "c": [true, null]}]"#
    );
    assert_eq!(
        dumps(&serde_json::json!("a\"\n\u{1}"), "t").unwrap(),
        r#""a\"\n\u0001""#
    );
}
