//! The model-facing schema and the generated module match the reference's text.

use std::collections::BTreeSet;

use serde_json::Value;

use super::*;

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| (*s).to_owned()).collect()
}

fn fixture(name: &str) -> Value {
    let path = format!(
        "{}/src/code_exec/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn as_json(schema: hermes_protocol::ToolSchema) -> Value {
    serde_json::json!({
        "name": schema.name,
        "description": schema.description,
        "parameters": schema.parameters,
    })
}

#[test]
fn schema_matches_the_reference_for_project_mode() {
    let ours = build_schema(&set(&["terminal", "read_file"]), ExecMode::Project);
    assert_eq!(
        as_json(ours),
        fixture("schema_project_terminal_read_file.json")
    );
}

#[test]
fn schema_matches_the_reference_for_strict_mode_with_every_tool() {
    let all: BTreeSet<String> = SANDBOX_ALLOWED_TOOLS
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    assert_eq!(
        as_json(build_schema(&all, ExecMode::Strict)),
        fixture("schema_strict_all.json")
    );
}

#[test]
fn schema_import_example_falls_back_to_the_first_two_tools() {
    let ours = build_schema(
        &set(&["patch", "write_file", "search_files"]),
        ExecMode::Project,
    );
    assert_eq!(as_json(ours), fixture("schema_project_files.json"));
}

#[test]
fn module_has_stubs_only_for_allowed_and_enabled_tools() {
    let tools = sandbox_tools(["terminal", "read_file", "memory", "delegate_task"]);
    assert_eq!(tools, set(&["read_file", "terminal"]));
    let module = generate_module(&tools);
    // The stubs scripts call are the reference's, signature and docstring.
    let reference = std::fs::read_to_string(format!(
        "{}/src/code_exec/fixtures/hermes_tools_terminal_read_file.py",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let stubs_of = |text: &str| -> String {
        let start = text.find("\ndef read_file(").unwrap();
        text[start..].trim().to_owned()
    };
    assert_eq!(stubs_of(&module), stubs_of(&reference));
    for helper in [
        "def json_parse(text: str):",
        "def shell_quote(s: str) -> str:",
        "def retry(fn, max_attempts=3, delay=2):",
        "def _call(tool_name, args):",
    ] {
        assert!(module.contains(helper), "{helper}");
    }
    assert!(!module.contains("def memory"));
    assert!(!module.contains("def web_search"));
}

#[test]
fn the_tool_lists_only_registered_sandbox_tools() {
    let tool = ExecuteCodeTool::new(
        ["terminal", "todo", "memory"].map(String::from),
        CodeExecSettings::default(),
    );
    assert_eq!(tool.sandbox_tools(), &set(&["terminal"]));
    let schema = tool.schema();
    assert!(schema.description.contains("  terminal(command: str"));
    assert!(!schema.description.contains("read_file("));
}

#[test]
fn settings_read_the_config_section_with_defaults() {
    assert_eq!(
        CodeExecSettings::from_value(None),
        CodeExecSettings::default()
    );
    let v = serde_json::json!({"timeout": 2, "max_tool_calls": "7", "mode": "STRICT"});
    let s = CodeExecSettings::from_value(Some(&v));
    assert_eq!(s.timeout_secs, 2.0);
    assert_eq!(s.max_tool_calls, 7);
    assert_eq!(s.mode, ExecMode::Strict);
    let bad = serde_json::json!({"timeout": "soon", "mode": "yolo"});
    let s = CodeExecSettings::from_value(Some(&bad));
    assert_eq!(s.timeout_secs, DEFAULT_TIMEOUT_SECS);
    assert_eq!(s.mode, ExecMode::Project);
}

#[test]
fn scrubbing_drops_secrets_and_unknown_variables() {
    let env = [
        ("PATH", "/bin"),
        ("HOME", "/home/u"),
        ("OPENAI_API_KEY", "sk-x"),
        ("GITHUB_TOKEN", "t"),
        ("PATH_SECRET", "s"),
        ("HERMES_HOME", "/h"),
        ("HERMES_BASE_URL", "http://x"),
        ("RANDOM_VAR", "1"),
        ("LC_ALL", "C"),
    ]
    .map(|(k, v)| (k.to_owned(), v.to_owned()));
    let kept: Vec<String> = scrub_env(env).into_iter().map(|(k, _)| k).collect();
    assert_eq!(kept, ["PATH", "HOME", "HERMES_HOME", "LC_ALL"]);
}
