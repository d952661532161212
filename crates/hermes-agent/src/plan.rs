//! Splitting a batch of tool calls into segments that may run concurrently.

use std::path::PathBuf;

use hermes_tools::{ParallelClass, Registry, ToolContext, paths};
use serde_json::Value;

/// A call ready to dispatch: its position in the batch, resolved tool name and parsed arguments.
#[derive(Debug, Clone)]
pub struct PreparedCall {
    /// Index in the assistant message's tool_calls.
    pub index: usize,
    /// Call id.
    pub id: String,
    /// Resolved tool name (after repair).
    pub name: String,
    /// Parsed arguments.
    pub args: Value,
    /// Arguments as text (as recorded in history).
    pub args_text: String,
}

/// How a segment runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegmentKind {
    /// All calls at once (bounded by the worker limit).
    Parallel,
    /// One after another.
    Sequential,
}

/// Plans segments preserving call order: a maximal run of parallel-safe calls
/// becomes one parallel segment; a path-scoped call whose path overlaps one
/// already in the run closes it; anything else is a barrier. Parallel runs of
/// one call are demoted, and adjacent sequential segments merge.
pub fn plan(
    calls: &[PreparedCall],
    registry: &Registry,
    ctx: &ToolContext,
) -> Vec<(SegmentKind, Vec<usize>)> {
    let mut segments: Vec<(SegmentKind, Vec<usize>)> = Vec::new();
    let mut run: Vec<usize> = Vec::new();
    let mut reserved: Vec<PathBuf> = Vec::new();

    let close = |segments: &mut Vec<(SegmentKind, Vec<usize>)>,
                 run: &mut Vec<usize>,
                 reserved: &mut Vec<PathBuf>| {
        if !run.is_empty() {
            segments.push((SegmentKind::Parallel, std::mem::take(run)));
            reserved.clear();
        }
    };

    for (pos, call) in calls.iter().enumerate() {
        let class = registry.get(&call.name).map(|t| t.parallel_class());
        let class = if call.args.is_object() { class } else { None };
        match class {
            Some(ParallelClass::ReadOnly) => run.push(pos),
            Some(ParallelClass::PathScoped) => {
                let Some(raw) = call
                    .args
                    .get("path")
                    .and_then(Value::as_str)
                    .filter(|p| !p.trim().is_empty())
                else {
                    close(&mut segments, &mut run, &mut reserved);
                    push_sequential(&mut segments, pos);
                    continue;
                };
                let path = paths::canonical_for_overlap(&ctx.resolve(raw));
                if reserved.iter().any(|r| paths::overlap(r, &path)) {
                    close(&mut segments, &mut run, &mut reserved);
                }
                reserved.push(path);
                run.push(pos);
            }
            Some(ParallelClass::Exclusive) | None => {
                close(&mut segments, &mut run, &mut reserved);
                push_sequential(&mut segments, pos);
            }
        }
    }
    close(&mut segments, &mut run, &mut reserved);

    let mut normalized: Vec<(SegmentKind, Vec<usize>)> = Vec::new();
    for (kind, members) in segments {
        let kind = if members.len() < 2 {
            SegmentKind::Sequential
        } else {
            kind
        };
        match normalized.last_mut() {
            Some((SegmentKind::Sequential, prev)) if kind == SegmentKind::Sequential => {
                prev.extend(members)
            }
            _ => normalized.push((kind, members)),
        }
    }
    normalized
}

fn push_sequential(segments: &mut Vec<(SegmentKind, Vec<usize>)>, pos: usize) {
    match segments.last_mut() {
        Some((SegmentKind::Sequential, members)) => members.push(pos),
        _ => segments.push((SegmentKind::Sequential, vec![pos])),
    }
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
