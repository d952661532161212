//! Table-driven classification cases translated from the reference's tests.
//!
//! Sources (the row name is the reference test's name, without `test_`):
//! - `A`: `tests/agent/test_error_classifier.py`, the snapshot that matches
//!   the 0.19.0 classifier's taxonomy (before `upstream_rate_limit` and
//!   `ssl_cert_verification` gained tests);
//! - `B`: the later upstream `tests/agent/test_error_classifier.py` (only
//!   cases whose outcome the 0.19.0 classifier shares);
//! - `S`: examples quoted in 0.19.0's `agent/error_classifier.py` comments;
//! - `R`: the same situations as this crate's transport reports them.
//!
//! Flags are `rckf`: retryable, compress, rotate credential (key), fall back;
//! `-` means false. Every row asserts all four.

use super::*;
use ErrorKind::{
    Cancelled as Cn, Decode as Dc, Http as H, Other as O, StreamEnded as SE, Timeout as TO,
    Transport as T,
};
use FailoverReason as F;

#[derive(Debug, Clone, Copy)]
struct Ctx {
    provider: &'static str,
    model: &'static str,
    tokens: usize,
    window: Option<usize>,
    msgs: usize,
}

const C: Ctx = Ctx {
    provider: "",
    model: "",
    tokens: 0,
    window: None,
    msgs: 0,
};

const fn p(provider: &'static str) -> Ctx {
    Ctx { provider, ..C }
}

const fn pm(provider: &'static str, model: &'static str) -> Ctx {
    Ctx {
        provider,
        model,
        ..C
    }
}

const fn sz(tokens: usize, window: usize, msgs: usize) -> Ctx {
    Ctx {
        tokens,
        window: Some(window),
        msgs,
        ..C
    }
}

/// (source: name, status (0 = none), body, message, kind, context, reason, flags)
type Row = (
    &'static str,
    u16,
    &'static str,
    &'static str,
    ErrorKind,
    Ctx,
    F,
    &'static str,
);

const LARGE: Ctx = sz(180_000, 200_000, 300);

