//! Typed views of the `config.yaml` sections the runtime reads. Every field is
//! optional and read leniently (see [`lenient`]): a missing or malformed value is
//! `None`/empty and the consumer applies the reference's default, so one bad key
//! never stops a session. Keys not listed here stay in [`crate::Config::raw`].

pub mod lenient;

use serde::Deserialize;
use serde_json::{Map, Value};

/// Deserializes `tree[key]` into a section; absent or not a mapping gives the default.
pub(crate) fn section<T: for<'de> Deserialize<'de> + Default>(tree: &Value, key: &str) -> T {
    match tree.get(key) {
        Some(v @ Value::Object(_)) => serde_json::from_value(v.clone()).unwrap_or_default(),
        _ => T::default(),
    }
}

/// `delegation:` — how `delegate_task` runs subagents.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct DelegationSection {
    /// API calls per child.
    #[serde(deserialize_with = "lenient::number")]
    pub max_iterations: Option<f64>,
    /// Children per batch.
    #[serde(deserialize_with = "lenient::number")]
    pub max_concurrent_children: Option<f64>,
    /// Nesting depth.
    #[serde(deserialize_with = "lenient::number")]
    pub max_spawn_depth: Option<f64>,
    /// Whether `role: orchestrator` is honoured.
    #[serde(deserialize_with = "lenient::flag")]
    pub orchestrator_enabled: Option<bool>,
    /// Cap on one summary's characters.
    #[serde(deserialize_with = "lenient::number")]
    pub max_summary_chars: Option<f64>,
    /// Wall-clock cap per child, seconds.
    #[serde(deserialize_with = "lenient::number")]
    pub child_timeout_seconds: Option<f64>,
    /// Children may run dangerous commands without asking.
    #[serde(deserialize_with = "lenient::flag")]
    pub subagent_auto_approve: Option<bool>,
    /// Model the children use.
    #[serde(deserialize_with = "lenient::text")]
    pub model: Option<String>,
    /// Provider the children use (resolved like `--provider`).
    #[serde(deserialize_with = "lenient::text")]
    pub provider: Option<String>,
    /// A direct OpenAI-compatible endpoint for the children.
    #[serde(deserialize_with = "lenient::text")]
    pub base_url: Option<String>,
    /// Its key.
    #[serde(deserialize_with = "lenient::text")]
    pub api_key: Option<String>,
    /// Its wire protocol.
    #[serde(deserialize_with = "lenient::text")]
    pub api_mode: Option<String>,
}

/// `code_execution:` — the `execute_code` sandbox.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct CodeExecutionSection {
    /// Seconds before a script is killed.
    #[serde(deserialize_with = "lenient::number")]
    pub timeout: Option<f64>,
    /// Tool calls one script may make.
    #[serde(deserialize_with = "lenient::number")]
    pub max_tool_calls: Option<f64>,
    /// `project` or `strict`.
    #[serde(deserialize_with = "lenient::text")]
    pub mode: Option<String>,
}

/// `compression:` — when the conversation is summarised.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct CompressionSection {
    /// Whether automatic compression runs.
    #[serde(deserialize_with = "lenient::flag")]
    pub enabled: Option<bool>,
    /// Share of the window at which it triggers.
    #[serde(deserialize_with = "lenient::number")]
    pub threshold: Option<f64>,
    /// Share of the threshold the kept tail may use.
    #[serde(deserialize_with = "lenient::number")]
    pub target_ratio: Option<f64>,
    /// Messages kept verbatim at the start.
    #[serde(deserialize_with = "lenient::number")]
    pub protect_first_n: Option<f64>,
}

/// One task of `auxiliary:` (`compression`, later `vision`, `web_extract` …):
/// which model does side work.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct AuxiliaryTask {
    /// Provider id, or `auto` for the main one.
    #[serde(deserialize_with = "lenient::text")]
    pub provider: Option<String>,
    /// Model id.
    #[serde(deserialize_with = "lenient::text")]
    pub model: Option<String>,
    /// A direct endpoint.
    #[serde(deserialize_with = "lenient::text")]
    pub base_url: Option<String>,
    /// Its key.
    #[serde(deserialize_with = "lenient::text")]
    pub api_key: Option<String>,
}

impl AuxiliaryTask {
    /// Whether nothing is set (the main model does the work).
    pub fn is_unset(&self) -> bool {
        let provider = self
            .provider
            .as_deref()
            .filter(|p| !p.eq_ignore_ascii_case("auto"));
        provider.is_none() && self.model.is_none() && self.base_url.is_none()
    }
}

