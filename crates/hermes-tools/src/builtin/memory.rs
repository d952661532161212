//! `memory`: durable notes (`MEMORY.md`) and a user profile (`USER.md`) that
//! survive across sessions. Writes land on disk at once but only reach the
//! system prompt of the next session (see [`session_snapshot`]), so the
//! current prompt — and its cache — never changes mid-session.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::future::BoxFuture;
use hermes_protocol::ToolSchema;
use hermes_state::memory::{
    DriftCheck, MemoryError, MemoryStore, MemoryTarget, char_count, thousands, usage_line,
};
use serde_json::{Value, json};

use crate::{Tool, ToolContext, ToolError, ToolResult};

/// Failed consolidation attempts tolerated in one turn before the tool tells
/// the model to stop retrying: a memory side effect must never eat the turn.
const MAX_CONSOLIDATION_FAILURES: usize = 3;

/// The memory tool over one [`MemoryStore`].
#[derive(Clone)]
pub struct MemoryTool {
    store: MemoryStore,
    failures: Arc<AtomicUsize>,
    /// The external memory provider told of every write.
    mirror: Option<Arc<dyn crate::memory_provider::MemoryProvider>>,
}

impl std::fmt::Debug for MemoryTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryTool")
            .field("store", &self.store)
            .field("mirrored", &self.mirror.is_some())
            .finish()
    }
}

impl MemoryTool {
    /// A tool writing to `store`.
    pub fn new(store: MemoryStore) -> Self {
        Self {
            store,
            failures: Arc::new(AtomicUsize::new(0)),
            mirror: None,
        }
    }

    /// Tells `provider` of each successful write (`on_memory_write`).
    pub fn mirror_to(&mut self, provider: Arc<dyn crate::memory_provider::MemoryProvider>) {
        self.mirror = Some(provider);
    }

    /// Runs one call, then tells the mirror what was written.
    pub fn execute(&self, args: &Value) -> Result<Value, MemoryError> {
        let result = self.execute_unmirrored(args)?;
        if let Some(mirror) = &self.mirror
            && result.get("success") == Some(&Value::Bool(true))
        {
            let target = args
                .get("target")
                .and_then(Value::as_str)
                .unwrap_or("memory");
            let single = std::slice::from_ref(args);
            let ops = match args.get("operations") {
                Some(Value::Array(ops)) if !ops.is_empty() => ops.as_slice(),
                _ => single,
            };
            for op in ops {
                let action = op.get("action").and_then(Value::as_str).unwrap_or("");
                let content = non_empty(op, "content")
                    .or_else(|| non_empty(op, "old_text"))
                    .unwrap_or("");
                mirror.on_memory_write(action, target, content);
            }
        }
        Ok(result)
    }

    /// The store it writes to.
    pub fn store(&self) -> &MemoryStore {
        &self.store
    }

    /// Starts a new turn's budget of failed consolidation attempts.
    pub fn reset_turn(&self) {
        self.failures.store(0, Ordering::Relaxed);
    }

    /// Runs one call synchronously (file locks may block).
    fn execute_unmirrored(&self, args: &Value) -> Result<Value, MemoryError> {
        let target = match args.get("target") {
            None | Some(Value::Null) => "memory",
            Some(Value::String(s)) => s.as_str(),
            Some(_) => "",
        };
        let Some(target) = MemoryTarget::parse(target) else {
            let shown = args.get("target").map_or_else(String::new, |t| match t {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            });
            return Ok(error(&format!(
                "Invalid target '{shown}'. Use 'memory' or 'user'."
            )));
        };
        match args.get("operations") {
            Some(Value::Array(ops)) if !ops.is_empty() => return self.batch(target, ops),
            Some(other) if truthy(other) && !other.is_array() => {
                return Ok(error(
                    "operations must be a list of {action, content?, old_text?} objects.",
                ));
            }
            _ => {}
        }
        let action = args.get("action").and_then(Value::as_str).unwrap_or("");
        let content = non_empty(args, "content");
        let old_text = non_empty(args, "old_text");
        match (action, content, old_text) {
            ("add", None, _) => Ok(error("Content is required for 'add' action.")),
            ("add", Some(content), _) => self.add(target, content),
            ("replace" | "remove", _, None) => self.missing_old_text(target, action),
            ("replace", None, Some(_)) => Ok(error("content is required for 'replace' action.")),
            ("replace", Some(content), Some(old)) => self.replace(target, old, content),
            ("remove", _, Some(old)) => self.remove(target, old),
            _ => Ok(error(&format!(
                "Unknown action '{action}'. Use: add, replace, remove"
            ))),
        }
    }

