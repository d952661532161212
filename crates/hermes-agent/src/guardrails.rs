//! Tool-loop guardrails: notices when the model keeps repeating a failing call,
//! keeps failing with one tool, or keeps re-reading the same unchanged result.
//!
//! The controller is pure bookkeeping over one turn; the agent loop decides what
//! a decision means: a warning appended to the tool result (the default), a
//! synthetic error instead of running the call (block), or ending the turn
//! (halt). Hard stops are opt-in via `tool_loop_guardrails.hard_stop_enabled`.

use std::collections::HashMap;

use hermes_protocol::Event;
use hermes_state::settings::GuardrailsSection;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::EventSink;
use crate::dispatch::CallResult;
use crate::plan::PreparedCall;

/// Read-only tools whose identical results mean no progress.
const IDEMPOTENT_TOOLS: &[&str] = &[
    "read_file",
    "search_files",
    "web_search",
    "web_extract",
    "session_search",
    "browser_snapshot",
    "browser_console",
    "browser_get_images",
    "mcp_filesystem_read_file",
    "mcp_filesystem_read_text_file",
    "mcp_filesystem_read_multiple_files",
    "mcp_filesystem_list_directory",
    "mcp_filesystem_list_directory_with_sizes",
    "mcp_filesystem_directory_tree",
    "mcp_filesystem_get_file_info",
    "mcp_filesystem_search_files",
];

/// Thresholds for one turn (`tool_loop_guardrails` in config.yaml).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardrailConfig {
    /// Append warnings to tool results.
    pub warnings_enabled: bool,
    /// Block or halt once the hard-stop thresholds are reached.
    pub hard_stop_enabled: bool,
    /// Same tool and arguments failing: warn at this count.
    pub exact_failure_warn_after: u32,
    /// Same tool and arguments failing: block at this count.
    pub exact_failure_block_after: u32,
    /// Same tool failing with any arguments: warn at this count.
    pub same_tool_failure_warn_after: u32,
    /// Same tool failing with any arguments: halt at this count.
    pub same_tool_failure_halt_after: u32,
    /// Same read-only call returning the same result: warn at this count.
    pub no_progress_warn_after: u32,
    /// Same read-only call returning the same result: block at this count.
    pub no_progress_block_after: u32,
}

impl Default for GuardrailConfig {
    fn default() -> Self {
        Self {
            warnings_enabled: true,
            hard_stop_enabled: false,
            exact_failure_warn_after: 2,
            exact_failure_block_after: 5,
            same_tool_failure_warn_after: 3,
            same_tool_failure_halt_after: 8,
            no_progress_warn_after: 2,
            no_progress_block_after: 5,
        }
    }
}

impl GuardrailConfig {
    /// Applies the `tool_loop_guardrails` section over the defaults: nested
    /// `warn_after`/`hard_stop_after` groups win over the flat keys; counts below one are ignored.
    pub fn from_section(section: &GuardrailsSection) -> Self {
        let d = Self::default();
        let count = |nested: Option<f64>, flat: Option<f64>, default: u32| {
            [nested, flat]
                .into_iter()
                .flatten()
                .find(|n| n.fract() == 0.0 && *n >= 1.0)
                .map_or(default, |n| u32::try_from(n as u64).unwrap_or(u32::MAX))
        };
        let (warn, stop) = (&section.warn_after, &section.hard_stop_after);
        Self {
            warnings_enabled: section.warnings_enabled.unwrap_or(d.warnings_enabled),
            hard_stop_enabled: section.hard_stop_enabled.unwrap_or(d.hard_stop_enabled),
            exact_failure_warn_after: count(
                warn.exact_failure,
                section.exact_failure_warn_after,
                d.exact_failure_warn_after,
            ),
            same_tool_failure_warn_after: count(
                warn.same_tool_failure,
                section.same_tool_failure_warn_after,
                d.same_tool_failure_warn_after,
            ),
            no_progress_warn_after: count(
                warn.idempotent_no_progress,
                section.no_progress_warn_after,
                d.no_progress_warn_after,
            ),
            exact_failure_block_after: count(
                stop.exact_failure,
                section.exact_failure_block_after,
                d.exact_failure_block_after,
            ),
            same_tool_failure_halt_after: count(
                stop.same_tool_failure,
                section.same_tool_failure_halt_after,
                d.same_tool_failure_halt_after,
            ),
            no_progress_block_after: count(
                stop.idempotent_no_progress,
                section.no_progress_block_after,
                d.no_progress_block_after,
            ),
        }
    }
}

