//! The layered system prompt, built once when a session starts and stored with
//! it, so every turn (and every resume) sends the same bytes and the provider's
//! prompt cache stays warm.
//!
//! Layers, in order: identity (SOUL.md or the default), platform hint,
//! environment, tool-use enforcement and model-family notes, tool guidance
//! (memory, session_search, skills), skills index, project context files, the
//! memory snapshot, and a closing line with the date and model.
//!
//! Every input is passed in (no environment, clock or global state read here)
//! so the output is deterministic for tests.

pub mod context_files;
mod env;
pub mod guidance;

use std::path::PathBuf;

pub use env::{conversation_date, host_description};

/// Everything the prompt depends on.
#[derive(Debug, Clone, Default)]
pub struct PromptInputs {
    /// HERMES_HOME, where SOUL.md lives; `None` skips SOUL.md.
    pub hermes_home: Option<PathBuf>,
    /// The user's home directory, for the environment block.
    pub home_dir: Option<PathBuf>,
    /// The working directory: context files are looked up from here.
    pub cwd: PathBuf,
    /// The host, e.g. `Linux (6.8.0)`; see [`host_description`].
    pub os: String,
    /// The surface the user talks through, e.g. `cli`.
    pub platform: String,
    /// The model name; picks tool-use enforcement and family notes.
    pub model: String,
    /// The provider name, shown in the closing line.
    pub provider: String,
    /// Names of the tools offered to the model.
    pub tools: Vec<String>,
    /// Installed skills as (name, description); empty means no index.
    pub skills: Vec<(String, String)>,
    /// The memory snapshot, already rendered by the memory store.
    pub memory_block: Option<String>,
    /// `--ignore-rules`: no SOUL.md, no context files, no memory block.
    pub ignore_rules: bool,
    /// Seconds since the Unix epoch (UTC) when the session starts.
    pub now_unix: i64,
}

/// The built prompt plus what the user should hear about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SystemPrompt {
    /// The system prompt text.
    pub text: String,
    /// Blocked or truncated files, one line each.
    pub warnings: Vec<String>,
}

/// Builds the system prompt from `inputs`.
pub fn build(inputs: &PromptInputs) -> SystemPrompt {
    let mut parts: Vec<String> = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    let has_tool = |name: &str| inputs.tools.iter().any(|t| t == name);

    // 1. Identity. A blocked SOUL.md still leaves the agent an identity: the
    // default one, followed by the notice of what was refused.
    let soul = match (&inputs.hermes_home, inputs.ignore_rules) {
        (Some(home), false) => context_files::load_soul(home),
        _ => None,
    };
    match soul {
        Some(soul) => {
            warnings.extend(soul.warnings);
            if context_files::is_blocked(&soul.text) {
                parts.push(guidance::DEFAULT_IDENTITY.to_owned());
            }
            parts.push(soul.text);
        }
        None => parts.push(guidance::DEFAULT_IDENTITY.to_owned()),
    }

    // 2–3. Platform and environment.
    if let Some(hint) = guidance::platform_hint(&inputs.platform) {
        parts.push(hint.to_owned());
    }
    parts.push(env::environment_block(inputs));

    // 4–5. Tool-use enforcement for the families that need it.
    if !inputs.tools.is_empty() {
        let model = inputs.model.to_ascii_lowercase();
        let family = |names: &[&str]| names.iter().any(|n| model.contains(n));
        if family(&guidance::TOOL_USE_ENFORCEMENT_MODELS) {
            parts.push(guidance::TOOL_USE_ENFORCEMENT.to_owned());
            if family(&["gemini", "gemma"]) {
                parts.push(guidance::GOOGLE_OPERATIONAL.to_owned());
            }
            if family(&["gpt", "codex", "grok"]) {
                parts.push(guidance::OPENAI_EXECUTION.to_owned());
            }
        }
    }

    // 6. Guidance for the tools that are actually offered.
    let tool_guidance: Vec<&str> = [
        ("memory", guidance::MEMORY_GUIDANCE),
        ("session_search", guidance::SESSION_SEARCH_GUIDANCE),
        ("skill_manage", guidance::SKILLS_GUIDANCE),
    ]
    .into_iter()
    .filter(|(tool, _)| has_tool(tool))
    .map(|(_, text)| text)
    .collect();
    if !tool_guidance.is_empty() {
        parts.push(tool_guidance.join("\n\n"));
    }

    // 7. Skills index.
    if let Some(index) = skills_index(&inputs.skills) {
        parts.push(index);
    }

    // 8. Project context files.
    if !inputs.ignore_rules
        && let Some(ctx) = context_files::load_project_context(&inputs.cwd)
    {
        warnings.extend(ctx.warnings);
        parts.push(format!(
            "{}\n\n{}",
            guidance::PROJECT_CONTEXT_INTRO,
            ctx.text
        ));
    }

    // 9. Memory snapshot, frozen for the session like the rest.
    if !inputs.ignore_rules
        && let Some(memory) = inputs.memory_block.as_deref().map(str::trim)
        && !memory.is_empty()
    {
        parts.push(memory.to_owned());
    }

    parts.push(closing_line(inputs));

    let text = parts
        .iter()
        .map(|p| p.trim())
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    SystemPrompt { text, warnings }
}

/// The skills index, names sorted and de-duplicated; `None` without skills.
fn skills_index(skills: &[(String, String)]) -> Option<String> {
    if skills.is_empty() {
        return None;
    }
    let mut sorted: Vec<&(String, String)> = skills.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    sorted.dedup_by(|a, b| a.0 == b.0);
    let lines: Vec<String> = sorted
        .iter()
        .map(|(name, desc)| match desc.trim() {
            "" => format!("  - {name}"),
            d => format!("  - {name}: {d}"),
        })
        .collect();
    Some(format!(
        "{}\n\n<available_skills>\n{}\n</available_skills>\n\n{}",
        guidance::SKILLS_INDEX_INTRO,
        lines.join("\n"),
        guidance::SKILLS_INDEX_OUTRO
    ))
}

/// Date only (no time of day), so the prompt stays byte-identical all day.
fn closing_line(inputs: &PromptInputs) -> String {
    let mut line = format!(
        "Conversation started: {}",
        conversation_date(inputs.now_unix)
    );
    if !inputs.model.is_empty() {
        line.push_str(&format!("\nModel: {}", inputs.model));
    }
    if !inputs.provider.is_empty() {
        line.push_str(&format!("\nProvider: {}", inputs.provider));
    }
    line
}

#[cfg(test)]
mod tests;
