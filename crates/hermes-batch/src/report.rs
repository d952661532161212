//! `statistics.json`: the reference's keys (tool and reasoning statistics,
//! sizes, timing) plus counts, completion rate, tokens and cost.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::output::{Kind, Scanned, best_records};
use crate::stats::{ReasoningStats, RecordTotals, Tokens, ToolRates, UsageTally, round};

/// The contents of `statistics.json`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Statistics {
    /// The run.
    pub run_name: String,
    /// The toolset distribution used.
    pub distribution: String,
    /// Valid prompts in the dataset (after `--max-samples`).
    pub total_prompts: usize,
    /// Batches holding this run's prompts.
    pub total_batches: usize,
    /// Prompts per batch.
    pub batch_size: usize,
    /// The model.
    pub model: String,
    /// When the statistics were written (local ISO-8601).
    pub completed_at: String,
    /// Seconds the run took (summed over shards when merged).
    pub duration_seconds: f64,
    /// Per tool used: calls, successes, failures and their rates.
    pub tool_statistics: BTreeMap<String, ToolRates>,
    /// Reasoning coverage of the assistant turns.
    pub reasoning_statistics: ReasoningStats,
    /// `I/N` for a shard; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// Prompts this run is responsible for (its shard's share).
    pub total: usize,
    /// Prompts with a completed trajectory.
    pub completed: usize,
    /// Prompts without one: an incomplete trajectory or an error.
    pub failed: usize,
    /// Of `failed`, prompts whose run errored (retried by the next run).
    pub errors: usize,
    /// Samples discarded for having no reasoning in any turn (not run again).
    pub discarded_no_reasoning: usize,
    /// Prompts not run yet.
    pub pending: usize,
    /// `completed / total`, in percent (2 places).
    pub completion_rate: f64,
    /// Model calls of the trajectories.
    pub api_calls: u64,
    /// Tool calls of the trajectories.
    pub tool_calls_total: u64,
    /// Tokens used, over every prompt run in this directory.
    pub tokens: Tokens,
    /// Estimated USD cost of those tokens.
    pub estimated_cost_usd: f64,
    /// `known`, `partial` (some calls could not be priced) or `unknown`.
    pub cost_status: String,
    /// The directories a merge combined (relative to the run's).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<String>,
}

/// What a run knows about itself, for its statistics.
#[derive(Debug, Clone, PartialEq)]
pub struct RunFacts {
    /// The run.
    pub run_name: String,
    /// The distribution.
    pub distribution: String,
    /// Valid prompts in the dataset.
    pub total_prompts: usize,
    /// Prompts per batch.
    pub batch_size: usize,
    /// The model.
    pub model: String,
    /// `I/N`, for a shard.
    pub shard: Option<String>,
    /// The prompt indices this run is responsible for.
    pub scope: BTreeSet<usize>,
    /// Seconds it took.
    pub duration_seconds: f64,
    /// When it finished.
    pub completed_at: String,
}

/// How far the cost can be trusted.
fn cost_status(usage: &UsageTally) -> &'static str {
    match (usage.priced, usage.unpriced) {
        (_, 0) => "known",
        (0, _) => "unknown",
        _ => "partial",
    }
}

impl Statistics {
    /// The statistics of the records in a run's directory (those of prompts
    /// in its scope).
    pub fn build(facts: &RunFacts, records: &[Scanned], usage: &UsageTally) -> Self {
        let mut best = best_records(records);
        best.retain(|i, _| facts.scope.contains(i));
        let mut totals = RecordTotals::default();
        for r in best.values() {
            match r.kind {
                Kind::Completed | Kind::Incomplete => totals.add_trajectory(&r.value),
                Kind::Discarded => totals.discarded += 1,
                Kind::Error => totals.errors += 1,
            }
        }
        let total = facts.scope.len();
        let completed = totals.completed;
        let failed = totals.incomplete + totals.errors;
        let batches: BTreeSet<usize> = facts
            .scope
            .iter()
            .map(|i| i / facts.batch_size.max(1))
            .collect();
        Self {
            run_name: facts.run_name.clone(),
            distribution: facts.distribution.clone(),
            total_prompts: facts.total_prompts,
            total_batches: batches.len(),
            batch_size: facts.batch_size,
            model: facts.model.clone(),
            completed_at: facts.completed_at.clone(),
            duration_seconds: round(facts.duration_seconds, 2),
            tool_statistics: totals
                .tools
                .iter()
                .map(|(k, v)| (k.clone(), ToolRates::of(*v)))
                .collect(),
            reasoning_statistics: totals.reasoning,
            shard: facts.shard.clone(),
            total,
            completed,
            failed,
            errors: totals.errors,
            discarded_no_reasoning: totals.discarded,
            pending: total.saturating_sub(completed + failed + totals.discarded),
            completion_rate: if total == 0 {
                0.0
            } else {
                round(completed as f64 * 100.0 / total as f64, 2)
            },
            api_calls: totals.api_calls,
            tool_calls_total: totals.tool_calls(),
            tokens: Tokens::from(usage),
            estimated_cost_usd: round(usage.cost_usd, 6),
            cost_status: cost_status(usage).to_owned(),
            merged_from: Vec::new(),
        }
    }
}

#[cfg(test)]
#[path = "report_tests.rs"]
mod tests;
