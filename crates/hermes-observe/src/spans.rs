//! A turn's spans, assembled from its events: one `invoke_agent` span per
//! turn, a `chat` span per model call and an `execute_tool` span per tool
//! call under it (a subagent's or script's calls under the tool that made
//! them), with the OpenTelemetry GenAI semantic-convention attributes.

use std::collections::HashMap;
use std::time::{SystemTime, UNIX_EPOCH};

use hermes_protocol::{Event, Role, ToolOutcome, TurnEnd, Usage};

/// An attribute value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Text.
    Str(String),
    /// A whole number.
    Int(i64),
}

/// What a span is to its trace (OTLP's `SpanKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Work inside the process.
    Internal,
    /// A call to another service.
    Client,
}

/// One finished span.
#[derive(Debug, Clone)]
pub struct Span {
    /// The turn's trace.
    pub trace_id: [u8; 16],
    /// This span.
    pub span_id: [u8; 8],
    /// The span it is part of (`None` for the turn).
    pub parent: Option<[u8; 8]>,
    /// `invoke_agent hermes`, `chat MODEL`, `execute_tool TOOL`.
    pub name: String,
    /// Its kind.
    pub kind: Kind,
    /// Start, Unix nanoseconds.
    pub start_ns: u64,
    /// End, Unix nanoseconds.
    pub end_ns: u64,
    /// Its attributes.
    pub attributes: Vec<(&'static str, Value)>,
    /// The error class when it failed.
    pub error: Option<String>,
}

/// Unix nanoseconds now.
pub(crate) fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

fn span_id() -> [u8; 8] {
    // An all-zero id is invalid in OTLP.
    loop {
        let id = fastrand::u64(..).to_be_bytes();
        if id != [0; 8] {
            return id;
        }
    }
}

/// A tool call still running.
struct OpenTool {
    span_id: [u8; 8],
    start_ns: u64,
    arguments: String,
    nested: bool,
}

/// The turn being assembled for one session.
pub(crate) struct OpenTurn {
    trace_id: [u8; 16],
    span_id: [u8; 8],
    start_ns: u64,
    tools: HashMap<(String, String), OpenTool>,
    /// Outer tool calls still running, innermost last: where nested spans go.
    outer: Vec<[u8; 8]>,
    finished: Vec<Span>,
    usage: Usage,
    model: Option<(String, String)>,
    user_text: Option<String>,
}

impl OpenTurn {
    /// A turn starting now.
    pub(crate) fn start() -> Self {
        let trace_id = loop {
            let id = fastrand::u128(..).to_be_bytes();
            if id != [0; 16] {
                break id;
            }
        };
        Self {
            trace_id,
            span_id: span_id(),
            start_ns: now_ns(),
            tools: HashMap::new(),
            outer: Vec::new(),
            finished: Vec::new(),
            usage: Usage::default(),
            model: None,
            user_text: None,
        }
    }

    /// Takes in one event of the turn (`origin`: the subagent or script it
    /// came from, when nested).
    pub(crate) fn take(&mut self, origin: Option<&str>, event: &Event, content: bool) {
        match event {
            Event::Nested { origin, inner } => self.take(Some(origin), inner, content),
            Event::MessageAppended { message }
                if origin.is_none()
                    && content
                    && message.role == Role::User
                    && self.user_text.is_none() =>
            {
                self.user_text = Some(message.text().to_owned());
            }
            Event::ModelCall {
                provider,
                model,
                status,
                duration_ms,
                usage,
            } => self.model_call(origin, provider, model, status, *duration_ms, usage),
            Event::ToolStarted {
                call_id, arguments, ..
            } => {
                let key = (origin.unwrap_or("").to_owned(), call_id.clone());
                let open = OpenTool {
                    span_id: span_id(),
                    start_ns: now_ns(),
                    arguments: arguments.clone(),
                    nested: origin.is_some(),
                };
                if origin.is_none() {
                    self.outer.push(open.span_id);
                }
                self.tools.insert(key, open);
            }
            Event::ToolFinished {
                call_id,
                name,
                outcome,
                result,
                ..
            } => {
                let key = (origin.unwrap_or("").to_owned(), call_id.clone());
                if let Some(open) = self.tools.remove(&key) {
                    self.tool_span(open, call_id, name, *outcome, result, content);
                }
            }
            _ => {}
        }
    }

    fn parent_of_nested(&self, nested: bool) -> [u8; 8] {
        match (nested, self.outer.last()) {
            (true, Some(tool)) => *tool,
            _ => self.span_id,
        }
    }