#[rustfmt::skip]
const ROWS: &[Row] = &[
    // ── auth ──
    ("A: 401_classified_as_auth", 401, "", "Unauthorized", H, p("openrouter"), F::Auth, "--kf"),
    ("A: 403_classified_as_auth", 403, "", "Forbidden", H, p("anthropic"), F::Auth, "---f"),
    ("A: message_auth_pattern", 0, "", "invalid api key provided", O, C, F::Auth, "--kf"),
    ("S: grok entitlement via SSE error frame", 0, r#"{"error":{"message":"You have either run out of available resources or do not have an active Grok subscription."}}"#, "provider error", H, p("xai"), F::Auth, "---f"),
    ("S: xai 403 generic code stays auth off xai-oauth", 403, r#"{"code":"personal-team-blocked:spending-limit","error":"blocked"}"#, "Forbidden", H, p("xai"), F::Auth, "---f"),
    // ── billing ──
    ("A: 403_key_limit_classified_as_billing", 403, "", "Key limit exceeded for this key", H, p("openrouter"), F::Billing, "--kf"),
    ("A: 403_spending_limit_classified_as_billing", 403, "", "spending limit reached", H, p("openrouter"), F::Billing, "--kf"),
    ("A: 403_plan_entitlement_billing", 403, "", "This plan does not include the requested model", H, C, F::Billing, "--kf"),
    ("S: xai-oauth 403 spending-limit code", 403, r#"{"code":"personal-team-blocked:spending-limit","error":"blocked"}"#, "Forbidden", H, p("xai-oauth"), F::Billing, "--kf"),
    ("A: 402_plain_billing", 402, "", "Payment Required", H, C, F::Billing, "--kf"),
    ("A: 402_out_of_funds_billing", 402, r#"{"status":402,"message":"Your API key has run out of funds. Please go visit the portal to sort that out: https://portal.nousresearch.com"}"#, "Payment Required", H, C, F::Billing, "--kf"),
    ("A: classify_402 billing_exhaustion", 402, "", "payment required", H, C, F::Billing, "--kf"),
    ("A: classify_402 quota_without_retry", 402, "", "quota exceeded", H, C, F::Billing, "--kf"),
    ("A: classify_402 insufficient_credits", 402, "", "insufficient credits to complete request", H, C, F::Billing, "--kf"),
    ("A: credit_balance_too_low", 402, r#"{"error":{"message":"Your credit balance is too low"}}"#, "Credits low", H, p("anthropic"), F::Billing, "--kf"),
    ("A: deepseek_402_chinese", 402, "", "余额不足", H, p("deepseek"), F::Billing, "--kf"),
    ("A: 404_free_tier_model_block_is_billing", 404, r#"{"status":404,"message":"Model 'gpt-5' is not available on the Free Tier. Upgrade at https://portal.nousresearch.com or pick a free model."}"#, "Not Found", H, pm("nous", "gpt-5"), F::Billing, "--kf"),
    ("A: 400_with_billing_text", 400, r#"{"error":{"message":"insufficient credits for this request"}}"#, "billing", H, C, F::Billing, "--kf"),
    ("B: 400_anthropic_extra_usage_exhausted", 400, r#"{"error":{"type":"invalid_request_error","message":"You're out of extra usage. Add more at claude.ai/settings/usage and keep going."}}"#, "You're out of extra usage. Add more at claude.ai/settings/usage and keep going.", H, p("anthropic"), F::Billing, "--kf"),
    ("B: 400_unambiguous_billing_body", 400, r#"{"error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API."}}"#, "Your credit balance is too low to access the Anthropic API.", H, p("anthropic"), F::Billing, "--kf"),
    ("B: statusless_extra_usage", 0, "", "You're out of extra usage. Add more at claude.ai/settings/usage and keep going.", O, p("anthropic"), F::Billing, "--kf"),
    ("A: error_code_model_not_supported_on_free_tier_is_billing", 0, r#"{"error":{"code":"model_not_supported_on_free_tier","message":"Model 'gpt-5' is not available on the Free Tier."}}"#, "Model unavailable", O, pm("nous", "gpt-5"), F::Billing, "--kf"),
    ("A: message_billing_pattern", 0, "", "insufficient credits to complete this request", O, C, F::Billing, "--kf"),
    ("A: message_free_tier_model_block_is_billing", 0, "", "Model 'gpt-5' is not available on the Free Tier.", O, pm("nous", "gpt-5"), F::Billing, "--kf"),
    ("A: message_usage_limit_no_retry_signal_is_billing", 0, "", "usage limit reached", O, C, F::Billing, "--kf"),
    // ── rate limit ──
    ("A: 402_transient_usage_limit", 402, "", "usage limit exceeded, try again later", H, C, F::RateLimit, "r-kf"),
    ("A: classify_402 transient_usage_limit", 402, "", "usage limit exceeded. try again in 5 minutes", H, C, F::RateLimit, "r-kf"),
    ("A: classify_402 quota_with_retry", 402, "", "quota exceeded, please retry after the window resets", H, C, F::RateLimit, "r-kf"),
    ("A: wrapped_402_uses_nested_body_message", 402, r#"{"error":{"message":"Usage limit reached, try again in 5 minutes"}}"#, "inner", H, C, F::RateLimit, "r-kf"),
    ("A: body_message_enrichment", 402, r#"{"error":{"message":"Usage limit reached, try again in 5 minutes"}}"#, "Usage limit", H, C, F::RateLimit, "r-kf"),
    ("A: 429_rate_limit", 429, "", "Too Many Requests", H, C, F::RateLimit, "r-kf"),
    ("A: normal_429_not_long_context", 429, "", "Too Many Requests", H, p("anthropic"), F::RateLimit, "r-kf"),
    ("A: 429_normal_rate_limit_still_rotates", 429, "", "Rate limit exceeded: too many requests", H, p("zai"), F::RateLimit, "r-kf"),
    ("A: three_level_cause_chain", 429, "", "inner", H, C, F::RateLimit, "r-kf"),
    ("B: account_level_429_still_rotates_credential", 429, r#"{"error":{"message":"Rate limit exceeded: 200 requests per minute","code":429}}"#, "Rate limit exceeded: 200 requests per minute", H, pm("openrouter", "deepseek/deepseek-v4-flash"), F::RateLimit, "r-kf"),
    ("B: 429_rate_limit_phrase_never_promotes_to_billing", 429, "", "Rate limit exceeded, please slow down.", H, pm("anthropic", "claude-opus-5"), F::RateLimit, "r-kf"),
    ("B: anthropic_429_usage_limit_with_reset_stays_rate_limit", 429, "", "usage limit reached; resets at 2026-08-24T10:00:00Z", H, pm("anthropic", "claude-opus-5"), F::RateLimit, "r-kf"),
    ("B: codex_weekly_usage_limit_resets_in_stays_rate_limit", 429, "", "Weekly usage limit reached. Resets in 6hr 29min.", H, pm("openai-codex", "gpt-5-codex"), F::RateLimit, "r-kf"),
    ("A: alibaba_rate_increased_too_quickly", 400, "", "Upstream error from Alibaba: Request rate increased too quickly. To ensure system stability, please adjust your client logic to scale requests more smoothly over time.", H, C, F::RateLimit, "r-kf"),
    ("A: 400_with_rate_limit_text", 400, r#"{"error":{"message":"rate limit exceeded on this model"}}"#, "rate limit policy", H, p("openrouter"), F::RateLimit, "r-kf"),
    ("A: openrouter_wrapped_rate_limit_in_metadata_raw", 400, r#"{"error":{"message":"Provider returned error","metadata":{"raw":"{\"error\":{\"message\":\"Rate limit exceeded. Please retry after 30s.\"}}"}}}"#, "Provider returned error", H, p("openrouter"), F::RateLimit, "r-kf"),
    ("A: message_rate_limit_pattern", 0, "", "rate limit reached for this model", O, C, F::RateLimit, "r-kf"),
    ("A: message_usage_limit_transient_is_rate_limit", 0, "", "usage limit exceeded, try again in 5 minutes", O, C, F::RateLimit, "r-kf"),
    ("A: message_quota_with_reset_window_is_rate_limit", 0, "", "quota exceeded, resets at midnight UTC", O, C, F::RateLimit, "r-kf"),
    ("A: message_limit_exceeded_with_wait_is_rate_limit", 0, "", "key limit exceeded, please wait before retrying", O, C, F::RateLimit, "r-kf"),
    ("B: resource_exhausted_without_status (RESOURCE_EXHAUSTED)", 0, "", "RESOURCE_EXHAUSTED: Worker local total request limit reached (32/32)", O, pm("nvidia", "nvidia/nemotron-3-ultra-550b-a55b"), F::RateLimit, "r-kf"),
    ("A: error_code_resource_exhausted", 0, r#"{"error":{"code":"resource_exhausted","message":"Too many requests"}}"#, "Resource exhausted", O, C, F::RateLimit, "r-k-"),
    ("R: in-stream 'Rate limit exceeded' without a status (later upstream guard, #39441)", 0, r#"{"error":{"message":"Rate limit exceeded","type":"rate_limit_error"}}"#, "provider error", H, C, F::RateLimit, "r-kf"),
    // ── upstream rate limit ──
    ("B: openrouter_upstream_429_classified_as_upstream_rate_limit", 429, r#"{"error":{"message":"Provider returned error","code":429,"metadata":{"provider_name":"DeepSeek","raw":"{\"error\":{\"message\":\"Rate limit exceeded\"}}"}}}"#, "Provider returned error", H, pm("openrouter", "deepseek/deepseek-v4-flash"), F::UpstreamRateLimit, "r--f"),
    ("S: upstream 429 recognised by metadata shape alone", 429, r#"{"error":{"message":"Provider returned error","metadata":{"provider_name":"Anthropic"}}}"#, "Provider returned error", H, p("custom"), F::UpstreamRateLimit, "r--f"),
    // ── overloaded ──
    ("A: 503_overloaded", 503, "", "Service Unavailable", H, C, F::Overloaded, "r---"),
    ("A: 529_anthropic_overloaded", 529, "", "Overloaded", H, C, F::Overloaded, "r---"),
    ("A: message_only_overloaded_without_status_is_overloaded", 0, "", "Anthropic API error: Overloaded - the service is temporarily overloaded", O, p("anthropic"), F::Overloaded, "r---"),
    ("A: 429_with_overloaded_body_is_overloaded_not_rate_limit", 429, "", "The service may be temporarily overloaded, please try again later", H, p("zai"), F::Overloaded, "r---"),
    // ── server error ──
    ("A: 500_server_error", 500, "", "Internal Server Error", H, C, F::ServerError, "r---"),
    ("A: 502_server_error", 502, "", "Bad Gateway", H, C, F::ServerError, "r---"),
    ("A: 500_with_none_body", 500, "", "fail", H, pm("openrouter", "gpt-5"), F::ServerError, "r---"),
    ("A: list_body", 500, r#"[{"error":"something"}]"#, "server error", H, C, F::ServerError, "r---"),
    ("A: llama_cpp_grammar_requires_400", 500, "", "error parsing grammar", H, p("openai-compatible"), F::ServerError, "r---"),
    ("S: 400 empty-response advisory mentioning max_tokens", 400, "", "Provider returned an empty response. Try raising max_tokens.", H, C, F::ServerError, "r---"),
    ("S: statusless empty-response advisory", 0, "", "The model returned an empty response despite retries (very low max_tokens?)", O, C, F::ServerError, "r---"),
    ("S: 503 empty-response advisory", 503, "", "empty response stream from upstream; check max_tokens", H, C, F::ServerError, "r---"),
    // ── timeout ──
    ("A: read_timeout", 0, "", "Read timed out", TO, C, F::Timeout, "r---"),
    ("A: connect_error", 0, "", "Connection refused", T, C, F::Timeout, "r---"),
    ("A: connection_error_builtin", 0, "", "Connection reset by peer", T, C, F::Timeout, "r---"),
    ("A: timeout_error_builtin", 0, "", "timed out", TO, C, F::Timeout, "r---"),
    ("A: connection_refused_error", 0, "", "Connection refused: localhost:11434", T, p("ollama"), F::Timeout, "r---"),
    ("A: runtime_error_cli_turn_timed_out_classifies_as_timeout", 0, "", "claude CLI turn timed out", O, C, F::Timeout, "r---"),
    ("A: runtime_error_request_timed_out_classifies_as_timeout", 0, "", "request timed out after 120s", O, C, F::Timeout, "r---"),
    ("A: runtime_error_deadline_exceeded_classifies_as_timeout", 0, "", "deadline exceeded", O, C, F::Timeout, "r---"),
    ("A: real_ssl_error_type_classifies_as_timeout", 0, "", "arbitrary ssl error", T, C, F::Timeout, "r---"),
    ("A: disconnect_small_session_timeout", 0, "", "server disconnected without sending complete message", O, sz(5_000, 200_000, 0), F::Timeout, "r---"),
    ("A: disconnect_many_messages_below_large_context_pressure_is_timeout", 0, "", "server disconnected without sending complete message", O, Ctx { provider: "openai-codex", model: "gpt-5.5", tokens: 74_320, window: Some(1_000_000), msgs: 432 }, F::Timeout, "r---"),
    ("S: disconnect on a reasoning model is a timeout even when large", 0, "", "Server disconnected without sending a response", O, Ctx { model: "nvidia/nemotron-3-ultra-550b-a55b", ..LARGE }, F::Timeout, "r---"),
    ("A: bad_record_mac_classifies_as_timeout", 0, "", "[SSL: BAD_RECORD_MAC] sslv3 alert bad record mac (_ssl.c:2580)", O, C, F::Timeout, "r---"),
    ("A: openssl_3x_format_classifies_as_timeout", 0, "", "ERR_SSL_SSL/TLS_ALERT_BAD_RECORD_MAC during streaming", O, C, F::Timeout, "r---"),
    ("A: tls_alert_internal_error_classifies_as_timeout", 0, "", "[SSL: TLSV1_ALERT_INTERNAL_ERROR] tlsv1 alert internal error", O, C, F::Timeout, "r---"),
    ("A: ssl_handshake_failure_classifies_as_timeout", 0, "", "ssl handshake failure during mid-stream", O, C, F::Timeout, "r---"),
    ("A: ssl_prefix_classifies_as_timeout", 0, "", "[SSL: UNEXPECTED_EOF_WHILE_READING] EOF occurred in violation of protocol", O, C, F::Timeout, "r---"),
    ("A: ssl_alert_on_large_session_does_not_compress", 0, "", "[SSL: BAD_RECORD_MAC] sslv3 alert bad record mac", O, LARGE, F::Timeout, "r---"),
    ("B: 408_request_timeout_is_retryable_timeout", 408, "", "Request Timeout", H, p("vllm"), F::Timeout, "r---"),
    ("B: copilot_oversized_body_408_retries_as_timeout_not_compress", 408, r#"{"error":{"message":"Timed out reading request body. Try again, or use a smaller request size.","code":"user_request_timeout"}}"#, "Error code: 408", H, pm("copilot", "claude-opus-4.8"), F::Timeout, "r---"),
    ("B: stale_breaker_runtime_error_triggers_fallback_not_retry", 0, "", "Provider has been unresponsive (no response received) for 6 consecutive stale attempts — aborting this call to avoid an indefinite stall. Switch models or start a new session, then retry.", O, Ctx { provider: "openrouter", model: "anthropic/claude-fable-5", tokens: 126_327, window: Some(200_000), msgs: 274 }, F::Timeout, "---f"),
    ("R: rustls alert on a large session", 0, "", "transport error: received fatal alert: BadRecordMac", T, LARGE, F::Timeout, "r---"),
    ("R: stream cut off on a small session", 0, "", "stream ended early: connection closed before the end of the stream", SE, C, F::Timeout, "r---"),
    ("R: idle timeout on a large session", 0, "", "timed out: no data from the provider for 120s", TO, LARGE, F::Timeout, "r---"),
    // ── TLS certificate ──
    ("B: python_cert_verify_failed_is_non_retryable", 0, "", "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: unable to get local issuer certificate (_ssl.c:1006)", T, C, F::SslCertVerification, "----"),
    ("S: self-signed certificate on a large session", 0, "", "self-signed certificate in certificate chain", T, LARGE, F::SslCertVerification, "----"),
    ("R: rustls unknown issuer", 0, "", "transport error: cannot connect: invalid peer certificate: UnknownIssuer", T, C, F::SslCertVerification, "----"),
    // ── context overflow ──
    ("A: 400_context_length", 400, "", "context length exceeded: 250000 > 200000", H, C, F::ContextOverflow, "rc--"),
    ("A: 400_too_many_tokens", 400, "", "This model's maximum context is 128000 tokens, too many tokens", H, C, F::ContextOverflow, "rc--"),
    ("A: 400_prompt_too_long", 400, "", "prompt is too long: 300000 tokens > 200000 maximum", H, C, F::ContextOverflow, "rc--"),
    ("A: 400_generic_large_session", 400, r#"{"error":{"message":"Error"}}"#, "Error", H, sz(100_000, 200_000, 0), F::ContextOverflow, "rc--"),
    ("A: generic_400_large_by_message_count", 400, r#"{"error":{"message":"Error"}}"#, "Error", H, sz(5_000, 200_000, 100), F::ContextOverflow, "rc--"),
    ("A: 400_flat_body_generic_large_session_still_context_overflow", 400, r#"{"message":"Error"}"#, "Error", H, sz(100_000, 200_000, 0), F::ContextOverflow, "rc--"),
    ("A: ollama_context_size_exceeded", 400, r#"{"error":{"message":"context size has been exceeded"}}"#, "Error", H, p("ollama"), F::ContextOverflow, "rc--"),
    ("A: chinese_context_overflow", 400, "", "超过最大长度限制", H, C, F::ContextOverflow, "rc--"),
    ("A: vllm_max_model_len_overflow", 400, "", "The engine prompt length 1327246 exceeds the max_model_len 131072. Please reduce prompt.", H, C, F::ContextOverflow, "rc--"),
    ("A: vllm_prompt_length_exceeds", 400, "", "prompt length 200000 exceeds maximum model length 131072", H, C, F::ContextOverflow, "rc--"),
    ("A: vllm_input_too_long", 400, "", "input is too long for model", H, C, F::ContextOverflow, "rc--"),
    ("A: ollama_context_length_exceeded", 400, "", "context length exceeded", H, C, F::ContextOverflow, "rc--"),
    ("A: llamacpp_slot_context", 400, "", "slot context: 4096 tokens, prompt 8192 tokens — not enough space", H, C, F::ContextOverflow, "rc--"),
    ("B: zai_glm_token_limit_overflow", 400, "", r#"{"error": {"code": "1210", "message": "tokens in request more than max tokens allowed"}}"#, H, p("zai"), F::ContextOverflow, "rc--"),
    ("A: openrouter_wrapped_context_overflow_in_metadata_raw", 400, r#"{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"{\"error\":{\"message\":\"context length exceeded: 50000 > 32768\"}}"}}}"#, "Provider returned error", H, Ctx { provider: "openrouter", tokens: 10_000, ..C }, F::ContextOverflow, "rc--"),
    ("A: 400_real_overflow_with_invalid_request_error_code_still_compresses", 400, r#"{"error":{"message":"This model's maximum context length is 128000 tokens, however you requested 150000 tokens.","type":"invalid_request_error"}}"#, "This model's maximum context length is 128000 tokens, however you requested 150000 tokens.", H, Ctx { model: "gpt-5.4", tokens: 150_000, window: Some(128_000), ..C }, F::ContextOverflow, "rc--"),
    ("A: 400_without_beta_phrase_is_not_1m_beta_forbidden", 400, "", "long context window exceeded", H, p("anthropic"), F::ContextOverflow, "rc--"),
    ("A: message_context_overflow_pattern", 0, "", "maximum context length exceeded", O, C, F::ContextOverflow, "rc--"),
    ("A: error_code_context_length_exceeded", 0, r#"{"error":{"code":"context_length_exceeded"}}"#, "Context too large", O, C, F::ContextOverflow, "rc--"),
    ("B: plain_too_many_tokens_still_overflow", 0, "", "Too many tokens", O, pm("zai", "glm-5"), F::ContextOverflow, "rc--"),
    ("B: longer_than_context_length_still_overflow", 0, "", "The input (516368 tokens) is longer than the model's context length (262144 tokens).", O, pm("openrouter", "m"), F::ContextOverflow, "rc--"),
    ("S: llama.cpp reports overflow as a 500", 500, "", "the request exceeds the available context size, try increasing it", H, C, F::ContextOverflow, "rc--"),
    ("S: overflow behind a proxy relabelled 503", 503, "", "context length exceeded", H, C, F::ContextOverflow, "rc--"),
    ("A: disconnect_large_session_context_overflow", 0, "", "server disconnected without sending complete message", O, sz(150_000, 200_000, 0), F::ContextOverflow, "rc--"),
    ("A: peer_closed_large_session", 0, "", "peer closed connection without sending complete message", O, sz(130_000, 200_000, 0), F::ContextOverflow, "rc--"),
    ("A: disconnect_large_by_message_count", 0, "", "server disconnected without sending complete message", O, sz(5_000, 200_000, 250), F::ContextOverflow, "rc--"),
    ("A: plain_disconnect_on_large_session_still_compresses", 0, "", "Server disconnected without sending a response", O, LARGE, F::ContextOverflow, "rc--"),
    ("B: midstream_disconnect_patterns_still_use_disconnect_path", 0, "", "Connection reset by peer", O, sz(180_000, 200_000, 400), F::ContextOverflow, "rc--"),
    ("R: stream cut off on a large session", 0, "", "stream ended early: connection lost mid-stream: error decoding response body", SE, LARGE, F::ContextOverflow, "rc--"),
    ("R: hyper early close on a large session", 0, "", "transport error: connection closed before message completed", T, LARGE, F::ContextOverflow, "rc--"),
    // ── payload / image ──
    ("A: 413_payload_too_large", 413, "", "Request Entity Too Large", H, C, F::PayloadTooLarge, "rc--"),
    ("S: 413 spelled out without a status", 0, "", "Error code: 413 - request entity too large", O, C, F::PayloadTooLarge, "rc--"),
    ("S: anthropic 5 MB image cap", 400, r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.0.content.1.image.source.base64: image exceeds 5 MB maximum: 7340032 bytes > 5242880 bytes"}}"#, "Error code: 400", H, p("anthropic"), F::ImageTooLarge, "r---"),
    ("S: anthropic image dimension cap", 400, "", "messages.3.content.2.image: image dimensions exceed max allowed size: 8000 pixels", H, p("anthropic"), F::ImageTooLarge, "r---"),
    ("S: image too large without a status", 0, "", "image too large for this provider", O, C, F::ImageTooLarge, "r---"),
    // ── model / policy ──
    ("A: 404_model_not_found", 404, "", "model not found", H, C, F::ModelNotFound, "---f"),
    ("A: 404_model_not_found_still_works", 404, "", "openrouter/nonexistent-model is not a valid model ID", H, C, F::ModelNotFound, "---f"),
    ("S: openrouter 404 no endpoint supports tools", 404, "", "No endpoints found that support tool use", H, p("openrouter"), F::ModelNotFound, "---f"),
    ("A: openrouter_wrapped_model_not_found_in_metadata_raw", 400, r#"{"error":{"message":"Provider returned error","metadata":{"raw":"{\"error\":{\"message\":\"The model gpt-99 does not exist\"}}"}}}"#, "Provider returned error", H, p("openrouter"), F::ModelNotFound, "---f"),
    ("A: error_code_model_not_found", 0, r#"{"error":{"code":"model_not_found"}}"#, "Model not available", O, C, F::ModelNotFound, "---f"),
    ("A: message_model_not_found_pattern", 0, "", "gpt-99 is not a valid model", O, C, F::ModelNotFound, "---f"),
    ("A: 404_openrouter_policy_blocked", 404, "", "No endpoints available matching your guardrail restrictions and data policy. Configure: https://openrouter.ai/settings/privacy", H, C, F::ProviderPolicyBlocked, "----"),
    ("A: 400_openrouter_policy_blocked", 400, "", "No endpoints available matching your data policy", H, C, F::ProviderPolicyBlocked, "----"),
    ("A: message_only_openrouter_policy_blocked", 0, "", "No endpoints available matching your guardrail restrictions and data policy", O, C, F::ProviderPolicyBlocked, "----"),
    ("A: message_only_cyber_content_policy_blocked", 0, "", "This content was flagged for possible cybersecurity risk. If this seems wrong, try rephrasing your request. To get authorized for security work, join the Trusted Access for Cyber program.", O, pm("openai-codex", "gpt-5.5"), F::ContentPolicyBlocked, "---f"),
    ("A: 400_cyber_content_policy_blocked", 400, "", "This content was flagged for possible cybersecurity risk", H, pm("openai-codex", "gpt-5.5"), F::ContentPolicyBlocked, "---f"),
    ("A: openai_usage_policy_violation_content_policy_blocked", 400, "", "Your request was flagged by the moderation system as potentially violating OpenAI's usage policies.", H, pm("openai", "gpt-4o"), F::ContentPolicyBlocked, "---f"),
    ("A: anthropic_safety_system_content_policy_blocked", 0, "", "Your prompt was flagged by our safety system. Please rephrase and try again.", O, pm("anthropic", "claude-3-5-sonnet"), F::ContentPolicyBlocked, "---f"),
    ("A: azure_content_filter_content_policy_blocked", 400, "", "The response was filtered: ResponsibleAIPolicyViolation (finish_reason=content_filter).", H, pm("azure", "gpt-4o"), F::ContentPolicyBlocked, "---f"),
    // ── format error ──
    ("A: 400_generic_small_session_is_format_error", 400, r#"{"error":{"message":"Error"}}"#, "Error", H, sz(1_000, 200_000, 0), F::FormatError, "---f"),
    ("A: 400_generic_many_messages_below_large_context_pressure_is_format_error", 400, r#"{"error":{"message":"Error"}}"#, "Error", H, Ctx { provider: "openai-codex", model: "gpt-5.5", tokens: 74_320, window: Some(1_000_000), msgs: 432 }, F::FormatError, "---f"),
    ("A: 400_flat_body_descriptive_not_context_overflow", 400, r#"{"message":"Invalid 'input[index].name': string does not match pattern.","type":"invalid_request_error"}"#, "Invalid 'input[index].name': string does not match pattern.", H, sz(200_000, 400_000, 500), F::FormatError, "---f"),
    ("A: 400_descriptive_format_error", 400, r#"{"error":{"message":"Invalid value for parameter 'temperature': must be between 0 and 2"}}"#, "Invalid value for parameter 'temperature': must be between 0 and 2", H, sz(1_000, 200_000, 0), F::FormatError, "---f"),
    ("A: 400_unsupported_max_tokens_param_not_context_overflow", 400, r#"{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","code":"unsupported_parameter"}}"#, "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", H, Ctx { model: "gpt-5.4", tokens: 6_962, window: Some(1_050_000), ..C }, F::FormatError, "---f"),
    ("A: 400_unknown_parameter_not_context_overflow", 400, r#"{"error":{"message":"Unknown parameter: 'foo'.","code":"unknown_parameter"}}"#, "Unknown parameter: 'foo'.", H, sz(1_000, 200_000, 0), F::FormatError, "---f"),
    ("A: 502_with_unknown_parameter_is_non_retryable", 502, r#"{"error":{"type":"invalid_request_error","message":"[ObjectParam] [input[617]._empty_recovery_synthetic] [unknown_parameter] Unknown parameter: 'input[617]._empty_recovery_synthetic'."}}"#, "Unknown parameter: 'input[617]._empty_recovery_synthetic'", H, C, F::FormatError, "---f"),
    ("A: 502_with_unsupported_parameter_is_non_retryable", 502, r#"{"error":{"type":"invalid_request_error","message":"Unsupported parameter: logprobs"}}"#, "Unsupported parameter: logprobs", H, C, F::FormatError, "---f"),
    ("A: 500_with_invalid_request_error_type_is_non_retryable", 500, r#"{"error":{"type":"invalid_request_error","message":"bad request"}}"#, "bad request", H, C, F::FormatError, "---f"),
    ("B: other_bad_parameter_via_5xx_stays_non_retryable (500)", 500, r#"{"error":{"message":"Unknown parameter: 'frequency_penalty'","code":"unknown_parameter"}}"#, "Unknown parameter: 'frequency_penalty'", H, pm("custom", "m"), F::FormatError, "---f"),
    ("B: other_bad_parameter_via_5xx_stays_non_retryable (502)", 502, r#"{"error":{"message":"Unknown parameter: 'frequency_penalty'","code":"unknown_parameter"}}"#, "Unknown parameter: 'frequency_penalty'", H, pm("custom", "m"), F::FormatError, "---f"),
    ("A: 422_format_error", 422, "", "Unprocessable Entity", H, C, F::FormatError, "---f"),
    ("A: non_dict_body", 400, "just a string", "bad", H, C, F::FormatError, "---f"),
    ("A: pydantic_dict_message_no_crash", 422, r#"{"object":"error","message":{"detail":[{"type":"extra_forbidden","loc":["body","think"],"msg":"Extra inputs are not permitted"}]}}"#, "Unprocessable Entity", H, C, F::FormatError, "---f"),
    ("A: nested_error_dict_message_no_crash", 400, r#"{"error":{"message":{"detail":[{"type":"missing","loc":["body","required"]}]}}}"#, "Validation error", H, sz(1_000, 200_000, 0), F::FormatError, "---f"),
    ("A: metadata_raw_dict_message_no_crash", 400, r#"{"error":{"message":"Provider error","metadata":{"raw":"{\"error\":{\"message\":{\"detail\":[{\"type\":\"invalid\"}]}}}"}}}"#, "Provider error", H, C, F::FormatError, "---f"),
    ("A: non_anthropic_400_with_signature_not_classified_as_thinking", 400, "", "invalid signature", H, p("openrouter"), F::FormatError, "---f"),
    ("A: 400_cannot_be_modified_without_thinking_not_classified", 400, "", "this field cannot be modified after creation", H, p("anthropic"), F::FormatError, "---f"),
    ("A: invalid_encrypted_content_broad_message_match_does_not_catch_generic_parse_error", 400, r#"{"error":{"message":"Encrypted content could not be decrypted or parsed."}}"#, "Encrypted content could not be decrypted or parsed.", H, pm("custom", "gpt-5.4"), F::FormatError, "---f"),
    ("A: unrelated_400_is_not_misclassified", 400, "", "bad request: missing field 'model'", H, pm("openrouter", "anthropic/claude-sonnet-4"), F::FormatError, "---f"),
    // ── request-shape recoveries ──
    ("A: invalid_encrypted_content_classified_as_retryable_replay_failure", 400, r#"{"error":{"message":"{\"error\":{\"message\":\"The encrypted content for item rs_001 could not be verified. Reason: Encrypted content could not be decrypted or parsed.\",\"type\":\"invalid_request_error\",\"param\":\"\",\"code\":\"invalid_encrypted_content\"}}","type":"400"}}"#, "Error code: 400 - invalid_encrypted_content", H, pm("custom", "gpt-5.4"), F::InvalidEncryptedContent, "r---"),
    ("A: invalid_encrypted_content_code_is_case_insensitive_for_400 (Invalid_Encrypted_Content)", 400, r#"{"error":{"code":"Invalid_Encrypted_Content","message":"Bad request"}}"#, "Error code: 400 - bad request", H, pm("custom", "gpt-5.4"), F::InvalidEncryptedContent, "r---"),
    ("A: invalid_encrypted_content_code_is_case_insensitive_for_400 (INVALID_ENCRYPTED_CONTENT)", 400, r#"{"error":{"code":"INVALID_ENCRYPTED_CONTENT","message":"Bad request"}}"#, "Error code: 400 - bad request", H, pm("custom", "gpt-5.4"), F::InvalidEncryptedContent, "r---"),
    ("S: invalid_encrypted_content code without a status", 0, r#"{"error":{"code":"invalid_encrypted_content","message":"bad replay"}}"#, "stream error", O, C, F::InvalidEncryptedContent, "r---"),
    ("A: xiaomi_mimo_text_is_not_set_pattern", 400, "", "Error code: 400 - {'error': {'code': '400', 'message': 'Param Incorrect', 'param': 'text is not set', 'type': ''}}", H, pm("xiaomi", "mimo-v2.5"), F::MultimodalToolContentUnsupported, "r---"),
    ("A: generic_tool_message_must_be_string", 400, "", "tool message content must be a string", H, pm("custom", "some-model"), F::MultimodalToolContentUnsupported, "r---"),
    ("A: expected_string_got_list", 400, "", "Schema validation failed: expected string, got list", H, pm("custom", "some-model"), F::MultimodalToolContentUnsupported, "r---"),
    ("A: multimodal_tool_content_takes_priority_over_context_overflow", 400, "", "text is not set; context length exceeded", H, pm("xiaomi", "mimo-v2.5"), F::MultimodalToolContentUnsupported, "r---"),
    ("A: no_status_code_path_also_classifies", 0, "", "tool_call.content must be string", O, pm("alibaba", "qwen3.5-plus"), F::MultimodalToolContentUnsupported, "r---"),
    // ── provider-specific ──
    ("A: anthropic_thinking_signature", 400, "", "thinking block has invalid signature", H, p("anthropic"), F::ThinkingSignature, "r---"),
    ("A: thinking_signature_via_openrouter", 400, "", "thinking block has invalid signature", H, pm("openrouter", "anthropic/claude-sonnet-4"), F::ThinkingSignature, "r---"),
    ("A: anthropic_thinking_blocks_cannot_be_modified", 400, "", "messages.73.content.10: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.", H, p("anthropic"), F::ThinkingSignature, "r---"),
    ("A: anthropic_thinking_cannot_be_modified_via_openrouter", 400, "", "`thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified.", H, p("openrouter"), F::ThinkingSignature, "r---"),
    ("A: anthropic_long_context_tier", 429, "", "Extra usage is required for long context requests over 200k tokens", H, pm("anthropic", "claude-sonnet-4"), F::LongContextTier, "rc--"),
    ("A: anthropic_oauth_1m_beta_forbidden", 400, "", "The long context beta is not yet available for this subscription.", H, pm("anthropic", "claude-sonnet-4.6"), F::OauthLongContextBetaForbidden, "r---"),
    ("A: llama_cpp_grammar_parse_error", 400, "", r"parse: error parsing grammar: unknown escape at \d", H, p("openai-compatible"), F::LlamaCppGrammarPattern, "r---"),
    ("A: llama_cpp_unable_to_generate_parser", 400, "", "Unable to generate parser for this template", H, p("openai-compatible"), F::LlamaCppGrammarPattern, "r---"),
    ("A: llama_cpp_json_schema_to_grammar_phrase", 400, "", "json-schema-to-grammar failed to convert schema", H, p("openai-compatible"), F::LlamaCppGrammarPattern, "r---"),
    // ── unknown / cancelled ──
    ("A: 404_generic", 404, "", "Not Found", H, C, F::Unknown, "r---"),
    ("A: generic_exception_is_unknown", 0, "", "something weird happened", O, C, F::Unknown, "r---"),
    ("A: empty_exception_message", 0, "", "", O, C, F::Unknown, "r---"),
    ("A: 200_with_error_body", 200, r#"{"error":{"message":"loading"}}"#, "model loading", H, C, F::Unknown, "r---"),
    ("A: other_error_without_status_code_not_forced_to_rate_limit", 0, "", "something went wrong", O, pm("copilot", "gpt-4o"), F::Unknown, "r---"),
    ("B: plain_unknown_error_still_unknown", 0, "", "something exploded", O, C, F::Unknown, "r---"),
    ("R: undecodable stream chunk", 0, "", "cannot decode provider response: bad stream chunk (expected value at line 1 column 1)", Dc, C, F::Unknown, "r---"),
    ("R: provider configuration error", 0, "", "provider configuration error: invalid header value", O, C, F::Unknown, "r---"),
    ("R: cancelled", 0, "", "cancelled", Cn, C, F::Cancelled, "----"),
    ("R: cancelled wins over a 429", 429, "", "Too Many Requests", Cn, C, F::Cancelled, "----"),
];

fn flags(c: &ClassifiedError) -> String {
    [
        (c.retryable, 'r'),
        (c.should_compress, 'c'),
        (c.should_rotate_credential, 'k'),
        (c.should_fallback, 'f'),
    ]
    .iter()
    .map(|(on, ch)| if *on { *ch } else { '-' })
    .collect()
}

fn run(row: &Row) -> ClassifiedError {
    let (_, status, body, message, kind, ctx, _, _) = *row;
    let ctx = ErrorContext {
        provider: ctx.provider,
        model: ctx.model,
        approx_tokens: ctx.tokens,
        context_length: ctx.window,
        num_messages: ctx.msgs,
    };
    classify_parts(Some(status), body, message, kind, &ctx)
}

#[test]
fn table_has_at_least_eighty_rows() {
    assert!(ROWS.len() >= 80, "{} rows", ROWS.len());
}

#[test]
fn every_row_classifies_as_expected() {
    let mut failures = Vec::new();
    for row in ROWS {
        let (name, _, _, _, _, _, reason, want) = *row;
        let got = run(row);
        let got_flags = flags(&got);
        if got.reason != reason || got_flags != want {
            failures.push(format!(
                "{name}: want {reason} {want}, got {} {got_flags}",
                got.reason
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn table_covers_every_reason() {
    // auth_permanent is never produced from an error alone; it is the
    // escalation of an auth failure a credential refresh did not fix.
    let escalated = run(&ROWS[0]).into_auth_permanent();
    assert_eq!(escalated.reason, F::AuthPermanent);
    assert_eq!(flags(&escalated), "---f");
    let mut missing: Vec<_> = FailoverReason::ALL
        .into_iter()
        .filter(|r| *r != F::AuthPermanent && !ROWS.iter().any(|row| row.6 == *r))
        .collect();
    missing.dedup();
    assert!(missing.is_empty(), "reasons without a row: {missing:?}");
}
