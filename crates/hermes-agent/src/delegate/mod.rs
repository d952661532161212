//! `delegate_task`: fresh child agents work on focused tasks while the parent
//! waits; only their summaries come back. Children run concurrently within a
//! batch, get the parent's tools minus the blocked ones, are stored as
//! sessions whose `parent_session_id` is the parent's, and stop when the
//! parent is interrupted.

mod prompt;
mod run;
mod schema;
mod settings;

use std::path::PathBuf;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use hermes_protocol::ToolSchema;
use hermes_tools::{Homes, ParallelClass, Registry, Tool, ToolContext, ToolResult, error_json};
use serde_json::Value;

pub use prompt::{ChildPrompt, child_system_prompt};
pub use schema::delegate_schema;
pub use settings::{DelegationSettings, MAX_SPAWN_DEPTH_CEILING};

use crate::Agent;

/// Tools a child never gets (the reference's list): no recursion unless it
/// orchestrates, no questions to the user, no shared-memory writes, no
/// messages to other platforms, no scripts, no scheduling.
pub const BLOCKED_TOOLS: &[&str] = &[
    "delegate_task",
    "clarify",
    "memory",
    "send_message",
    "execute_code",
    "cronjob",
];

/// What a front-end needs to build one child agent.
#[derive(Debug, Clone)]
pub struct ChildSpec {
    /// The child's system prompt (its task).
    pub system_prompt: String,
    /// The tools it may use.
    pub tools: Registry,
    /// Its approval policy: the parent's, with nobody to ask.
    pub approvals: Arc<hermes_tools::approval::ApprovalGate>,
    /// The delegating session, to link the child's stored session to.
    pub parent_session_id: String,
    /// Its iteration budget (`delegation.max_iterations`).
    pub max_turns: u32,
    /// Its working directory (the parent's).
    pub cwd: PathBuf,
    /// Home directories for its tools.
    pub homes: Homes,
    /// Variables its tools' processes never inherit (the parent's list).
    pub hidden_env: Arc<[String]>,
    /// Where the child's commands and file tools run (the parent's environment).
    pub environment: Arc<dyn hermes_env::Environment>,
}

/// Builds child agents. The front-end implements it: it owns the providers,
/// the session store and the settings a fresh agent needs.
pub trait SubagentFactory: Send + Sync {
    /// A new agent with an empty conversation whose system prompt is
    /// `spec.system_prompt`, persisting to a new session linked to the parent.
    fn build(&self, spec: ChildSpec) -> Result<Agent, String>;
}

/// The `delegate_task` tool of an agent at some depth (0 = the user's agent).
#[derive(Clone)]
pub struct DelegateTool {
    settings: DelegationSettings,
    factory: Arc<dyn SubagentFactory>,
    depth: u32,
}

impl std::fmt::Debug for DelegateTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DelegateTool")
            .field("settings", &self.settings)
            .field("depth", &self.depth)
            .finish()
    }
}

/// A child's role after the limits are applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Leaf,
    Orchestrator,
}

/// One task as the model asked for it.
#[derive(Debug, Clone)]
struct TaskSpec {
    goal: String,
    context: Option<String>,
    role: Role,
}

impl DelegateTool {
    /// The tool for the user's own agent.
    pub fn new(settings: DelegationSettings, factory: Arc<dyn SubagentFactory>) -> Self {
        Self {
            settings,
            factory,
            depth: 0,
        }
    }

    /// The settings it enforces.
    pub fn settings(&self) -> &DelegationSettings {
        &self.settings
    }

