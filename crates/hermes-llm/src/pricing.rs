//! Cost estimation for a model call, as the reference does it: resolve the billing
//! route (which provider's price list applies), look the model up in the published
//! price snapshot, and price the canonical token buckets (uncached input, output,
//! cache reads, cache writes).
//!
//! Differences from the reference: it also prices OpenRouter and custom endpoints
//! from their live `/models` metadata; this build has no network lookup here, so
//! those routes price as unknown (tokens are still recorded).

mod table;

use hermes_protocol::Usage;

use crate::api_mode::host_of;

/// Per-million-token USD rates for one model; `None` where the provider
/// publishes no rate for that bucket.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    /// Uncached input tokens.
    pub input: Option<f64>,
    /// Output tokens (reasoning included).
    pub output: Option<f64>,
    /// Input tokens read from the prompt cache.
    pub cache_read: Option<f64>,
    /// Input tokens written to the prompt cache.
    pub cache_write: Option<f64>,
    /// Which snapshot of the price page this is (`pricing_version` in state.db).
    pub version: &'static str,
}

/// Who bills a call and for which model, as the reference resolves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BillingRoute {
    /// Billing provider id (`anthropic`, `openai`, `openrouter`, `custom` …).
    pub provider: String,
    /// Model id as the price list keys it.
    pub model: String,
    /// Endpoint the call went to.
    pub base_url: String,
    /// `official_docs_snapshot`, `official_models_api`, `subscription_included` or `unknown`.
    pub billing_mode: &'static str,
}

/// Whether a cost is an estimate, covered by a subscription, or not known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CostStatus {
    /// Priced from the snapshot.
    Estimated,
    /// Nothing to pay per call (subscription routes).
    Included,
    /// No price known for this route or token bucket.
    Unknown,
}

impl CostStatus {
    /// The reference's spelling (`cost_status` in state.db).
    pub fn as_str(self) -> &'static str {
        match self {
            CostStatus::Estimated => "estimated",
            CostStatus::Included => "included",
            CostStatus::Unknown => "unknown",
        }
    }
}

/// The priced cost of some usage.
#[derive(Debug, Clone, PartialEq)]
pub struct CostEstimate {
    /// USD, when known.
    pub amount_usd: Option<f64>,
    /// How far to trust `amount_usd`.
    pub status: CostStatus,
    /// Where the price came from (`official_docs_snapshot` or `none`).
    pub source: &'static str,
    /// The snapshot version used, when priced.
    pub pricing_version: Option<&'static str>,
}

impl CostEstimate {
    fn unknown(source: &'static str) -> Self {
        Self {
            amount_usd: None,
            status: CostStatus::Unknown,
            source,
            pricing_version: None,
        }
    }
}

/// The canonical token buckets the reference records: input *excluding* cache reads and
/// writes (our [`Usage::input_tokens`] counts the whole prompt), output, cache read, cache
/// write, reasoning.
pub fn canonical_input_tokens(usage: &Usage) -> u64 {
    usage
        .input_tokens
        .saturating_sub(usage.cache_read_tokens)
        .saturating_sub(usage.cache_write_tokens)
}

fn host_is(base_url: &str, domain: &str) -> bool {
    let host = host_of(base_url);
    host == domain || host.ends_with(&format!(".{domain}"))
}

fn last_segment(model: &str) -> String {
    model.rsplit('/').next().unwrap_or(model).to_owned()
}

/// Which provider bills `model` called through `provider` at `base_url`.
pub fn resolve_billing_route(model: &str, provider: &str, base_url: &str) -> BillingRoute {
    let mut provider = provider.trim().to_ascii_lowercase();
    let mut model = model.trim().to_owned();
    if provider.is_empty()
        && let Some((prefix, bare)) = model.split_once('/')
        && matches!(prefix, "anthropic" | "openai" | "google")
    {
        provider = prefix.to_owned();
        model = bare.to_owned();
    }
    let route = |provider: &str, model: String, mode: &'static str| BillingRoute {
        provider: provider.to_owned(),
        model,
        base_url: base_url.to_owned(),
        billing_mode: mode,
    };
    match provider.as_str() {
        "openai-codex" => route("openai-codex", model, "subscription_included"),
        "openrouter" => route("openrouter", model, "official_models_api"),
        _ if host_is(base_url, "openrouter.ai") => {
            route("openrouter", model, "official_models_api")
        }
        "nous" => route("nous", model, "official_models_api"),
        _ if host_is(base_url, "inference-api.nousresearch.com") => {
            route("nous", model, "official_models_api")
        }
        "anthropic" => route("anthropic", last_segment(&model), "official_docs_snapshot"),
        "openai" | "openai-api" => route("openai", last_segment(&model), "official_docs_snapshot"),
        "minimax" | "minimax-cn" => {
            route(&provider, last_segment(&model), "official_docs_snapshot")
        }
        "vertex" => route("gemini", last_segment(&model), "official_docs_snapshot"),
        _ if host_is(base_url, "aiplatform.googleapis.com") => {
            route("gemini", last_segment(&model), "official_docs_snapshot")
        }
        "fireworks" => route("fireworks", last_segment(&model), "official_docs_snapshot"),
        _ if host_is(base_url, "api.fireworks.ai") => {
            route("fireworks", last_segment(&model), "official_docs_snapshot")
        }
        "custom" | "local" => route(&provider, model, "unknown"),
        "" if base_url.to_ascii_lowercase().contains("localhost") => {
            route("custom", model, "unknown")
        }
        "" => route("unknown", last_segment(&model), "unknown"),
        other => route(other, last_segment(&model), "unknown"),
    }
}

