//! Building the JSON body of an Anthropic Messages request.

use hermes_protocol::{Message, Role};
use serde_json::{Map, Value, json};

use super::CacheTtl;
use crate::{ChatRequest, ToolChoice};

/// `max_tokens` when the request sets none and the model is not in the table.
pub const FALLBACK_MAX_TOKENS: u32 = 8192;

/// Output ceilings by model-name fragment; the longest matching fragment wins.
const OUTPUT_LIMITS: &[(&str, u32)] = &[
    ("claude-fable", 128_000),
    ("claude-sonnet-5", 128_000),
    ("claude-opus-4-8", 128_000),
    ("claude-opus-4-7", 128_000),
    ("claude-opus-4-6", 128_000),
    ("claude-sonnet-4-6", 64_000),
    ("claude-opus-4-5", 64_000),
    ("claude-sonnet-4-5", 64_000),
    ("claude-haiku-4-5", 64_000),
    ("claude-opus-4", 32_000),
    ("claude-sonnet-4", 64_000),
    ("claude-3-7-sonnet", 128_000),
    ("claude-3-5-sonnet", 8_192),
    ("claude-3-5-haiku", 8_192),
    ("claude-3-opus", 4_096),
    ("claude-3-sonnet", 4_096),
    ("claude-3-haiku", 4_096),
    ("minimax", 131_072),
    ("qwen3", 65_536),
];

/// The default output cap for `model`: the model family's ceiling, else
/// [`FALLBACK_MAX_TOKENS`]. Dots count as dashes (`claude-opus-4.6`).
pub fn default_max_tokens(model: &str) -> u32 {
    let m = model.to_ascii_lowercase().replace('.', "-");
    OUTPUT_LIMITS
        .iter()
        .filter(|(key, _)| m.contains(key))
        .max_by_key(|(key, _)| key.len())
        .map_or(FALLBACK_MAX_TOKENS, |(_, limit)| *limit)
}

/// A tool id restricted to `[a-zA-Z0-9_-]`, never empty.
fn tool_id(id: &str) -> String {
    crate::wire::restricted_id(id, usize::MAX, "tool_0")
}

