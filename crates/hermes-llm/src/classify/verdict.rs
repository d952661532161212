//! The recovery-hint table: which flags each classification carries.
//!
//! Most reasons always carry the same flags; a few (auth, rate limit,
//! timeout) carry different ones depending on the evidence, so each variant
//! gets its own named row.

use super::FailoverReason as R;

/// A reason plus its recovery hints, before status and message are attached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub reason: R,
    pub retryable: bool,
    pub compress: bool,
    pub rotate: bool,
    pub fallback: bool,
}

const fn row(reason: R, retryable: bool, compress: bool, rotate: bool, fallback: bool) -> Verdict {
    Verdict {
        reason,
        retryable,
        compress,
        rotate,
        fallback,
    }
}

// (reason, retryable, compress, rotate credential, fall back)

/// 401 or auth wording: rotate the key; if that fails, fall back.
pub(crate) const AUTH_REJECTED: Verdict = row(R::Auth, false, false, true, true);
/// 403 or a missing subscription: another key on the account will not help.
pub(crate) const AUTH_FORBIDDEN: Verdict = row(R::Auth, false, false, false, true);
/// Authentication already failed after a credential refresh.
pub(crate) const AUTH_PERMANENT: Verdict = row(R::AuthPermanent, false, false, false, true);
pub(crate) const BILLING: Verdict = row(R::Billing, false, false, true, true);
pub(crate) const RATE_LIMIT: Verdict = row(R::RateLimit, true, false, true, true);
/// A throttle known only from a structured body code.
pub(crate) const RATE_LIMIT_BY_CODE: Verdict = row(R::RateLimit, true, false, true, false);
/// An aggregator's upstream was throttled; the user's key is healthy.
pub(crate) const UPSTREAM_RATE_LIMIT: Verdict = row(R::UpstreamRateLimit, true, false, false, true);
pub(crate) const OVERLOADED: Verdict = row(R::Overloaded, true, false, false, false);
pub(crate) const SERVER_ERROR: Verdict = row(R::ServerError, true, false, false, false);
pub(crate) const TIMEOUT: Verdict = row(R::Timeout, true, false, false, false);
/// The stale-call circuit breaker gave up on an unresponsive provider.
pub(crate) const STALE_GIVE_UP: Verdict = row(R::Timeout, false, false, false, true);
pub(crate) const SSL_CERT: Verdict = row(R::SslCertVerification, false, false, false, false);
pub(crate) const CONTEXT_OVERFLOW: Verdict = row(R::ContextOverflow, true, true, false, false);
pub(crate) const PAYLOAD_TOO_LARGE: Verdict = row(R::PayloadTooLarge, true, true, false, false);
pub(crate) const IMAGE_TOO_LARGE: Verdict = row(R::ImageTooLarge, true, false, false, false);
pub(crate) const MODEL_NOT_FOUND: Verdict = row(R::ModelNotFound, false, false, false, true);
/// Account-level aggregator policy: every model on the account is affected.
pub(crate) const PROVIDER_POLICY: Verdict =
    row(R::ProviderPolicyBlocked, false, false, false, false);
pub(crate) const CONTENT_POLICY: Verdict = row(R::ContentPolicyBlocked, false, false, false, true);
pub(crate) const FORMAT_ERROR: Verdict = row(R::FormatError, false, false, false, true);
pub(crate) const INVALID_ENCRYPTED: Verdict =
    row(R::InvalidEncryptedContent, true, false, false, false);
pub(crate) const MULTIMODAL_TOOL_CONTENT: Verdict = row(
    R::MultimodalToolContentUnsupported,
    true,
    false,
    false,
    false,
);
pub(crate) const THINKING_SIGNATURE: Verdict = row(R::ThinkingSignature, true, false, false, false);
pub(crate) const LONG_CONTEXT_TIER: Verdict = row(R::LongContextTier, true, true, false, false);
pub(crate) const OAUTH_LONG_CONTEXT_BETA: Verdict =
    row(R::OauthLongContextBetaForbidden, true, false, false, false);
pub(crate) const LLAMA_CPP_GRAMMAR: Verdict =
    row(R::LlamaCppGrammarPattern, true, false, false, false);
pub(crate) const UNKNOWN: Verdict = row(R::Unknown, true, false, false, false);
pub(crate) const CANCELLED: Verdict = row(R::Cancelled, false, false, false, false);
