use serde_json::json;

use super::*;

struct NoFactory;

impl SubagentFactory for NoFactory {
    fn build(&self, _spec: ChildSpec) -> Result<Agent, String> {
        Err("not in unit tests".into())
    }
}

/// The `delegation:` section as config.yaml would give it.
fn delegation(section: serde_json::Value) -> hermes_state::settings::DelegationSection {
    hermes_state::settings::Sections::from_tree(&json!({ "delegation": section })).delegation
}

fn tool(settings: DelegationSettings) -> DelegateTool {
    DelegateTool::new(settings, Arc::new(NoFactory))
}

#[test]
fn settings_read_the_config_with_floors_and_ceiling() {
    let s = DelegationSettings::from_section(&delegation(json!({
        "max_iterations": 0,
        "max_concurrent_children": "5",
        "max_spawn_depth": 9,
        "orchestrator_enabled": "false",
        "child_timeout_seconds": 5,
        "max_summary_chars": 100
    })));
    assert_eq!(s.max_iterations, 1);
    assert_eq!(s.max_concurrent_children, 5);
    assert_eq!(s.max_spawn_depth, MAX_SPAWN_DEPTH_CEILING);
    assert!(!s.orchestrator_enabled);
    assert_eq!(s.child_timeout_seconds, 30);
    assert_eq!(s.max_summary_chars, 100);
    assert_eq!(
        DelegationSettings::from_section(&Default::default()),
        DelegationSettings::default()
    );
    let d = DelegationSettings::default();
    assert_eq!(
        (
            d.max_iterations,
            d.max_concurrent_children,
            d.max_spawn_depth
        ),
        (50, 3, 1)
    );
}

#[test]
fn the_schema_states_the_configured_limits() {
    let flat = tool(DelegationSettings::default()).schema();
    assert_eq!(flat.name, "delegate_task");
    assert!(flat.description.contains("up to 3 subagents"));
    assert!(
        flat.description
            .contains("Nesting is OFF (max_spawn_depth=1)")
    );
    let props = flat.parameters["properties"].as_object().unwrap();
    let keys: Vec<&str> = props.keys().map(String::as_str).collect();
    for key in ["goal", "context", "tasks", "role", "background"] {
        assert!(keys.contains(&key), "{keys:?}");
    }
    assert_eq!(
        flat.parameters["properties"]["tasks"]["items"]["required"],
        json!(["goal"])
    );
    assert_eq!(flat.parameters["required"], json!([]));

    let deep = tool(DelegationSettings {
        max_spawn_depth: 3,
        max_concurrent_children: 5,
        ..DelegationSettings::default()
    })
    .schema();
    assert!(deep.description.contains("up to 5 subagents"));
    assert!(deep.description.contains("up to 2 more level(s) down"));
    let role = deep.parameters["properties"]["role"]["description"]
        .as_str()
        .unwrap();
    assert!(role.contains("Nesting is ON (max_spawn_depth=3)"), "{role}");
    let tasks = deep.parameters["properties"]["tasks"]["description"]
        .as_str()
        .unwrap();
    assert!(tasks.contains("at most 5"), "{tasks}");
}

#[test]
fn tasks_are_read_from_goal_a_list_or_a_json_string() {
    let t = tool(DelegationSettings::default());
    let one = t
        .parse_tasks(&json!({"goal": "g", "context": "c", "role": "orchestrator"}))
        .unwrap();
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].context.as_deref(), Some("c"));
    assert_eq!(one[0].role, Role::Orchestrator);

    let listed = t
        .parse_tasks(&json!({"role": "orchestrator", "tasks": [{"goal": "a"}, {"goal": "b", "role": "leaf"}]}))
        .unwrap();
    assert_eq!(
        listed[0].role,
        Role::Orchestrator,
        "top-level role is the default"
    );
    assert_eq!(listed[1].role, Role::Leaf, "a per-task role wins");

    let from_string = t
        .parse_tasks(&json!({"tasks": "[{\"goal\": \"x\"}]"}))
        .unwrap();
    assert_eq!(from_string[0].goal, "x");
    let bad = t
        .parse_tasks(&json!({"tasks": "{\"goal\": \"x\"}"}))
        .unwrap_err();
    assert_eq!(
        bad,
        "tasks must be a JSON array of task objects; parsed dict instead."
    );
    assert_eq!(
        t.parse_tasks(&json!({"tasks": [{"goal": " "}]}))
            .unwrap_err(),
        "Task 0 is missing a 'goal'."
    );
    assert_eq!(
        t.parse_tasks(&json!({"tasks": ["just text"]})).unwrap_err(),
        "Task 0 must be an object, got str."
    );
    assert_eq!(
        t.parse_tasks(&json!({})).unwrap_err(),
        "Provide either 'goal' (single task) or 'tasks' (batch)."
    );
}

#[test]
fn children_lose_the_blocked_tools_and_orchestrators_go_one_level_deeper() {
    let t = tool(DelegationSettings {
        max_spawn_depth: 2,
        ..DelegationSettings::default()
    });
    let mut parent = Registry::with_builtins();
    parent.register(Arc::new(t.clone()));
    let leaf = t.child_tools(&parent, t.effective_role(Role::Leaf));
    assert!(leaf.get("delegate_task").is_none());
    assert!(leaf.get("terminal").is_some());
    let orch = t.child_tools(&parent, t.effective_role(Role::Orchestrator));
    assert!(orch.get("delegate_task").is_some());
    // The orchestrator's own children are at the floor: always leaves.
    let deeper = DelegateTool {
        depth: 1,
        ..t.clone()
    };
    assert_eq!(deeper.effective_role(Role::Orchestrator), Role::Leaf);
    let off = tool(DelegationSettings {
        max_spawn_depth: 2,
        orchestrator_enabled: false,
        ..DelegationSettings::default()
    });
    assert_eq!(off.effective_role(Role::Orchestrator), Role::Leaf);
}

#[tokio::test]
async fn a_tool_at_the_depth_limit_refuses_with_the_reference_error() {
    let deep = DelegateTool {
        depth: 1,
        ..tool(DelegationSettings::default())
    };
    let ctx = ToolContext::new(std::env::temp_dir(), "s");
    let out = deep.call(json!({"goal": "x"}), &ctx).await.unwrap();
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .starts_with("Delegation depth limit reached (depth=1, max_spawn_depth=1)."),
        "{v}"
    );
}

#[test]
fn long_summaries_keep_head_and_tail() {
    let summary = format!("{}{}", "h".repeat(900), "t".repeat(300));
    let trimmed = run::trim_summary(&summary, 400);
    assert!(trimmed.starts_with(&"h".repeat(300)));
    assert!(trimmed.ends_with(&"t".repeat(100)));
    assert!(trimmed.contains("800 characters of the subagent's summary omitted"));
    assert_eq!(run::trim_summary("short", 400), "short");
    assert_eq!(run::trim_summary(&summary, 0), summary);
}

#[test]
fn the_child_prompt_carries_goal_context_and_workspace() {
    let p = child_system_prompt(&ChildPrompt {
        goal: "Fix the build",
        context: Some("cargo fails in crate x"),
        workspace: Some(std::path::Path::new("/src/app")),
        orchestrator: false,
        depth: 1,
        max_spawn_depth: 1,
    });
    assert!(p.contains("Fix the build"));
    assert!(p.contains("cargo fails in crate x"));
    assert!(p.contains("/src/app"));
    assert!(!p.contains("delegate_task"));
}
