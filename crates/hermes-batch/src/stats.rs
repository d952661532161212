//! Tool and reasoning statistics: per trajectory (the reference's
//! `tool_stats`) and per run (`statistics.json`).

use std::collections::{BTreeMap, BTreeSet};

use hermes_protocol::{Message, Role, Usage};
use serde::{Deserialize, Serialize};

/// Calls of one tool and how they ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ToolStat {
    /// Calls the model made.
    pub count: u64,
    /// Results that were not errors.
    pub success: u64,
    /// Results that were errors.
    pub failure: u64,
}

/// Every tool name our toolsets know (the reference's `ALL_POSSIBLE_TOOLS`):
/// a record's `tool_stats` lists each of them, used or not.
pub fn known_tools() -> BTreeSet<&'static str> {
    hermes_tools::toolsets::TOOLSETS
        .iter()
        .flat_map(|t| t.tools.iter().copied())
        .collect()
}

/// Whether a tool result reports a failure, by the reference's rules: a
/// JSON object with a non-null `error` (or a `content` object with one), or
/// `success: false`; text that is empty or starts with `error:`. Other
/// results, non-zero exit codes included, are successes.
pub fn is_failure(content: Option<&str>) -> bool {
    let Some(text) = content else {
        return false;
    };
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(obj)) => {
            let error = |o: &serde_json::Map<String, serde_json::Value>| {
                o.get("error").is_some_and(|e| !e.is_null())
            };
            error(&obj)
                || obj
                    .get("content")
                    .and_then(serde_json::Value::as_object)
                    .is_some_and(error)
                || obj.get("success") == Some(&serde_json::Value::Bool(false))
        }
        Ok(_) => false,
        Err(_) => text.is_empty() || text.trim().to_lowercase().starts_with("error:"),
    }
}

/// Calls, successes and failures per tool in `messages`; a result counts for
/// the call whose id it carries.
pub fn tool_stats(messages: &[Message]) -> BTreeMap<String, ToolStat> {
    let mut stats: BTreeMap<String, ToolStat> = BTreeMap::new();
    let mut names: BTreeMap<&str, &str> = BTreeMap::new();
    for msg in messages {
        match msg.role {
            Role::Assistant => {
                for call in &msg.tool_calls {
                    stats.entry(call.function.name.clone()).or_default().count += 1;
                    names.insert(&call.id, &call.function.name);
                }
            }
            Role::Tool => {
                let id = msg.tool_call_id.as_deref().unwrap_or("");
                if let Some(stat) = names.get(id).and_then(|n| stats.get_mut(*n)) {
                    if is_failure(msg.content.as_deref()) {
                        stat.failure += 1;
                    } else {
                        stat.success += 1;
                    }
                }
            }
            Role::System | Role::User => {}
        }
    }
    stats
}

/// `raw` with every known tool added at zero, and the failures per tool
/// (the record's `tool_stats` and `tool_error_counts`).
pub fn normalized(
    raw: &BTreeMap<String, ToolStat>,
) -> (BTreeMap<String, ToolStat>, BTreeMap<String, u64>) {
    let mut stats: BTreeMap<String, ToolStat> = known_tools()
        .into_iter()
        .map(|t| (t.to_owned(), ToolStat::default()))
        .collect();
    stats.extend(raw.iter().map(|(k, v)| (k.clone(), *v)));
    let errors = stats.iter().map(|(k, v)| (k.clone(), v.failure)).collect();
    (stats, errors)
}

/// How many assistant turns carried reasoning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ReasoningStats {
    /// `gpt` turns.
    pub total_assistant_turns: u64,
    /// Those with a non-empty think block.
    pub turns_with_reasoning: u64,
    /// Those without.
    pub turns_without_reasoning: u64,
}

impl ReasoningStats {
    /// Counts the `gpt` turns of a record's `conversations`: a turn has
    /// reasoning unless it starts with the empty `<think>\n</think>` block.
    pub fn add_conversation(&mut self, conversations: &serde_json::Value) {
        for turn in conversations.as_array().into_iter().flatten() {
            if turn["from"] != "gpt" {
                continue;
            }
            self.total_assistant_turns += 1;
            let value = turn["value"].as_str().unwrap_or("");
            if value.starts_with("<think>\n</think>") || !value.contains("<think>") {
                self.turns_without_reasoning += 1;
            } else {
                self.turns_with_reasoning += 1;
            }
        }
    }
}

/// A tool's totals as `statistics.json` lists them.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolRates {
    /// Calls.
    pub count: u64,
    /// Successful results.
    pub success: u64,
    /// Failed results.
    pub failure: u64,
    /// Percent of results that succeeded (2 places).
    pub success_rate: f64,
    /// Percent of results that failed (2 places).
    pub failure_rate: f64,
}

/// `x` rounded to `places` decimals.
pub fn round(x: f64, places: i32) -> f64 {
    let f = 10f64.powi(places);
    (x * f).round() / f
}

