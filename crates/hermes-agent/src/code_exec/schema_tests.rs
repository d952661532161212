//! The model-facing schema and the generated module keep the reference's interface.

use std::collections::BTreeSet;

use super::*;

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| (*s).to_owned()).collect()
}

fn settings(mode: ExecMode) -> CodeExecSettings {
    CodeExecSettings {
        mode,
        ..CodeExecSettings::default()
    }
}

#[test]
fn schema_has_the_reference_parameters_and_lists_only_enabled_tools() {
    let ours = build_schema(
        &set(&["terminal", "read_file"]),
        &settings(ExecMode::Project),
    );
    assert_eq!(ours.name, "execute_code");
    assert_eq!(ours.parameters["required"], serde_json::json!(["code"]));
    let props = ours.parameters["properties"].as_object().unwrap();
    assert_eq!(props.keys().collect::<Vec<_>>(), vec!["code"]);
    assert_eq!(props["code"]["type"], "string");
    let code_doc = props["code"]["description"].as_str().unwrap();
    assert!(
        code_doc.contains("from hermes_tools import terminal, ..."),
        "{code_doc}"
    );
    let d = &ours.description;
    assert!(d.contains("  terminal(command: str, timeout=None, workdir=None) -> dict"));
    assert!(d.contains("  read_file(path: str, offset: int = 1, limit: int = 500) -> dict"));
    assert!(!d.contains("web_search("));
    assert!(
        d.contains("stopped after 300 s") && d.contains("make 50 tool calls"),
        "{d}"
    );
    assert!(d.contains("session's working directory"));
}

#[test]
fn strict_mode_lists_every_tool_and_says_where_scripts_run() {
    let all: BTreeSet<String> = SANDBOX_ALLOWED_TOOLS
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    let schema = build_schema(&all, &settings(ExecMode::Strict));
    for name in SANDBOX_ALLOWED_TOOLS {
        assert!(schema.description.contains(&format!("  {name}(")), "{name}");
    }
    assert!(schema.description.contains("private temporary directory"));
    let limits = CodeExecSettings {
        timeout_secs: 2.5,
        max_tool_calls: 7,
        ..CodeExecSettings::default()
    };
    let limited = build_schema(&all, &limits).description;
    assert!(limited.contains("stopped after 2.5 s") && limited.contains("make 7 tool calls"));
}

#[test]
fn schema_import_example_falls_back_to_the_first_two_tools() {
    let ours = build_schema(
        &set(&["patch", "write_file", "search_files"]),
        &settings(ExecMode::Project),
    );
    let code_doc = ours.parameters["properties"]["code"]["description"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        code_doc.contains("from hermes_tools import patch, search_files, ..."),
        "{code_doc}"
    );
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
        CodeExecSettings::from_section(&Default::default()),
        CodeExecSettings::default()
    );
    let v = serde_json::json!({"timeout": 2, "max_tool_calls": "7", "mode": "STRICT"});
    let s = CodeExecSettings::from_section(
        &hermes_state::settings::Sections::from_tree(&serde_json::json!({"code_execution": v}))
            .code_execution,
    );
    assert_eq!(s.timeout_secs, 2.0);
    assert_eq!(s.max_tool_calls, 7);
    assert_eq!(s.mode, ExecMode::Strict);
    let bad = serde_json::json!({"timeout": "soon", "mode": "yolo"});
    let s = CodeExecSettings::from_section(
        &hermes_state::settings::Sections::from_tree(&serde_json::json!({"code_execution": bad}))
            .code_execution,
    );
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
