//! The phrase lists the classifier matches, as data.
//!
//! Every entry is lower case: the classifier lower-cases the text it searches
//! (the error message, the raw body and the messages pulled out of the body)
//! and looks for each phrase as a plain substring.

/// Credit or plan exhaustion (as opposed to a transient throttle).
pub(crate) const BILLING: &[&str] = &[
    "insufficient credits",
    "insufficient_quota",
    "insufficient balance",
    "credit balance",
    "credits exhausted",
    "credits have been exhausted",
    "no usable credits",
    "top up your credits",
    "payment required",
    "billing hard limit",
    "exceeded your current quota",
    "account is deactivated",
    "plan does not include",
    // Anthropic OAuth overage bucket used up (arrives as a 400).
    "out of extra usage",
    "out of funds",
    "run out of funds",
    "balance_depleted",
    "model_not_supported_on_free_tier",
    "not available on the free tier",
];

/// xAI's Grok spending-limit code; only billing on 403 from `xai-oauth`.
pub(crate) const XAI_SPENDING_LIMIT_CODE: &str = "personal-team-blocked:spending-limit";

/// Structured body codes meaning the account cannot pay for more traffic.
pub(crate) const BILLING_CODES: &[&str] = &[
    "insufficient_quota",
    "billing_not_active",
    "payment_required",
    "insufficient_credits",
    "no_usable_credits",
    "balance_depleted",
    "model_not_supported_on_free_tier",
    XAI_SPENDING_LIMIT_CODE,
];

/// Transient throttling that resolves by itself.
pub(crate) const RATE_LIMIT: &[&str] = &[
    "rate limit",
    "rate_limit",
    "too many requests",
    "throttled",
    "requests per minute",
    "tokens per minute",
    "requests per day",
    "try again in",
    "please retry after",
    "resource_exhausted",
    // Alibaba / DashScope.
    "rate increased too quickly",
    // AWS Bedrock.
    "throttlingexception",
    "too many concurrent requests",
    "servicequotaexceededexception",
];

/// Provider-wide overload: back off and retry the same key, never rotate.
/// Some providers (Z.AI) send these with a 429.
pub(crate) const OVERLOADED: &[&str] = &[
    "overloaded",
    "temporarily overloaded",
    "service is temporarily overloaded",
    "service may be temporarily overloaded",
    "server is overloaded",
    "server overloaded",
    "service overloaded",
    "service is overloaded",
    "upstream overloaded",
    "currently overloaded",
    "at capacity",
    "over capacity",
];

/// Usage limits that may be billing or a periodic quota.
pub(crate) const USAGE_LIMIT: &[&str] = &[
    "usage limit",
    "quota",
    "limit exceeded",
    "key limit exceeded",
];

/// Signals that a usage limit resets by itself (so it is a rate limit).
pub(crate) const USAGE_LIMIT_TRANSIENT: &[&str] = &[
    "try again",
    "retry",
    "resets at",
    "reset in",
    "wait",
    "requests remaining",
    "periodic",
    "window",
];

/// Throttle wording that keeps a status-less usage limit a rate limit.
pub(crate) const EXPLICIT_THROTTLE: &[&str] = &["rate limit", "rate_limit", "too many requests"];

/// A 413 spelled out in the text when no status is attached.
pub(crate) const PAYLOAD_TOO_LARGE: &[&str] = &[
    "request entity too large",
    "payload too large",
    "error code: 413",
];

/// One image over the provider's per-image size or dimension cap.
pub(crate) const IMAGE_TOO_LARGE: &[&str] = &[
    "image exceeds",
    "image too large",
    "image_too_large",
    "image size exceeds",
    "image dimensions exceed",
    "dimensions exceed max allowed size",
    "max allowed size: 8000",
];

/// Providers that insist tool-message content is a string.
pub(crate) const MULTIMODAL_TOOL_CONTENT: &[&str] = &[
    // Xiaomi MiMo.
    "text is not set",
    "tool message content must be a string",
    "tool content must be a string",
    "tool message must be a string",
    "expected string, got list",
    "expected string, got array",
    // Alibaba / DashScope.
    "tool_call.content must be string",
];

/// The prompt does not fit the model's context window.
pub(crate) const CONTEXT_OVERFLOW: &[&str] = &[
    "context length",
    "context size",
    "maximum context",
    "token limit",
    "too many tokens",
    "reduce the length",
    "exceeds the limit",
    "context window",
    "prompt is too long",
    "prompt exceeds max length",
    // Bare "max_tokens" is deliberate (output-cap errors); empty-response
    // advisories that mention it are caught before this list is consulted.
    "max_tokens",
    "maximum number of tokens",
    // vLLM and other local servers.
    "exceeds the max_model_len",
    "max_model_len",
    "prompt length",
    "input is too long",
    "maximum model length",
    // Ollama.
    "context length exceeded",
    "truncating input",
    // llama.cpp.
    "slot context",
    "n_ctx_slot",
    // Chinese wording some providers use.
    "超过最大长度",
    "上下文长度",
    // Z.AI / Zhipu (code 1210).
    "tokens in request more than max tokens allowed",
    // AWS Bedrock Converse.
    "max input token",
    "input token",
    "exceeds the maximum number of input tokens",
];

