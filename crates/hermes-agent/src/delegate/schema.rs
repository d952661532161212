//! The `delegate_task` schema as the model sees it: the reference's parameters
//! (names, types, enums, required), described in our words with this user's limits.
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
                    "description": "What the subagent must achieve, stated so it stands on its own: the subagent has not seen this conversation."
                },
                "context": {
                    "type": "string",
                    "description": "Everything the subagent needs to know to start: paths, error text, how the project is laid out, constraints. Specific context gets better work."
                },
                "tasks": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "goal": {"type": "string", "description": "What this subagent must achieve"},
                            "context": {
                                "type": "string",
                                "description": "What this subagent needs to know"
                            },
                            "role": {
                                "type": "string",
                                "enum": ["leaf", "orchestrator"],
                                "description": "This task's role, instead of the top-level 'role'."
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
                    "description": "Ignored: delegations always run synchronously here, and the call returns when every subagent has finished. Kept for compatibility."
                }
            },
            "required": []
        }),
    }
}

/// What nesting this user allows, in one sentence or two.
fn nesting(s: &DelegationSettings) -> String {
    let depth = s.max_spawn_depth;
    if depth >= 2 && s.orchestrator_enabled {
        format!(
            "Nesting is ON (max_spawn_depth={depth}): a child given role='orchestrator' may delegate in turn, up to {} more level(s) down.",
            depth - 1
        )
    } else if depth >= 2 {
        format!(
            "Nesting is OFF: delegation.orchestrator_enabled is false (max_spawn_depth={depth}), so role='orchestrator' is treated as 'leaf'."
        )
    } else {
        format!(
            "Nesting is OFF (max_spawn_depth={depth}): every child is a leaf, and role='orchestrator' is treated as 'leaf'. delegation.max_spawn_depth in config.yaml raises the limit."
        )
    }
}

fn top_level_description(s: &DelegationSettings) -> String {
    format!(
        "Hands work to subagents: fresh agents, each with its own conversation, terminal and \
tools, that work while you wait and report back. Only each subagent's final summary comes back \
to you; their tool calls and outputs stay out of your context.\n\n\
Give either 'goal' (one subagent; add 'context' and 'role' as needed) or 'tasks' (a batch of \
up to {max} subagents that run at the same time; set by delegation.max_concurrent_children). \
{nesting}\n\n\
The call is synchronous: it returns once every subagent has finished, with one result per \
task, in order (status, summary, API calls, duration, the tools each one used).\n\n\
Good uses: work that needs reasoning (debugging, review, research), work whose intermediate \
output would flood your context, and independent pieces that can run side by side. Poor uses: \
a single tool call (make it yourself), mechanical multi-step work (execute_code does it in one \
script), anything that needs the user's answers (subagents cannot ask).\n\n\
Keep in mind:\n\
- Subagents know nothing of this conversation: put paths, errors, constraints and the wanted \
output in 'context', including the language to answer in when it is not English.\n\
- A summary is the subagent's own claim. Before telling the user that something was written, \
sent or published, check it yourself (read the file back, fetch the URL).\n\
- Leaf subagents cannot use delegate_task, clarify, memory, send_message, execute_code or \
cronjob. Orchestrators keep delegate_task, within max_spawn_depth={depth}; \
delegation.orchestrator_enabled=false turns them off.\n\
- Subagents use your model unless config.yaml pins one (delegation.model / delegation.provider); it is not chosen per call.",
        max = s.max_concurrent_children,
        depth = s.max_spawn_depth,
        nesting = nesting(s),
    )
}

fn tasks_description(s: &DelegationSettings) -> String {
    format!(
        "A batch: one subagent per task, all running at once (at most {}, set by delegation.max_concurrent_children). When given, the top-level goal, context and role are not used.",
        s.max_concurrent_children
    )
}

fn role_description(s: &DelegationSettings) -> String {
    format!(
        "'leaf' (the default): a worker that cannot delegate. 'orchestrator': may split its work with delegate_task. {}",
        nesting(s)
    )
}
