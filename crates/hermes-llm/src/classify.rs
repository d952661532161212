//! Structured classification of model-call failures.
//!
//! Every failed call is mapped to a [`FailoverReason`] plus recovery hints
//! (retry, compress the context, rotate the credential, fall back to another
//! model) so the retry loop reads flags instead of matching error strings.
//!
//! The pipeline runs in priority order:
//!
//! 1. provider-specific fingerprints (safety refusals, Anthropic thinking
//!    signatures and long-context tier, llama.cpp grammar, Grok entitlement);
//! 2. the HTTP status, refined by the text (402 billing vs. resetting quota,
//!    429 overload vs. throttle, 400 overflow vs. malformed request, …);
//! 3. a structured error code from the body;
//! 4. message phrases (billing vs. rate limit vs. overflow vs. auth);
//! 5. TLS certificate failures (fail fast), then TLS alerts (retry as a
//!    timeout, never compress);
//! 6. a dropped connection on a large session (probable overflow);
//! 7. transport-level errors (timeout);
//! 8. otherwise unknown, retried with backoff.

mod body;
mod patterns;
mod reason;
mod reasoning;
mod status;
mod text;
mod verdict;

use std::time::Duration;

use crate::LlmError;
use body::ParsedBody;
use patterns::{self as p, any};
pub use reason::FailoverReason;

/// `text` with secrets masked strictly (see [`crate::redact`]); kept here because
/// error messages and compression summaries have always imported it from here.
pub use crate::redact::redact_secrets;
use verdict::{self as v, Verdict};

/// Context window assumed when the caller does not know the model's.
pub const DEFAULT_CONTEXT_LENGTH: usize = 200_000;

/// A classified failure with the hints the retry loop acts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassifiedError {
    /// Why the call failed.
    pub reason: FailoverReason,
    /// Retrying the same request (after backoff) may succeed.
    pub retryable: bool,
    /// Compressing the conversation should fix it.
    pub should_compress: bool,
    /// Switching to another credential of the same provider may help.
    pub should_rotate_credential: bool,
    /// Switching to a fallback model or provider may help.
    pub should_fallback: bool,
    /// The HTTP status, when there was one.
    pub status: Option<u16>,
    /// How long to wait before retrying, when the provider said (at most 10
    /// minutes; only set on retryable classifications).
    pub retry_after: Option<Duration>,
    /// A short description (at most 500 characters), secrets redacted.
    pub message: String,
    /// For [`FailoverReason::UpstreamRateLimit`]: the upstream provider.
    pub upstream_provider: Option<String>,
}

impl ClassifiedError {
    /// True for [`FailoverReason::Auth`] and [`FailoverReason::AuthPermanent`].
    pub fn is_auth(&self) -> bool {
        matches!(
            self.reason,
            FailoverReason::Auth | FailoverReason::AuthPermanent
        )
    }

    /// Escalates an auth failure that a credential refresh did not fix:
    /// not retryable, no rotation, fall back to another provider.
    pub fn into_auth_permanent(self) -> Self {
        let hints = v::AUTH_PERMANENT;
        Self {
            reason: hints.reason,
            retryable: hints.retryable,
            should_compress: hints.compress,
            should_rotate_credential: hints.rotate,
            should_fallback: hints.fallback,
            retry_after: None,
            ..self
        }
    }
}

/// What the caller knows about the failed call.
#[derive(Debug, Clone, Copy, Default)]
pub struct ErrorContext<'a> {
    /// Provider id (`openrouter`, `anthropic`, `xai-oauth`, …).
    pub provider: &'a str,
    /// Model slug.
    pub model: &'a str,
    /// Approximate size of the conversation, in tokens.
    pub approx_tokens: usize,
    /// The model's context window ([`DEFAULT_CONTEXT_LENGTH`] when `None`).
    pub context_length: Option<usize>,
    /// Number of messages in the conversation.
    pub num_messages: usize,
}

/// The shape of a failure, derived from the [`LlmError`] variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// An HTTP error status or an in-stream error object.
    Http,
    /// Connecting, TLS or the connection failing.
    Transport,
    /// No response or data in time.
    Timeout,
    /// The stream stopped before its end marker.
    StreamEnded,
    /// Unparseable response.
    Decode,
    /// The caller cancelled.
    Cancelled,
    /// Anything else (configuration errors, errors from other layers).
    Other,
}

impl ErrorKind {
    /// The kind of `err`.
    pub fn of(err: &LlmError) -> Self {
        match err {
            LlmError::Http { .. } => ErrorKind::Http,
            LlmError::Transport(_) => ErrorKind::Transport,
            LlmError::Timeout(_) => ErrorKind::Timeout,
            LlmError::Decode(_) => ErrorKind::Decode,
            LlmError::StreamEnded(_) => ErrorKind::StreamEnded,
            LlmError::Cancelled => ErrorKind::Cancelled,
            LlmError::Config(_) => ErrorKind::Other,
        }
    }
}

