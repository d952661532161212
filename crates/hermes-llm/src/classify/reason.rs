//! The failure taxonomy.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Why a model call failed; decides the recovery strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailoverReason {
    /// Authentication or authorization failed (401/403): refresh or rotate.
    Auth,
    /// Authentication still fails after a refresh: stop using this provider.
    AuthPermanent,
    /// Credits or plan exhausted (402 and friends).
    Billing,
    /// Throttled (429 or quota wording): back off, then rotate.
    RateLimit,
    /// An aggregator's upstream model was throttled: fall back, keep the key.
    UpstreamRateLimit,
    /// The provider is overloaded (503/529): back off and retry.
    Overloaded,
    /// Internal server error (500/502): retry.
    ServerError,
    /// Connection or read timeout, dropped connection: rebuild and retry.
    Timeout,
    /// The TLS certificate chain does not verify: retrying cannot help.
    SslCertVerification,
    /// The prompt does not fit the context window: compress.
    ContextOverflow,
    /// The request body is too large (413): compress.
    PayloadTooLarge,
    /// An image exceeds the provider's per-image limit: shrink it.
    ImageTooLarge,
    /// The model id is wrong or not served: fall back to another model.
    ModelNotFound,
    /// The aggregator account's data policy excludes every endpoint.
    ProviderPolicyBlocked,
    /// The provider's safety filter refused this prompt.
    ContentPolicyBlocked,
    /// The request is malformed: abort (or strip and retry).
    FormatError,
    /// A Responses API reasoning replay blob was rejected: strip and retry.
    InvalidEncryptedContent,
    /// The provider wants string-only tool message content: downgrade.
    MultimodalToolContentUnsupported,
    /// Anthropic rejected a (mutated) thinking block: strip them and retry.
    ThinkingSignature,
    /// Anthropic's long-context tier needs extra usage: compress.
    LongContextTier,
    /// An Anthropic OAuth subscription lacks the 1M-context beta: drop it.
    OauthLongContextBetaForbidden,
    /// llama.cpp cannot turn a tool schema `pattern` into a grammar.
    LlamaCppGrammarPattern,
    /// Nothing matched: retry with backoff.
    Unknown,
    /// The caller cancelled the request (not in the reference taxonomy).
    Cancelled,
}

impl FailoverReason {
    /// Every reason, in declaration order.
    pub const ALL: [FailoverReason; 24] = {
        use FailoverReason::*;
        [
            Auth,
            AuthPermanent,
            Billing,
            RateLimit,
            UpstreamRateLimit,
            Overloaded,
            ServerError,
            Timeout,
            SslCertVerification,
            ContextOverflow,
            PayloadTooLarge,
            ImageTooLarge,
            ModelNotFound,
            ProviderPolicyBlocked,
            ContentPolicyBlocked,
            FormatError,
            InvalidEncryptedContent,
            MultimodalToolContentUnsupported,
            ThinkingSignature,
            LongContextTier,
            OauthLongContextBetaForbidden,
            LlamaCppGrammarPattern,
            Unknown,
            Cancelled,
        ]
    };

    /// The snake_case name (as the reference spells it).
    pub const fn as_str(self) -> &'static str {
        use FailoverReason::*;
        match self {
            Auth => "auth",
            AuthPermanent => "auth_permanent",
            Billing => "billing",
            RateLimit => "rate_limit",
            UpstreamRateLimit => "upstream_rate_limit",
            Overloaded => "overloaded",
            ServerError => "server_error",
            Timeout => "timeout",
            SslCertVerification => "ssl_cert_verification",
            ContextOverflow => "context_overflow",
            PayloadTooLarge => "payload_too_large",
            ImageTooLarge => "image_too_large",
            ModelNotFound => "model_not_found",
            ProviderPolicyBlocked => "provider_policy_blocked",
            ContentPolicyBlocked => "content_policy_blocked",
            FormatError => "format_error",
            InvalidEncryptedContent => "invalid_encrypted_content",
            MultimodalToolContentUnsupported => "multimodal_tool_content_unsupported",
            ThinkingSignature => "thinking_signature",
            LongContextTier => "long_context_tier",
            OauthLongContextBetaForbidden => "oauth_long_context_beta_forbidden",
            LlamaCppGrammarPattern => "llama_cpp_grammar_pattern",
            Unknown => "unknown",
            Cancelled => "cancelled",
        }
    }

    /// The reason in a few plain words, for status lines.
    pub const fn phrase(self) -> &'static str {
        use FailoverReason::*;
        match self {
            Auth | AuthPermanent => "authentication failed",
            Billing => "out of credits",
            RateLimit | UpstreamRateLimit => "rate limited",
            Overloaded => "provider overloaded",
            ServerError => "provider error",
            Timeout => "timed out",
            SslCertVerification => "TLS certificate rejected",
            ContextOverflow | LongContextTier => "context window full",
            PayloadTooLarge => "request too large",
            ImageTooLarge => "image too large",
            ModelNotFound => "unknown model",
            ProviderPolicyBlocked | ContentPolicyBlocked => "blocked by provider policy",
            FormatError
            | InvalidEncryptedContent
            | MultimodalToolContentUnsupported
            | ThinkingSignature
            | OauthLongContextBetaForbidden
            | LlamaCppGrammarPattern => "request rejected",
            Unknown => "model call failed",
            Cancelled => "cancelled",
        }
    }

    /// The reason named `name` (see [`FailoverReason::as_str`]).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == name)
    }
}

impl fmt::Display for FailoverReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
