use super::*;

#[test]
fn replaces_keys_in_place_and_keeps_comments() {
    let text = "# my setup\nmodel:\n  # which one\n  provider: openrouter   # cheap\n  default: old/model\n  base_url: http://x/v1\n\nagent:\n  max_turns: 10\n";
    let out = set_section_keys(
        text,
        "model",
        &[
            ("default", Some("gpt-4o")),
            ("provider", Some("openai")),
            ("base_url", None),
        ],
    )
    .unwrap();
    assert_eq!(
        out,
        "# my setup\nmodel:\n  # which one\n  provider: openai\n  default: gpt-4o\n\nagent:\n  max_turns: 10\n"
    );
}

#[test]
fn appends_missing_keys_and_sections() {
    let out = set_section_keys(
        "agent:\n    max_turns: 5\n",
        "model",
        &[("default", Some("a/b"))],
    )
    .unwrap();
    assert_eq!(out, "agent:\n    max_turns: 5\nmodel:\n  default: a/b\n");
    let out = set_section_keys(
        "model:\n    provider: custom\n",
        "model",
        &[("default", Some("q"))],
    )
    .unwrap();
    assert_eq!(out, "model:\n    provider: custom\n    default: q\n");
    let out = set_section_keys("", "model", &[("default", Some("m"))]).unwrap();
    assert_eq!(out, "model:\n  default: m\n");
    // Removing from a missing section changes nothing.
    assert_eq!(
        set_section_keys("a: 1\n", "model", &[("x", None)]).unwrap(),
        "a: 1\n"
    );
}

#[test]
fn scalar_shorthand_becomes_a_block() {
    let out = set_section_keys(
        "model: gpt-4 # old\ntoolsets: [a]\n",
        "model",
        &[("provider", Some("openai"))],
    )
    .unwrap();
    assert_eq!(
        out,
        "model:\n  default: gpt-4\n  provider: openai\ntoolsets: [a]\n"
    );
}

#[test]
fn nested_values_are_replaced_whole() {
    let text = "model:\n  default:\n    - weird\n    - list\n  provider: x\n";
    let out = set_section_keys(text, "model", &[("default", Some("m"))]).unwrap();
    assert_eq!(out, "model:\n  default: m\n  provider: x\n");
}

#[test]
fn flow_style_is_refused() {
    assert!(set_section_keys("model: {default: a}\n", "model", &[("default", Some("b"))]).is_err());
}

#[test]
fn values_that_need_quotes_are_quoted() {
    assert_eq!(
        yaml_scalar("anthropic/claude-sonnet-4.5"),
        "anthropic/claude-sonnet-4.5"
    );
    assert_eq!(yaml_scalar("qwen3:8b"), "qwen3:8b");
    assert_eq!(
        yaml_scalar("http://localhost:8080/v1"),
        "http://localhost:8080/v1"
    );
    assert_eq!(yaml_scalar("yes"), "\"yes\"");
    assert_eq!(yaml_scalar("1.5"), "\"1.5\"");
    assert_eq!(yaml_scalar("a # b"), "\"a # b\"");
    assert_eq!(yaml_scalar(""), "\"\"");
}

#[test]
fn file_update_round_trips_through_the_parser() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.yaml");
    std::fs::write(&path, "# keep me\nmodel:\n  provider: custom\n").unwrap();
    update_config_file(&path, "model", &[("default", Some("yes"))]).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("# keep me\n"), "{text}");
    let cfg = crate::Config::load(&path, &crate::Env::default()).unwrap();
    assert_eq!(cfg.model.default.as_deref(), Some("yes"));
    assert_eq!(cfg.model.provider.as_deref(), Some("custom"));
    // A file the editor cannot handle is left as it was.
    std::fs::write(&path, "model: {provider: x}\n").unwrap();
    let err = update_config_file(&path, "model", &[("default", Some("m"))]).unwrap_err();
    assert!(err.to_string().contains("by hand"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "model: {provider: x}\n"
    );
}

#[test]
fn top_level_keys_are_set_replaced_and_removed_with_their_blocks() {
    let text =
        "# mine\nmodel:\n  default: x\n\ntoolsets:\n  - web\n  - file\n# after\ntimezone: UTC\n";
    let list = serde_json::json!(["hermes-cli"]);
    let out = set_top_level(text, "toolsets", Some(Entry::Tree(&list)));
    assert_eq!(
        out,
        "# mine\nmodel:\n  default: x\n\ntoolsets:\n  - hermes-cli\n# after\ntimezone: UTC\n"
    );
    let out = set_top_level(&out, "timezone", Some(Entry::Text("Europe/Paris")));
    assert!(out.ends_with("timezone: Europe/Paris\n"), "{out}");
    let out = set_top_level(&out, "toolsets", None);
    assert_eq!(
        out,
        "# mine\nmodel:\n  default: x\n\n# after\ntimezone: Europe/Paris\n"
    );
    let out = set_top_level(&out, "new_key", Some(Entry::Text("v")));
    assert!(
        out.ends_with("timezone: Europe/Paris\nnew_key: v\n"),
        "{out}"
    );
    assert_eq!(set_top_level(&out, "absent", None), out);
}