/// Classifies a failed model call.
pub fn classify_error(err: &LlmError, ctx: &ErrorContext<'_>) -> ClassifiedError {
    let (status, body) = match err {
        LlmError::Http { status, body, .. } => (Some(*status), body.as_str()),
        _ => (None, ""),
    };
    let mut out = classify_parts(status, body, &err.to_string(), ErrorKind::of(err), ctx);
    if matches!(err, LlmError::Config(_)) || err.is_refused_locally() {
        // A bad base URL, a model file that will not load or a local server
        // that is not running fails the same way every time: retrying only
        // delays the message that says how to fix it (a fallback may still answer).
        out.retryable = false;
        out.retry_after = None;
    }
    if out.retryable
        && let Some(wait) = err.retry_after()
    {
        out.retry_after = Some(text::clamp_wait(wait));
    }
    out
}

/// Classifies a failure from its raw parts: the status (`None` or `0` when
/// there was none), the response body (JSON or text), the error message and
/// the failure's kind.
pub fn classify_parts(
    status: Option<u16>,
    body: &str,
    message: &str,
    kind: ErrorKind,
    ctx: &ErrorContext<'_>,
) -> ClassifiedError {
    let status = status.filter(|s| *s != 0);
    let provider = ctx.provider.trim().to_lowercase();
    let parsed = ParsedBody::parse(body, &provider);
    let haystack = haystack(message, body, &parsed);
    let probe = Probe {
        msg: &haystack,
        code: &parsed.code,
        body: &parsed,
        provider: &provider,
        approx_tokens: ctx.approx_tokens,
        context_length: ctx.context_length.unwrap_or(DEFAULT_CONTEXT_LENGTH),
        num_messages: ctx.num_messages,
    };
    let verdict = if kind == ErrorKind::Cancelled {
        v::CANCELLED
    } else {
        pipeline(status, kind, &probe, ctx.model)
    };
    let source = match parsed.summary.as_deref() {
        Some(summary) => summary,
        None if message.trim().is_empty() => body,
        None => message,
    };
    let retry_after = verdict
        .retryable
        .then(|| {
            let from_body = parsed
                .retry_after_secs
                .map(|s| Duration::from_secs_f64(s.min(1e9)));
            from_body
                .map(text::clamp_wait)
                .or_else(|| text::wait_in_text(&haystack))
        })
        .flatten();
    let upstream_provider = (verdict.reason == FailoverReason::UpstreamRateLimit)
        .then(|| parsed.upstream_provider.clone())
        .flatten();
    ClassifiedError {
        reason: verdict.reason,
        retryable: verdict.retryable,
        should_compress: verdict.compress,
        should_rotate_credential: verdict.rotate,
        should_fallback: verdict.fallback,
        status,
        retry_after,
        message: text::short(&redact_secrets(source)),
        upstream_provider,
    }
}

/// What the classification steps look at.
pub(crate) struct Probe<'a> {
    /// Lower-cased message, body and body messages, joined.
    pub msg: &'a str,
    /// The structured error code from the body (original case).
    pub code: &'a str,
    pub body: &'a ParsedBody,
    /// Lower-cased provider id.
    pub provider: &'a str,
    pub approx_tokens: usize,
    pub context_length: usize,
    pub num_messages: usize,
}

/// The lower-cased text to search: the message, the raw body and the
/// messages inside the body (including an aggregator's wrapped one).
fn haystack(message: &str, body: &str, parsed: &ParsedBody) -> String {
    let mut text = message.to_lowercase();
    for part in [body, parsed.message(), &parsed.metadata_message] {
        let part = part.trim().to_lowercase();
        if !part.is_empty() && !text.contains(&part) {
            text.push(' ');
            text.push_str(&part);
        }
    }
    text
}

