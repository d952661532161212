use serde_json::json;

use super::*;

#[test]
fn sections_read_the_reference_keys() {
    let tree = json!({
        "delegation": {"max_iterations": "12", "orchestrator_enabled": "off", "model": " m "},
        "code_execution": {"timeout": 2.5, "mode": "strict"},
        "approvals": {"mode": false, "timeout": "30", "deny": ["rm *"]},
        "command_allowlist": ["recursive delete", 3],
        "tool_loop_guardrails": {"warn_after": {"exact_failure": 4}, "no_progress_block_after": "7"},
        "auxiliary": {"compression": {"provider": "auto", "model": "small"}},
        "agent": {"reasoning_effort": " HIGH ", "personalities": {"x": "be x"}},
        "local": {"prompt_cache": false, "threads": 4},
    });
    let s = Sections::from_tree(&tree);
    assert_eq!(s.delegation.max_iterations, Some(12.0));
    assert_eq!(s.delegation.orchestrator_enabled, Some(false));
    assert_eq!(s.delegation.model.as_deref(), Some("m"));
    assert_eq!(s.code_execution.timeout, Some(2.5));
    assert_eq!(s.code_execution.mode.as_deref(), Some("strict"));
    assert_eq!(s.approvals.mode.as_deref(), Some("off"));
    assert_eq!(s.approvals.timeout, Some(30.0));
    assert_eq!(s.approvals.deny, vec!["rm *"]);
    assert_eq!(s.command_allowlist, vec!["recursive delete"]);
    assert_eq!(s.tool_loop_guardrails.warn_after.exact_failure, Some(4.0));
    assert_eq!(s.tool_loop_guardrails.no_progress_block_after, Some(7.0));
    assert_eq!(s.auxiliary.compression.model.as_deref(), Some("small"));
    assert!(!s.auxiliary.compression.is_unset());
    assert_eq!(s.reasoning_effort.as_deref(), Some("high"));
    assert!(s.personalities.contains_key("x"));
    assert_eq!(s.local.prompt_cache, Some(false));
    assert_eq!(s.local.threads, Some(4.0));
}

#[test]
fn malformed_values_read_as_absent_and_never_fail() {
    let tree = json!({
        "delegation": {"max_iterations": "lots", "orchestrator_enabled": [1], "model": 5},
        "code_execution": "fast",
        "compression": {"enabled": "maybe", "threshold": {"a": 1}},
        "auxiliary": {"compression": "cheap"},
        "tool_loop_guardrails": {"warn_after": 3},
    });
    let s = Sections::from_tree(&tree);
    assert_eq!(s.delegation, DelegationSection::default());
    assert_eq!(s.code_execution, CodeExecutionSection::default());
    assert_eq!(s.compression, CompressionSection::default());
    assert!(s.auxiliary.compression.is_unset());
    assert_eq!(
        s.tool_loop_guardrails.warn_after,
        GuardrailCounts::default()
    );
}

#[test]
fn lenient_counts_round_down_and_floor_at_zero() {
    assert_eq!(lenient::count(Some(2.9)), Some(2));
    assert_eq!(lenient::count(Some(-4.0)), Some(0));
    assert_eq!(lenient::count(None), None);
    assert_eq!(lenient::flag_of(&json!("Enabled")), Some(true));
    assert_eq!(lenient::flag_of(&json!(0)), Some(false));
    assert_eq!(lenient::number_of(&json!(" 12 ")), Some(12.0));
    assert_eq!(lenient::number_of(&json!("inf")), None);
}
