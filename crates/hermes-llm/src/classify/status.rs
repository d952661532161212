//! Classification by HTTP status (refined by the text) and by body code.

use super::Probe;
use super::patterns::{self as p, any};
use super::verdict::{self as v, Verdict};

/// Classifies by HTTP status; `None` for statuses outside 4xx/5xx.
pub(crate) fn by_status(status: u16, pr: &Probe<'_>) -> Option<Verdict> {
    let msg = pr.msg;
    let code = pr.code.to_lowercase();
    let verdict = match status {
        401 => v::AUTH_REJECTED,
        // Some providers signal plan or credit exhaustion with a 403.
        403 if (pr.provider == "xai-oauth" && code == p::XAI_SPENDING_LIMIT_CODE)
            || msg.contains("key limit exceeded")
            || msg.contains("spending limit")
            || any(msg, p::BILLING) =>
        {
            v::BILLING
        }
        403 => v::AUTH_FORBIDDEN,
        402 => classify_402(msg),
        404 => classify_404(msg),
        413 => v::PAYLOAD_TOO_LARGE,
        // Z.AI reuses 429 for server-wide overload: back off, keep the key.
        429 if any(msg, p::OVERLOADED) => v::OVERLOADED,
        429 if pr.body.openrouter_upstream => v::UPSTREAM_RATE_LIMIT,
        429 => v::RATE_LIMIT,
        400 => classify_400(pr, &code),
        // Gateways that report request-validation failures as 5xx: retrying
        // the identical request only floods the provider.
        500 | 502
            if any(msg, p::REQUEST_VALIDATION)
                || p::REQUEST_VALIDATION_CODES_5XX.contains(&code.as_str()) =>
        {
            v::FORMAT_ERROR
        }
        500 | 502 | 503 | 529 if any(msg, p::EMPTY_PROVIDER_RESPONSE) => v::SERVER_ERROR,
        // Local servers (llama.cpp) report overflow as a 5xx.
        500 | 502 | 503 | 529 if any(msg, p::CONTEXT_OVERFLOW) => v::CONTEXT_OVERFLOW,
        500 | 502 => v::SERVER_ERROR,
        503 | 529 => v::OVERLOADED,
        // Request Timeout: the server itself says a retry is safe.
        408 => v::TIMEOUT,
        _ if (400..500).contains(&status) => v::FORMAT_ERROR,
        _ if (500..600).contains(&status) => v::SERVER_ERROR,
        _ => return None,
    };
    Some(verdict)
}

/// 402: billing, unless it is a usage limit that says it will reset.
pub(crate) fn classify_402(msg: &str) -> Verdict {
    if any(msg, p::USAGE_LIMIT) && any(msg, p::USAGE_LIMIT_TRANSIENT) {
        v::RATE_LIMIT
    } else {
        v::BILLING
    }
}

fn classify_404(msg: &str) -> Verdict {
    if any(msg, p::BILLING) {
        // Credit depletion surfaced as "not available on the free tier".
        v::BILLING
    } else if any(msg, p::PROVIDER_POLICY_BLOCKED) {
        v::PROVIDER_POLICY
    } else if any(msg, p::MODEL_NOT_FOUND) {
        v::MODEL_NOT_FOUND
    } else {
        // A bare 404 is usually a wrong endpoint path, not a missing model.
        v::UNKNOWN
    }
}

/// 400: the most overloaded status; the text decides.
fn classify_400(pr: &Probe<'_>, code: &str) -> Verdict {
    let msg = pr.msg;
    if any(msg, p::MULTIMODAL_TOOL_CONTENT) {
        return v::MULTIMODAL_TOOL_CONTENT;
    }
    if any(msg, p::IMAGE_TOO_LARGE) {
        return v::IMAGE_TOO_LARGE;
    }
    if code == "invalid_encrypted_content"
        || msg.contains("invalid_encrypted_content")
        || (msg.contains("encrypted content for item") && msg.contains("could not be verified"))
        || msg.contains("could not decrypt the provided encrypted_content")
    {
        return v::INVALID_ENCRYPTED;
    }
    let validation = p::REQUEST_VALIDATION
        .iter()
        .any(|pat| *pat != p::GENERIC_INVALID_REQUEST && msg.contains(pat));
    if validation || p::REQUEST_VALIDATION_CODES_400.contains(&code) {
        return v::FORMAT_ERROR;
    }
    if any(msg, p::EMPTY_PROVIDER_RESPONSE) {
        return v::SERVER_ERROR;
    }
    if any(msg, p::CONTEXT_OVERFLOW) {
        return v::CONTEXT_OVERFLOW;
    }
    if any(msg, p::PROVIDER_POLICY_BLOCKED) {
        return v::PROVIDER_POLICY;
    }
    if any(msg, p::MODEL_NOT_FOUND) {
        return v::MODEL_NOT_FOUND;
    }
    if any(msg, p::RATE_LIMIT) {
        return v::RATE_LIMIT;
    }
    if any(msg, p::BILLING) {
        return v::BILLING;
    }
    // A bare "Error" on a large session: Anthropic sometimes answers an
    // oversized request that way.
    let body_msg = pr.body.message().trim().to_lowercase();
    let generic = body_msg.chars().count() < 30 || body_msg == "error";
    if generic && large_for_400(pr) {
        return v::CONTEXT_OVERFLOW;
    }
    v::FORMAT_ERROR
}

/// The 400 heuristic's "large session": over 40% of the window, or (for
/// windows up to 256K) over 80K tokens or 80 messages.
fn large_for_400(pr: &Probe<'_>) -> bool {
    pr.approx_tokens.saturating_mul(10) > pr.context_length.saturating_mul(4)
        || (pr.context_length <= 256_000 && (pr.approx_tokens > 80_000 || pr.num_messages > 80))
}

/// Classifies by a structured body code when no status decided it.
pub(crate) fn by_error_code(code: &str) -> Option<Verdict> {
    let code = code.to_lowercase();
    let verdict = match code.as_str() {
        "resource_exhausted" | "throttled" | "rate_limit_exceeded" => v::RATE_LIMIT_BY_CODE,
        c if p::BILLING_CODES.contains(&c) => v::BILLING,
        "model_not_found" | "model_not_available" | "invalid_model" => v::MODEL_NOT_FOUND,
        "context_length_exceeded" | "max_tokens_exceeded" => v::CONTEXT_OVERFLOW,
        "invalid_encrypted_content" => v::INVALID_ENCRYPTED,
        _ => return None,
    };
    Some(verdict)
}