    fn add(&self, target: MemoryTarget, content: &str) -> Result<Value, MemoryError> {
        let content = content.trim();
        if content.is_empty() {
            return Ok(failure("Content cannot be empty."));
        }
        if let Some(blocked) = scan_error(content) {
            return Ok(failure(&blocked));
        }
        let limit = self.store.limit(target);
        let step = self
            .store
            .update(target, DriftCheck::Skip, |entries| {
                if entries.iter().any(|e| e == content) {
                    let done = Step::done("Entry already exists (no duplicate added).", entries);
                    return (done, false);
                }
                let current = char_count(entries);
                let mut after = entries.clone();
                after.push(content.to_owned());
                if char_count(&after) > limit {
                    let msg = format!(
                        "Memory is at {}/{} chars; this entry ({} chars) does not fit. Make room first: 'replace' overlapping entries with a shorter merged one or 'remove' stale ones (current_entries below), then add again, in this same turn.",
                        thousands(current as u64),
                        thousands(limit as u64),
                        content.chars().count()
                    );
                    return (Step::Consolidate(over_budget(&msg, entries, limit)), false);
                }
                *entries = after;
                (Step::done("Entry added.", entries), true)
            })
            .or_else(drift_result)?;
        Ok(self.finish(target, step))
    }

    fn replace(&self, target: MemoryTarget, old: &str, new: &str) -> Result<Value, MemoryError> {
        let (old, new) = (old.trim(), new.trim());
        if old.is_empty() {
            return Ok(failure("old_text cannot be empty."));
        }
        if new.is_empty() {
            return Ok(failure(
                "new_content cannot be empty. Use 'remove' to delete entries.",
            ));
        }
        if let Some(blocked) = scan_error(new) {
            return Ok(failure(&blocked));
        }
        let limit = self.store.limit(target);
        let step = self
            .store
            .update(target, DriftCheck::Refuse, |entries| {
                let idx = match find_one(entries, old, "replace") {
                    Ok(i) => i,
                    Err(step) => return (step, false),
                };
                let mut after = entries.clone();
                after[idx] = new.to_owned();
                let total = char_count(&after);
                if total > limit {
                    let msg = format!(
                        "With this replacement memory would be at {}/{} chars. Shorten the new text or 'remove' other stale entries (current_entries below), then try again in this same turn.",
                        thousands(total as u64),
                        thousands(limit as u64)
                    );
                    return (Step::Consolidate(over_budget(&msg, entries, limit)), false);
                }
                *entries = after;
                (Step::done("Entry replaced.", entries), true)
            })
            .or_else(drift_result)?;
        Ok(self.finish(target, step))
    }

    fn remove(&self, target: MemoryTarget, old: &str) -> Result<Value, MemoryError> {
        let old = old.trim();
        if old.is_empty() {
            return Ok(failure("old_text cannot be empty."));
        }
        let step = self
            .store
            .update(target, DriftCheck::Refuse, |entries| {
                match find_one(entries, old, "remove") {
                    Ok(idx) => {
                        entries.remove(idx);
                        (Step::done("Entry removed.", entries), true)
                    }
                    Err(step) => (step, false),
                }
            })
            .or_else(drift_result)?;
        Ok(self.finish(target, step))
    }

    fn batch(&self, target: MemoryTarget, ops: &[Value]) -> Result<Value, MemoryError> {
        // One poisoned operation rejects the whole batch before anything is read.
        for (i, op) in ops.iter().enumerate() {
            let action = op.get("action").and_then(Value::as_str);
            if matches!(action, Some("add" | "replace"))
                && let Some(content) = op.get("content").and_then(Value::as_str)
                && let Some(blocked) = scan_error(content)
            {
                return Ok(failure(&format!("Operation {}: {blocked}", i + 1)));
            }
        }
        let limit = self.store.limit(target);
        let step = self
            .store
            .update(target, DriftCheck::Refuse, |entries| {
                let abort = |msg: String| {
                    let msg = format!(
                        "{msg} Nothing was applied (a batch applies all of its operations or none)."
                    );
                    (Step::Consolidate(over_budget(&msg, entries, limit)), false)
                };
                let mut working = entries.clone();
                for (i, op) in ops.iter().enumerate() {
                    if let Err(msg) = apply_op(&mut working, op, i + 1) {
                        return abort(msg);
                    }
                }
                let total = char_count(&working);
                if total > limit {
                    let msg = format!(
                        "After all {} operations memory would be at {}/{} chars, over the limit. Remove or shorten more entries in the same batch (current_entries below) and send it again.",
                        ops.len(),
                        thousands(total as u64),
                        thousands(limit as u64)
                    );
                    return (Step::Consolidate(over_budget(&msg, entries, limit)), false);
                }
                *entries = working;
                let message = format!("Applied {} operation(s).", ops.len());
                (Step::done(&message, entries), true)
            })
            .or_else(drift_result)?;
        Ok(self.finish(target, step))
    }

