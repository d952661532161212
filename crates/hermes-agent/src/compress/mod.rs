//! The context compressor, in the seeds' five phases: prune old tool output (no model
//! call), find the protected head and token-budgeted tail, summarize the span between
//! them with the auxiliary model (or a local fallback), assemble head + summary + tail
//! with valid role alternation, and drop orphaned tool calls or results.
//!
//! This type holds the decisions and the state across compressions (thresholds, the
//! previous summary for iterative updates, anti-thrashing); the agent makes the model
//! call in between [`ContextCompressor::plan`] and [`ContextCompressor::assemble`].

mod boundaries;
pub mod engine;
mod prune;
mod summary;

use hermes_protocol::{Message, Role};

pub use boundaries::{head_end, sanitize_tool_pairs, tail_start};
pub use prune::{DUPLICATE_MARKER, prune_tool_output, shrink_arguments, summarize_tool_result};
pub use summary::{
    SUMMARY_END, SUMMARY_PREFIX, fallback_summary, serialize_turns, summary_budget, summary_prompt,
};

use crate::resilience::approx_tokens;

/// Context windows at least this large are never compressed below it.
const MINIMUM_CONTEXT_LENGTH: u64 = 64_000;
/// Windows smaller than this compress no earlier than [`SMALL_WINDOW_PERCENT`].
const SMALL_WINDOW_LIMIT: u64 = 512_000;
const SMALL_WINDOW_PERCENT: f64 = 0.75;
/// Where a window too small for the floor triggers, as a share of it.
const TINY_WINDOW_TRIGGER: f64 = 0.85;
/// Compressions saving less than this share count as ineffective.
const INEFFECTIVE_SAVING: f64 = 0.10;
/// Ineffective compressions in a row after which automatic compression stops.
const MAX_INEFFECTIVE: u32 = 2;

/// Appended once to the system prompt when turns have been compacted.
pub const SYSTEM_NOTE: &str = "[Note: some earlier turns of this conversation were compacted into \
a summary to save context space. Build on that summary and the current state of files rather than \
redoing work. Your persistent memory (MEMORY.md, USER.md) stays fully authoritative.]";

/// `compression:` settings from config.yaml.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompressorConfig {
    /// Whether automatic (preflight) compression runs at all.
    pub enabled: bool,
    /// Share of the input window at which compression triggers (`compression.threshold`).
    pub threshold_percent: f64,
    /// Share of the threshold the protected tail may use (`compression.target_ratio`).
    pub target_ratio: f64,
    /// Non-system messages kept verbatim at the start.
    pub protect_first: usize,
}

impl Default for CompressorConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            threshold_percent: 0.50,
            target_ratio: 0.20,
            protect_first: 3,
        }
    }
}

impl CompressorConfig {
    /// Applies the `compression:` section over the reference's defaults.
    pub fn from_section(section: &hermes_state::settings::CompressionSection) -> Self {
        let d = Self::default();
        Self {
            enabled: section.enabled.unwrap_or(d.enabled),
            threshold_percent: section.threshold.unwrap_or(d.threshold_percent),
            target_ratio: section.target_ratio.unwrap_or(d.target_ratio),
            protect_first: section
                .protect_first_n
                .map_or(d.protect_first, |n| n.max(0.0) as usize),
        }
    }
}

/// What [`ContextCompressor::plan`] decided: the pruned conversation and the span to
/// summarize, `messages[head..tail]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The conversation after phase one.
    pub messages: Vec<Message>,
    /// First index of the span.
    pub head: usize,
    /// First index after the span.
    pub tail: usize,
}

impl Plan {
    /// The span the summary replaces.
    pub fn span(&self) -> &[Message] {
        &self.messages[self.head..self.tail]
    }
}

/// Thresholds and state for one session's compressions.
#[derive(Debug, Clone)]
pub struct ContextCompressor {
    config: CompressorConfig,
    context_length: u64,
    max_tokens: Option<u32>,
    threshold: u64,
    tail_budget: usize,
    summary_ceiling: usize,
    previous_summary: Option<String>,
    ineffective: u32,
}

impl ContextCompressor {
    /// A compressor for a `context_length` window, reserving `max_tokens` for output.
    pub fn new(config: CompressorConfig, context_length: u64, max_tokens: Option<u32>) -> Self {
        let mut c = Self {
            config,
            context_length,
            max_tokens,
            threshold: 0,
            tail_budget: 0,
            summary_ceiling: 0,
            previous_summary: None,
            ineffective: 0,
        };
        c.calibrate();
        c
    }

    /// Recomputes the budgets for `context_length` (after a step-down or model switch).
    pub fn set_context_length(&mut self, context_length: u64) {
        self.context_length = context_length.max(1);
        self.calibrate();
    }

