use super::*;

fn load(yaml: &str, env: &Env) -> Result<Config, ConfigError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.yaml");
    std::fs::write(&path, yaml).unwrap();
    Config::load(&path, env)
}

#[test]
fn missing_file_gives_defaults() {
    let c = Config::load(Path::new("/nonexistent/config.yaml"), &Env::default()).unwrap();
    assert_eq!(c.agent.max_turns, 90);
    assert_eq!(c.toolsets, vec!["hermes-cli"]);
    assert_eq!(c.model, ModelConfig::default());
}

#[test]
fn reference_keys_load_and_unknown_keys_are_ignored() {
    let yaml = r#"
model:
  provider: custom
  default: qwen3:8b
  base_url: http://localhost:11434/v1
  context_length: 32768
agent:
  max_turns: 12
  reasoning_effort: high
toolsets: [file, terminal]
terminal:
  backend: local
  timeout: 180
compression:
  enabled: true
  threshold: 0.5
display:
  skin: mono
"#;
    let c = load(yaml, &Env::default()).unwrap();
    assert_eq!(c.model.provider.as_deref(), Some("custom"));
    assert_eq!(c.model.default.as_deref(), Some("qwen3:8b"));
    assert_eq!(c.model.context_length, Some(32768));
    assert_eq!(c.agent.max_turns, 12);
    assert_eq!(c.toolsets, vec!["file", "terminal"]);
    assert_eq!(c.get("compression.threshold"), Some(&json!(0.5)));
}

#[test]
fn vars_expand_from_env_and_unknown_stay_verbatim() {
    let env = Env::from_pairs([("MY_KEY", "sk-123"), ("HOST", "h")]);
    let c = load(
        "model:\n  api_key: ${MY_KEY}\n  base_url: http://${HOST}:1/${NOPE}/v1\n",
        &env,
    )
    .unwrap();
    assert_eq!(c.model.api_key.as_deref(), Some("sk-123"));
    assert_eq!(c.model.base_url.as_deref(), Some("http://h:1/${NOPE}/v1"));
}

#[test]
fn env_layer_overrides_the_file() {
    let env = Env::from_pairs([
        ("HERMES_INFERENCE_PROVIDER", "openrouter"),
        ("HERMES_MAX_ITERATIONS", "7"),
    ]);
    let c = load(
        "model:\n  provider: custom\nagent:\n  max_turns: 12\n",
        &env,
    )
    .unwrap();
    assert_eq!(c.model.provider.as_deref(), Some("openrouter"));
    assert_eq!(c.agent.max_turns, 7);
}

#[test]
fn legacy_shapes_are_normalised() {
    let c = load("model: gpt-4o\nmax_turns: \"33\"\n", &Env::default()).unwrap();
    assert_eq!(c.model.default.as_deref(), Some("gpt-4o"));
    assert_eq!(c.agent.max_turns, 33);
}

#[test]
fn malformed_yaml_reports_line_and_column() {
    let err = load(
        "model:\n  provider: custom\n  default: [unclosed\nagent: {\n",
        &Env::default(),
    )
    .unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, ConfigError::Syntax { .. }), "{msg}");
    assert!(msg.contains("line"), "{msg}");
    assert!(msg.contains("column") || msg.contains("col"), "{msg}");
}

#[test]
fn wrong_types_are_reported_with_the_key() {
    let err = load("agent:\n  max_turns: lots\n", &Env::default()).unwrap_err();
    assert!(err.to_string().contains("'agent'"), "{err}");
    let err = load("- a\n- b\n", &Env::default()).unwrap_err();
    assert!(err.to_string().contains("mapping"), "{err}");
}

#[test]
fn api_max_retries_defaults_to_three() {
    assert_eq!(Config::default().agent.api_max_retries, 3);
    let c = load("agent:\n  api_max_retries: 0\n", &Env::default()).unwrap();
    assert_eq!(c.agent.api_max_retries, 0);
}