    /// `replace`/`remove` without `old_text`: show the entries so the model
    /// can reissue the call instead of hitting a dead end.
    fn missing_old_text(&self, target: MemoryTarget, action: &str) -> Result<Value, MemoryError> {
        let entries = self.store.entries(target)?;
        let msg = format!(
            "'{action}' needs old_text: a short substring that identifies one entry. None was given; call {action} again with old_text taken from one of the current_entries below."
        );
        Ok(over_budget(&msg, &entries, self.store.limit(target)))
    }

    fn finish(&self, target: MemoryTarget, step: Step) -> Value {
        match step {
            Step::Done {
                message,
                count,
                chars,
            } => {
                self.failures.store(0, Ordering::Relaxed);
                json!({
                    "success": true,
                    "done": true,
                    "target": target.as_str(),
                    "usage": usage_line(chars, self.store.limit(target)),
                    "entry_count": count,
                    "message": message,
                    "note": "Saved. This update is complete; do not send it again.",
                })
            }
            Step::Failed(v) => v,
            Step::Consolidate(v) => {
                let n = self.failures.fetch_add(1, Ordering::Relaxed) + 1;
                if n <= MAX_CONSOLIDATION_FAILURES {
                    return v;
                }
                json!({
                    "success": false,
                    "done": true,
                    "error": format!("Memory consolidation has failed {n} times this turn. Stop calling memory for now, leave it as it is and carry on with your reply; the fact can be saved in a later turn."),
                })
            }
        }
    }
}

/// The memory block of a new session's system prompt, with every entry
/// scanned (strict scope) so a poisoned file cannot inject into the prompt.
/// Take it once per session: later writes must not change that session's prompt.
pub fn session_snapshot(
    store: &MemoryStore,
    memory_enabled: bool,
    user_enabled: bool,
) -> Result<Option<String>, MemoryError> {
    let scan = |entry: &str| crate::injection::scan_strict(entry).map(|t| t.kind.to_owned());
    store.snapshot_block(memory_enabled, user_enabled, &scan)
}

/// What one locked update decided.
enum Step {
    Done {
        message: String,
        count: usize,
        chars: usize,
    },
    /// A plain refusal.
    Failed(Value),
    /// A refusal that counts toward the per-turn consolidation cap.
    Consolidate(Value),
}

impl Step {
    fn done(message: &str, entries: &[String]) -> Self {
        Step::Done {
            message: message.to_owned(),
            count: entries.len(),
            chars: char_count(entries),
        }
    }
}

/// The index of the one entry containing `needle` (identical duplicates count as one).
fn find_one(entries: &[String], needle: &str, action: &str) -> Result<usize, Step> {
    let hits: Vec<usize> = (0..entries.len())
        .filter(|&i| entries[i].contains(needle))
        .collect();
    let Some(&first) = hits.first() else {
        return Err(Step::Consolidate(json!({
            "success": false,
            "error": format!("No entry contains '{needle}'. Look at current_entries below and call {action} again with text copied from the entry you mean."),
            "current_entries": entries,
        })));
    };
    if hits.iter().any(|&i| entries[i] != entries[first]) {
        let previews: Vec<String> = hits.iter().map(|&i| preview(&entries[i])).collect();
        return Err(Step::Failed(json!({
            "success": false,
            "error": format!("'{needle}' matches more than one entry. Use a longer, more specific old_text."),
            "matches": previews,
        })));
    }
    Ok(first)
}

/// Applies one batch operation to the working copy; `Err` says why it cannot.
fn apply_op(working: &mut Vec<String>, op: &Value, n: usize) -> Result<(), String> {
    let text = |key: &str| {
        op.get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .unwrap_or("")
    };
    let action = op.get("action").and_then(Value::as_str).unwrap_or("");
    let (content, old) = (text("content"), text("old_text"));
    let pos = format!(
        "Operation {n} ({})",
        if action.is_empty() { "unknown" } else { action }
    );
    let locate = |working: &[String]| -> Result<usize, String> {
        if old.is_empty() {
            return Err(format!("{pos}: old_text is required."));
        }
        let hits: Vec<usize> = (0..working.len())
            .filter(|&i| working[i].contains(old))
            .collect();
        match hits.first() {
            None => Err(format!("{pos}: no entry contains '{old}'.")),
            Some(&first) if hits.iter().any(|&i| working[i] != working[first]) => Err(format!(
                "{pos}: '{old}' matches more than one distinct entry; be more specific."
            )),
            Some(&first) => Ok(first),
        }
    };
    match action {
        "add" if content.is_empty() => Err(format!("{pos}: content is required.")),
        // Adding what is already there is a no-op, not a failure.
        "add" if working.iter().any(|e| e == content) => Ok(()),
        "add" => {
            working.push(content.to_owned());
            Ok(())
        }
        "replace" => {
            if !old.is_empty() && content.is_empty() {
                return Err(format!(
                    "{pos}: content is required (use action='remove' to delete)."
                ));
            }
            let i = locate(working)?;
            working[i] = content.to_owned();
            Ok(())
        }
        "remove" => {
            let i = locate(working)?;
            working.remove(i);
            Ok(())
        }
        _ => Err(format!(
            "{pos}: unknown action. Use add, replace, or remove."
        )),
    }
}

