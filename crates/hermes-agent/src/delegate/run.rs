//! Running built children side by side and turning each run into the result
//! entry the parent model reads (summary, status, counts, a tool trace).

use std::time::{Duration, Instant};

use futures_util::future::join_all;
use hermes_protocol::{Event, Message, Role, TurnEnd};
use hermes_tools::ToolContext;
use hermes_tools::hooks::{HookEvent, object};
use serde_json::{Value, json};

use super::settings::DelegationSettings;
use crate::{Agent, AgentError, TurnResult};

/// A built child and the goal it is given as its first message.
pub(super) struct Child {
    pub(super) goal: String,
    pub(super) agent: Agent,
}

/// Runs every child concurrently and returns `{results, total_duration_seconds}`,
/// results in task order.
pub(super) async fn run_children(
    children: Vec<Child>,
    ctx: &ToolContext,
    settings: &DelegationSettings,
) -> Value {
    let started = Instant::now();
    let n = children.len();
    let runs = children
        .into_iter()
        .enumerate()
        .map(|(index, child)| run_one(index, n, child, ctx, settings));
    let results = join_all(runs).await;
    json!({
        "results": results,
        "total_duration_seconds": seconds(started.elapsed()),
    })
}

enum Outcome {
    Finished(Result<TurnResult, AgentError>),
    TimedOut(u64),
}

async fn run_one(
    index: usize,
    n: usize,
    child: Child,
    ctx: &ToolContext,
    settings: &DelegationSettings,
) -> Value {
    let origin = if n == 1 {
        "subagent".to_owned()
    } else {
        format!("subagent {}/{n}", index + 1)
    };
    let started = Instant::now();
    let cancel = ctx.cancel.child_token();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let Child { goal, mut agent } = child;
    let child_session = agent.options().session_id.clone();
    subagent_hook(
        ctx,
        HookEvent::SubagentStart,
        [
            ("child_session_id", json!(child_session)),
            ("child_goal", json!(goal)),
        ],
    )
    .await;
    let limit = settings.child_timeout_seconds;
    let work = {
        let cancel = cancel.clone();
        let goal = goal.clone();
        async move {
            let turn = agent.run_turn(&goal, &tx, &cancel);
            let outcome = if limit == 0 {
                Outcome::Finished(turn.await)
            } else {
                match tokio::time::timeout(Duration::from_secs(limit), turn).await {
                    Ok(done) => Outcome::Finished(done),
                    Err(_) => Outcome::TimedOut(limit),
                }
            };
            // Closing the channel ends the forwarder below.
            drop(tx);
            (outcome, agent)
        }
    };
    let forward = async {
        while let Some(event) = rx.recv().await {
            if let (Some(sink), true) = (&ctx.events, worth_showing(&event)) {
                let _ = sink.send(Event::Nested {
                    origin: origin.clone(),
                    inner: Box::new(event),
                });
            }
        }
    };
    let ((outcome, mut agent), ()) = tokio::join!(work, forward);
    cancel.cancel();
    if let (Err(e), Some(sink)) = (agent.end_session("agent_close"), &ctx.events) {
        let _ = sink.send(Event::Status {
            message: format!("Could not close the subagent's stored session: {e}"),
        });
    }
    let entry = result_entry(index, &outcome, &agent, started.elapsed(), settings);
    tell_memory(ctx, &goal, &entry, &child_session);
    subagent_hook(
        ctx,
        HookEvent::SubagentStop,
        [
            ("child_session_id", json!(child_session)),
            ("child_summary", entry["summary"].clone()),
            ("child_status", entry["status"].clone()),
            (
                "duration_ms",
                json!(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)),
            ),
        ],
    )
    .await;
    if let Some(sink) = &ctx.events {
        let icon = if entry["status"] == "completed" {
            "✓"
        } else {
            "✗"
        };
        let label: String = goal.chars().take(40).collect();
        let _ = sink.send(Event::Nested {
            origin: "delegate_task".into(),
            inner: Box::new(Event::Status {
                message: format!(
                    "{icon} [{}/{n}] {label}  ({}s)",
                    index + 1,
                    entry["duration_seconds"]
                ),
            }),
        });
    }
    entry
}

/// The parent's memory provider observes what was delegated and what came
/// back (in the background).
fn tell_memory(ctx: &ToolContext, goal: &str, entry: &Value, child_session: &str) {
    let Some(memory) = &ctx.memory else {
        return;
    };
    let provider = memory.0.clone();
    let task = goal.to_owned();
    let result = entry["summary"].as_str().unwrap_or("").to_owned();
    let child = child_session.to_owned();
    tokio::task::spawn_blocking(move || provider.on_delegation(&task, &result, &child));
}

