//! The `delegate_task` schema as the model sees it: the reference's parameters,
//! with descriptions that state this user's configured limits.
//!
//! One deliberate difference: the reference (0.19.0) runs delegations in the
//! background and re-injects the result later; ours run synchronously (the
//! parent's tool call waits for every child), so the text says so.

use hermes_protocol::ToolSchema;
use serde_json::json;

use super::settings::DelegationSettings;

/// The full schema for these settings.
pub fn delegate_schema(s: &DelegationSettings) -> ToolSchema {
    ToolSchema {
        name: "delegate_task".into(),
        description: top_level_description(s),
        parameters: json!({
            "type": "object",
            "properties": {
                "goal": {
                    "type": "string",
                    "description": "What the subagent should accomplish. Be specific and self-contained -- the subagent knows nothing about your conversation history."
                },
                "context": {
                    "type": "string",
                    "description": "Background information the subagent needs: file paths, error messages, project structure, constraints. The more specific you are, the better the subagent performs."
                },
                "tasks": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "goal": {"type": "string", "description": "Task goal"},
                            "context": {"type": "string", "description": "Task-specific context"},
                            "role": {
                                "type": "string",
                                "enum": ["leaf", "orchestrator"],
                                "description": "Per-task role override. See top-level 'role' for semantics."
                            }
                        },
                        "required": ["goal"]
                    },
                    "description": tasks_description(s)
                },
                "role": {
                    "type": "string",
                    "enum": ["leaf", "orchestrator"],
                    "description": role_description(s)
                },
                "background": {
                    "type": "boolean",
                    "description": "IGNORED. Delegations run synchronously here: the call returns once every subagent has finished, with their summaries. The parameter remains only for compatibility."
                }
            },
            "required": []
        }),
    }
}

fn nesting_clause(s: &DelegationSettings) -> String {
    let depth = s.max_spawn_depth;
    if depth >= 2 && s.orchestrator_enabled {
        format!(
            "Nested delegation IS enabled for this user (max_spawn_depth={depth}): pass role='orchestrator' on a child to let it spawn its own workers, up to {} additional level(s) deep.",
            depth - 1
        )
    } else if depth >= 2 {
        format!(
            "Nested delegation is DISABLED on this install (delegation.orchestrator_enabled=false), even though max_spawn_depth={depth}. role='orchestrator' is silently forced to 'leaf'."
        )
    } else {
        format!(
            "Nested delegation is OFF for this user (max_spawn_depth={depth}): every child is a leaf and cannot delegate further. Raise delegation.max_spawn_depth in config.yaml to enable nesting."
        )
    }
}

fn top_level_description(s: &DelegationSettings) -> String {
    let max_children = s.max_concurrent_children;
    let max_depth = s.max_spawn_depth;
    format!(
        "Spawn one or more subagents to work on tasks in isolated contexts. \
Each subagent gets its own conversation, terminal session, and toolset. \
Only the final summary is returned -- intermediate tool results never enter your context window.\n\n\
TWO MODES (one of 'goal' or 'tasks' is required):\n\
1. Single task: provide 'goal' (+ optional context and role).\n\
2. Batch (parallel): provide 'tasks' array with up to {max_children} items concurrently for this user \
(configured via delegation.max_concurrent_children in config.yaml). {nesting}\n\n\
BOTH MODES RUN SYNCHRONOUSLY: delegate_task waits until every subagent has finished and returns \
their summaries as this tool's result. A batch runs its subagents concurrently and returns one \
consolidated result after ALL of them finish.\n\n\
WHEN TO USE delegate_task:\n\
- Reasoning-heavy subtasks (debugging, code review, research synthesis)\n\
- Tasks that would flood your context with intermediate data\n\
- Parallel independent workstreams (research A and B simultaneously)\n\n\
WHEN NOT TO USE (use these instead):\n\
- Mechanical multi-step work with no reasoning needed -> use execute_code\n\
- Single tool call -> just call the tool directly\n\
- Tasks needing user interaction -> subagents cannot use clarify\n\n\
IMPORTANT:\n\
- Subagents have NO memory of your conversation. Pass all relevant info (file paths, error messages, constraints) via the 'context' field.\n\
- If the user is writing in a non-English language, or asked for output in a specific language / tone / style, say so in 'context' (e.g. \"respond in Chinese\", \"return output in Japanese\"). Otherwise subagents default to English and their summaries will contaminate your final reply with the wrong language.\n\
- Subagent summaries are SELF-REPORTS, not verified facts. A subagent that claims \"uploaded successfully\" or \"file written\" may be wrong. For operations with external side-effects (HTTP POST/PUT, remote writes, file creation at shared paths, publishing), require the subagent to return a verifiable handle (URL, ID, absolute path, HTTP status) and verify it yourself — fetch the URL, stat the file, read back the content — before telling the user the operation succeeded.\n\
- Leaf subagents (role='leaf', the default) CANNOT call: delegate_task, clarify, memory, send_message, execute_code.\n\
- Orchestrator subagents (role='orchestrator') retain delegate_task so they can spawn their own workers, but still cannot use clarify, memory, send_message, or execute_code. \
Orchestrators are bounded by max_spawn_depth={max_depth} for this user and can be disabled globally via delegation.orchestrator_enabled=false.\n\
- Subagent model is NOT selectable per call: children inherit the parent model.\n\
- Each subagent gets its own terminal session (separate working directory and state).\n\
- Results are always returned as an array, one entry per task.",
        nesting = nesting_clause(s),
    )
}

fn tasks_description(s: &DelegationSettings) -> String {
    format!(
        "Batch mode: tasks to run in parallel (up to {} for this user, set via delegation.max_concurrent_children). Each gets its own subagent with isolated context and terminal session. When provided, top-level goal/context/role are ignored.",
        s.max_concurrent_children
    )
}

fn role_description(s: &DelegationSettings) -> String {
    let depth = s.max_spawn_depth;
    let note = if depth >= 2 && s.orchestrator_enabled {
        format!(
            "Nesting IS enabled for this user (max_spawn_depth={depth}): orchestrator children can themselves delegate up to {} more level(s) deep.",
            depth - 1
        )
    } else if depth >= 2 {
        "Nesting is currently disabled (delegation.orchestrator_enabled=false); 'orchestrator' is silently forced to 'leaf'.".to_owned()
    } else {
        format!(
            "Nesting is OFF for this user (max_spawn_depth={depth}); 'orchestrator' is silently forced to 'leaf'. Raise delegation.max_spawn_depth in config.yaml to enable."
        )
    };
    format!(
        "Role of the child agent. 'leaf' (default) = focused worker, cannot delegate further. 'orchestrator' = can use delegate_task to spawn its own workers. {note}"
    )
}
