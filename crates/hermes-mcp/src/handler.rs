//! What Hermes answers when a server talks first: tool-list changes,
//! sampling requests (through the session's model) and elicitation (through
//! the same question channel as `clarify`).

// Sampling is deprecated by the 2026 spec (SEP-2577) but servers in use still
// send it, and the reference answers it.
#![allow(deprecated)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use rmcp::ClientHandler;
use rmcp::model::{
    ClientConfig, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ElicitationAction, ErrorData,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::config::SamplingConfig;

/// A completion request from an MCP server (`sampling/createMessage`).
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingRequest {
    /// The server's system prompt, if any.
    pub system: Option<String>,
    /// `(role, text)` pairs, oldest first.
    pub messages: Vec<(String, String)>,
    /// Most tokens to generate (already capped by config).
    pub max_tokens: u32,
    /// Model override from the server's `sampling.model` config.
    pub model: Option<String>,
}

/// The model's answer to a sampling request.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingReply {
    /// The assistant's text.
    pub text: String,
    /// The model that answered.
    pub model: String,
}

/// Answers sampling requests with a model (the session runtime provides it).
pub trait Sampler: Send + Sync {
    /// Runs one completion.
    fn sample(&self, request: SamplingRequest) -> BoxFuture<'_, Result<SamplingReply, String>>;
}

/// Who can answer a server's questions while one of its tools runs.
#[derive(Clone, Default)]
pub struct CallScope {
    /// The session's question channel (`None` where nobody can answer).
    pub clarifier: Option<Arc<dyn hermes_tools::Clarifier>>,
    /// The session's model, for sampling.
    pub sampler: Option<Arc<dyn Sampler>>,
}

/// Signals from the connection to its supervisor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Signal {
    /// `notifications/tools/list_changed` (or resources/prompts changed).
    ListChanged,
    /// Drop the connection and build a new one (`/reload-mcp`).
    Reconnect,
    /// A call found the server down: stop waiting out the backoff and try
    /// now (ignored while connected).
    Retry,
    /// Close for good.
    Shutdown,
}

/// Calls in flight on one server, newest last: a server's question goes to
/// the session whose call is running.
#[derive(Default)]
pub(crate) struct Scopes {
    active: Mutex<Vec<(u64, CallScope)>>,
    next: Mutex<u64>,
    fallback_sampler: Mutex<Option<Arc<dyn Sampler>>>,
    sampled: Mutex<Vec<Instant>>,
}

impl Scopes {
    pub(crate) fn enter(self: &Arc<Self>, scope: CallScope) -> ScopeGuard {
        let id = {
            let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
            *next += 1;
            *next
        };
        self.active
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((id, scope));
        ScopeGuard {
            scopes: self.clone(),
            id,
        }
    }

    pub(crate) fn set_fallback_sampler(&self, sampler: Option<Arc<dyn Sampler>>) {
        *self
            .fallback_sampler
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = sampler;
    }

    fn current(&self) -> CallScope {
        self.active
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .last()
            .map(|(_, s)| s.clone())
            .unwrap_or_default()
    }

    fn sampler(&self) -> Option<Arc<dyn Sampler>> {
        self.current().sampler.or_else(|| {
            self.fallback_sampler
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone()
        })
    }

    /// Whether one more sampling request fits in the per-minute budget.
    fn admit(&self, max_rpm: u32) -> bool {
        let mut sampled = self.sampled.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        sampled.retain(|t| now.duration_since(*t) < Duration::from_secs(60));
        if sampled.len() >= max_rpm as usize {
            return false;
        }
        sampled.push(now);
        true
    }
}

/// Leaves the call scope when the call ends.
pub(crate) struct ScopeGuard {
    scopes: Arc<Scopes>,
    id: u64,
}

impl Drop for ScopeGuard {
    fn drop(&mut self) {
        self.scopes
            .active
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|(id, _)| *id != self.id);
    }
}