    fn model_call(
        &mut self,
        origin: Option<&str>,
        provider: &str,
        model: &str,
        status: &str,
        duration_ms: u64,
        usage: &Usage,
    ) {
        let end_ns = now_ns();
        if origin.is_none() {
            self.usage.add(usage);
            self.model = Some((provider.to_owned(), model.to_owned()));
        }
        let mut attributes = vec![
            ("gen_ai.operation.name", Value::Str("chat".into())),
            ("gen_ai.provider.name", Value::Str(provider.into())),
            ("gen_ai.request.model", Value::Str(model.into())),
            ("gen_ai.usage.input_tokens", int(usage.input_tokens)),
            ("gen_ai.usage.output_tokens", int(usage.output_tokens)),
        ];
        if usage.cache_read_tokens > 0 {
            attributes.push((
                "gen_ai.usage.cache_read.input_tokens",
                int(usage.cache_read_tokens),
            ));
        }
        let error = (status != "ok").then(|| status.to_owned());
        if let Some(class) = &error {
            attributes.push(("error.type", Value::Str(class.clone())));
        }
        self.finished.push(Span {
            trace_id: self.trace_id,
            span_id: span_id(),
            parent: Some(self.parent_of_nested(origin.is_some())),
            name: format!("chat {model}"),
            kind: Kind::Client,
            start_ns: end_ns.saturating_sub(duration_ms.saturating_mul(1_000_000)),
            end_ns,
            attributes,
            error,
        });
    }

    fn tool_span(
        &mut self,
        open: OpenTool,
        call_id: &str,
        name: &str,
        outcome: ToolOutcome,
        result: &str,
        content: bool,
    ) {
        if !open.nested {
            self.outer.retain(|id| *id != open.span_id);
        }
        let mut attributes = vec![
            ("gen_ai.operation.name", Value::Str("execute_tool".into())),
            ("gen_ai.tool.name", Value::Str(name.into())),
            ("gen_ai.tool.call.id", Value::Str(call_id.into())),
        ];
        if content {
            attributes.push(("gen_ai.tool.call.arguments", masked(&open.arguments)));
            attributes.push(("gen_ai.tool.call.result", masked(result)));
        }
        let error = match outcome {
            ToolOutcome::Ok => None,
            ToolOutcome::Error => Some("tool_error".to_owned()),
            ToolOutcome::Cancelled => Some("cancelled".to_owned()),
        };
        if let Some(class) = &error {
            attributes.push(("error.type", Value::Str(class.clone())));
        }
        self.finished.push(Span {
            trace_id: self.trace_id,
            span_id: open.span_id,
            parent: Some(self.parent_of_nested(open.nested)),
            name: format!("execute_tool {name}"),
            kind: Kind::Internal,
            start_ns: open.start_ns,
            end_ns: now_ns(),
            attributes,
            error,
        });
    }

    /// Ends the turn: its own span last, after its children (`end`: `None`
    /// when it failed with `error`).
    pub(crate) fn finish(
        mut self,
        session_id: &str,
        platform: &str,
        end: Option<&TurnEnd>,
        outcome_text: &str,
        content: bool,
    ) -> Vec<Span> {
        let end_ns = now_ns();
        // Tool calls a failed turn left open end with it.
        for ((_, call_id), open) in std::mem::take(&mut self.tools) {
            self.tool_span(
                open,
                &call_id,
                "unfinished",
                ToolOutcome::Cancelled,
                "",
                false,
            );
        }
        let mut attributes = vec![
            ("gen_ai.operation.name", Value::Str("invoke_agent".into())),
            ("gen_ai.agent.name", Value::Str("hermes".into())),
            ("gen_ai.conversation.id", Value::Str(session_id.into())),
            ("hermes.platform", Value::Str(platform.into())),
            ("gen_ai.usage.input_tokens", int(self.usage.input_tokens)),
            ("gen_ai.usage.output_tokens", int(self.usage.output_tokens)),
        ];
        if let Some((provider, model)) = &self.model {
            attributes.push(("gen_ai.provider.name", Value::Str(provider.clone())));
            attributes.push(("gen_ai.request.model", Value::Str(model.clone())));
        }
        let reason = match end {
            Some(TurnEnd::Completed) => "completed",
            Some(TurnEnd::BudgetExhausted) => "budget_exhausted",
            Some(TurnEnd::Interrupted) => "interrupted",
            None => "error",
        };
        attributes.push(("hermes.turn.end_reason", Value::Str(reason.into())));
        if content {
            if let Some(text) = &self.user_text {
                attributes.push(("gen_ai.input.messages", messages("user", text)));
            }
            attributes.push((
                "gen_ai.output.messages",
                messages("assistant", outcome_text),
            ));
        }
        let error = end.is_none().then(|| "turn_error".to_owned());
        if error.is_some() {
            attributes.push(("error.type", Value::Str("turn_error".into())));
        }
        let mut spans = std::mem::take(&mut self.finished);
        spans.push(Span {
            trace_id: self.trace_id,
            span_id: self.span_id,
            parent: None,
            name: "invoke_agent hermes".into(),
            kind: Kind::Internal,
            start_ns: self.start_ns,
            end_ns,
            attributes,
            error,
        });
        spans
    }
}

fn int(n: u64) -> Value {
    Value::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

/// Content with every secret masked.
fn masked(text: &str) -> Value {
    Value::Str(hermes_llm::redact::redact_secrets(text))
}

/// The GenAI convention's message list: `[{"role", "parts": [{"type": "text", "content"}]}]`.
fn messages(role: &str, text: &str) -> Value {
    let text = hermes_llm::redact::redact_secrets(text);
    Value::Str(
        serde_json::json!([{"role": role, "parts": [{"type": "text", "content": text}]}])
            .to_string(),
    )
}