/// `4.7` → `4-7`: price lists key versions with dashes.
fn dash_versions(name: &str) -> String {
    let b = name.as_bytes();
    let mut out = String::with_capacity(name.len());
    for (i, c) in name.char_indices() {
        let digit_around =
            i > 0 && b[i - 1].is_ascii_digit() && b.get(i + 1).is_some_and(u8::is_ascii_digit);
        out.push(if c == '.' && digit_around { '-' } else { c });
    }
    out
}

fn normalize_anthropic(model: &str) -> String {
    let name = model.trim().to_ascii_lowercase();
    dash_versions(name.strip_prefix("anthropic/").unwrap_or(&name))
}

/// A Bedrock id in its bare foundation-model form: region scope prefixes
/// (`us.`, `global.` …), dotted versions, and trailing `:N`, `-vN`, `-YYYYMMDD` removed.
fn normalize_bedrock(model: &str) -> String {
    const SCOPES: &[&str] = &[
        "global.", "us.", "eu.", "apac.", "ap.", "au.", "jp.", "ca.", "sa.", "me.", "af.",
    ];
    let lower = model.trim().to_ascii_lowercase();
    let name = SCOPES
        .iter()
        .find_map(|p| lower.strip_prefix(p))
        .unwrap_or(&lower);
    let name = dash_versions(name);
    let name = strip_numeric_suffix(&name, ":", None);
    let name = strip_numeric_suffix(name, "-v", None);
    strip_numeric_suffix(name, "-", Some(8)).to_owned()
}

/// `name` without a trailing `{marker}{digits}` (exactly `len` digits when given).
fn strip_numeric_suffix<'a>(name: &'a str, marker: &str, len: Option<usize>) -> &'a str {
    if let Some(i) = name.rfind(marker) {
        let tail = &name[i + marker.len()..];
        if !tail.is_empty()
            && tail.bytes().all(|b| b.is_ascii_digit())
            && len.is_none_or(|n| tail.len() == n)
        {
            return &name[..i];
        }
    }
    name
}

fn lookup(provider: &str, model: &str) -> Option<&'static Price> {
    table::PRICES
        .iter()
        .find(|(p, m, _)| *p == provider && *m == model)
        .map(|(_, _, price)| price)
}

/// The snapshot price for a route, trying the provider's normalised spellings.
pub fn price_for(route: &BillingRoute) -> Option<&'static Price> {
    let model = route.model.to_ascii_lowercase();
    if let Some(p) = lookup(&route.provider, &model) {
        return Some(p);
    }
    let normalized = match route.provider.as_str() {
        "anthropic" => normalize_anthropic(&model),
        "bedrock" => normalize_bedrock(&model),
        _ => return None,
    };
    (normalized != model)
        .then(|| lookup(&route.provider, &normalized))
        .flatten()
}

/// Prices `usage` (our [`Usage`], prompt counts including cache) on `route`. A bucket with
/// tokens but no published rate makes the whole cost unknown, as in the reference.
pub fn estimate_cost(route: &BillingRoute, usage: &Usage) -> CostEstimate {
    if route.billing_mode == "subscription_included" {
        return CostEstimate {
            amount_usd: Some(0.0),
            status: CostStatus::Included,
            source: "none",
            pricing_version: Some("included-route"),
        };
    }
    let Some(price) = price_for(route) else {
        return CostEstimate::unknown("none");
    };
    let buckets = [
        (canonical_input_tokens(usage), price.input),
        (usage.output_tokens, price.output),
        (usage.cache_read_tokens, price.cache_read),
        (usage.cache_write_tokens, price.cache_write),
    ];
    let mut amount = 0.0;
    for (tokens, rate) in buckets {
        match rate {
            Some(rate) => amount += tokens as f64 * rate / 1_000_000.0,
            None if tokens > 0 => return CostEstimate::unknown("official_docs_snapshot"),
            None => {}
        }
    }
    CostEstimate {
        amount_usd: Some(amount),
        status: CostStatus::Estimated,
        source: "official_docs_snapshot",
        pricing_version: Some(price.version),
    }
}

#[cfg(test)]
#[path = "pricing_tests.rs"]
mod tests;