/// The model id is wrong or not served.
pub(crate) const MODEL_NOT_FOUND: &[&str] = &[
    "is not a valid model",
    "invalid model",
    "model not found",
    "model_not_found",
    "does not exist",
    "no such model",
    "unknown model",
    "unsupported model",
    // OpenRouter: no endpoint for this model supports tool calling.
    "no endpoints found that support tool use",
];

/// A malformed request that fails the same way on every retry.
pub(crate) const REQUEST_VALIDATION: &[&str] = &[
    "unknown parameter",
    "unsupported parameter",
    "unrecognized request argument",
    "invalid_request_error",
    "unknown_parameter",
    "unsupported_parameter",
];

/// The one entry of [`REQUEST_VALIDATION`] that the 400 path ignores
/// (OpenAI stamps it on genuine context overflows too).
pub(crate) const GENERIC_INVALID_REQUEST: &str = "invalid_request_error";

/// Body codes that mark a 5xx as a request-validation failure.
pub(crate) const REQUEST_VALIDATION_CODES_5XX: &[&str] = &[
    "invalid_request_error",
    "unknown_parameter",
    "unsupported_parameter",
];

/// Body codes that mark a 400 as a request-validation failure.
pub(crate) const REQUEST_VALIDATION_CODES_400: &[&str] =
    &["unknown_parameter", "unsupported_parameter"];

/// OpenRouter account privacy / guardrail settings exclude every endpoint.
pub(crate) const PROVIDER_POLICY_BLOCKED: &[&str] = &[
    "no endpoints available matching your guardrail",
    "no endpoints available matching your data policy",
    "no endpoints found matching your data policy",
];

/// A provider safety filter refused this prompt (deterministic per prompt).
pub(crate) const CONTENT_POLICY_BLOCKED: &[&str] = &[
    // OpenAI Codex cyber refusal.
    "flagged for possible cybersecurity risk",
    "trusted access for cyber",
    // OpenAI moderation.
    "violates our usage policies",
    "violates openai's usage policies",
    "your request was flagged by",
    // Anthropic safety system.
    "prompt was flagged by our safety",
    "responses cannot be generated due to safety",
    // OpenAI / Azure content filter tokens (not the spaced English phrase).
    "content_filter",
    "responsibleaipolicyviolation",
    // MiniMax output filter.
    "new_sensitive",
];

/// Authentication failures spelled out in text.
pub(crate) const AUTH: &[&str] = &[
    "invalid api key",
    "invalid_api_key",
    "authentication",
    "unauthorized",
    "forbidden",
    "invalid token",
    "token expired",
    "token revoked",
    "access denied",
];

/// Provider "empty response" advisories: retry, never compress.
pub(crate) const EMPTY_PROVIDER_RESPONSE: &[&str] = &[
    "returned an empty response",
    "empty response despite retries",
    "provider returned an empty response",
    "model returning empty responses",
    "empty response stream",
];

/// Timeouts reported as text by generic errors.
pub(crate) const TIMEOUT_MESSAGE: &[&str] = &[
    "timed out",
    "turn timed out",
    "request timed out",
    "deadline exceeded",
    "operation timed out",
    "upstream timed out",
];

/// A connection dropped without an HTTP status: a transport hiccup, or (on a
/// large session) a gateway refusing an oversized request.
pub(crate) const SERVER_DISCONNECT: &[&str] = &[
    "server disconnected",
    "peer closed connection",
    "connection reset by peer",
    "connection was closed",
    "network connection lost",
    "unexpected eof",
    "incomplete chunked read",
    // hyper's wording for the same early close.
    "connection closed before message completed",
];

/// Certificate verification failures: deterministic for the host, so fail
/// fast. Checked before [`SSL_TRANSIENT`], whose "[ssl:" would also match.
pub(crate) const SSL_CERT_VERIFY: &[&str] = &[
    "certificate verify failed",
    "certificate_verify_failed",
    "unable to get local issuer certificate",
    "self-signed certificate",
    "self signed certificate",
    "certificate has expired",
    "hostname mismatch, certificate is not valid",
    "unable to verify the first certificate",
    // rustls wording.
    "invalid peer certificate",
];

/// TLS alerts mid-stream: retry as a timeout, never compress.
pub(crate) const SSL_TRANSIENT: &[&str] = &[
    "bad record mac",
    "ssl alert",
    "tls alert",
    "ssl handshake failure",
    "tlsv1 alert",
    "sslv3 alert",
    "bad_record_mac",
    "ssl_alert",
    "tls_alert",
    "tls_alert_internal_error",
    "[ssl:",
    // rustls wording.
    "received fatal alert",
];

/// True when any phrase of `list` occurs in `haystack`.
pub(crate) fn any(haystack: &str, list: &[&str]) -> bool {
    list.iter().any(|p| haystack.contains(p))
}
