//! Building the JSON body of a Converse / ConverseStream request.

use hermes_protocol::{Message, Role};
use serde_json::{Map, Value, json};

use crate::{ChatRequest, ToolChoice};

/// `inferenceConfig.maxTokens` when the request sets none (the reference's default).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// Bedrock rejects empty or whitespace-only text blocks; this stands in for them.
const EMPTY_TEXT: &str = "(empty)";

/// Model-id fragments of models that reject `toolConfig` (as the reference lists them).
const NO_TOOL_MODELS: &[&str] = &[
    "deepseek.r1",
    "deepseek-r1",
    "stability.",
    "cohere.embed",
    "amazon.titan-embed",
];

/// Whether `model` accepts tools in Converse.
pub fn supports_tools(model: &str) -> bool {
    let m = model.to_ascii_lowercase();
    !NO_TOOL_MODELS.iter().any(|p| m.contains(p))
}

fn safe_text(text: &str) -> &str {
    if text.trim().is_empty() {
        EMPTY_TEXT
    } else {
        text
    }
}

/// A tool-use id restricted to `[a-zA-Z0-9_-]`, at most 64 characters, never empty.
fn tool_use_id(id: &str) -> String {
    crate::wire::restricted_id(id, 64, "tooluse_0")
}

/// Appends `blocks` as a `role` turn, merged into the previous turn when it
/// has the same role: Converse requires strict alternation.
fn push_turn(out: &mut Vec<Value>, role: &str, blocks: Vec<Value>) {
    if let Some(last) = out.last_mut()
        && last["role"] == role
        && let Some(content) = last["content"].as_array_mut()
    {
        content.extend(blocks);
        return;
    }
    out.push(json!({"role": role, "content": blocks}));
}

fn assistant_blocks(m: &Message) -> Vec<Value> {
    let mut blocks = Vec::new();
    // Signed reasoning goes back verbatim (models check the signature);
    // unsigned reasoning is not replayable and stays home.
    if let (Some(text), Some(signature)) = (&m.reasoning, &m.reasoning_signature)
        && !text.is_empty()
        && !signature.is_empty()
    {
        blocks.push(json!({"reasoningContent": {"reasoningText": {
            "text": text, "signature": signature,
        }}}));
    }
    if let Some(text) = m.content.as_deref().filter(|t| !t.trim().is_empty()) {
        blocks.push(json!({"text": text}));
    }
    for call in &m.tool_calls {
        let input = match serde_json::from_str::<Value>(&call.function.arguments) {
            Ok(Value::Object(obj)) => Value::Object(obj),
            _ => json!({}),
        };
        blocks.push(json!({"toolUse": {
            "toolUseId": tool_use_id(&call.id),
            "name": call.function.name,
            "input": input,
        }}));
    }
    if blocks.is_empty() {
        blocks.push(json!({"text": EMPTY_TEXT}));
    }
    blocks
}

/// `(system blocks, messages)` for the conversation.
pub(crate) fn convert_messages(messages: &[Message]) -> (Vec<Value>, Vec<Value>) {
    let mut system = Vec::new();
    let mut out: Vec<Value> = Vec::new();
    for m in messages {
        match m.role {
            Role::System => {
                if !m.text().trim().is_empty() {
                    system.push(json!({"text": m.text()}));
                }
            }
            Role::Tool => {
                let id = tool_use_id(m.tool_call_id.as_deref().unwrap_or(""));
                let block = json!({"toolResult": {
                    "toolUseId": id,
                    "content": [{"text": safe_text(m.text())}],
                }});
                push_turn(&mut out, "user", vec![block]);
            }
            Role::User => {
                // Converse takes image bytes only (no URLs): data: URLs go along.
                let mut blocks: Vec<Value> = m
                    .images
                    .iter()
                    .filter_map(|url| crate::wire::split_data_url(url))
                    .map(|(media, data)| {
                        let format = media.strip_prefix("image/").unwrap_or("png");
                        let format = if format == "jpg" { "jpeg" } else { format };
                        json!({"image": {"format": format, "source": {"bytes": data}}})
                    })
                    .collect();
                blocks.push(json!({"text": safe_text(m.text())}));
                push_turn(&mut out, "user", blocks);
            }
            Role::Assistant => push_turn(&mut out, "assistant", assistant_blocks(m)),
        }
    }
    // Converse wants the conversation to start and end with the user.
    if out.first().is_some_and(|m| m["role"] != "user") {
        out.insert(
            0,
            json!({"role": "user", "content": [{"text": EMPTY_TEXT}]}),
        );
    }
    if out.last().is_some_and(|m| m["role"] != "user") {
        out.push(json!({"role": "user", "content": [{"text": EMPTY_TEXT}]}));
    }
    (system, out)
}

fn tool_config(req: &ChatRequest) -> Value {
    let tools: Vec<Value> = req
        .tools
        .iter()
        .map(|t| {
            json!({"toolSpec": {
                "name": t.name,
                "description": t.description,
                "inputSchema": {"json": t.parameters},
            }})
        })
        .collect();
    let mut config = json!({"tools": tools});
    // Converse has no "none": the tools stay declared (a history with
    // toolUse blocks requires them) and the model is left to decide.
    match &req.tool_choice {
        ToolChoice::Auto | ToolChoice::None => {}
        ToolChoice::Required => config["toolChoice"] = json!({"any": {}}),
        ToolChoice::Named(name) => config["toolChoice"] = json!({"tool": {"name": name}}),
    }
    config
}

/// The JSON body for `req` (the model id travels in the URL).
pub(crate) fn request_body(req: &ChatRequest) -> Value {
    let (system, messages) = convert_messages(&req.messages);
    let mut body = Map::new();
    body.insert("messages".into(), Value::Array(messages));
    if !system.is_empty() {
        body.insert("system".into(), Value::Array(system));
    }
    let mut inference = Map::new();
    inference.insert(
        "maxTokens".into(),
        json!(req.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)),
    );
    if let Some(t) = req.temperature {
        // Through f64's shortest text so 0.7f32 goes out as 0.7, not 0.699999988.
        let t = t.to_string().parse::<f64>().unwrap_or(f64::from(t));
        inference.insert("temperature".into(), json!(t));
    }
    body.insert("inferenceConfig".into(), Value::Object(inference));
    if !req.tools.is_empty() && supports_tools(&req.model) {
        body.insert("toolConfig".into(), tool_config(req));
    }
    Value::Object(body)
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
