//! Building the JSON body of an OpenAI Responses request.

use std::collections::HashSet;

use hermes_protocol::{Message, Role};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::api_mode::uses_developer_role;
use crate::{ChatRequest, ToolChoice};

/// `instructions` when the conversation has no system message: the Codex
/// backend rejects a request without any.
pub const FALLBACK_INSTRUCTIONS: &str = "You are a helpful assistant.";

/// What the endpoint accepts beyond the common Responses body.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Flavor {
    /// ChatGPT's Codex backend, which rejects `max_output_tokens`.
    pub codex_backend: bool,
    /// Leave out earlier reasoning items (after the server could not decrypt them).
    pub drop_reasoning: bool,
}

/// Splits a stored tool id `call_id|item_id` (the reference's shape) into its call id.
fn call_id_of(raw: &str) -> &str {
    raw.split_once('|').map_or(raw, |(call, _)| call).trim()
}

/// The reasoning items of an earlier answer, as sent back: only those with
/// `encrypted_content`, without `id` (with `store: false` the server cannot
/// look ids up and answers 404) and without Hermes-side `_` keys.
fn replay_items(m: &Message, seen: &mut HashSet<String>, out: &mut Vec<Value>) -> bool {
    let mut any = false;
    for item in &m.codex_reasoning_items {
        let Some(obj) = item.as_object() else {
            continue;
        };
        let encrypted = obj.get("encrypted_content").and_then(Value::as_str);
        if encrypted.is_none_or(str::is_empty) {
            continue;
        }
        if let Some(id) = obj.get("id").and_then(Value::as_str)
            && !seen.insert(id.to_owned())
        {
            continue;
        }
        let clean: Map<String, Value> = obj
            .iter()
            .filter(|(k, _)| k.as_str() != "id" && !k.starts_with('_'))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        out.push(Value::Object(clean));
        any = true;
    }
    any
}

fn assistant_items(m: &Message, seen: &mut HashSet<String>, out: &mut Vec<Value>, replay: bool) {
    let replayed = replay && replay_items(m, seen, out);
    let text = m.text();
    if !text.trim().is_empty() {
        out.push(json!({"role": "assistant", "content": text}));
    } else if replayed {
        // A reasoning item must be followed by another item.
        out.push(json!({"role": "assistant", "content": ""}));
    }
    for call in &m.tool_calls {
        let name = call.function.name.trim();
        if name.is_empty() {
            continue;
        }
        let arguments = call.function.arguments.trim();
        let mut call_id = call_id_of(&call.id).to_owned();
        if call_id.is_empty() {
            // A call must carry an id its result can name; derive a stable one.
            call_id = format!("call_{}", &hex_digest(&format!("{name}:{arguments}"))[..24]);
        }
        out.push(json!({
            "type": "function_call",
            "call_id": call_id,
            "name": name,
            "arguments": if arguments.is_empty() { "{}" } else { arguments },
        }));
    }
}

/// The `instructions` and `input` items for `messages`: a leading system
/// message becomes the instructions; later ones stay in place as
/// `developer` (GPT-5 / Codex / o-series) or `system` items.
pub(crate) fn convert(messages: &[Message], model: &str, replay: bool) -> (String, Vec<Value>) {
    let (instructions, rest) = match messages.split_first() {
        Some((first, rest)) if first.role == Role::System => (first.text().trim().to_owned(), rest),
        _ => (String::new(), messages),
    };
    let system_role = if uses_developer_role(model) {
        "developer"
    } else {
        "system"
    };
    let mut items = Vec::new();
    let mut seen = HashSet::new();
    for m in rest {
        match m.role {
            Role::System => {
                if !m.text().trim().is_empty() {
                    items.push(json!({"role": system_role, "content": m.text()}));
                }
            }
            Role::User if !m.images.is_empty() => {
                let mut parts = vec![json!({"type": "input_text", "text": m.text()})];
                for url in &m.images {
                    parts.push(json!({"type": "input_image", "image_url": url}));
                }
                items.push(json!({"role": "user", "content": parts}));
            }
            Role::User => items.push(json!({"role": "user", "content": m.text()})),
            Role::Assistant => assistant_items(m, &mut seen, &mut items, replay),
            Role::Tool => {
                let call_id = call_id_of(m.tool_call_id.as_deref().unwrap_or(""));
                if call_id.is_empty() {
                    continue;
                }
                items.push(json!({
                    "type": "function_call_output",
                    "call_id": call_id,
                    "output": m.text(),
                }));
            }
        }
    }
    let instructions = if instructions.is_empty() {
        FALLBACK_INSTRUCTIONS.to_owned()
    } else {
        instructions
    };
    (instructions, items)
}

