//! The counters behind `/metrics`: turns, tool calls, model calls, tokens,
//! cost and errors, fed by the sessions' events; gauges the serving process
//! sets (runs in flight, the scheduler lease) before each scrape.

use std::sync::atomic::AtomicU64;

use hermes_protocol::{ToolOutcome, TurnEnd, Usage};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::{Family, MetricConstructor};
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// One series' labels.
pub type Labels = Vec<(&'static str, String)>;

/// Latency buckets from 5 ms to ~80 s.
#[derive(Clone, Copy)]
struct Seconds;

impl MetricConstructor<Histogram> for Seconds {
    fn new_metric(&self) -> Histogram {
        Histogram::new(exponential_buckets(0.005, 2.0, 15))
    }
}

/// Every metric this process exports.
pub struct Metrics {
    registry: Registry,
    turns: Family<Labels, Counter>,
    tool_calls: Family<Labels, Counter>,
    tool_seconds: Family<Labels, Histogram, Seconds>,
    model_calls: Family<Labels, Counter>,
    model_seconds: Family<Labels, Histogram, Seconds>,
    tokens: Family<Labels, Counter>,
    cost: Family<Labels, Counter<f64, AtomicU64>>,
    errors: Family<Labels, Counter>,
    /// Work in flight by part (`api_server`, `messaging`, `webhook`).
    pub in_flight: Family<Labels, Gauge>,
    /// 1 while this process holds the cron scheduler lease (or ticks alone).
    pub scheduler_lease: Gauge,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Empty counters, registered under the `hermes_` prefix.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("hermes");
        let turns = Family::default();
        let tool_calls = Family::default();
        let tool_seconds = Family::new_with_constructor(Seconds);
        let model_calls = Family::default();
        let model_seconds = Family::new_with_constructor(Seconds);
        let tokens = Family::default();
        let cost = Family::default();
        let errors = Family::default();
        let in_flight = Family::default();
        let scheduler_lease = Gauge::default();
        registry.register(
            "turns",
            "Turns ended, by platform and outcome",
            turns.clone(),
        );
        registry.register(
            "tool_calls",
            "Tool calls, by tool and outcome",
            tool_calls.clone(),
        );
        registry.register(
            "tool_call_duration_seconds",
            "Tool call wall time",
            tool_seconds.clone(),
        );
        registry.register(
            "model_calls",
            "Model API calls, by provider, model and status (ok or the error class)",
            model_calls.clone(),
        );
        registry.register(
            "model_call_duration_seconds",
            "Model API call wall time, streaming included",
            model_seconds.clone(),
        );
        registry.register(
            "tokens",
            "Tokens, by provider, model and kind (input, output, cache_read, cache_write, reasoning)",
            tokens.clone(),
        );
        registry.register(
            "cost_usd",
            "Estimated cost in US dollars where the model's price is known",
            cost.clone(),
        );
        registry.register(
            "errors",
            "Failures, by class (model call error classes, turn_error)",
            errors.clone(),
        );
        registry.register(
            "in_flight",
            "Runs and turns in flight, by part of the gateway",
            in_flight.clone(),
        );
        registry.register(
            "scheduler_lease_held",
            "1 while this process ticks the cron scheduler",
            scheduler_lease.clone(),
        );
        Self {
            registry,
            turns,
            tool_calls,
            tool_seconds,
            model_calls,
            model_seconds,
            tokens,
            cost,
            errors,
            in_flight,
            scheduler_lease,
        }
    }

    /// A turn ended on `platform`.
    pub(crate) fn turn(&self, platform: &str, end: Option<&TurnEnd>) {
        let outcome = match end {
            Some(TurnEnd::Completed) => "completed",
            Some(TurnEnd::BudgetExhausted) => "budget_exhausted",
            Some(TurnEnd::Interrupted) => "interrupted",
            None => "error",
        };
        self.turns
            .get_or_create(&vec![
                ("platform", platform.to_owned()),
                ("outcome", outcome.to_owned()),
            ])
            .inc();
        if end.is_none() {
            self.error("turn_error");
        }
    }

    /// A tool call finished.
    pub(crate) fn tool(&self, tool: &str, outcome: ToolOutcome, duration_ms: u64) {
        let outcome = match outcome {
            ToolOutcome::Ok => "ok",
            ToolOutcome::Error => "error",
            ToolOutcome::Cancelled => "cancelled",
        };
        self.tool_calls
            .get_or_create(&vec![
                ("tool", tool.to_owned()),
                ("outcome", outcome.to_owned()),
            ])
            .inc();
        self.tool_seconds
            .get_or_create(&vec![("tool", tool.to_owned())])
            .observe(duration_ms as f64 / 1000.0);
    }

    /// A model call ended with `status`.
    pub(crate) fn model_call(
        &self,
        provider: &str,
        model: &str,
        status: &str,
        duration_ms: u64,
        usage: &Usage,
    ) {
        let route = vec![
            ("provider", provider.to_owned()),
            ("model", model.to_owned()),
        ];
        let mut labelled = route.clone();
        labelled.push(("status", status.to_owned()));
        self.model_calls.get_or_create(&labelled).inc();
        self.model_seconds
            .get_or_create(&route)
            .observe(duration_ms as f64 / 1000.0);
        if status != "ok" && status != "cancelled" {
            self.error(status);
        }
        for (kind, count) in [
            ("input", usage.input_tokens),
            ("output", usage.output_tokens),
            ("cache_read", usage.cache_read_tokens),
            ("cache_write", usage.cache_write_tokens),
            ("reasoning", usage.reasoning_tokens),
        ] {
            if count > 0 {
                let mut labels = route.clone();
                labels.push(("kind", kind.to_owned()));
                self.tokens.get_or_create(&labels).inc_by(count);
            }
        }
        let billing = hermes_llm::pricing::resolve_billing_route(model, provider, "");
        if let Some(usd) = hermes_llm::pricing::estimate_cost(&billing, usage)
            .amount_usd
            .filter(|usd| *usd > 0.0)
        {
            self.cost.get_or_create(&route).inc_by(usd);
        }
    }

    fn error(&self, class: &str) {
        self.errors
            .get_or_create(&vec![("class", class.to_owned())])
            .inc();
    }

    /// The OpenMetrics text exposition of every metric.
    pub fn render(&self) -> String {
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }
}