/// What to do about a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Nothing to say.
    Allow,
    /// Run it (or keep its result) and append guidance.
    Warn,
    /// Do not run it; answer with a synthetic error.
    Block,
    /// Do not run anything more; end the turn.
    Halt,
}

/// A guardrail verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// What to do.
    pub action: Action,
    /// Machine-readable reason (`repeated_exact_failure_warning`, …).
    pub code: &'static str,
    /// Guidance for the model.
    pub message: String,
    /// The tool.
    pub tool: String,
    /// How many times the pattern has been seen.
    pub count: u32,
}

impl Decision {
    fn allow(tool: &str, count: u32) -> Self {
        Self {
            action: Action::Allow,
            code: "allow",
            message: String::new(),
            tool: tool.to_owned(),
            count,
        }
    }

    /// The call should not run.
    pub fn blocks(&self) -> bool {
        matches!(self.action, Action::Block | Action::Halt)
    }

    /// The tool result with this decision's guidance appended (warn and halt only).
    pub fn annotate(&self, result: &str) -> String {
        let label = match self.action {
            Action::Warn => "Tool loop warning",
            Action::Halt => "Tool loop hard stop",
            Action::Allow | Action::Block => return result.to_owned(),
        };
        format!(
            "{result}\n\n[{label}: {}; count={}; {}]",
            self.code, self.count, self.message
        )
    }

    /// The synthetic tool result for a blocked call.
    pub fn synthetic_result(&self) -> String {
        json!({
            "error": self.message,
            "guardrail": {"action": "block", "code": self.code, "tool_name": self.tool, "count": self.count},
        })
        .to_string()
    }

    /// The final text when the turn is halted.
    pub fn halt_text(&self) -> String {
        format!(
            "I have stopped calling {} because the tool-loop guardrail ({}) tripped after {} attempts that made no progress. The last tool result shows what went wrong; the way forward is a different approach, not the same call again.",
            self.tool, self.code, self.count
        )
    }
}

/// A tool name plus a hash of its canonical arguments.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Signature {
    tool: String,
    args_hash: String,
}

impl Signature {
    /// The signature of a call; arguments that are not an object count as `{}`.
    pub fn of(tool: &str, args: &Value) -> Self {
        let args = if args.is_object() { args } else { &json!({}) };
        Self {
            tool: tool.to_owned(),
            args_hash: sha256(&canonical_json(args)),
        }
    }
}

/// Compact JSON with object keys sorted, so key order and whitespace don't matter.
pub fn canonical_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let body: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical_json(&map[k])))
                .collect();
            format!("{{{}}}", body.join(","))
        }
        Value::Array(items) => {
            let body: Vec<String> = items.iter().map(canonical_json).collect();
            format!("[{}]", body.join(","))
        }
        other => other.to_string(),
    }
}

fn sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Whether a tool result reports failure, as the CLI's `[error]` tag decides.
pub fn is_failure(tool: &str, result: &str) -> bool {
    let parsed = serde_json::from_str::<Value>(result).ok();
    if tool == "terminal" {
        return parsed
            .as_ref()
            .and_then(|v| v.get("exit_code"))
            .and_then(Value::as_i64)
            .is_some_and(|code| code != 0);
    }
    if matches!(tool, "write_file" | "patch")
        && parsed
            .as_ref()
            .is_some_and(|v| v.get("success") == Some(&Value::Bool(true)))
    {
        return false;
    }
    let head: String = result.chars().take(500).collect::<String>().to_lowercase();
    head.contains("\"error\"") || head.contains("\"failed\"") || result.starts_with("Error")
}

