use super::*;

fn usage(input: u64, output: u64, read: u64, write: u64) -> Usage {
    Usage {
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: read,
        cache_write_tokens: write,
        reasoning_tokens: 0,
    }
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

#[test]
fn routes_follow_provider_then_host() {
    let r = resolve_billing_route("anthropic/claude-sonnet-4.5", "anthropic", "");
    assert_eq!(
        (r.provider.as_str(), r.model.as_str()),
        ("anthropic", "claude-sonnet-4.5")
    );
    assert_eq!(r.billing_mode, "official_docs_snapshot");
    let r = resolve_billing_route("gpt-4o", "", "https://openrouter.ai/api/v1");
    assert_eq!(
        (r.provider.as_str(), r.billing_mode),
        ("openrouter", "official_models_api")
    );
    let r = resolve_billing_route("openai/gpt-4.1", "", "");
    assert_eq!(
        (r.provider.as_str(), r.model.as_str()),
        ("openai", "gpt-4.1")
    );
    let r = resolve_billing_route("qwen3", "custom", "http://127.0.0.1:8080/v1");
    assert_eq!((r.provider.as_str(), r.billing_mode), ("custom", "unknown"));
    let r = resolve_billing_route("qwen3", "", "http://localhost:8080/v1");
    assert_eq!(r.provider, "custom");
    let r = resolve_billing_route("gpt-5.5", "openai-codex", "");
    assert_eq!(r.billing_mode, "subscription_included");
    let r = resolve_billing_route(
        "accounts/fireworks/models/glm-5p1",
        "",
        "https://api.fireworks.ai/inference/v1",
    );
    assert_eq!(
        (r.provider.as_str(), r.model.as_str()),
        ("fireworks", "glm-5p1")
    );
}

#[test]
fn anthropic_prices_with_cache_buckets() {
    let route = resolve_billing_route("claude-sonnet-4.5", "anthropic", "");
    // 1M prompt tokens of which 200k cache reads and 100k cache writes: 700k uncached.
    let cost = estimate_cost(&route, &usage(1_000_000, 100_000, 200_000, 100_000));
    let expected = 0.7 * 3.0 + 0.1 * 15.0 + 0.2 * 0.30 + 0.1 * 3.75;
    assert!(close(cost.amount_usd, expected), "{cost:?}");
    assert_eq!(cost.status, CostStatus::Estimated);
    assert_eq!(cost.source, "official_docs_snapshot");
    assert_eq!(cost.pricing_version, Some("anthropic-pricing-2026-05"));
}

#[test]
fn missing_bucket_rate_makes_cost_unknown() {
    // gpt-4o publishes no cache-write rate.
    let route = resolve_billing_route("gpt-4o", "openai", "");
    let cost = estimate_cost(&route, &usage(1000, 10, 0, 500));
    assert_eq!(cost.status, CostStatus::Unknown);
    assert_eq!(cost.amount_usd, None);
    let cost = estimate_cost(&route, &usage(1_000_000, 0, 0, 0));
    assert!(close(cost.amount_usd, 2.5));
}

#[test]
fn unknown_models_and_routes() {
    let cost = estimate_cost(
        &resolve_billing_route("mystery", "openai", ""),
        &usage(10, 10, 0, 0),
    );
    assert_eq!(cost.status, CostStatus::Unknown);
    assert_eq!(cost.source, "none");
    let cost = estimate_cost(
        &resolve_billing_route("llama", "custom", "http://h/v1"),
        &usage(10, 10, 0, 0),
    );
    assert_eq!(cost.amount_usd, None);
    let cost = estimate_cost(
        &resolve_billing_route("gpt-5.5", "openai-codex", ""),
        &usage(10, 10, 0, 0),
    );
    assert_eq!(
        (cost.status, cost.amount_usd),
        (CostStatus::Included, Some(0.0))
    );
}

#[test]
fn bedrock_ids_are_normalised() {
    for id in [
        "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "global.anthropic.claude-sonnet-4.5",
        "anthropic.claude-sonnet-4-5-v2",
    ] {
        let route = BillingRoute {
            provider: "bedrock".into(),
            model: id.into(),
            base_url: String::new(),
            billing_mode: "official_docs_snapshot",
        };
        let price = price_for(&route).unwrap_or_else(|| panic!("{id} unpriced"));
        assert_eq!(price.input, Some(3.0), "{id}");
    }
    assert_eq!(normalize_bedrock("amazon.nova-pro-v1:0"), "amazon.nova-pro");
    assert_eq!(
        normalize_bedrock("apac.amazon.nova-lite-v1:0"),
        "amazon.nova-lite"
    );
}

#[test]
fn anthropic_dotted_and_prefixed_names() {
    assert_eq!(
        normalize_anthropic("anthropic/Claude-Opus-4.7"),
        "claude-opus-4-7"
    );
    let route = resolve_billing_route("claude-opus-4.8", "anthropic", "");
    assert_eq!(price_for(&route).and_then(|p| p.output), Some(25.0));
    assert_eq!(dash_versions("v1.2.3-a.b"), "v1-2-3-a.b");
}

#[test]
fn canonical_input_excludes_cache() {
    assert_eq!(canonical_input_tokens(&usage(100, 0, 30, 20)), 50);
    assert_eq!(canonical_input_tokens(&usage(10, 0, 30, 20)), 0);
}