/// The client side of one connection.
pub(crate) struct Handler {
    pub(crate) server: String,
    pub(crate) signals: mpsc::UnboundedSender<Signal>,
    pub(crate) scopes: Arc<Scopes>,
    pub(crate) sampling: SamplingConfig,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = json!({ "elicitation": {} });
        if self.sampling.enabled {
            capabilities["sampling"] = json!({});
        }
        let info = json!({
            "protocolVersion": "2025-06-18",
            "capabilities": capabilities,
            "clientInfo": { "name": "hermes", "version": env!("CARGO_PKG_VERSION") },
        });
        serde_json::from_value(info).unwrap_or_default()
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.signals.send(Signal::ListChanged);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.signals.send(Signal::ListChanged);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.signals.send(Signal::ListChanged);
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let refuse = |message: String| ErrorData::invalid_request(message, None);
        if !self.sampling.enabled {
            return Err(refuse(format!(
                "sampling is disabled for MCP server '{}'",
                self.server
            )));
        }
        let Some(sampler) = self.scopes.sampler() else {
            return Err(refuse("no model is available to answer sampling".into()));
        };
        if !self.scopes.admit(self.sampling.max_rpm) {
            return Err(refuse(format!(
                "sampling rate limit exceeded for MCP server '{}' ({} requests/min)",
                self.server, self.sampling.max_rpm
            )));
        }
        let raw = serde_json::to_value(&params).unwrap_or(Value::Null);
        let request = sampling_request(&raw, &self.sampling);
        let reply = tokio::time::timeout(self.sampling.timeout, sampler.sample(request))
            .await
            .map_err(|_| {
                refuse(format!(
                    "sampling timed out after {}s",
                    self.sampling.timeout.as_secs()
                ))
            })?
            .map_err(|e| ErrorData::internal_error(format!("sampling failed: {e}"), None))?;
        let result = json!({
            "model": reply.model,
            "stopReason": "endTurn",
            "role": "assistant",
            "content": { "type": "text", "text": reply.text },
        });
        serde_json::from_value(result)
            .map_err(|e| ErrorData::internal_error(format!("sampling reply: {e}"), None))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let Some(clarifier) = self.scopes.current().clarifier else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let raw = serde_json::to_value(&request).unwrap_or(Value::Null);
        let message = raw
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("The MCP server asks for input.");
        let question = elicitation_question(&self.server, message, &raw);
        let defaults = schema_defaults(raw.get("requestedSchema"));
        match clarifier.ask(&question, &[]).await {
            Ok(answer) => {
                let answer = answer.trim();
                if answer.eq_ignore_ascii_case("cancel") {
                    return Ok(ElicitResult::new(ElicitationAction::Cancel));
                }
                if answer.is_empty() && !defaults.is_empty() {
                    return Ok(ElicitResult::new(ElicitationAction::Accept)
                        .with_content(Value::Object(defaults)));
                }
                if answer.is_empty() || answer.eq_ignore_ascii_case("decline") {
                    return Ok(ElicitResult::new(ElicitationAction::Decline));
                }
                let mut content = defaults;
                if let Value::Object(given) =
                    elicitation_content(answer, raw.get("requestedSchema"))
                {
                    content.extend(given);
                }
                Ok(ElicitResult::new(ElicitationAction::Accept)
                    .with_content(Value::Object(content)))
            }
            Err(_) => Ok(ElicitResult::new(ElicitationAction::Cancel)),
        }
    }
}

