//! What a context-overflow error says about the model's limits: the real context
//! window a provider reports, or how many output tokens would still fit. The agent
//! uses these to step its context length down (only to a limit the provider stated,
//! never a guess) or to shrink `max_tokens` for one call.

use std::sync::LazyLock;

use regex::Regex;

/// Context length assumed when neither config nor a provider says otherwise.
pub const DEFAULT_CONTEXT_LENGTH: u64 = 256_000;

fn compile(patterns: &[&str]) -> Vec<Regex> {
    patterns.iter().filter_map(|p| Regex::new(p).ok()).collect()
}

/// Numbers near context-window wording, most specific phrasing first.
static LIMIT_PATTERNS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    compile(&[
        r"max_model_len\s*(?:is\s*)?[:=(]?\s*(\d{4,})",
        r"maximum model length\s*(?:is\s*)?[:=(]?\s*(\d{4,})",
        r"(?:max(?:imum)?|limit)\s*(?:context\s*)?(?:length|size|window)?\s*(?:is|of|:)?\s*(\d{4,})",
        r"context\s*(?:length|size|window)\s*(?:is|of|:)?\s*(\d{4,})",
        r"(\d{4,})\s*(?:token)?\s*(?:context|limit)",
        r">\s*(\d{4,})\s*(?:max|limit|token)",
        r"(\d{4,})\s*(?:max(?:imum)?)\b",
    ])
});

fn first_number(re: &Regex, text: &str) -> Option<u64> {
    re.captures(text)?.get(1)?.as_str().parse().ok()
}

/// The context window an error message states ("maximum context length is 32768
/// tokens", "max_model_len 8192" …), when it states a plausible one.
pub fn parse_context_limit(message: &str) -> Option<u64> {
    let lower = message.to_lowercase();
    LIMIT_PATTERNS
        .iter()
        .find_map(|re| first_number(re, &lower))
        .filter(|n| (1024..=10_000_000).contains(n))
}

/// A provider-reported limit below `current`; `None` when the message reports none
/// (then the window is kept and only compression helps).
pub fn lower_limit_from_error(message: &str, current: u64) -> Option<u64> {
    parse_context_limit(message).filter(|&n| n < current)
}

fn output_cap_shaped(lower: &str) -> bool {
    (lower.contains("max_tokens")
        && (lower.contains("available_tokens") || lower.contains("available tokens")))
        || (lower.contains("in the output") && lower.contains("maximum context length"))
        || (lower.contains("maximum context length")
            && lower.contains("requested")
            && lower.contains("output tokens"))
        || lower.contains("range of max_tokens should be")
}

static RANGE: LazyLock<Vec<Regex>> =
    LazyLock::new(|| compile(&[r"range of max_tokens should be\s*\[\s*\d+\s*,\s*(\d+)\s*\]"]));
static AVAILABLE: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    compile(&[
        r"available_tokens[:\s]+(\d+)",
        r"available\s+tokens[:\s]+(\d+)",
        r"=\s*(\d+)\s*$",
    ])
});
static CTX_IS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    compile(&[
        r"maximum context length is (\d+)",
        r"maximum context length is (\d+)\s*token",
    ])
});
static PARTS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    compile(&[
        r"\((\d+)\s+of text input,\s*(\d+)\s+of tool input,\s*(\d+)\s+in the output\)",
        r"prompt contains (\d+)\s*character",
        r"prompt contains (?:at least )?(\d+)\s*input tokens",
    ])
});

fn nth(v: &[Regex], i: usize, text: &str) -> Option<u64> {
    v.get(i).and_then(|re| first_number(re, text))
}

/// For an error about the *output* cap being too large (the input fits), how many
/// output tokens would fit; `None` for anything else.
pub fn parse_available_output_tokens(message: &str) -> Option<u64> {
    let lower = message.to_lowercase();
    if !output_cap_shaped(&lower) {
        return None;
    }
    if let Some(cap) = nth(&RANGE, 0, &lower).filter(|&n| n >= 1) {
        return Some(cap);
    }
    if let Some(n) = AVAILABLE
        .iter()
        .find_map(|re| first_number(re, &lower))
        .filter(|&n| n >= 1)
    {
        return Some(n);
    }
    // "maximum context length is N … (A of text input, B of tool input, C in the output)".
    if let (Some(ctx), Some(caps)) = (
        nth(&CTX_IS, 0, &lower),
        PARTS.first().and_then(|re| re.captures(&lower)),
    ) {
        let part = |i: usize| -> u64 {
            caps.get(i)
                .and_then(|m| m.as_str().parse().ok())
                .unwrap_or(0)
        };
        if let Some(avail) = ctx.checked_sub(part(1) + part(2)).filter(|&n| n >= 1) {
            return Some(avail);
        }
    }
    let ctx_tokens = nth(&CTX_IS, 1, &lower)?;
    // The prompt measured in characters: about three per token, erring towards input.
    if let Some(chars) = nth(&PARTS, 1, &lower)
        && let Some(avail) = ctx_tokens
            .checked_sub(chars.div_ceil(3))
            .filter(|&n| n >= 1)
    {
        return Some(avail);
    }
    let input = nth(&PARTS, 2, &lower)?;
    ctx_tokens.checked_sub(input).filter(|&n| n >= 1)
}

/// Whether a rejection is about `max_tokens` exceeding the model's output cap (which
/// compression cannot fix) rather than an oversized input.
pub fn is_output_cap_error(message: &str) -> bool {
    let lower = message.to_lowercase();
    let mentions_output = ["max_tokens", "max_output_tokens", "max_completion_tokens"]
        .iter()
        .any(|k| lower.contains(k));
    let cap_signal = [
        "range of max_tokens should be",
        "available_tokens",
        "available tokens",
        "should be",
        "less than or equal",
        "must be",
    ]
    .iter()
    .any(|k| lower.contains(k))
        || (lower.contains("in the output") && lower.contains("maximum context length"))
        || (lower.contains("requested") && lower.contains("output tokens"));
    let input_signal = [
        "prompt is too long",
        "prompt too long",
        "input is too long",
        "input token",
        "prompt length",
        "prompt contains",
        "reduce the length",
    ]
    .iter()
    .any(|k| lower.contains(k));
    mentions_output && cap_signal && !input_signal
}

#[cfg(test)]
#[path = "context_limits_tests.rs"]
mod tests;