    fn parse_tasks(&self, args: &Value) -> Result<Vec<TaskSpec>, String> {
        const NEED_ONE: &str = "Provide either 'goal' (single task) or 'tasks' (batch).";
        let top_role = parse_role(args.get("role"));
        let tasks = match args.get("tasks") {
            Some(Value::String(raw)) => {
                let raw = raw.trim();
                if raw.is_empty() {
                    return Err(NEED_ONE.into());
                }
                match serde_json::from_str::<Value>(raw) {
                    Ok(Value::Array(items)) => Some(items),
                    Ok(other) => {
                        return Err(format!(
                            "tasks must be a JSON array of task objects; parsed {} instead.",
                            json_type(&other)
                        ));
                    }
                    Err(e) => {
                        return Err(format!(
                            "tasks must be a JSON array of task objects; received a string that could not be parsed as JSON ({e})."
                        ));
                    }
                }
            }
            Some(Value::Array(items)) if !items.is_empty() => Some(items.clone()),
            _ => None,
        };
        let Some(items) = tasks else {
            let goal = args.get("goal").and_then(Value::as_str).unwrap_or("");
            if goal.trim().is_empty() {
                return Err(NEED_ONE.into());
            }
            return Ok(vec![TaskSpec {
                goal: goal.to_owned(),
                context: args
                    .get("context")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                role: top_role,
            }]);
        };
        let max = self.settings.max_concurrent_children;
        if items.len() > max {
            return Err(format!(
                "Too many tasks: {} provided, but max_concurrent_children is {max}. Either reduce the task count, split into multiple delegate_task calls, or increase delegation.max_concurrent_children in config.yaml.",
                items.len()
            ));
        }
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let Value::Object(map) = item else {
                    return Err(format!(
                        "Task {i} must be an object, got {}.",
                        json_type(item)
                    ));
                };
                let goal = map.get("goal").and_then(Value::as_str).unwrap_or("");
                if goal.trim().is_empty() {
                    return Err(format!("Task {i} is missing a 'goal'."));
                }
                let role = match map.get("role") {
                    Some(r) if !r.is_null() => parse_role(Some(r)),
                    _ => top_role,
                };
                Ok(TaskSpec {
                    goal: goal.to_owned(),
                    context: map
                        .get("context")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                    role,
                })
            })
            .collect()
    }

    /// The role a child really gets: orchestration needs the switch on and
    /// room below the child in the depth limit.
    fn effective_role(&self, asked: Role) -> Role {
        let child_depth = self.depth + 1;
        if asked == Role::Orchestrator
            && self.settings.orchestrator_enabled
            && child_depth < self.settings.max_spawn_depth
        {
            Role::Orchestrator
        } else {
            Role::Leaf
        }
    }

    /// The child's tools: what the parent offers this turn, minus the blocked
    /// ones; an orchestrator gets a `delegate_task` one level deeper.
    fn child_tools(&self, parent: &Registry, role: Role) -> Registry {
        let mut tools = parent.clone();
        for name in BLOCKED_TOOLS {
            tools.unregister(name);
        }
        if role == Role::Orchestrator {
            tools.register(Arc::new(Self {
                settings: self.settings.clone(),
                factory: self.factory.clone(),
                depth: self.depth + 1,
            }));
        }
        tools
    }

    async fn delegate(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        if self.depth >= self.settings.max_spawn_depth {
            return Ok(error_json(&format!(
                "Delegation depth limit reached (depth={}, max_spawn_depth={}). Raise delegation.max_spawn_depth in config.yaml if deeper nesting is required (no hard ceiling, but each level multiplies API cost).",
                self.depth, self.settings.max_spawn_depth
            )));
        }
        let tasks = match self.parse_tasks(&args) {
            Ok(tasks) => tasks,
            Err(message) => return Ok(error_json(&message)),
        };
        let parent_tools = ctx.registry.clone().unwrap_or_default();
        let workspace = ctx.cwd.is_absolute().then_some(ctx.cwd.as_path());
        let mut children = Vec::with_capacity(tasks.len());
        for task in &tasks {
            let role = self.effective_role(task.role);
            let system_prompt = child_system_prompt(&ChildPrompt {
                goal: &task.goal,
                context: task.context.as_deref(),
                workspace,
                orchestrator: role == Role::Orchestrator,
                depth: self.depth + 1,
                max_spawn_depth: self.settings.max_spawn_depth,
            });
            // Nobody can answer a child's approval prompt: it is refused (or
            // allowed under --yolo, the allowlists or subagent_auto_approve), never asked.
            let gate = ctx.approvals.for_subagent();
            if self.settings.subagent_auto_approve {
                gate.set_mode(hermes_tools::approval::ApprovalMode::Off);
            }
            let spec = ChildSpec {
                system_prompt,
                approvals: Arc::new(gate),
                tools: self.child_tools(&parent_tools, role),
                parent_session_id: ctx.session_id.clone(),
                max_turns: self.settings.max_iterations,
                cwd: ctx.cwd.clone(),
                homes: ctx.homes.clone(),
                hidden_env: ctx.hidden_env.clone(),
                environment: ctx.env.clone(),
            };
            let agent = match self.factory.build(spec) {
                Ok(agent) => agent,
                Err(e) => return Ok(error_json(&format!("Could not start a subagent: {e}"))),
            };
            children.push(run::Child {
                goal: task.goal.clone(),
                agent,
            });
        }
        let report = run::run_children(children, ctx, &self.settings).await;
        Ok(report.to_string())
    }
}

fn parse_role(value: Option<&Value>) -> Role {
    match value
        .and_then(Value::as_str)
        .map(|r| r.trim().to_ascii_lowercase())
    {
        Some(r) if r == "orchestrator" => Role::Orchestrator,
        _ => Role::Leaf,
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

impl Tool for DelegateTool {
    fn name(&self) -> &str {
        "delegate_task"
    }

    fn toolset(&self) -> &str {
        "delegation"
    }

    fn emoji(&self) -> &str {
        "🔀"
    }

    fn schema(&self) -> ToolSchema {
        delegate_schema(&self.settings)
    }

    fn parallel_class(&self) -> ParallelClass {
        ParallelClass::Exclusive
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(self.delegate(args, ctx))
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