/// Per-turn bookkeeping of failures and repeated results.
#[derive(Debug, Clone, Default)]
pub struct Guardrails {
    config: GuardrailConfig,
    exact_failures: HashMap<Signature, u32>,
    tool_failures: HashMap<String, u32>,
    no_progress: HashMap<Signature, (String, u32)>,
}

impl Guardrails {
    /// A controller with these thresholds.
    pub fn new(config: GuardrailConfig) -> Self {
        Self {
            config,
            ..Self::default()
        }
    }

    /// The thresholds in use.
    pub fn config(&self) -> &GuardrailConfig {
        &self.config
    }

    /// Forgets everything; called when a new user turn starts.
    pub fn reset(&mut self) {
        self.exact_failures.clear();
        self.tool_failures.clear();
        self.no_progress.clear();
    }

    /// Before running a call: block it when hard stops are on and it has already looped.
    pub fn before_call(&self, tool: &str, args: &Value) -> Decision {
        if !self.config.hard_stop_enabled {
            return Decision::allow(tool, 0);
        }
        let sig = Signature::of(tool, args);
        let exact = self.exact_failures.get(&sig).copied().unwrap_or(0);
        if exact >= self.config.exact_failure_block_after {
            return Decision {
                action: Action::Block,
                code: "repeated_exact_failure_block",
                message: format!(
                    "{tool} was not run: this exact call (same arguments) has already failed {exact} times. Running it again unchanged will fail again; try another approach or tell the user what is blocking you."
                ),
                tool: tool.to_owned(),
                count: exact,
            };
        }
        if is_idempotent(tool)
            && let Some((_, repeats)) = self.no_progress.get(&sig)
            && *repeats >= self.config.no_progress_block_after
        {
            return Decision {
                action: Action::Block,
                code: "idempotent_no_progress_block",
                message: format!(
                    "{tool} was not run: this read-only call has returned an identical result {repeats} times. Work from the result you already have, or ask something different."
                ),
                tool: tool.to_owned(),
                count: *repeats,
            };
        }
        Decision::allow(tool, 0)
    }

    /// After a call: records the outcome and says whether to warn or halt.
    pub fn after_call(&mut self, tool: &str, args: &Value, result: &str) -> Decision {
        let sig = Signature::of(tool, args);
        if is_failure(tool, result) {
            let exact = bump(&mut self.exact_failures, sig.clone());
            self.no_progress.remove(&sig);
            let same = bump(&mut self.tool_failures, tool.to_owned());
            let warn = |code, message, count| Decision {
                action: Action::Warn,
                code,
                message,
                tool: tool.to_owned(),
                count,
            };
            if self.config.hard_stop_enabled && same >= self.config.same_tool_failure_halt_after {
                return Decision {
                    action: Action::Halt,
                    code: "same_tool_failure_halt",
                    message: format!(
                        "Turn stopped: {tool} has failed {same} times in this turn. Retrying the same failing path is not making progress; a different approach is needed."
                    ),
                    tool: tool.to_owned(),
                    count: same,
                };
            }
            if self.config.warnings_enabled && exact >= self.config.exact_failure_warn_after {
                return warn(
                    "repeated_exact_failure_warning",
                    format!(
                        "This exact {tool} call (same arguments) has now failed {exact} times. You appear to be looping: read the error above and change the call or the approach rather than repeating it."
                    ),
                    exact,
                );
            }
            if self.config.warnings_enabled && same >= self.config.same_tool_failure_warn_after {
                return warn("same_tool_failure_warning", recovery_hint(tool, same), same);
            }
            return Decision::allow(tool, exact);
        }
        self.exact_failures.remove(&sig);
        self.tool_failures.remove(tool);
        if !is_idempotent(tool) {
            self.no_progress.remove(&sig);
            return Decision::allow(tool, 0);
        }
        let hash = result_hash(result);
        let repeats = match self.no_progress.get(&sig) {
            Some((previous, n)) if *previous == hash => n + 1,
            _ => 1,
        };
        self.no_progress.insert(sig, (hash, repeats));
        if self.config.warnings_enabled && repeats >= self.config.no_progress_warn_after {
            return Decision {
                action: Action::Warn,
                code: "idempotent_no_progress_warning",
                message: format!(
                    "{tool} has returned an identical result {repeats} times. Nothing has changed; use what you already have or change the query."
                ),
                tool: tool.to_owned(),
                count: repeats,
            };
        }
        Decision::allow(tool, repeats)
    }
}