    fn calibrate(&mut self) {
        let ctx = self.context_length.max(1);
        let reserved = u64::from(self.max_tokens.unwrap_or(0));
        let window = if reserved < ctx { ctx - reserved } else { ctx };
        let mut percent = self.config.threshold_percent.clamp(0.05, 1.0);
        if ctx < SMALL_WINDOW_LIMIT {
            percent = percent.max(SMALL_WINDOW_PERCENT);
        }
        let floored = ((window as f64 * percent) as u64).max(MINIMUM_CONTEXT_LENGTH);
        self.threshold = if floored >= window {
            ((window as f64 * TINY_WINDOW_TRIGGER) as u64)
                .min(window.saturating_sub(1))
                .max(1)
        } else {
            floored
        };
        let ratio = self.config.target_ratio.clamp(0.10, 0.80);
        self.tail_budget = (self.threshold as f64 * ratio) as usize;
        self.summary_ceiling = ((ctx as f64 * 0.05) as usize).min(summary::MAX_SUMMARY_TOKENS);
    }

    /// The window the budgets are computed for.
    pub fn context_length(&self) -> u64 {
        self.context_length
    }

    /// Prompt size at which automatic compression triggers.
    pub fn threshold_tokens(&self) -> u64 {
        self.threshold
    }

    /// Whether a request of `prompt_tokens` should be compressed first: over the
    /// threshold, enabled, and not after two ineffective compressions in a row.
    pub fn should_compress(&self, prompt_tokens: u64) -> bool {
        self.config.enabled && prompt_tokens >= self.threshold && self.ineffective < MAX_INEFFECTIVE
    }

    /// Whether automatic compression gave up after ineffective passes.
    pub fn thrashing(&self) -> bool {
        self.ineffective >= MAX_INEFFECTIVE
    }

    /// Phases one and two. `tail_budget` overrides the calibrated tail budget (used on
    /// an overflow, where the request just sent is the measure). `None` when there is no
    /// span between the protected head and tail.
    pub fn plan(&self, messages: &[Message], tail_budget: Option<usize>) -> Option<Plan> {
        let budget = tail_budget.unwrap_or(self.tail_budget);
        let head = head_end(messages, self.config.protect_first);
        let tail = tail_start(messages, head, budget);
        let mut pruned = messages.to_vec();
        prune_tool_output(&mut pruned, tail);
        (tail > head).then_some(Plan {
            messages: pruned,
            head,
            tail,
        })
    }

    /// The summarizer request for `plan` and the token budget it was given.
    pub fn summary_request(&self, plan: &Plan, focus: Option<&str>) -> (String, usize) {
        self.summary_request_with(plan, focus, "")
    }

    /// [`Self::summary_request`] with what a memory provider asked the
    /// summary to keep (`on_pre_compress`).
    pub fn summary_request_with(
        &self,
        plan: &Plan,
        focus: Option<&str>,
        memory_context: &str,
    ) -> (String, usize) {
        let span_tokens = approx_tokens(plan.span());
        let budget = summary_budget(span_tokens, self.summary_ceiling);
        let prompt = summary_prompt(
            plan.span(),
            self.previous_summary.as_deref(),
            budget,
            focus,
            memory_context,
        );
        (prompt, budget)
    }

    /// Phases four and five: head + `summary` + tail, roles alternating, orphans gone.
    /// The summary is kept for the next compression's iterative update.
    pub fn assemble(&mut self, plan: Plan, summary: &str) -> Vec<Message> {
        let summary = summary.trim().to_owned();
        self.previous_summary = Some(summary.clone());
        let body = format!("{SUMMARY_PREFIX}\n\n{summary}");
        let Plan {
            mut messages,
            head,
            tail,
        } = plan;
        let rest = messages.split_off(tail);
        messages.truncate(head);
        if let Some(system) = messages.first_mut().filter(|m| m.role == Role::System)
            && !system.text().contains(SYSTEM_NOTE)
        {
            system.content = Some(format!("{}\n\n{SYSTEM_NOTE}", system.text()));
        }
        let before = messages.last().map(|m| m.role);
        let after = rest.first().map(|m| m.role);
        let mut rest = rest;
        match (before, after) {
            // A user summary would collide on both sides: it rides in the tail's
            // first (assistant) message instead.
            (Some(Role::User), Some(Role::Assistant)) => {
                if let Some(first) = rest.first_mut() {
                    first.content = Some(match first.content.as_deref() {
                        Some(t) if !t.trim().is_empty() => format!("{body}\n\n{t}"),
                        _ => body,
                    });
                }
            }
            (Some(Role::User), _) | (Some(Role::Tool), Some(Role::User)) => {
                messages.push(Message::assistant(body));
            }
            (_, Some(Role::User)) => {
                // The tail opens with a user message: the summary leads it.
                if let Some(first) = rest.first_mut() {
                    first.content = Some(format!("{body}\n\n{SUMMARY_END}\n\n{}", first.text()));
                }
            }
            _ => messages.push(Message::user(format!("{body}\n\n{SUMMARY_END}"))),
        }
        messages.extend(rest);
        sanitize_tool_pairs(messages)
    }

    /// Records how much a compression saved; two ineffective ones in a row stop
    /// automatic compression. Returns whether this one was effective.
    pub fn record_savings(&mut self, before_tokens: usize, after_tokens: usize) -> bool {
        let saved = before_tokens.saturating_sub(after_tokens) as f64;
        let effective = before_tokens > 0 && saved / before_tokens as f64 >= INEFFECTIVE_SAVING;
        if effective {
            self.ineffective = 0;
        } else {
            self.ineffective += 1;
        }
        effective
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
