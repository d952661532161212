use serde::{Deserialize, Serialize};

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions that frame the whole conversation.
    System,
    /// The human (or a synthetic nudge written on their behalf).
    User,
    /// The model.
    Assistant,
    /// A tool's result, answering one assistant tool call.
    Tool,
}

impl Role {
    /// The wire spelling (`"user"`, `"tool"` …).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// The function half of a tool call: a name and its JSON arguments as text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionCall {
    /// Tool name as the model wrote it (after any repair).
    pub name: String,
    /// Arguments as a JSON document in a string, exactly as on the OpenAI wire.
    pub arguments: String,
}

/// One tool call requested by the assistant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Provider-assigned id; the matching tool message carries it as `tool_call_id`.
    pub id: String,
    /// Always `"function"` today.
    #[serde(rename = "type", default = "function_kind")]
    pub kind: String,
    /// What to call and with which arguments.
    pub function: FunctionCall,
}

fn function_kind() -> String {
    "function".to_owned()
}

impl ToolCall {
    /// A function tool call.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            kind: function_kind(),
            function: FunctionCall {
                name: name.into(),
                arguments: arguments.into(),
            },
        }
    }
}

/// One chat message in the OpenAI shape Hermes persists.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Author.
    pub role: Role,
    /// Text content; `None` for an assistant message that only calls tools.
    #[serde(default)]
    pub content: Option<String>,
    /// Tool calls requested by an assistant message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For a tool message: the id of the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For a tool message: the tool's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Reasoning text the model streamed before answering, when the provider exposes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// Provider signature over `reasoning` (Anthropic `thinking` blocks), needed
    /// to send the reasoning back verbatim on the next request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_signature: Option<String>,
    /// Opaque reasoning items of an OpenAI Responses answer (`type: "reasoning"`
    /// with `encrypted_content`), sent back verbatim on later requests so the
    /// model keeps its chain of thought across turns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub codex_reasoning_items: Vec<serde_json::Value>,
    /// Images that go with a user message: `data:` URLs or http(s) addresses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<String>,
}

impl Message {
    fn plain(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: None,
            name: None,
            reasoning: None,
            reasoning_signature: None,
            codex_reasoning_items: Vec::new(),
            images: Vec::new(),
        }
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::plain(Role::System, content)
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::plain(Role::User, content)
    }

    /// A user message with images (`data:` URLs or http(s) addresses).
    pub fn user_with_images(content: impl Into<String>, images: Vec<String>) -> Self {
        Self {
            images,
            ..Self::plain(Role::User, content)
        }
    }

    /// An assistant message with text only.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::plain(Role::Assistant, content)
    }

    /// A tool result answering `tool_call_id`.
    pub fn tool_result(
        tool_call_id: impl Into<String>,
        name: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        Self {
            tool_call_id: Some(tool_call_id.into()),
            name: Some(name.into()),
            ..Self::plain(Role::Tool, content)
        }
    }

    /// The text content, or `""`.
    pub fn text(&self) -> &str {
        self.content.as_deref().unwrap_or("")
    }
}

/// A tool as offered to the model: name, description, JSON-Schema parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSchema {
    /// Wire name (`^[a-zA-Z0-9_-]{1,64}$`).
    pub name: String,
    /// What the tool does, written for the model.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: serde_json::Value,
}
