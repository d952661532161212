//! A conversation as a training trajectory: the reference's ShareGPT format
//! (`{"from": "system"|"human"|"gpt"|"tool", "value": …}`) with a fixed
//! function-calling system message, `<think>`, `<tool_call>` and
//! `<tool_response>` blocks; and the records written to the output files.

use std::collections::BTreeMap;

use hermes_protocol::{Message, Role, ToolSchema};
use serde::Serialize;

use crate::json::{self, Json};
use crate::stats::ToolStat;

/// The system message's text before the tools.
const SYSTEM_HEAD: &str = "You are a function calling AI model. You are provided with function signatures within <tools> </tools> XML tags. You may call one or more functions to assist with the user query. If available tools are not relevant in assisting with user query, just respond in natural conversational language. Don't make assumptions about what values to plug into functions. After calling & executing the functions, you will be provided with function results within <tool_response> </tool_response> XML tags. Here are the available tools:\n";

/// The system message's text after the tools.
const SYSTEM_TAIL: &str = "For each function call return a JSON object, with the following pydantic model json schema for each:\n{'title': 'FunctionCall', 'type': 'object', 'properties': {'name': {'title': 'Name', 'type': 'string'}, 'arguments': {'title': 'Arguments', 'type': 'object'}}, 'required': ['name', 'arguments']}\nEach function call should be enclosed within <tool_call> </tool_call> XML tags.\nExample:\n<tool_call>\n{'name': <function-name>,'arguments': <args-dict>}\n</tool_call>";

/// One ShareGPT turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Turn {
    /// `system`, `human`, `gpt` or `tool`.
    pub from: String,
    /// The text.
    pub value: String,
}

impl Turn {
    fn new(from: &str, value: impl Into<String>) -> Self {
        Self {
            from: from.to_owned(),
            value: value.into(),
        }
    }
}

/// The tools as the system message lists them: a JSON array of
/// `{"name", "description", "parameters", "required": null}` (`[]` for none).
pub fn format_tools(tools: &[ToolSchema]) -> String {
    let list = Json::Array(
        tools
            .iter()
            .map(|t| {
                Json::object([
                    ("name", Json::string(&t.name)),
                    ("description", Json::string(&t.description)),
                    ("parameters", Json::from(&t.parameters)),
                    ("required", Json::Null),
                ])
            })
            .collect(),
    );
    json::to_python_string(&list).unwrap_or_else(|_| "[]".to_owned())
}

/// The fixed function-calling system message listing `tools`. It is never
/// the session's real system prompt, so no ephemeral prompt appears in it.
pub fn system_message(tools: &[ToolSchema]) -> String {
    format!(
        "{SYSTEM_HEAD}<tools>\n{}\n</tools>\n{SYSTEM_TAIL}",
        format_tools(tools)
    )
}

/// `<REASONING_SCRATCHPAD>` tags written as `<think>` tags.
pub fn scratchpad_to_think(content: &str) -> String {
    content
        .replace("<REASONING_SCRATCHPAD>", "<think>")
        .replace("</REASONING_SCRATCHPAD>", "</think>")
}

/// `<think>\n…\n</think>\n` for non-blank reasoning, else nothing.
fn think_block(reasoning: Option<&str>) -> String {
    match reasoning {
        Some(r) if !r.trim().is_empty() => format!("<think>\n{r}\n</think>\n"),
        _ => String::new(),
    }
}

/// Arguments text as JSON: `{}` when it does not parse.
fn arguments(text: &str) -> Json {
    json::parse(text).unwrap_or_else(|_| Json::Object(Vec::new()))
}

/// A tool result as the trajectory holds it: parsed when it looks like a
/// JSON object or array and parses, else the text itself.
fn tool_content(content: Option<&str>) -> Json {
    let Some(text) = content else {
        return Json::Null;
    };
    let trimmed = text.trim();
    if (trimmed.starts_with('{') || trimmed.starts_with('['))
        && let Ok(parsed) = json::parse(trimmed)
    {
        return parsed;
    }
    Json::string(text)
}

/// The `gpt` turn of an assistant message that calls tools.
fn tool_call_turn(msg: &Message) -> String {
    let mut content = think_block(msg.reasoning.as_deref());
    let text = msg.text();
    if !text.trim().is_empty() {
        content.push_str(&scratchpad_to_think(text));
        content.push('\n');
    }
    for call in &msg.tool_calls {
        let body = Json::object([
            ("name", Json::string(&call.function.name)),
            ("arguments", arguments(&call.function.arguments)),
        ]);
        let body = json::to_python_string(&body).unwrap_or_default();
        content.push_str(&format!("<tool_call>\n{body}\n</tool_call>\n"));
    }
    if !content.contains("<think>") {
        content.insert_str(0, "<think>\n</think>\n");
    }
    content.trim_end().to_owned()
}

