//! Known providers: where they live, which env var holds the key, which protocol they speak.

use crate::api_mode::ApiMode;

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
    /// The protocol the provider speaks when not chat completions.
    pub api_mode: Option<ApiMode>,
    /// Whether it works without a key (local servers).
    pub key_optional: bool,
}

const fn api(
    id: &'static str,
    base_url: &'static str,
    key_env: &'static [&'static str],
    base_url_env: &'static str,
) -> ProviderSpec {
    ProviderSpec {
        id,
        base_url: Some(base_url),
        key_env,
        base_url_env: Some(base_url_env),
        default_model: None,
        api_mode: None,
        key_optional: false,
    }
}

/// Providers this build knows, with the reference's ids, endpoints and key variables.
pub const PROVIDERS: &[ProviderSpec] = &[
    ProviderSpec {
        default_model: Some("anthropic/claude-sonnet-4.5"),
        ..api(
            "openrouter",
            "https://openrouter.ai/api/v1",
            &["OPENROUTER_API_KEY"],
            "OPENROUTER_BASE_URL",
        )
    },
    // Direct OpenAI speaks the Responses API, as in the reference.
    ProviderSpec {
        default_model: Some("gpt-4.1-mini"),
        api_mode: Some(ApiMode::CodexResponses),
        ..api(
            "openai",
            "https://api.openai.com/v1",
            &["OPENAI_API_KEY"],
            "OPENAI_BASE_URL",
        )
    },
    ProviderSpec {
        default_model: Some("claude-sonnet-4-5"),
        api_mode: Some(ApiMode::AnthropicMessages),
        ..api(
            "anthropic",
            "https://api.anthropic.com",
            &["ANTHROPIC_API_KEY", "ANTHROPIC_TOKEN"],
            "ANTHROPIC_BASE_URL",
        )
    },
    // Gemini through Google's OpenAI-compatible endpoint.
    ProviderSpec {
        default_model: Some("gemini-2.5-flash"),
        ..api(
            "gemini",
            "https://generativelanguage.googleapis.com/v1beta/openai",
            &["GOOGLE_API_KEY", "GEMINI_API_KEY"],
            "GEMINI_BASE_URL",
        )
    },
    ProviderSpec {
        default_model: Some("deepseek-chat"),
        ..api(
            "deepseek",
            "https://api.deepseek.com/v1",
            &["DEEPSEEK_API_KEY"],
            "DEEPSEEK_BASE_URL",
        )
    },
    ProviderSpec {
        api_mode: Some(ApiMode::CodexResponses),
        ..api(
            "xai",
            "https://api.x.ai/v1",
            &["XAI_API_KEY"],
            "XAI_BASE_URL",
        )
    },
    api(
        "groq",
        "https://api.groq.com/openai/v1",
        &["GROQ_API_KEY"],
        "GROQ_BASE_URL",
    ),
    api(
        "mistral",
        "https://api.mistral.ai/v1",
        &["MISTRAL_API_KEY"],
        "MISTRAL_BASE_URL",
    ),
    api(
        "together",
        "https://api.together.xyz/v1",
        &["TOGETHER_API_KEY"],
        "TOGETHER_BASE_URL",
    ),
    api(
        "zai",
        "https://api.z.ai/api/paas/v4",
        &["GLM_API_KEY", "ZAI_API_KEY", "Z_AI_API_KEY"],
        "GLM_BASE_URL",
    ),
    api(
        "kimi-coding",
        "https://api.moonshot.ai/v1",
        &["KIMI_API_KEY", "KIMI_CODING_API_KEY"],
        "KIMI_BASE_URL",
    ),
    api(
        "minimax",
        "https://api.minimax.io/anthropic",
        &["MINIMAX_API_KEY"],
        "MINIMAX_BASE_URL",
    ),
    api(
        "alibaba",
        "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
        &["DASHSCOPE_API_KEY"],
        "DASHSCOPE_BASE_URL",
    ),
    api(
        "nvidia",
        "https://integrate.api.nvidia.com/v1",
        &["NVIDIA_API_KEY"],
        "NVIDIA_BASE_URL",
    ),
    api(
        "huggingface",
        "https://router.huggingface.co/v1",
        &["HF_TOKEN"],
        "HF_BASE_URL",
    ),
    api(
        "arcee",
        "https://api.arcee.ai/api/v1",
        &["ARCEEAI_API_KEY"],
        "ARCEE_BASE_URL",
    ),
    api(
        "ollama-cloud",
        "https://ollama.com/v1",
        &["OLLAMA_API_KEY"],
        "OLLAMA_BASE_URL",
    ),
    ProviderSpec {
        key_optional: true,
        ..api(
            "lmstudio",
            "http://127.0.0.1:1234/v1",
            &["LM_API_KEY"],
            "LM_BASE_URL",
        )
    },
    // AWS Bedrock: SigV4 credentials (or a Bedrock API key) come from the AWS_*
    // variables, not from a key variable; the endpoint follows the region.
    ProviderSpec {
        id: "bedrock",
        base_url: Some("https://bedrock-runtime.us-east-1.amazonaws.com"),
        key_env: &[],
        base_url_env: None,
        default_model: Some("us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
        api_mode: Some(ApiMode::BedrockConverse),
        key_optional: true,
    },
    ProviderSpec {
        id: "custom",
        base_url: None,
        key_env: &["CUSTOM_API_KEY", "OPENAI_API_KEY"],
        base_url_env: Some("CUSTOM_BASE_URL"),
        default_model: None,
        api_mode: None,
        key_optional: true,
    },
];

/// Names that mean "an OpenAI-compatible server at a URL you give".
pub const CUSTOM_ALIASES: &[&str] = &[
    "custom",
    "ollama",
    "vllm",
    "llamacpp",
    "llama.cpp",
    "llama-cpp",
];

/// Other spellings users write for built-in providers.
const ALIASES: &[(&str, &str)] = &[
    ("openai-api", "openai"),
    ("claude", "anthropic"),
    ("google", "gemini"),
    ("grok", "xai"),
    ("glm", "zai"),
    ("kimi", "kimi-coding"),
    ("moonshot", "kimi-coding"),
    ("lm-studio", "lmstudio"),
    ("hf", "huggingface"),
    ("dashscope", "alibaba"),
    ("aws", "bedrock"),
    ("aws-bedrock", "bedrock"),
    ("amazon-bedrock", "bedrock"),
    ("amazon", "bedrock"),
];

/// Looks a provider up by id or alias (case-insensitive).
pub fn find(name: &str) -> Option<&'static ProviderSpec> {
    let name = name.trim().to_ascii_lowercase();
    let id = if CUSTOM_ALIASES.contains(&name.as_str()) {
        "custom"
    } else {
        ALIASES
            .iter()
            .find(|(alias, _)| *alias == name)
            .map_or(name.as_str(), |(_, id)| *id)
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
        assert_eq!(find("claude").map(|p| p.id), Some("anthropic"));
        assert_eq!(find("LM-Studio").map(|p| p.id), Some("lmstudio"));
        assert_eq!(find("aws-bedrock").map(|p| p.id), Some("bedrock"));
        for id in [
            "openrouter",
            "openai",
            "anthropic",
            "gemini",
            "deepseek",
            "xai",
            "groq",
            "mistral",
            "together",
        ] {
            assert!(
                find(id).is_some_and(|p| p.base_url.is_some() && !p.key_env.is_empty()),
                "{id}"
            );
        }
    }
}