fn hex_digest(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A prompt-cache routing key addressed by the static prefix (instructions and
/// tools sorted by name), so identical prefixes share a warm cache.
fn cache_key(instructions: &str, tools: &[Value]) -> String {
    let mut sorted: Vec<&Value> = tools.iter().collect();
    sorted.sort_by_key(|t| t.get("name").and_then(Value::as_str).unwrap_or(""));
    let tools_part = if sorted.is_empty() {
        String::new()
    } else {
        // Keys sorted whatever order the maps keep (`preserve_order` is on),
        // without spaces: the reference's `sort_keys=True` dump.
        canonical(&Value::Array(sorted.into_iter().cloned().collect())).to_string()
    };
    format!(
        "pck_{}",
        &hex_digest(&format!("{instructions}\0{tools_part}"))[..24]
    )
}

/// `value` with every object's keys in sorted order.
fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.clone(), canonical(v)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

fn tools(req: &ChatRequest) -> Vec<Value> {
    req.tools
        .iter()
        .filter(|t| !t.name.trim().is_empty())
        .map(|t| {
            let parameters = if t.parameters.is_object() {
                t.parameters.clone()
            } else {
                json!({"type": "object", "properties": {}})
            };
            json!({
                "type": "function",
                "name": t.name,
                "description": t.description,
                "strict": false,
                "parameters": parameters,
            })
        })
        .collect()
}

/// Whether the model reasons, so the request asks for reasoning summaries and
/// the encrypted reasoning items to replay.
fn reasons(model: &str) -> bool {
    uses_developer_role(model)
}

/// Whether any earlier answer carries reasoning items that would be replayed.
pub(crate) fn replays_reasoning(req: &ChatRequest) -> bool {
    req.messages
        .iter()
        .any(|m| m.role == Role::Assistant && !m.codex_reasoning_items.is_empty())
}

/// The JSON body of a streamed Responses request.
pub(crate) fn request_body(req: &ChatRequest, flavor: Flavor) -> Value {
    let (instructions, input) = convert(&req.messages, &req.model, !flavor.drop_reasoning);
    let tools = tools(req);
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    body.insert(
        "prompt_cache_key".into(),
        json!(cache_key(&instructions, &tools)),
    );
    body.insert("instructions".into(), json!(instructions));
    body.insert("input".into(), Value::Array(input));
    body.insert("store".into(), Value::Bool(false));
    if !tools.is_empty() {
        body.insert("tools".into(), Value::Array(tools));
        let choice = match &req.tool_choice {
            ToolChoice::Auto => json!("auto"),
            ToolChoice::None => json!("none"),
            ToolChoice::Required => json!("required"),
            ToolChoice::Named(name) => json!({"type": "function", "name": name}),
        };
        body.insert("tool_choice".into(), choice);
        body.insert("parallel_tool_calls".into(), Value::Bool(true));
    }
    if reasons(&req.model) {
        body.insert(
            "reasoning".into(),
            json!({"effort": "medium", "summary": "auto"}),
        );
        body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    } else {
        body.insert("include".into(), json!([]));
    }
    if let Some(max) = req.max_tokens.filter(|n| *n > 0)
        && !flavor.codex_backend
    {
        body.insert("max_output_tokens".into(), json!(max));
    }
    body.insert("stream".into(), Value::Bool(true));
    Value::Object(body)
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
