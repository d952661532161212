//! The `delegation:` section of config.yaml, with the reference's defaults and floors.

use hermes_state::settings::DelegationSection;
use hermes_state::settings::lenient::count;

/// How subagents are run.
#[derive(Debug, Clone, PartialEq)]
pub struct DelegationSettings {
    /// API calls each child may make (`delegation.max_iterations`, default 50).
    pub max_iterations: u32,
    /// Children per batch (`delegation.max_concurrent_children`, default 3, floor 1).
    pub max_concurrent_children: usize,
    /// How deep delegation may nest (`delegation.max_spawn_depth`, default 1, floor 1, at most 3).
    pub max_spawn_depth: u32,
    /// Whether `role: orchestrator` is honoured (`delegation.orchestrator_enabled`).
    pub orchestrator_enabled: bool,
    /// Hard cap on one summary's characters (`delegation.max_summary_chars`; 0 = none).
    pub max_summary_chars: usize,
    /// Wall-clock cap per child in seconds (`delegation.child_timeout_seconds`; 0 = none, floor 30).
    pub child_timeout_seconds: u64,
    /// Children run dangerous commands without asking (`delegation.subagent_auto_approve`);
    /// by default they are refused, since nobody can answer a child's prompt.
    pub subagent_auto_approve: bool,
}

/// The deepest nesting we allow, whatever the config says: each level multiplies cost.
pub const MAX_SPAWN_DEPTH_CEILING: u32 = 3;

impl Default for DelegationSettings {
    fn default() -> Self {
        Self {
            max_iterations: 50,
            max_concurrent_children: 3,
            max_spawn_depth: 1,
            orchestrator_enabled: true,
            max_summary_chars: 24_000,
            child_timeout_seconds: 0,
            subagent_auto_approve: false,
        }
    }
}

impl DelegationSettings {
    /// Applies the `delegation:` section over the defaults, with the reference's floors.
    pub fn from_section(section: &DelegationSection) -> Self {
        let mut s = Self::default();
        if let Some(v) = count(section.max_iterations) {
            s.max_iterations = u32::try_from(v).unwrap_or(u32::MAX).max(1);
        }
        if let Some(v) = count(section.max_concurrent_children) {
            s.max_concurrent_children = usize::try_from(v).unwrap_or(usize::MAX).max(1);
        }
        if let Some(v) = count(section.max_spawn_depth) {
            s.max_spawn_depth = u32::try_from(v)
                .unwrap_or(u32::MAX)
                .clamp(1, MAX_SPAWN_DEPTH_CEILING);
        }
        if let Some(v) = count(section.max_summary_chars) {
            s.max_summary_chars = usize::try_from(v).unwrap_or(usize::MAX);
        }
        if let Some(v) = count(section.child_timeout_seconds) {
            s.child_timeout_seconds = if v == 0 { 0 } else { v.max(30) };
        }
        if let Some(on) = section.orchestrator_enabled {
            s.orchestrator_enabled = on;
        }
        if let Some(on) = section.subagent_auto_approve {
            s.subagent_auto_approve = on;
        }
        s
    }
}
