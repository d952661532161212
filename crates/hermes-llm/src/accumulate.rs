//! Folding a delta stream into one assistant message.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use futures_util::StreamExt;
use hermes_protocol::{FinishReason, Message, Role, ToolCall, Usage};
use tokio_util::sync::CancellationToken;

use crate::{ChatRequest, LlmError, Provider, StreamDelta};

/// A finished model answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// The assistant message: text (`None` when empty), tool calls in index
    /// order, reasoning (`None` when empty).
    pub message: Message,
    /// Token counts, when the provider reported them (the last report wins).
    pub usage: Option<Usage>,
    /// Why generation stopped, when the provider said.
    pub finish_reason: Option<FinishReason>,
}

#[derive(Debug, Default)]
struct PartialCall {
    id: Option<String>,
    name: Option<String>,
    arguments: String,
}

/// Collects [`StreamDelta`]s in arrival order.
#[derive(Debug, Default)]
pub struct StreamAccumulator {
    text: String,
    reasoning: String,
    signature: Option<String>,
    reasoning_items: Vec<serde_json::Value>,
    calls: BTreeMap<usize, PartialCall>,
    usage: Option<Usage>,
    finish_reason: Option<FinishReason>,
}

/// A short suffix unlikely to repeat across calls or processes.
fn unique_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("{:x}{n}", u64::from(nanos) ^ u64::from(std::process::id()))
}

impl StreamAccumulator {
    /// An empty accumulator.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one delta.
    pub fn push(&mut self, delta: &StreamDelta) {
        match delta {
            StreamDelta::Text(t) => self.text.push_str(t),
            StreamDelta::Reasoning(r) => self.reasoning.push_str(r),
            StreamDelta::ReasoningSignature(s) => self.signature = Some(s.clone()),
            StreamDelta::ReasoningItem(item) => self.reasoning_items.push(item.clone()),
            StreamDelta::ToolCall {
                index,
                id,
                name,
                arguments,
            } => {
                let call = self.calls.entry(*index).or_default();
                if call.id.is_none() {
                    call.id.clone_from(id);
                }
                if call.name.is_none() {
                    call.name.clone_from(name);
                }
                call.arguments.push_str(arguments);
            }
            StreamDelta::Usage(u) => self.usage = Some(*u),
            StreamDelta::Finish(f) => self.finish_reason = Some(f.clone()),
        }
    }

    /// The text received so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether any tool-call fragment has arrived.
    pub fn has_tool_calls(&self) -> bool {
        !self.calls.is_empty()
    }

    /// The assembled completion. Calls without an id get `call_<index>_<n>`.
    pub fn finish(self) -> Completion {
        let tool_calls = self
            .calls
            .into_iter()
            .map(|(index, call)| {
                let id = call
                    .id
                    .unwrap_or_else(|| format!("call_{index}_{}", unique_suffix()));
                ToolCall::new(id, call.name.unwrap_or_default(), call.arguments)
            })
            .collect();
        let non_empty = |s: String| (!s.is_empty()).then_some(s);
        Completion {
            message: Message {
                role: Role::Assistant,
                content: non_empty(self.text),
                tool_calls,
                tool_call_id: None,
                name: None,
                reasoning_signature: self
                    .signature
                    .filter(|s| !s.is_empty() && !self.reasoning.is_empty()),
                reasoning: non_empty(self.reasoning),
                codex_reasoning_items: self.reasoning_items,
                images: Vec::new(),
            },
            usage: self.usage,
            finish_reason: self.finish_reason,
        }
    }
}

/// Streams `req` from `provider` and collects the whole answer.
pub async fn complete(
    provider: &dyn Provider,
    req: &ChatRequest,
    cancel: &CancellationToken,
) -> Result<Completion, LlmError> {
    let mut stream = provider.stream(req, cancel).await?;
    let mut acc = StreamAccumulator::new();
    while let Some(delta) = stream.next().await {
        acc.push(&delta?);
    }
    Ok(acc.finish())
}

#[cfg(test)]
#[path = "accumulate_tests.rs"]
mod tests;
