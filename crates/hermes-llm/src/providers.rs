//! Known OpenAI-compatible providers: where they live and which env var holds the key.

/// A built-in provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProviderSpec {
    /// Canonical id (`openrouter`).
    pub id: &'static str,
    /// Default endpoint; `None` means the user must supply one (custom).
    pub base_url: Option<&'static str>,
    /// Env vars that may hold the API key, in priority order.
    pub key_env: &'static [&'static str],
    /// Env var that overrides the endpoint.
    pub base_url_env: Option<&'static str>,
    /// Model used when none is configured.
    pub default_model: Option<&'static str>,
}

/// Providers this build knows, with the reference's ids.
pub const PROVIDERS: &[ProviderSpec] = &[
    ProviderSpec {
        id: "openrouter",
        base_url: Some("https://openrouter.ai/api/v1"),
        key_env: &["OPENROUTER_API_KEY"],
        base_url_env: Some("OPENROUTER_BASE_URL"),
        default_model: Some("anthropic/claude-sonnet-4.5"),
    },
    ProviderSpec {
        id: "openai",
        base_url: Some("https://api.openai.com/v1"),
        key_env: &["OPENAI_API_KEY"],
        base_url_env: None,
        default_model: Some("gpt-4.1-mini"),
    },
    ProviderSpec {
        id: "custom",
        base_url: None,
        key_env: &["CUSTOM_API_KEY", "OPENAI_API_KEY"],
        base_url_env: Some("CUSTOM_BASE_URL"),
        default_model: None,
    },
];

/// Names that mean "an OpenAI-compatible server at a URL you give".
pub const CUSTOM_ALIASES: &[&str] = &[
    "custom",
    "ollama",
    "vllm",
    "llamacpp",
    "llama.cpp",
    "lmstudio",
    "lm-studio",
];

/// Looks a provider up by id or alias (case-insensitive).
pub fn find(name: &str) -> Option<&'static ProviderSpec> {
    let name = name.trim().to_ascii_lowercase();
    let id = if CUSTOM_ALIASES.contains(&name.as_str()) {
        "custom"
    } else {
        name.as_str()
    };
    PROVIDERS.iter().find(|p| p.id == id)
}

/// Every accepted provider name, for error messages.
pub fn known_names() -> Vec<&'static str> {
    let mut names: Vec<&str> = PROVIDERS.iter().map(|p| p.id).collect();
    names.extend(CUSTOM_ALIASES.iter().copied().filter(|a| *a != "custom"));
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_resolve_to_custom() {
        assert_eq!(find("Ollama").map(|p| p.id), Some("custom"));
        assert_eq!(find("openrouter").map(|p| p.id), Some("openrouter"));
        assert!(find("nope").is_none());
        assert!(known_names().contains(&"vllm"));
    }
}