/// The `tool` turn answering `msg`'s calls: each result in order, named by
/// its position among the calls (`unknown` past the end).
fn tool_results_turn(msg: &Message, results: &[Message]) -> String {
    results
        .iter()
        .enumerate()
        .map(|(k, result)| {
            let name = msg
                .tool_calls
                .get(k)
                .map_or("unknown", |c| c.function.name.as_str());
            let body = Json::object([
                (
                    "tool_call_id",
                    Json::string(result.tool_call_id.as_deref().unwrap_or("")),
                ),
                ("name", Json::string(name)),
                ("content", tool_content(result.content.as_deref())),
            ]);
            format!(
                "<tool_response>\n{}\n</tool_response>",
                json::to_python_string(&body).unwrap_or_default()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `gpt` turn of an assistant message without tool calls.
fn answer_turn(msg: &Message) -> String {
    let mut content = think_block(msg.reasoning.as_deref());
    content.push_str(&scratchpad_to_think(msg.text()));
    if !content.contains("<think>") {
        content.insert_str(0, "<think>\n</think>\n");
    }
    content.trim().to_owned()
}

/// `messages` (the session's conversation, starting with the user's query)
/// as ShareGPT turns: the fixed system message with `tools`, the query as
/// `human`, then the rest. System messages, and tool results that follow no
/// assistant message, are dropped.
pub fn to_sharegpt(messages: &[Message], query: &str, tools: &[ToolSchema]) -> Vec<Turn> {
    let mut turns = vec![
        Turn::new("system", system_message(tools)),
        Turn::new("human", query),
    ];
    // The first message is the query itself.
    let mut i = 1;
    while i < messages.len() {
        let msg = &messages[i];
        match msg.role {
            Role::Assistant if !msg.tool_calls.is_empty() => {
                turns.push(Turn::new("gpt", tool_call_turn(msg)));
                let end = messages[i + 1..]
                    .iter()
                    .position(|m| m.role != Role::Tool)
                    .map_or(messages.len(), |p| i + 1 + p);
                let results = &messages[i + 1..end];
                if !results.is_empty() {
                    turns.push(Turn::new("tool", tool_results_turn(msg, results)));
                    i = end - 1;
                }
            }
            Role::Assistant => turns.push(Turn::new("gpt", answer_turn(msg))),
            Role::User => turns.push(Turn::new("human", msg.text())),
            Role::System | Role::Tool => {}
        }
        i += 1;
    }
    turns
}

/// `metadata` of a trajectory record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Metadata {
    /// `prompt_index / batch_size`.
    pub batch_num: usize,
    /// When the prompt finished: local time, ISO-8601 without a zone.
    pub timestamp: String,
    /// The model that answered.
    pub model: String,
}

/// One line of `trajectory_samples.jsonl` / `failed_trajectories.jsonl`,
/// with the reference's keys in its order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrajectoryRecord {
    /// The prompt's index in the dataset.
    pub prompt_index: usize,
    /// The ShareGPT turns.
    pub conversations: Vec<Turn>,
    /// Batch, time, model.
    pub metadata: Metadata,
    /// The model finished with an answer within its budget.
    pub completed: bool,
    /// The run stopped early (interrupted).
    pub partial: bool,
    /// Model calls made.
    pub api_calls: u32,
    /// The toolsets the prompt was given.
    pub toolsets_used: Vec<String>,
    /// Per tool: calls, successes, failures (every known tool listed).
    pub tool_stats: BTreeMap<String, ToolStat>,
    /// Per tool: failures (every known tool listed).
    pub tool_error_counts: BTreeMap<String, u64>,
}

/// A line of `failed_trajectories.jsonl` for a prompt whose run failed
/// before it produced a trajectory; the prompt is retried by the next run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorRecord {
    /// The prompt's index in the dataset.
    pub prompt_index: usize,
    /// The prompt.
    pub prompt: String,
    /// What went wrong.
    pub error: String,
    /// Always `true`.
    pub failed: bool,
}

/// A sample left out for having no reasoning in any turn, as the reference
/// discards them (kept in `failed_trajectories.jsonl` so the prompt is not run again).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiscardRecord {
    /// The prompt's index in the dataset.
    pub prompt_index: usize,
    /// The prompt.
    pub prompt: String,
    /// Why it was discarded.
    pub discarded: String,
}

/// Why a sample is discarded.
pub const NO_REASONING: &str = "no reasoning in any turn";

/// Whether any assistant turn carried reasoning (a reasoning field, or the
/// reference's `<REASONING_SCRATCHPAD>` in its text).
pub fn has_reasoning(messages: &[hermes_protocol::Message]) -> bool {
    messages
        .iter()
        .filter(|m| m.role == hermes_protocol::Role::Assistant)
        .any(|m| {
            m.reasoning.as_deref().is_some_and(|r| !r.trim().is_empty())
                || m.text().contains("<REASONING_SCRATCHPAD>")
        })
}

/// A record as one JSONL line (Python separators, no newline).
pub fn to_line<T: Serialize>(record: &T) -> Result<String, serde_json::Error> {
    json::to_python_string(record)
}

#[cfg(test)]
#[path = "trajectory_tests.rs"]
mod tests;