impl Guardrails {
    /// Splits a batch into the calls to run and synthetic results for the ones
    /// a hard stop blocks (keyed by position in `calls`).
    pub(crate) fn screen(
        &self,
        calls: &[PreparedCall],
    ) -> (Vec<PreparedCall>, Vec<(usize, Decision)>) {
        let mut run = Vec::with_capacity(calls.len());
        let mut blocked = Vec::new();
        for (pos, call) in calls.iter().enumerate() {
            let decision = self.before_call(&call.name, &call.args);
            if decision.blocks() {
                blocked.push((pos, decision));
            } else {
                run.push(call.clone());
            }
        }
        (run, blocked)
    }

    /// The last look at a batch's results before the model sees them: puts the
    /// blocked calls' synthetic errors back in call order, redacts terminal
    /// output, records outcomes and appends warnings. Returns the decision that
    /// ends the turn, if one does.
    pub(crate) fn review(
        &mut self,
        calls: &[PreparedCall],
        ran: Vec<CallResult>,
        blocked: Vec<(usize, Decision)>,
        events: &EventSink,
    ) -> (Vec<CallResult>, Option<Decision>) {
        let mut ran = ran.into_iter();
        let mut blocked = blocked.into_iter().peekable();
        let mut halt = None;
        let mut out = Vec::with_capacity(calls.len());
        for (pos, call) in calls.iter().enumerate() {
            if blocked.peek().is_some_and(|(p, _)| *p == pos) {
                let Some((_, decision)) = blocked.next() else {
                    continue;
                };
                let _ = events.send(Event::Status {
                    message: format!("Tool guardrail blocked {}: {}", call.name, decision.code),
                });
                out.push(CallResult {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    content: decision.synthetic_result(),
                    fatal: None,
                });
                halt.get_or_insert(decision);
                continue;
            }
            let Some(mut result) = ran.next() else { break };
            let decision = self.after_call(&result.name, &call.args, &result.content);
            if matches!(decision.action, Action::Warn | Action::Halt) {
                let _ = events.send(Event::Status {
                    message: format!(
                        "Tool loop {} for {}: {} (count {})",
                        if decision.action == Action::Halt {
                            "hard stop"
                        } else {
                            "warning"
                        },
                        decision.tool,
                        decision.code,
                        decision.count
                    ),
                });
                result.content = decision.annotate(&result.content);
            }
            if decision.blocks() {
                halt.get_or_insert(decision);
            }
            out.push(result);
        }
        (out, halt)
    }
}

fn bump<K: std::hash::Hash + Eq>(map: &mut HashMap<K, u32>, key: K) -> u32 {
    let n = map.entry(key).or_insert(0);
    *n += 1;
    *n
}

fn is_idempotent(tool: &str) -> bool {
    IDEMPOTENT_TOOLS.contains(&tool)
}

/// JSON results compare by content, not formatting.
fn result_hash(result: &str) -> String {
    match serde_json::from_str::<Value>(result) {
        Ok(v) => sha256(&canonical_json(&v)),
        Err(_) => sha256(result),
    }
}

fn recovery_hint(tool: &str, count: u32) -> String {
    let common = format!(
        "{tool} has failed {count} times in this turn, which suggests a loop. Keep working with tools, but diagnose before the next attempt: read the latest error or output and check your assumptions. "
    );
    if tool == "terminal" {
        common
            + "For the terminal, a quick check such as `pwd && ls -la` often explains the failure; then try an absolute path, a simpler command, another working directory, or a file tool (read_file, write_file, patch)."
    } else {
        common
            + "Change the arguments, narrow the query or path, use an absolute path where it matters, or switch to a tool that can make progress. If the cause is outside your control, report it after one diagnostic attempt."
    }
}

#[cfg(test)]
#[path = "guardrails_tests.rs"]
mod tests;
