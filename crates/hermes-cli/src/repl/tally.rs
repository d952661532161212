//! Token and cost bookkeeping for /usage and the exit summary.

use std::time::Duration;

use hermes_llm::pricing::{self, CostStatus};
use hermes_protocol::Usage;

/// What a session has used so far. Cost is summed per turn with the model in use
/// then, so a `/model` switch mid-session is priced right.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    /// Tokens over all turns.
    pub usage: Usage,
    /// Model calls.
    pub api_calls: u64,
    /// User turns that reached the model.
    pub turns: u64,
    /// Summed USD estimate of the turns that could be priced.
    pub cost_usd: f64,
    /// Whether some turn could not be priced (unknown model or endpoint).
    pub cost_incomplete: bool,
    /// Whether some turn was priced at all.
    pub cost_known: bool,
}

impl Tally {
    /// Adds one turn's usage, priced for `model` on `provider` at `base_url`.
    pub fn add_turn(
        &mut self,
        usage: &Usage,
        api_calls: u32,
        model: &str,
        provider: &str,
        base_url: &str,
    ) {
        self.usage.add(usage);
        self.api_calls += u64::from(api_calls);
        self.turns += 1;
        let route = pricing::resolve_billing_route(model, provider, base_url);
        let cost = pricing::estimate_cost(&route, usage);
        match (cost.status, cost.amount_usd) {
            (CostStatus::Unknown, _) | (_, None) => self.cost_incomplete = true,
            (_, Some(usd)) => {
                self.cost_usd += usd;
                self.cost_known = true;
            }
        }
    }

    /// The cost as people read it: `$0.0123`, `≥ $0.01` when part is unknown,
    /// `unknown` when nothing could be priced.
    pub fn cost_text(&self) -> String {
        match (self.cost_known, self.cost_incomplete) {
            (false, _) if self.usage.total() == 0 => "$0.00".into(),
            (false, _) => "cost unknown".into(),
            (true, false) => format!("~${}", usd(self.cost_usd)),
            (true, true) => format!("≥ ${}", usd(self.cost_usd)),
        }
    }

    /// The `/usage` report.
    pub fn report(&self, model: &str) -> String {
        let u = &self.usage;
        format!(
            "Usage this session ({model}):\n  \
             Input tokens      {}\n  \
             Output tokens     {}\n  \
             Cache read        {}{}\n  \
             Cache write       {}\n  \
             Reasoning tokens  {}\n  \
             Total tokens      {}\n  \
             API calls         {}\n  \
             Estimated cost    {}\n",
            thousands(u.input_tokens),
            thousands(u.output_tokens),
            thousands(u.cache_read_tokens),
            hit_rate(u),
            thousands(u.cache_write_tokens),
            thousands(u.reasoning_tokens),
            thousands(u.total()),
            self.api_calls,
            self.cost_text(),
        )
    }

    /// The one line shown on exit.
    pub fn exit_line(&self, elapsed: Duration) -> String {
        format!(
            "Session: {} turn{} · {} tokens ({} in / {} out) · {} · {}",
            self.turns,
            if self.turns == 1 { "" } else { "s" },
            thousands(self.usage.total()),
            thousands(self.usage.input_tokens),
            thousands(self.usage.output_tokens),
            self.cost_text(),
            duration(elapsed),
        )
    }
}

/// ` (42% hit)` when the prompt had cache reads.
fn hit_rate(u: &Usage) -> String {
    if u.cache_read_tokens == 0 || u.input_tokens == 0 {
        return String::new();
    }
    let pct = u.cache_read_tokens.saturating_mul(100) / u.input_tokens.max(1);
    format!(" ({}% of input)", pct.min(100))
}

/// Dollars with enough digits that small sessions do not read as zero.
fn usd(v: f64) -> String {
    if v >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.4}")
    }
}

pub use hermes_state::numfmt::thousands;

/// `1h 02m`, `3m 07s`, `12s`.
pub fn duration(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, output: u64, cache: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: cache,
            ..Usage::default()
        }
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(duration(Duration::from_secs(5)), "5s");
        assert_eq!(duration(Duration::from_secs(187)), "3m 07s");
        assert_eq!(duration(Duration::from_secs(3720)), "1h 02m");
    }

    #[test]
    fn usage_report_and_exit_line() {
        let mut t = Tally::default();
        t.add_turn(
            &usage(12_000, 800, 9_000),
            2,
            "claude-sonnet-4.5",
            "anthropic",
            "https://api.anthropic.com",
        );
        t.add_turn(
            &usage(500, 20, 0),
            1,
            "my-local-model",
            "custom",
            "http://127.0.0.1:9",
        );
        insta::assert_snapshot!("usage_report", t.report("my-local-model"));
        insta::assert_snapshot!("exit_line", t.exit_line(Duration::from_secs(125)));
    }

    #[test]
    fn an_empty_session_costs_nothing() {
        let t = Tally::default();
        assert_eq!(
            t.exit_line(Duration::from_secs(1)),
            "Session: 0 turns · 0 tokens (0 in / 0 out) · $0.00 · 1s"
        );
    }
}