fn pipeline(status: Option<u16>, kind: ErrorKind, pr: &Probe<'_>, model: &str) -> Verdict {
    if let Some(verdict) = fingerprint(status, pr.msg) {
        return verdict;
    }
    if let Some(verdict) = status.and_then(|s| status::by_status(s, pr)) {
        return verdict;
    }
    if let Some(verdict) = status::by_error_code(pr.code) {
        return verdict;
    }
    if let Some(verdict) = by_message(pr.msg) {
        return verdict;
    }
    let msg = pr.msg;
    if any(msg, p::SSL_CERT_VERIFY) {
        return v::SSL_CERT;
    }
    // TLS alerts are transport hiccups, not overflow: checked before the
    // disconnect heuristic so a large session is not compressed for them.
    if any(msg, p::SSL_TRANSIENT) {
        return v::TIMEOUT;
    }
    let disconnect = kind == ErrorKind::StreamEnded || any(msg, p::SERVER_DISCONNECT);
    if disconnect && status.is_none() {
        // A reasoning model's long silent thinking outlasts proxy idle
        // timeouts; compressing would delete history for nothing.
        if reasoning::is_reasoning_model(model) {
            return v::TIMEOUT;
        }
        return if large_for_disconnect(pr) {
            v::CONTEXT_OVERFLOW
        } else {
            v::TIMEOUT
        };
    }
    if msg.contains("consecutive stale attempts") && msg.contains("aborting this call") {
        return v::STALE_GIVE_UP;
    }
    match kind {
        ErrorKind::Transport | ErrorKind::Timeout | ErrorKind::StreamEnded => v::TIMEOUT,
        _ => v::UNKNOWN,
    }
}

/// Provider-specific fingerprints that win over the status code.
///
/// Unlike the reference, the safety-refusal and Grok-entitlement checks are
/// skipped for a 429: a throttle response is always treated as retryable,
/// even when its body happens to carry a filter token.
fn fingerprint(status: Option<u16>, msg: &str) -> Option<Verdict> {
    let has = |s: &str| msg.contains(s);
    let throttled = status == Some(429);
    let verdict = if !throttled && any(msg, p::CONTENT_POLICY_BLOCKED) {
        v::CONTENT_POLICY
    } else if status == Some(400)
        && has("thinking")
        && (has("signature") || has("cannot be modified") || has("must remain as they were"))
    {
        v::THINKING_SIGNATURE
    } else if status == Some(429) && has("extra usage") && has("long context") {
        v::LONG_CONTEXT_TIER
    } else if status == Some(400) && has("long context beta") && has("not yet available") {
        v::OAUTH_LONG_CONTEXT_BETA
    } else if status == Some(400)
        && (has("error parsing grammar")
            || has("json-schema-to-grammar")
            || (has("unable to generate parser") && has("template")))
    {
        v::LLAMA_CPP_GRAMMAR
    } else if !throttled
        && (has("do not have an active grok subscription")
            || (has("out of available resources") && has("grok")))
    {
        v::AUTH_FORBIDDEN
    } else {
        return None;
    };
    Some(verdict)
}

/// Message phrases, for failures the status and code did not decide.
fn by_message(msg: &str) -> Option<Verdict> {
    let verdict = if any(msg, p::PAYLOAD_TOO_LARGE) {
        v::PAYLOAD_TOO_LARGE
    } else if any(msg, p::MULTIMODAL_TOOL_CONTENT) {
        v::MULTIMODAL_TOOL_CONTENT
    } else if any(msg, p::IMAGE_TOO_LARGE) {
        v::IMAGE_TOO_LARGE
    } else if any(msg, p::USAGE_LIMIT) {
        // "Rate limit exceeded" contains "limit exceeded"; an explicit
        // throttle phrase must not be promoted to billing (a guard the
        // reference added after 0.19.0).
        if any(msg, p::EXPLICIT_THROTTLE) {
            v::RATE_LIMIT
        } else {
            status::classify_402(msg)
        }
    } else if any(msg, p::OVERLOADED) {
        v::OVERLOADED
    } else if any(msg, p::BILLING) {
        v::BILLING
    } else if any(msg, p::RATE_LIMIT) {
        v::RATE_LIMIT
    } else if any(msg, p::EMPTY_PROVIDER_RESPONSE) {
        v::SERVER_ERROR
    } else if any(msg, p::CONTEXT_OVERFLOW) {
        v::CONTEXT_OVERFLOW
    } else if any(msg, p::AUTH) {
        v::AUTH_REJECTED
    } else if any(msg, p::PROVIDER_POLICY_BLOCKED) {
        v::PROVIDER_POLICY
    } else if any(msg, p::MODEL_NOT_FOUND) {
        v::MODEL_NOT_FOUND
    } else if any(msg, p::TIMEOUT_MESSAGE) {
        v::TIMEOUT
    } else {
        return None;
    };
    Some(verdict)
}

/// The disconnect heuristic's "large session": over 60% of the window, or
/// (for windows up to 256K) over 120K tokens or 200 messages.
fn large_for_disconnect(pr: &Probe<'_>) -> bool {
    pr.approx_tokens.saturating_mul(10) > pr.context_length.saturating_mul(6)
        || (pr.context_length <= 256_000 && (pr.approx_tokens > 120_000 || pr.num_messages > 200))
}

#[cfg(test)]
#[path = "classify_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "classify_table_tests.rs"]
mod table_tests;