/// `auxiliary:`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct AuxiliarySection {
    /// The model that writes compression summaries.
    #[serde(deserialize_with = "task")]
    pub compression: AuxiliaryTask,
    /// The model that titles new sessions.
    #[serde(deserialize_with = "task")]
    pub title_generation: AuxiliaryTask,
    /// The model that looks at images for `vision_analyze`.
    #[serde(deserialize_with = "task")]
    pub vision: AuxiliaryTask,
}

fn task<'de, D: serde::Deserializer<'de>>(d: D) -> Result<AuxiliaryTask, D::Error> {
    Ok(match Value::deserialize(d)? {
        v @ Value::Object(_) => serde_json::from_value(v).unwrap_or_default(),
        _ => AuxiliaryTask::default(),
    })
}

/// `approvals:` — dangerous-command policy.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ApprovalsSection {
    /// `manual`, `smart` or `off` (YAML `false` reads as `off`).
    #[serde(deserialize_with = "approval_mode")]
    pub mode: Option<String>,
    /// Seconds a person has to answer.
    #[serde(deserialize_with = "lenient::number")]
    pub timeout: Option<f64>,
    /// Globs always refused, even with `--yolo`.
    #[serde(deserialize_with = "lenient::strings")]
    pub deny: Vec<String>,
}

fn approval_mode<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) => Some(s.trim().to_ascii_lowercase()),
        Value::Bool(false) => Some("off".into()),
        _ => None,
    })
}

/// One group of guardrail thresholds (`warn_after:` / `hard_stop_after:`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct GuardrailCounts {
    /// Same tool and arguments failing.
    #[serde(deserialize_with = "lenient::number")]
    pub exact_failure: Option<f64>,
    /// Same tool failing with any arguments.
    #[serde(deserialize_with = "lenient::number")]
    pub same_tool_failure: Option<f64>,
    /// Same read-only call returning the same result.
    #[serde(deserialize_with = "lenient::number")]
    pub idempotent_no_progress: Option<f64>,
}

/// `tool_loop_guardrails:` — nested groups, or the flat keys older configs use.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct GuardrailsSection {
    /// Append warnings to tool results.
    #[serde(deserialize_with = "lenient::flag")]
    pub warnings_enabled: Option<bool>,
    /// Block or halt at the hard-stop thresholds.
    #[serde(deserialize_with = "lenient::flag")]
    pub hard_stop_enabled: Option<bool>,
    /// Warning thresholds.
    #[serde(deserialize_with = "counts")]
    pub warn_after: GuardrailCounts,
    /// Hard-stop thresholds.
    #[serde(deserialize_with = "counts")]
    pub hard_stop_after: GuardrailCounts,
    /// Flat form of `warn_after.exact_failure`.
    #[serde(deserialize_with = "lenient::number")]
    pub exact_failure_warn_after: Option<f64>,
    /// Flat form of `warn_after.same_tool_failure`.
    #[serde(deserialize_with = "lenient::number")]
    pub same_tool_failure_warn_after: Option<f64>,
    /// Flat form of `warn_after.idempotent_no_progress`.
    #[serde(deserialize_with = "lenient::number")]
    pub no_progress_warn_after: Option<f64>,
    /// Flat form of `hard_stop_after.exact_failure`.
    #[serde(deserialize_with = "lenient::number")]
    pub exact_failure_block_after: Option<f64>,
    /// Flat form of `hard_stop_after.same_tool_failure`.
    #[serde(deserialize_with = "lenient::number")]
    pub same_tool_failure_halt_after: Option<f64>,
    /// Flat form of `hard_stop_after.idempotent_no_progress`.
    #[serde(deserialize_with = "lenient::number")]
    pub no_progress_block_after: Option<f64>,
}

fn counts<'de, D: serde::Deserializer<'de>>(d: D) -> Result<GuardrailCounts, D::Error> {
    Ok(match Value::deserialize(d)? {
        v @ Value::Object(_) => serde_json::from_value(v).unwrap_or_default(),
        _ => GuardrailCounts::default(),
    })
}

/// `memory:` — the persistent memory files.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct MemorySection {
    /// MEMORY.md in the prompt and the tool.
    #[serde(deserialize_with = "lenient::flag")]
    pub memory_enabled: Option<bool>,
    /// USER.md in the prompt and the tool.
    #[serde(deserialize_with = "lenient::flag")]
    pub user_profile_enabled: Option<bool>,
    /// MEMORY.md's character budget.
    #[serde(deserialize_with = "lenient::number")]
    pub memory_char_limit: Option<f64>,
    /// USER.md's character budget.
    #[serde(deserialize_with = "lenient::number")]
    pub user_char_limit: Option<f64>,
}

