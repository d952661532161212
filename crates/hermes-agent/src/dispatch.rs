//! Running a batch of tool calls: concurrently where the plan allows, results in call order.

use std::time::Instant;

use futures_util::StreamExt;
use hermes_protocol::{Event, ToolOutcome};
use hermes_tools::hooks::{PreToolDecision, ToolCallReport};
use hermes_tools::{Registry, ToolContext, ToolError, error_json, truncate};

use crate::EventSink;
use crate::plan::{PreparedCall, SegmentKind, plan};

/// Most tool calls in flight at once.
pub const MAX_TOOL_WORKERS: usize = 8;

/// Result text recorded for a call cut short by an interrupt.
pub const INTERRUPTED_RESULT: &str = "Interrupted by the user before the tool finished.";

/// One finished call.
#[derive(Debug, Clone)]
pub struct CallResult {
    /// Call id.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Text sent back to the model.
    pub content: String,
    /// A failure that must end the turn, if any.
    pub fatal: Option<String>,
}

/// Runs every call, returning results in the calls' original order.
pub async fn run_batch(
    calls: &[PreparedCall],
    registry: &Registry,
    ctx: &ToolContext,
    events: &EventSink,
) -> Vec<CallResult> {
    let mut results: Vec<Option<CallResult>> = vec![None; calls.len()];
    for (kind, members) in plan(calls, registry, ctx) {
        match kind {
            SegmentKind::Parallel => {
                let done: Vec<(usize, CallResult)> =
                    futures_util::stream::iter(members)
                        .map(|pos| async move {
                            (pos, run_one(&calls[pos], registry, ctx, events).await)
                        })
                        .buffer_unordered(MAX_TOOL_WORKERS)
                        .collect()
                        .await;
                for (pos, r) in done {
                    results[pos] = Some(r);
                }
            }
            SegmentKind::Sequential => {
                for pos in members {
                    results[pos] = Some(run_one(&calls[pos], registry, ctx, events).await);
                }
            }
        }
    }
    results
        .into_iter()
        .zip(calls)
        .map(|(r, c)| {
            r.unwrap_or_else(|| CallResult {
                id: c.id.clone(),
                name: c.name.clone(),
                content: error_json(INTERRUPTED_RESULT),
                fatal: None,
            })
        })
        .collect()
}

async fn run_one(
    call: &PreparedCall,
    registry: &Registry,
    ctx: &ToolContext,
    events: &EventSink,
) -> CallResult {
    let started = Instant::now();
    let _ = events.send(Event::ToolStarted {
        call_id: call.id.clone(),
        name: call.name.clone(),
        arguments: crate::redaction::tool_arguments(&call.args_text),
    });
    let mut fatal = None;
    let site = ctx.hook_site();
    let decision = if ctx.hooks.is_empty() {
        PreToolDecision::Run
    } else {
        ctx.hooks
            .before_tool(site, &call.name, &call.args, &call.id)
            .await
    };
    let (content, outcome) = if ctx.cancel.is_cancelled() {
        (error_json(INTERRUPTED_RESULT), ToolOutcome::Cancelled)
    } else if let PreToolDecision::Block(message) = &decision {
        (error_json(message), ToolOutcome::Error)
    } else {
        match registry.get(&call.name) {
            None => (
                error_json(&unknown_tool_message(&call.name, registry)),
                ToolOutcome::Error,
            ),
            Some(tool) => match tool.call(call.args.clone(), ctx).await {
                Ok(text) => (
                    truncate::cap_chars(text, tool.max_result_chars()),
                    ToolOutcome::Ok,
                ),
                Err(ToolError::Model(msg)) => (error_json(&msg), ToolOutcome::Error),
                Err(ToolError::Cancelled) => {
                    (error_json(INTERRUPTED_RESULT), ToolOutcome::Cancelled)
                }
                Err(ToolError::Fatal(msg)) => {
                    let text = error_json(&format!("{} failed: {msg}", call.name));
                    fatal = Some(msg);
                    (text, ToolOutcome::Error)
                }
            },
        }
    };
    let content = if ctx.hooks.is_empty() {
        content
    } else {
        let blocked = matches!(decision, PreToolDecision::Block(_));
        let report = ToolCallReport {
            tool: &call.name,
            args: &call.args,
            call_id: &call.id,
            result: &content,
            duration_ms: (!blocked)
                .then(|| u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)),
            status: match (blocked, outcome) {
                (true, _) => "blocked",
                (false, ToolOutcome::Ok) => "ok",
                (false, _) => "error",
            },
        };
        ctx.hooks.after_tool(site, report).await
    };
    // No live key goes on, whichever tool printed it: not to the front-ends'
    // events, not into the transcript.
    let content = crate::redaction::tool_result(&call.name, &call.args, &content);
    let _ = events.send(Event::ToolFinished {
        call_id: call.id.clone(),
        name: call.name.clone(),
        outcome,
        result: content.clone(),
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    });
    CallResult {
        id: call.id.clone(),
        name: call.name.clone(),
        content,
        fatal,
    }
}

/// The error a model reads when it calls a tool that does not exist.
pub fn unknown_tool_message(name: &str, registry: &Registry) -> String {
    let available: Vec<&str> = registry.names().collect();
    format!(
        "Tool '{name}' does not exist. Available tools: {}. Call one of these by its exact name.",
        available.join(", ")
    )
}
