//! Known reasoning models: their long silent thinking phases outlast proxy
//! idle timeouts, so a dropped connection on one is not a context overflow.

/// Model-slug families with long thinking phases. A slug matches when the
/// model name (after any `vendor/` prefix) starts with it and the next
/// character is the end, `-`, `.` or `_`.
const REASONING_SLUGS: &[&str] = &[
    "nemotron-3-ultra",
    "nemotron-3-super",
    "nemotron-3-nano",
    "deepseek-r1",
    "deepseek-reasoner",
    "deepseek-v4-flash",
    "deepseek-v4-pro",
    "qwq-32b",
    "qwen3",
    "o1",
    "o1-mini",
    "o1-pro",
    "o1-preview",
    "o3",
    "o3-pro",
    "o3-mini",
    "o4-mini",
    "claude-opus-4",
    "claude-sonnet-5",
    "claude-sonnet-4.5",
    "claude-sonnet-4.6",
    "grok-4-fast-reasoning",
    "grok-4.20-reasoning",
    "grok-4.5",
    "grok-4-fast-non-reasoning",
];

/// True for a model in the reasoning-model list (case-insensitive; an
/// aggregator prefix such as `openai/` is ignored).
pub(crate) fn is_reasoning_model(model: &str) -> bool {
    let name = model.trim().to_lowercase();
    let slug = name.rsplit('/').next().unwrap_or_default();
    if slug.is_empty() {
        return false;
    }
    REASONING_SLUGS.iter().any(|family| {
        slug.strip_prefix(family)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['-', '.', '_']))
    })
}