/// `logging:` — `logs/agent.log` and `errors.log`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct LoggingSection {
    /// `DEBUG`, `INFO`, `WARNING`, `ERROR`.
    #[serde(deserialize_with = "lenient::text")]
    pub level: Option<String>,
    /// Size at which a log rotates, MiB.
    #[serde(deserialize_with = "lenient::number")]
    pub max_size_mb: Option<f64>,
    /// Rotated files kept.
    #[serde(deserialize_with = "lenient::number")]
    pub backup_count: Option<f64>,
}

/// A section with only a `timeout` in seconds (`clarify:`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct TimeoutSection {
    /// Seconds.
    #[serde(deserialize_with = "lenient::number")]
    pub timeout: Option<f64>,
}

/// `security:` and the legacy `browser:` flag for private URLs.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct UrlSection {
    /// Permit private addresses in URL tools.
    #[serde(deserialize_with = "lenient::flag")]
    pub allow_private_urls: Option<bool>,
}

/// `prompt_caching:`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct PromptCachingSection {
    /// `5m` or `1h`.
    #[serde(deserialize_with = "lenient::text")]
    pub cache_ttl: Option<String>,
}

/// `bedrock:`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct BedrockSection {
    /// AWS region.
    #[serde(deserialize_with = "lenient::text")]
    pub region: Option<String>,
}

/// `local:` — the embedded model.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct LocalSection {
    /// Inference threads.
    #[serde(deserialize_with = "lenient::number")]
    pub threads: Option<f64>,
    /// Keep the prompt's KV state on disk between runs (default on).
    #[serde(deserialize_with = "lenient::flag")]
    pub prompt_cache: Option<bool>,
}

/// Every typed section, read once when the configuration loads.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sections {
    /// `delegation:`.
    pub delegation: DelegationSection,
    /// `code_execution:`.
    pub code_execution: CodeExecutionSection,
    /// `compression:`.
    pub compression: CompressionSection,
    /// `auxiliary:`.
    pub auxiliary: AuxiliarySection,
    /// `approvals:`.
    pub approvals: ApprovalsSection,
    /// `command_allowlist:` (reasons or command globs approved for good).
    pub command_allowlist: Vec<String>,
    /// `tool_loop_guardrails:`.
    pub tool_loop_guardrails: GuardrailsSection,
    /// `memory:`.
    pub memory: MemorySection,
    /// `logging:`.
    pub logging: LoggingSection,
    /// `clarify:`.
    pub clarify: TimeoutSection,
    /// `security:`.
    pub security: UrlSection,
    /// `browser:` (only its legacy `allow_private_urls`).
    pub browser: UrlSection,
    /// `prompt_caching:`.
    pub prompt_caching: PromptCachingSection,
    /// `bedrock:`.
    pub bedrock: BedrockSection,
    /// `local:`.
    pub local: LocalSection,
    /// `credential_pool_strategies:` (provider → strategy).
    pub credential_pool_strategies: Map<String, Value>,
    /// `agent.personalities:` (name → text or `{system_prompt}`).
    pub personalities: Map<String, Value>,
    /// `agent.reasoning_effort` (`none` … `xhigh`), lower-cased.
    pub reasoning_effort: Option<String>,
}

impl Sections {
    /// Reads every section from the merged tree.
    pub fn from_tree(tree: &Value) -> Self {
        let strings = |v: Option<&Value>| -> Vec<String> {
            v.and_then(Value::as_array)
                .map(|items| {
                    items
                        .iter()
                        .filter_map(|i| i.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default()
        };
        let agent = tree.get("agent");
        Self {
            delegation: section(tree, "delegation"),
            code_execution: section(tree, "code_execution"),
            compression: section(tree, "compression"),
            auxiliary: section(tree, "auxiliary"),
            approvals: section(tree, "approvals"),
            command_allowlist: strings(tree.get("command_allowlist")),
            tool_loop_guardrails: section(tree, "tool_loop_guardrails"),
            memory: section(tree, "memory"),
            logging: section(tree, "logging"),
            clarify: section(tree, "clarify"),
            security: section(tree, "security"),
            browser: section(tree, "browser"),
            prompt_caching: section(tree, "prompt_caching"),
            bedrock: section(tree, "bedrock"),
            local: section(tree, "local"),
            credential_pool_strategies: tree
                .get("credential_pool_strategies")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            personalities: agent
                .and_then(|a| a.get("personalities"))
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            reasoning_effort: agent
                .and_then(|a| a.get("reasoning_effort"))
                .and_then(Value::as_str)
                .map(|e| e.trim().to_ascii_lowercase())
                .filter(|e| !e.is_empty()),
        }
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
