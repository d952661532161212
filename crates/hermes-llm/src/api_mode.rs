//! Which wire protocol an endpoint speaks, resolved as the reference does:
//! an explicit `model.api_mode`, then the provider's own protocol, then the
//! base URL's host and path, then OpenAI chat completions.

/// A wire protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ApiMode {
    /// OpenAI `/chat/completions`.
    ChatCompletions,
    /// OpenAI Responses API (`/responses`).
    CodexResponses,
    /// Anthropic Messages (`/v1/messages`).
    AnthropicMessages,
    /// AWS Bedrock ConverseStream.
    BedrockConverse,
}

impl ApiMode {
    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ApiMode::ChatCompletions => "chat_completions",
            ApiMode::CodexResponses => "codex_responses",
            ApiMode::AnthropicMessages => "anthropic_messages",
            ApiMode::BedrockConverse => "bedrock_converse",
        }
    }

    /// Parses a config value; unknown values are `None` (and ignored, as in the reference).
    pub fn parse(raw: &str) -> Option<Self> {
        match raw.trim().to_ascii_lowercase().as_str() {
            "chat_completions" => Some(ApiMode::ChatCompletions),
            "codex_responses" => Some(ApiMode::CodexResponses),
            "anthropic_messages" => Some(ApiMode::AnthropicMessages),
            "bedrock_converse" => Some(ApiMode::BedrockConverse),
            _ => None,
        }
    }
}

/// The host name of a URL, lower-cased, without port or credentials.
pub fn host_of(base_url: &str) -> String {
    let rest = base_url
        .trim()
        .split_once("://")
        .map_or(base_url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit('@').next().unwrap_or("");
    let host = if host.starts_with('[') {
        host.split(']').next().map(|h| &h[1..]).unwrap_or("")
    } else {
        host.split(':').next().unwrap_or("")
    };
    host.to_ascii_lowercase()
}

fn path_of(base_url: &str) -> String {
    let rest = base_url
        .trim()
        .split_once("://")
        .map_or(base_url, |(_, r)| r);
    rest.find('/')
        .map(|i| {
            rest[i..]
                .split(['?', '#'])
                .next()
                .unwrap_or("")
                .to_ascii_lowercase()
        })
        .unwrap_or_default()
}

/// The protocol a URL mandates, if its host or path says so: Anthropic's own host
/// or an `/anthropic` suffix, Kimi's `/coding` route, a Bedrock runtime host, the
/// OpenAI and xAI hosts (Responses API), ChatGPT's Codex backend.
pub fn mode_for_url(base_url: &str) -> Option<ApiMode> {
    let host = host_of(base_url);
    let path = path_of(base_url);
    let path = path.trim_end_matches('/');
    if host == "api.anthropic.com"
        || path.ends_with("/anthropic")
        || path.ends_with("/anthropic/v1")
    {
        return Some(ApiMode::AnthropicMessages);
    }
    if host == "api.kimi.com" && path.contains("/coding") {
        return Some(ApiMode::AnthropicMessages);
    }
    if host.starts_with("bedrock-runtime.") && host.ends_with(".amazonaws.com") {
        return Some(ApiMode::BedrockConverse);
    }
    if host == "api.openai.com"
        || host == "api.x.ai"
        || (host == "chatgpt.com" && path.starts_with("/backend-api/codex"))
    {
        return Some(ApiMode::CodexResponses);
    }
    None
}

/// Resolves the protocol: explicit setting, then the provider's, then the URL's.
pub fn resolve(explicit: Option<&str>, provider_mode: Option<ApiMode>, base_url: &str) -> ApiMode {
    explicit
        .and_then(ApiMode::parse)
        .or(provider_mode)
        .or_else(|| mode_for_url(base_url))
        .unwrap_or(ApiMode::ChatCompletions)
}

/// Whether a model takes its instructions in the `developer` role (GPT-5 and
/// Codex families on OpenAI's wire); applied at the wire boundary only.
pub fn uses_developer_role(model: &str) -> bool {
    let m = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    m.starts_with("gpt-5")
        || m.contains("codex")
        || m.starts_with("o1")
        || m.starts_with("o3")
        || m.starts_with("o4")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_then_provider_then_url_then_default() {
        assert_eq!(
            resolve(Some("anthropic_messages"), None, "http://localhost:4000"),
            ApiMode::AnthropicMessages
        );
        assert_eq!(
            resolve(Some("bogus"), None, "http://localhost:4000/v1"),
            ApiMode::ChatCompletions
        );
        assert_eq!(
            resolve(
                None,
                Some(ApiMode::AnthropicMessages),
                "https://proxy.example/v1"
            ),
            ApiMode::AnthropicMessages
        );
        assert_eq!(
            resolve(None, None, "https://api.minimax.io/anthropic"),
            ApiMode::AnthropicMessages
        );
        assert_eq!(
            resolve(None, None, "https://api.anthropic.com"),
            ApiMode::AnthropicMessages
        );
        assert_eq!(
            resolve(
                None,
                None,
                "https://bedrock-runtime.us-east-1.amazonaws.com"
            ),
            ApiMode::BedrockConverse
        );
        assert_eq!(
            resolve(None, None, "https://api.openai.com/v1"),
            ApiMode::CodexResponses
        );
        assert_eq!(
            resolve(None, None, "https://chatgpt.com/backend-api/codex"),
            ApiMode::CodexResponses
        );
        assert_eq!(
            resolve(None, None, "https://openrouter.ai/api/v1"),
            ApiMode::ChatCompletions
        );
    }

    #[test]
    fn lookalike_hosts_are_not_trusted() {
        assert_eq!(
            mode_for_url("https://api.anthropic.com.attacker.test/v1"),
            None
        );
        assert_eq!(
            mode_for_url("https://proxy.test/api.anthropic.com/v1"),
            None
        );
        assert_eq!(
            host_of("https://user:pw@API.Example.com:8443/x"),
            "api.example.com"
        );
        assert_eq!(host_of("http://[::1]:8080/v1"), "::1");
    }

    #[test]
    fn developer_role_models() {
        assert!(uses_developer_role("gpt-5-mini"));
        assert!(uses_developer_role("openai/gpt-5.1-codex"));
        assert!(!uses_developer_role("gpt-4.1"));
        assert!(!uses_developer_role("anthropic/claude-sonnet-4"));
    }
}