impl ToolRates {
    /// Rates for these totals (0 when there was no result).
    pub fn of(stat: ToolStat) -> Self {
        let results = stat.success + stat.failure;
        let pct = |n: u64| {
            if results == 0 {
                0.0
            } else {
                round(n as f64 * 100.0 / results as f64, 2)
            }
        };
        Self {
            count: stat.count,
            success: stat.success,
            failure: stat.failure,
            success_rate: pct(stat.success),
            failure_rate: pct(stat.failure),
        }
    }
}

/// Tokens, calls and cost summed over prompts (kept in `checkpoint.json`
/// so that a run stopped and started again still counts everything).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct UsageTally {
    /// Prompt tokens.
    pub input: u64,
    /// Generated tokens.
    pub output: u64,
    /// Prompt tokens read from the provider's cache.
    pub cache_read: u64,
    /// Prompt tokens written to the provider's cache.
    pub cache_write: u64,
    /// Hidden reasoning tokens.
    pub reasoning: u64,
    /// Model calls.
    pub api_calls: u64,
    /// USD of the prompts that could be priced.
    pub cost_usd: f64,
    /// Prompts priced.
    pub priced: u64,
    /// Prompts that used tokens but could not be priced.
    pub unpriced: u64,
}

impl UsageTally {
    /// Adds one prompt's usage, priced for `model` on `provider` at `base_url`.
    pub fn add_prompt(
        &mut self,
        usage: &Usage,
        api_calls: u32,
        (model, provider, base_url): (&str, &str, &str),
    ) {
        self.input += usage.input_tokens;
        self.output += usage.output_tokens;
        self.cache_read += usage.cache_read_tokens;
        self.cache_write += usage.cache_write_tokens;
        self.reasoning += usage.reasoning_tokens;
        self.api_calls += u64::from(api_calls);
        if usage.total() == 0 {
            return;
        }
        let route = hermes_llm::pricing::resolve_billing_route(model, provider, base_url);
        let cost = hermes_llm::pricing::estimate_cost(&route, usage);
        match (cost.status, cost.amount_usd) {
            (hermes_llm::pricing::CostStatus::Unknown, _) | (_, None) => self.unpriced += 1,
            (_, Some(usd)) => {
                self.cost_usd += usd;
                self.priced += 1;
            }
        }
    }

    /// Both tallies together.
    pub fn add(&mut self, other: &UsageTally) {
        self.input += other.input;
        self.output += other.output;
        self.cache_read += other.cache_read;
        self.cache_write += other.cache_write;
        self.reasoning += other.reasoning;
        self.api_calls += other.api_calls;
        self.cost_usd += other.cost_usd;
        self.priced += other.priced;
        self.unpriced += other.unpriced;
    }
}

/// Token totals as `statistics.json` lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Tokens {
    /// Prompt tokens.
    pub input: u64,
    /// Generated tokens.
    pub output: u64,
    /// Prompt tokens read from cache.
    pub cache_read: u64,
    /// Hidden reasoning tokens.
    pub reasoning: u64,
    /// Input plus output.
    pub total: u64,
}

impl From<&UsageTally> for Tokens {
    fn from(u: &UsageTally) -> Self {
        Self {
            input: u.input,
            output: u.output,
            cache_read: u.cache_read,
            reasoning: u.reasoning,
            total: u.input + u.output,
        }
    }
}

/// What the trajectories in a set of output files add up to.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RecordTotals {
    /// Trajectories that completed.
    pub completed: usize,
    /// Trajectories that did not complete.
    pub incomplete: usize,
    /// Prompts with only an error record.
    pub errors: usize,
    /// Samples discarded for having no reasoning.
    pub discarded: usize,
    /// Model calls of the trajectories.
    pub api_calls: u64,
    /// Per tool, summed over the trajectories (used tools only).
    pub tools: BTreeMap<String, ToolStat>,
    /// Reasoning coverage of the trajectories.
    pub reasoning: ReasoningStats,
}

impl RecordTotals {
    /// Adds one trajectory record (as parsed from its line).
    pub fn add_trajectory(&mut self, record: &serde_json::Value) {
        if record["completed"] == true {
            self.completed += 1;
        } else {
            self.incomplete += 1;
        }
        self.api_calls += record["api_calls"].as_u64().unwrap_or(0);
        for (name, s) in record["tool_stats"].as_object().into_iter().flatten() {
            let stat: ToolStat = serde_json::from_value(s.clone()).unwrap_or_default();
            if stat.count == 0 && stat.success == 0 && stat.failure == 0 {
                continue;
            }
            let t = self.tools.entry(name.clone()).or_default();
            t.count += stat.count;
            t.success += stat.success;
            t.failure += stat.failure;
        }
        self.reasoning.add_conversation(&record["conversations"]);
    }

    /// Tool calls over every tool.
    pub fn tool_calls(&self) -> u64 {
        self.tools.values().map(|t| t.count).sum()
    }
}

#[cfg(test)]
#[path = "stats_tests.rs"]
mod tests;
