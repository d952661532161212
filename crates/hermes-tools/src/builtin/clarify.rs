//! `clarify`: puts a question (open, or with up to four choices) to the user
//! through the front-end's [`Clarifier`](crate::Clarifier).

use futures_util::future::BoxFuture;
use hermes_protocol::ToolSchema;
use serde_json::{Value, json};

use crate::{ParallelClass, Tool, ToolContext, ToolError, ToolResult};

/// Most choices the model may offer; the UI adds an "Other" row of its own.
pub const MAX_CHOICES: usize = 4;

/// The error when nobody can answer (one-shot runs, gateways without a UI).
pub const NOT_AVAILABLE: &str = "Clarify tool is not available in this execution context.";

/// The `clarify` tool; stateless, the answer comes from `ToolContext::clarifier`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClarifyTool;

/// One choice as the text the user sees: strings trimmed, objects unwrapped by
/// `label`, `description`, `text` then `title` (otherwise dropped), lists joined.
pub fn flatten_choice(choice: &Value) -> String {
    match choice {
        Value::Null => String::new(),
        Value::String(s) => s.trim().to_owned(),
        Value::Object(map) => ["label", "description", "text", "title"]
            .iter()
            .filter_map(|k| map.get(*k).and_then(Value::as_str))
            .map(str::trim)
            .find(|s| !s.is_empty())
            .unwrap_or_default()
            .to_owned(),
        Value::Array(items) => items
            .iter()
            .map(flatten_choice)
            .collect::<Vec<_>>()
            .join(" ")
            .trim()
            .to_owned(),
        Value::Bool(true) => "True".to_owned(),
        Value::Bool(false) => "False".to_owned(),
        Value::Number(n) => n.to_string(),
    }
}

/// The choices to offer: flattened, empties dropped, at most [`MAX_CHOICES`];
/// `None` for an open question (no list, or nothing left in it).
pub fn normalize_choices(choices: Option<&Value>) -> Result<Option<Vec<String>>, ToolError> {
    let items = match choices {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(ToolError::model("choices must be a list of strings.")),
    };
    let mut out: Vec<String> = items
        .iter()
        .map(flatten_choice)
        .filter(|s| !s.is_empty())
        .collect();
    out.truncate(MAX_CHOICES);
    Ok((!out.is_empty()).then_some(out))
}

/// The tool's answer, keys in the reference's order (`json!` would sort them).
fn answer_json(question: &str, choices: Option<&[String]>, response: &str) -> String {
    let enc = |v: &Value| v.to_string();
    format!(
        "{{\"question\":{},\"choices_offered\":{},\"user_response\":{}}}",
        enc(&json!(question)),
        enc(&json!(choices)),
        enc(&json!(response.trim())),
    )
}

impl Tool for ClarifyTool {
    fn name(&self) -> &str {
        "clarify"
    }

    fn toolset(&self) -> &str {
        "clarify"
    }

    fn emoji(&self) -> &str {
        "❓"
    }

    fn parallel_class(&self) -> ParallelClass {
        ParallelClass::Exclusive
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "clarify".into(),
            description: include_str!("clarify_description.txt").trim().into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "question": {
                        "type": "string",
                        "description": "Just the question, e.g. 'Which deployment target?'. \
                            Put the answer options in `choices`, not here."
                    },
                    "choices": {
                        "type": "array",
                        "items": {"type": "string"},
                        "maxItems": MAX_CHOICES,
                        "description": "The options to pick from, one per element (at most 4); \
                            an 'Other (type your answer)' row is added for free text. Needed whenever \
                            you offer options; leave it out only for an open question."
                    }
                },
                "required": ["question"]
            }),
        }
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let question = args
                .get("question")
                .and_then(Value::as_str)
                .map(str::trim)
                .unwrap_or_default();
            if question.is_empty() {
                return Err(ToolError::model("Question text is required."));
            }
            let choices = normalize_choices(args.get("choices"))?;
            let Some(clarifier) = &ctx.clarifier else {
                return Err(ToolError::model(NOT_AVAILABLE));
            };
            let offered = choices.as_deref().unwrap_or_default();
            match clarifier.ask(question, offered).await {
                Ok(response) => Ok(answer_json(question, choices.as_deref(), &response)),
                Err(why) => Err(ToolError::model(format!("Failed to get user input: {why}"))),
            }
        })
    }
}

#[cfg(test)]
#[path = "clarify_tests.rs"]
mod tests;
