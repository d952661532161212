//! The system prompt a child agent starts with: its task, what it was told,
//! where it works and how to report back. Written for us, in our own words.

use std::path::Path;

/// What the child's prompt is built from.
#[derive(Debug, Clone, Copy)]
pub struct ChildPrompt<'a> {
    /// The task.
    pub goal: &'a str,
    /// Background the parent passed along, if any.
    pub context: Option<&'a str>,
    /// The directory relative paths resolve against.
    pub workspace: Option<&'a Path>,
    /// Whether this child may delegate in turn.
    pub orchestrator: bool,
    /// This child's depth (1 for a direct child of the user's agent).
    pub depth: u32,
    /// The configured `delegation.max_spawn_depth`.
    pub max_spawn_depth: u32,
}

/// Renders the prompt.
pub fn child_system_prompt(p: &ChildPrompt<'_>) -> String {
    let mut out = String::from(
        "You are a subagent: another agent handed you one task and is waiting for your report.\n\n",
    );
    out.push_str("TASK:\n");
    out.push_str(p.goal.trim());
    out.push('\n');
    if let Some(context) = p.context.map(str::trim).filter(|c| !c.is_empty()) {
        out.push_str("\nWHAT YOU WERE TOLD:\n");
        out.push_str(context);
        out.push('\n');
    }
    if let Some(dir) = p.workspace {
        out.push_str(&format!(
            "\nWORKING DIRECTORY:\n{}\nRelative paths and shell commands start here; use this path, not a guessed one, unless the task names another.\n",
            dir.display()
        ));
    }
    out.push_str(
        "\nYou have no access to the conversation that led here: if something is missing, find it \
with your tools rather than assuming. Do the work with the tools you have, then reply with a short \
report — it is all the other agent will see:\n\
- the outcome, first\n\
- what you found or changed (name every file you created or modified)\n\
- anything that failed or is still open\n\
Prefer bullet points; do not narrate every step.\n",
    );
    if p.orchestrator {
        let next = p.depth + 1;
        let children = if next >= p.max_spawn_depth {
            "Your own subagents will be leaves: they cannot delegate further."
        } else {
            "Your own subagents may be orchestrators too if you pass role='orchestrator'; the default is 'leaf'."
        };
        out.push_str(&format!(
            "\nYou may split this task with delegate_task when it breaks into two or more \
independent parts, or when a part would flood your context with intermediate output. Do simple \
steps yourself, and never hand your whole task to a single subagent. You combine their reports \
into yours. You are at depth {} of at most {}. {children}\n",
            p.depth, p.max_spawn_depth
        ));
    }
    out
}