fn sampling_request(raw: &Value, config: &SamplingConfig) -> SamplingRequest {
    let text_of = |content: &Value| -> String {
        let blocks: Vec<&Value> = match content {
            Value::Array(items) => items.iter().collect(),
            other => vec![other],
        };
        blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let messages = raw
        .get("messages")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .map(|m| {
                    let role = m.get("role").and_then(Value::as_str).unwrap_or("user");
                    (
                        role.to_owned(),
                        text_of(m.get("content").unwrap_or(&Value::Null)),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let asked = raw
        .get("maxTokens")
        .and_then(Value::as_u64)
        .unwrap_or(u64::from(config.max_tokens_cap));
    SamplingRequest {
        system: raw
            .get("systemPrompt")
            .and_then(Value::as_str)
            .map(str::to_owned),
        messages,
        max_tokens: asked.min(u64::from(config.max_tokens_cap)) as u32,
        model: config.model.clone(),
    }
}

/// The question put to the user: the server's message and the fields it wants.
fn elicitation_question(server: &str, message: &str, raw: &Value) -> String {
    let mut question = format!("MCP server '{server}' asks: {message}");
    if let Some(props) = raw
        .get("requestedSchema")
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        && !props.is_empty()
    {
        let fields: Vec<String> = props
            .iter()
            .map(|(name, p)| {
                let kind = p.get("type").and_then(Value::as_str).unwrap_or("string");
                format!("{name} ({kind})")
            })
            .collect();
        question.push_str(&format!(
            "\nFields: {}. Answer with JSON for several fields, or just the value; \"decline\" to refuse.",
            fields.join(", ")
        ));
    }
    let defaults = schema_defaults(raw.get("requestedSchema"));
    if !defaults.is_empty() {
        question.push_str(&format!(
            "\nAn empty answer accepts the defaults: {}",
            Value::Object(defaults)
        ));
    }
    question
}

/// The `default` of each field of a requested schema that has one.
fn schema_defaults(schema: Option<&Value>) -> serde_json::Map<String, Value> {
    schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .filter_map(|(name, p)| Some((name.clone(), p.get("default")?.clone())))
                .collect()
        })
        .unwrap_or_default()
}

/// The user's answer shaped to the requested schema: JSON objects pass
/// through; a bare value fills the single (or first required) field.
fn elicitation_content(answer: &str, schema: Option<&Value>) -> Value {
    if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(answer) {
        return Value::Object(map);
    }
    let props = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object);
    let first_required = schema
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
        .and_then(|r| r.first())
        .and_then(Value::as_str);
    let field = first_required
        .map(str::to_owned)
        .or_else(|| props.and_then(|p| p.keys().next().cloned()));
    let Some(field) = field else {
        return json!({ "value": answer });
    };
    let kind = props
        .and_then(|p| p.get(&field))
        .and_then(|p| p.get("type"))
        .and_then(Value::as_str)
        .unwrap_or("string");
    let value = match kind {
        "boolean" => json!(matches!(
            answer.to_ascii_lowercase().as_str(),
            "y" | "yes" | "true" | "1"
        )),
        "integer" => answer.parse::<i64>().map_or(json!(answer), |n| json!(n)),
        "number" => answer.parse::<f64>().map_or(json!(answer), |n| json!(n)),
        _ => json!(answer),
    };
    json!({ field: value })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn sampling_requests_are_capped_and_flattened() {
        let raw = json!({
            "systemPrompt": "be brief",
            "maxTokens": 100000,
            "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]
        });
        let req = sampling_request(&raw, &SamplingConfig::default());
        assert_eq!(req.max_tokens, 4096);
        assert_eq!(req.system.as_deref(), Some("be brief"));
        assert_eq!(req.messages, vec![("user".into(), "hi".into())]);
    }

    #[test]
    fn schema_defaults_are_offered_and_collected() {
        let schema = json!({"properties": {
            "name": {"type": "string", "default": "Ada"},
            "age": {"type": "integer"},
            "tier": {"type": "string", "enum": ["a", "b"], "default": "b"}
        }});
        let defaults = schema_defaults(Some(&schema));
        assert_eq!(Value::Object(defaults), json!({"name": "Ada", "tier": "b"}));
        let question = elicitation_question("s", "Who?", &json!({"requestedSchema": schema}));
        assert!(
            question.contains("An empty answer accepts the defaults"),
            "{question}"
        );
    }

    #[test]
    fn elicitation_answers_fit_the_schema() {
        let schema = json!({"type": "object", "properties": {"age": {"type": "integer"}}, "required": ["age"]});
        assert_eq!(elicitation_content("42", Some(&schema)), json!({"age": 42}));
        assert_eq!(
            elicitation_content("{\"age\": 7}", Some(&schema)),
            json!({"age": 7})
        );
        let flag = json!({"properties": {"ok": {"type": "boolean"}}});
        assert_eq!(elicitation_content("yes", Some(&flag)), json!({"ok": true}));
    }

    #[test]
    fn create_message_result_shape_is_accepted_by_rmcp() {
        let result: CreateMessageResult = serde_json::from_value(json!({
            "model": "m", "stopReason": "endTurn", "role": "assistant",
            "content": {"type": "text", "text": "hello"}
        }))
        .unwrap();
        let back = serde_json::to_value(&result).unwrap();
        assert_eq!(back["content"]["text"], "hello");
    }
}
