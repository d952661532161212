//! The layered system prompt for a new session, from this process's
//! surroundings (OS, home, working directory, clock).

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use hermes_agent::prompt::{self, PromptInputs};
use hermes_state::{Env, HermesHome};

/// What the session knows when it builds its prompt.
pub struct PromptContext<'a> {
    /// HERMES_HOME (SOUL.md lives there).
    pub home: &'a HermesHome,
    /// The environment, for `HOME`.
    pub env: &'a Env,
    /// The working directory, where context files are looked up.
    pub cwd: &'a Path,
    /// The model name.
    pub model: &'a str,
    /// The provider name.
    pub provider: &'a str,
    /// Names of the tools offered to the model.
    pub tools: Vec<String>,
    /// `--ignore-rules`: no SOUL.md, context files or memory.
    pub ignore_rules: bool,
    /// Hook for the memory store: its frozen, pre-rendered snapshot.
    pub memory_block: Option<String>,
    /// The platform the session runs on (`cli`, `api_server`, `telegram` …).
    pub platform: &'a str,
    /// Why the bundled skills could not be seeded (the caller seeds them,
    /// once per process).
    pub skills_problem: Option<String>,
    /// Installed skills as (name, description), listed when `skill_view` is offered.
    pub skills_index: Vec<(String, String)>,
}

/// Builds the prompt; the second value lists blocked or truncated files and
/// other problems worth a warning.
pub fn build_system_prompt(ctx: PromptContext<'_>) -> (String, Vec<String>) {
    let now_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0);
    // The index is offered only when the model can load what it lists.
    let mut warnings = Vec::new();
    let skills = if ctx.tools.iter().any(|t| t == "skill_view") {
        warnings.extend(ctx.skills_problem.clone());
        ctx.skills_index.clone()
    } else {
        Vec::new()
    };
    let inputs = PromptInputs {
        hermes_home: Some(ctx.home.root().to_path_buf()),
        home_dir: ctx.env.get("HOME").map(Into::into),
        cwd: ctx.cwd.to_path_buf(),
        os: prompt::host_description(std::env::consts::OS, os_release().as_deref()),
        platform: ctx.platform.to_owned(),
        model: ctx.model.to_owned(),
        provider: ctx.provider.to_owned(),
        skills,
        tools: ctx.tools,
        memory_block: ctx.memory_block,
        ignore_rules: ctx.ignore_rules,
        now_unix,
    };
    let built = prompt::build(&inputs);
    warnings.extend(built.warnings);
    (built.text, warnings)
}

/// Installed skills as (name, description), as they are on disk now.
pub fn discover_skills(home: &HermesHome) -> Vec<(String, String)> {
    hermes_state::skills::SkillStore::for_home(home.root())
        .discover()
        .into_iter()
        .map(|s| (s.name, s.description))
        .collect()
}

/// The kernel release on Linux; elsewhere the OS name alone is enough.
fn os_release() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}
