use serde_json::json;

use super::*;

const FAIL: &str = r#"{"output": "", "exit_code": 1, "error": "boom"}"#;
const OK: &str = r#"{"output": "hi", "exit_code": 0, "error": null}"#;

fn hard() -> GuardrailConfig {
    GuardrailConfig {
        hard_stop_enabled: true,
        ..GuardrailConfig::default()
    }
}

#[test]
fn canonical_args_ignore_key_order_and_whitespace() {
    let a: Value = serde_json::from_str(r#"{"b": 2, "a": {"y": [1, 2], "x": "s"}}"#).unwrap();
    let b: Value = serde_json::from_str(r#"{"a":{"x":"s","y":[1,2]},"b":2}"#).unwrap();
    assert_eq!(canonical_json(&a), r#"{"a":{"x":"s","y":[1,2]},"b":2}"#);
    assert_eq!(Signature::of("t", &a), Signature::of("t", &b));
    assert_ne!(Signature::of("t", &a), Signature::of("u", &a));
    assert_ne!(Signature::of("t", &a), Signature::of("t", &json!({"b": 3})));
    assert_eq!(
        Signature::of("t", &json!(null)),
        Signature::of("t", &json!({}))
    );
}

#[test]
fn failure_classification() {
    assert!(is_failure("terminal", FAIL));
    assert!(!is_failure("terminal", OK));
    assert!(!is_failure("terminal", r#"{"error": "x"}"#));
    assert!(is_failure("read_file", r#"{"error": "no such file"}"#));
    assert!(is_failure("web_search", "Error: timeout"));
    assert!(!is_failure("read_file", r#"{"content": "fine"}"#));
    assert!(!is_failure(
        "write_file",
        r#"{"success": true, "error": null}"#
    ));
}

#[test]
fn exact_failure_warns_at_two() {
    let mut g = Guardrails::default();
    let args = json!({"command": "make"});
    assert_eq!(g.after_call("terminal", &args, FAIL).action, Action::Allow);
    let d = g.after_call("terminal", &args, FAIL);
    assert_eq!(
        (d.action, d.code, d.count),
        (Action::Warn, "repeated_exact_failure_warning", 2)
    );
    assert!(
        d.annotate("r")
            .starts_with("r\n\n[Tool loop warning: repeated_exact_failure_warning; count=2;")
    );
    // Without hard stops nothing is ever blocked.
    for _ in 0..10 {
        g.after_call("terminal", &args, FAIL);
    }
    assert_eq!(g.before_call("terminal", &args).action, Action::Allow);
}

#[test]
fn same_tool_failures_warn_at_three_with_varied_args() {
    let mut g = Guardrails::default();
    for (i, expected) in [(1, Action::Allow), (2, Action::Allow), (3, Action::Warn)] {
        let d = g.after_call("terminal", &json!({"command": format!("try {i}")}), FAIL);
        assert_eq!(d.action, expected, "call {i}");
    }
    let d = g.after_call("terminal", &json!({"command": "try 4"}), FAIL);
    assert_eq!(d.code, "same_tool_failure_warning");
    assert!(d.message.contains("pwd && ls -la"));
}

#[test]
fn success_resets_failure_counts() {
    let mut g = Guardrails::default();
    let args = json!({"command": "make"});
    g.after_call("terminal", &args, FAIL);
    g.after_call("terminal", &args, OK);
    assert_eq!(g.after_call("terminal", &args, FAIL).action, Action::Allow);
}

#[test]
fn idempotent_no_progress_warns_then_blocks() {
    let mut g = Guardrails::new(hard());
    let args = json!({"path": "a.txt"});
    let same = r#"{"content": "x"}"#;
    assert_eq!(g.after_call("read_file", &args, same).action, Action::Allow);
    let d = g.after_call("read_file", &args, r#"{ "content":"x" }"#);
    assert_eq!(
        (d.action, d.code),
        (Action::Warn, "idempotent_no_progress_warning")
    );
    for _ in 0..3 {
        assert_eq!(g.before_call("read_file", &args).action, Action::Allow);
        g.after_call("read_file", &args, same);
    }
    let d = g.before_call("read_file", &args);
    assert_eq!(
        (d.action, d.code, d.count),
        (Action::Block, "idempotent_no_progress_block", 5)
    );
    assert!(
        d.synthetic_result()
            .contains("idempotent_no_progress_block")
    );
    // A changed result is progress.
    let mut g = Guardrails::default();
    g.after_call("read_file", &args, same);
    assert_eq!(
        g.after_call("read_file", &args, r#"{"content": "y"}"#)
            .action,
        Action::Allow
    );
    // Mutating tools never count as no-progress.
    let wrote = r#"{"success": true}"#;
    assert_eq!(
        g.after_call("write_file", &args, wrote).action,
        Action::Allow
    );
    assert_eq!(
        g.after_call("write_file", &args, wrote).action,
        Action::Allow
    );
}

#[test]
fn hard_stop_blocks_exact_failure_at_five_and_halts_same_tool_at_eight() {
    let mut g = Guardrails::new(hard());
    let args = json!({"command": "make"});
    for _ in 0..5 {
        assert!(!g.before_call("terminal", &args).blocks());
        g.after_call("terminal", &args, FAIL);
    }
    let d = g.before_call("terminal", &args);
    assert_eq!(
        (d.action, d.code),
        (Action::Block, "repeated_exact_failure_block")
    );
    let mut g = Guardrails::new(hard());
    let mut last = Action::Allow;
    for i in 0..8 {
        last = g
            .after_call("terminal", &json!({"command": i}), FAIL)
            .action;
    }
    assert_eq!(last, Action::Halt);
    g.reset();
    assert_eq!(g.after_call("terminal", &args, FAIL).action, Action::Allow);
}

#[test]
fn warnings_can_be_disabled() {
    let mut g = Guardrails::new(GuardrailConfig {
        warnings_enabled: false,
        ..GuardrailConfig::default()
    });
    let args = json!({"command": "make"});
    for _ in 0..6 {
        assert_eq!(g.after_call("terminal", &args, FAIL).action, Action::Allow);
    }
}

#[test]
fn config_from_yaml_section() {
    assert_eq!(
        GuardrailConfig::from_section(&Default::default()),
        GuardrailConfig::default()
    );
    let section = json!({
        "hard_stop_enabled": "yes",
        "warnings_enabled": true,
        "warn_after": {"exact_failure": 3, "same_tool_failure": "4", "idempotent_no_progress": 0},
        "hard_stop_after": {"exact_failure": 6},
        "same_tool_failure_halt_after": 9,
    });
    let c = GuardrailConfig::from_section(
        &hermes_state::settings::Sections::from_tree(
            &serde_json::json!({"tool_loop_guardrails": section}),
        )
        .tool_loop_guardrails,
    );
    assert!(c.hard_stop_enabled && c.warnings_enabled);
    assert_eq!(c.exact_failure_warn_after, 3);
    assert_eq!(c.same_tool_failure_warn_after, 4);
    assert_eq!(c.no_progress_warn_after, 2, "zero is not a valid threshold");
    assert_eq!(c.exact_failure_block_after, 6);
    assert_eq!(c.same_tool_failure_halt_after, 9);
    assert_eq!(c.no_progress_block_after, 5);
    assert_eq!(
        GuardrailConfig::from_section(
            &hermes_state::settings::Sections::from_tree(&json!({"tool_loop_guardrails": "on"}))
                .tool_loop_guardrails
        ),
        GuardrailConfig::default()
    );
}