/// `subagent_start` / `subagent_stop` observers, with the parent's session.
async fn subagent_hook<const N: usize>(
    ctx: &ToolContext,
    event: HookEvent,
    fields: [(&str, Value); N],
) {
    if !ctx.hooks.wants(event, None) {
        return;
    }
    let mut extra = object(fields);
    extra.insert("parent_session_id".into(), json!(ctx.session_id));
    let site = ctx.hook_site();
    ctx.hooks.fire(event, site, None, extra).await;
}

/// Progress worth a line in the parent's front-end; the child's streamed text
/// and bookkeeping stay inside it.
fn worth_showing(event: &Event) -> bool {
    matches!(
        event,
        Event::ToolStarted { .. }
            | Event::ToolFinished { .. }
            | Event::Status { .. }
            | Event::Error { .. }
            | Event::Nested { .. }
    )
}

fn result_entry(
    index: usize,
    outcome: &Outcome,
    agent: &Agent,
    elapsed: Duration,
    settings: &DelegationSettings,
) -> Value {
    let mut entry = json!({
        "task_index": index,
        "api_calls": 0,
        "duration_seconds": seconds(elapsed),
        "model": agent.options().model,
        "tool_trace": tool_trace(agent.messages()),
    });
    match outcome {
        Outcome::TimedOut(limit) => {
            entry["status"] = json!("timeout");
            entry["summary"] = Value::Null;
            entry["exit_reason"] = json!("timeout");
            entry["error"] = json!(format!(
                "Subagent timed out after {limit}s (delegation.child_timeout_seconds)."
            ));
        }
        Outcome::Finished(Err(e)) => {
            entry["status"] = json!("error");
            entry["summary"] = Value::Null;
            entry["exit_reason"] = json!("error");
            entry["error"] = json!(e.to_string());
        }
        Outcome::Finished(Ok(turn)) => {
            let summary = turn.final_text.trim();
            let (status, exit_reason) = match turn.reason {
                TurnEnd::Interrupted => ("interrupted", "interrupted"),
                reason => {
                    let exit = if reason == TurnEnd::BudgetExhausted {
                        "max_iterations"
                    } else {
                        "completed"
                    };
                    if summary.is_empty() || summary == "(empty)" {
                        ("failed", exit)
                    } else {
                        ("completed", exit)
                    }
                }
            };
            entry["status"] = json!(status);
            entry["summary"] = json!(trim_summary(summary, settings.max_summary_chars));
            entry["api_calls"] = json!(turn.api_calls);
            entry["exit_reason"] = json!(exit_reason);
            entry["tokens"] = json!({
                "input": turn.usage.input_tokens,
                "output": turn.usage.output_tokens,
            });
            if status == "failed" {
                entry["error"] = json!("Subagent did not produce a response.");
            }
        }
    }
    entry
}

/// The tools the child called, paired with the size and health of each result.
fn tool_trace(messages: &[Message]) -> Value {
    let mut trace: Vec<Value> = Vec::new();
    let mut by_id: Vec<(String, usize)> = Vec::new();
    for m in messages {
        match m.role {
            Role::Assistant => {
                for call in &m.tool_calls {
                    by_id.push((call.id.clone(), trace.len()));
                    trace.push(json!({
                        "tool": call.function.name,
                        "args_bytes": call.function.arguments.len(),
                    }));
                }
            }
            Role::Tool => {
                let content = m.content.as_deref().unwrap_or("");
                let slot = m
                    .tool_call_id
                    .as_deref()
                    .and_then(|id| by_id.iter().find(|(k, _)| k == id).map(|(_, i)| *i))
                    .or_else(|| trace.len().checked_sub(1));
                if let Some(entry) = slot.and_then(|i| trace.get_mut(i)) {
                    entry["result_bytes"] = json!(content.len());
                    entry["status"] = json!(if looks_like_error(content) {
                        "error"
                    } else {
                        "ok"
                    });
                }
            }
            _ => {}
        }
    }
    Value::Array(trace)
}

fn looks_like_error(content: &str) -> bool {
    match serde_json::from_str::<Value>(content) {
        Ok(Value::Object(map)) => map.get("error").is_some_and(|e| !e.is_null()),
        _ => content.trim_start().starts_with("Error"),
    }
}

/// Keeps a head and a tail of an over-long summary (its outcome and its list
/// of changed files tend to sit at the two ends) with a note on what was cut.
pub(super) fn trim_summary(summary: &str, cap: usize) -> String {
    let total = summary.chars().count();
    if cap == 0 || total <= cap {
        return summary.to_owned();
    }
    let head_len = cap * 3 / 4;
    let tail_len = cap - head_len;
    let head: String = summary.chars().take(head_len).collect();
    let tail: String = summary.chars().skip(total - tail_len).collect();
    format!(
        "{head}\n\n[... {} characters of the subagent's summary omitted (delegation.max_summary_chars={cap}) ...]\n\n{tail}",
        total - head_len - tail_len
    )
}

fn seconds(d: Duration) -> f64 {
    (d.as_secs_f64() * 100.0).round() / 100.0
}