fn text_block(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

fn is_thinking(block: &Value) -> bool {
    matches!(
        block.get("type").and_then(Value::as_str),
        Some("thinking" | "redacted_thinking")
    )
}

/// Content blocks of an assistant message. Signed reasoning becomes a leading
/// `thinking` block, but only on the latest assistant turn (Anthropic ignores
/// older ones); unsigned reasoning is not sent.
fn assistant_blocks(m: &Message, latest: bool) -> Vec<Value> {
    let mut blocks = Vec::new();
    if latest
        && let (Some(thinking), Some(signature)) = (&m.reasoning, &m.reasoning_signature)
        && !signature.is_empty()
    {
        blocks.push(json!({"type": "thinking", "thinking": thinking, "signature": signature}));
    }
    if let Some(text) = m.content.as_deref().filter(|t| !t.is_empty()) {
        blocks.push(text_block(text));
    }
    for call in &m.tool_calls {
        let input = serde_json::from_str::<Value>(&call.function.arguments)
            .ok()
            .filter(Value::is_object)
            .unwrap_or_else(|| json!({}));
        blocks.push(json!({
            "type": "tool_use",
            "id": tool_id(&call.id),
            "name": call.function.name,
            "input": input,
        }));
    }
    if blocks.iter().all(is_thinking) {
        blocks.push(text_block("(empty)"));
    }
    blocks
}

fn user_blocks(m: &Message) -> Vec<Value> {
    let mut blocks: Vec<Value> = m
        .images
        .iter()
        .map(|url| match crate::wire::split_data_url(url) {
            Some((media, data)) => {
                json!({"type": "image", "source": {"type": "base64", "media_type": media, "data": data}})
            }
            None => json!({"type": "image", "source": {"type": "url", "url": url}}),
        })
        .collect();
    let text = m.text();
    if !text.trim().is_empty() {
        blocks.push(text_block(text));
    } else if blocks.is_empty() {
        blocks.push(text_block("(empty message)"));
    }
    blocks
}

fn tool_result_block(m: &Message) -> Value {
    let text = m.text();
    json!({
        "type": "tool_result",
        "tool_use_id": tool_id(m.tool_call_id.as_deref().unwrap_or("")),
        "content": if text.is_empty() { "(no output)" } else { text },
    })
}

/// The converted conversation: `system` blocks, alternating messages, and for
/// each non-system source message where its last cacheable block landed.
struct Converted {
    system: Vec<Value>,
    messages: Vec<(&'static str, Vec<Value>)>,
    anchors: Vec<Option<(usize, usize)>>,
}

fn convert(messages: &[Message]) -> Converted {
    let latest_assistant = messages.iter().rposition(|m| m.role == Role::Assistant);
    let mut out = Converted {
        system: Vec::new(),
        messages: Vec::new(),
        anchors: Vec::new(),
    };
    for (i, m) in messages.iter().enumerate() {
        let (role, mut blocks) = match m.role {
            Role::System => {
                if !m.text().is_empty() {
                    out.system.push(text_block(m.text()));
                }
                continue;
            }
            Role::User => ("user", user_blocks(m)),
            Role::Tool => ("user", vec![tool_result_block(m)]),
            Role::Assistant => (
                "assistant",
                assistant_blocks(m, latest_assistant == Some(i)),
            ),
        };
        // Same-role neighbours merge (tool results into one user message);
        // thinking blocks may only lead a turn, so a merged one is dropped.
        let merge = out.messages.last().is_some_and(|(r, _)| *r == role);
        if merge {
            blocks.retain(|b| !is_thinking(b));
        } else {
            out.messages.push((role, Vec::new()));
        }
        let msg_index = out.messages.len() - 1;
        let Some((_, content)) = out.messages.last_mut() else {
            continue;
        };
        content.extend(blocks);
        let anchor = content
            .iter()
            .rposition(|b| !is_thinking(b))
            .map(|block| (msg_index, block));
        out.anchors.push(anchor);
    }
    out
}

fn cache_marker(ttl: CacheTtl) -> Value {
    ttl.marker()
}

fn mark(block: Option<&mut Value>, marker: &Value) {
    if let Some(obj) = block.and_then(Value::as_object_mut) {
        obj.insert("cache_control".into(), marker.clone());
    }
}

/// Applies the `system_and_3` layout: a breakpoint on the last system block
/// and on the last block of each of the last 3 non-system messages (4 when
/// there is no system prompt), at most 4 in all.
fn apply_cache_control(conv: &mut Converted, ttl: CacheTtl) {
    let marker = cache_marker(ttl);
    let mut budget = 4;
    if !conv.system.is_empty() {
        mark(conv.system.last_mut(), &marker);
        budget -= 1;
    }
    let anchors: Vec<(usize, usize)> = conv.anchors.iter().flatten().copied().collect();
    for (msg, block) in anchors.iter().rev().take(budget) {
        let target = conv
            .messages
            .get_mut(*msg)
            .and_then(|(_, blocks)| blocks.get_mut(*block));
        mark(target, &marker);
    }
}

fn tool_schema(parameters: &Value) -> Value {
    let mut schema = match parameters {
        Value::Object(obj) => obj.clone(),
        _ => Map::new(),
    };
    // Anthropic rejects unions at the schema root.
    let had_union = ["oneOf", "anyOf", "allOf"]
        .iter()
        .any(|k| schema.remove(*k).is_some());
    if had_union || schema.is_empty() {
        schema.entry("type").or_insert_with(|| json!("object"));
    }
    if schema.get("type").and_then(Value::as_str) == Some("object")
        && !schema.get("properties").is_some_and(Value::is_object)
    {
        schema.insert("properties".into(), json!({}));
    }
    Value::Object(schema)
}

/// The JSON body of a streamed Messages request.
pub(crate) fn request_body(req: &ChatRequest, ttl: CacheTtl) -> Value {
    let mut conv = convert(&req.messages);
    apply_cache_control(&mut conv, ttl);
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    let max_tokens = req
        .max_tokens
        .filter(|n| *n > 0)
        .unwrap_or_else(|| default_max_tokens(&req.model));
    body.insert("max_tokens".into(), json!(max_tokens));
    if !conv.system.is_empty() {
        body.insert("system".into(), Value::Array(conv.system));
    }
    let messages = conv
        .messages
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    body.insert("messages".into(), messages);
    if !req.tools.is_empty() {
        let tools = req
            .tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "input_schema": tool_schema(&t.parameters),
                })
            })
            .collect();
        body.insert("tools".into(), tools);
        let choice = match &req.tool_choice {
            ToolChoice::Auto => json!({"type": "auto"}),
            ToolChoice::None => json!({"type": "none"}),
            ToolChoice::Required => json!({"type": "any"}),
            ToolChoice::Named(name) => json!({"type": "tool", "name": name}),
        };
        body.insert("tool_choice".into(), choice);
    }
    if let Some(t) = req.temperature {
        let t = t.to_string().parse::<f64>().unwrap_or(f64::from(t));
        body.insert("temperature".into(), json!(t));
    }
    body.insert("stream".into(), Value::Bool(true));
    Value::Object(body)
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