/// An over-budget style refusal: the message plus the live entries and usage.
fn over_budget(msg: &str, entries: &[String], limit: usize) -> Value {
    json!({
        "success": false,
        "error": msg,
        "current_entries": entries,
        "usage": format!("{}/{}", thousands(char_count(entries) as u64), thousands(limit as u64)),
    })
}

/// The file was edited outside the tool: refuse, and point at the backup.
fn drift_result(err: MemoryError) -> Result<Step, MemoryError> {
    match err {
        MemoryError::Drift { file, backup } => {
            let name = file
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            Ok(Step::Failed(json!({
                "success": false,
                "error": format!("Not rewriting {name}: it holds text the memory tool cannot rewrite without losing some of it (probably added by hand, by another tool or by another session). A copy was saved to {backup}. Clean the file up into a plain list of §-separated entries, or move the extra text elsewhere, then try again."),
                "drift_backup": backup,
                "remediation": "Read the backup, re-add anything missing one entry at a time with memory(action=add, content=...), then rewrite or remove the original file so it is a clean list.",
            })))
        }
        MemoryError::Io { .. } => Err(err),
    }
}

/// The refusal message for content the injection scanner flags, if any.
fn scan_error(content: &str) -> Option<String> {
    let threat = crate::injection::scan_strict(content)?;
    Some(if threat.kind == "invisible_unicode" {
        format!(
            "Blocked: the content contains the invisible character {} (a common way to hide injected instructions). Remove it and try again.",
            threat.excerpt
        )
    } else {
        format!(
            "Blocked: the content matches threat pattern '{}'. Memory is copied into the system prompt, so it must not carry instructions aimed at the model or data-exfiltration commands. Rephrase it as a plain fact.",
            threat.kind
        )
    })
}

fn preview(entry: &str) -> String {
    let mut chars = entry.chars();
    let head: String = chars.by_ref().take(80).collect();
    if chars.next().is_some() {
        format!("{head}...")
    } else {
        head
    }
}

fn failure(msg: &str) -> Value {
    json!({"success": false, "error": msg})
}

/// Argument errors, shaped like the registry's tool errors.
fn error(msg: &str) -> Value {
    json!({"error": msg, "success": false})
}

fn non_empty<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// Python truthiness, for the one argument whose shape check depends on it.
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

impl Tool for MemoryTool {
    fn name(&self) -> &str {
        "memory"
    }

    fn toolset(&self) -> &str {
        "memory"
    }

    fn emoji(&self) -> &str {
        "🧠"
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "memory".into(),
            description: include_str!("memory_description.txt").trim().into(),
            parameters: schema_parameters(),
        }
    }

    fn call<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let tool = self.clone();
            let result = tokio::task::spawn_blocking(move || tool.execute(&args))
                .await
                .map_err(|e| ToolError::Fatal(format!("memory worker failed: {e}")))?;
            match result {
                Ok(v) => Ok(v.to_string()),
                Err(e) => Err(ToolError::model(format!(
                    "Could not update memory: {e}. Memory was left unchanged."
                ))),
            }
        })
    }
}

/// The parameters object the model sees (same shape as the reference's).
fn schema_parameters() -> Value {
    let actions = json!(["add", "replace", "remove"]);
    json!({
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": actions,
                "description": "What to do, for a single change. Leave out when sending 'operations'."
            },
            "target": {
                "type": "string",
                "enum": ["memory", "user"],
                "description": "Which store: 'memory' for your own notes, 'user' for the user profile."
            },
            "content": {
                "type": "string",
                "description": "The entry text. Needed by 'add' and 'replace' (single change)."
            },
            "old_text": {
                "type": "string",
                "description": "Needed by 'replace' and 'remove' (single change): a short substring that picks out exactly one existing entry. Leave out for 'add'."
            },
            "operations": {
                "type": "array",
                "description": "Several changes in one call, applied together and checked against the character limit only once all are applied. Best for multiple edits or for making room. Each item is {action, content?, old_text?}.",
                "items": {
                    "type": "object",
                    "properties": {
                        "action": {"type": "string", "enum": actions},
                        "content": {"type": "string", "description": "Entry text for add or replace."},
                        "old_text": {"type": "string", "description": "Substring that picks out the entry for replace or remove."}
                    },
                    "required": ["action"]
                }
            }
        },
        "required": ["target"]
    })
}

#[cfg(test)]
#[path = "memory_tests.rs"]
mod tests;
