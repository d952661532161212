use serde::{Deserialize, Serialize};

use crate::{Message, Usage};

/// Operations a front-end sends into a running agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// A new user message starts a turn.
    UserInput {
        /// The text the user typed.
        text: String,
    },
    /// Stop the running turn at the next boundary and cancel in-flight tools.
    Interrupt,
    /// Extra guidance appended to the next tool result of the running turn.
    Steer {
        /// The guidance text.
        text: String,
    },
}

/// How one tool call ended, as shown to front-ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolOutcome {
    /// The tool ran and returned a result.
    Ok,
    /// The tool returned an error result for the model to read.
    Error,
    /// The call was cancelled before it finished.
    Cancelled,
}

/// Why a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnEnd {
    /// The model answered with text.
    Completed,
    /// The iteration budget ran out; the answer is the forced summary.
    BudgetExhausted,
    /// The user interrupted.
    Interrupted,
}

/// What the agent reports while it works; front-ends render these.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// A piece of the assistant's answer.
    TextDelta {
        /// The new text.
        text: String,
    },
    /// A piece of the model's visible reasoning.
    ReasoningDelta {
        /// The new text.
        text: String,
    },
    /// A tool call is about to run.
    ToolStarted {
        /// The call id.
        call_id: String,
        /// The tool name (after repair).
        name: String,
        /// The arguments as JSON text (after repair).
        arguments: String,
    },
    /// A tool call finished.
    ToolFinished {
        /// The call id.
        call_id: String,
        /// The tool name.
        name: String,
        /// How it ended.
        outcome: ToolOutcome,
        /// The result text sent to the model.
        result: String,
        /// Wall time in milliseconds.
        duration_ms: u64,
    },
    /// A message was appended to the conversation (for persistence).
    MessageAppended {
        /// The message.
        message: Message,
    },
    /// Something worth a status line: a retry, a repair, a budget warning.
    Status {
        /// Human-readable text.
        message: String,
    },
    /// The turn is over.
    TurnComplete {
        /// The final assistant text.
        final_text: String,
        /// Why it ended.
        reason: TurnEnd,
        /// Tokens used by this turn.
        usage: Usage,
        /// API calls made by this turn.
        api_calls: u32,
    },
    /// The turn failed for good.
    Error {
        /// What went wrong and what to do about it.
        message: String,
    },
    /// Something that happened inside a tool call on the user's behalf: a tool
    /// an `execute_code` script called, or a subagent's progress. Front-ends
    /// show it as progress; it is never part of the conversation.
    Nested {
        /// Who it came from, e.g. `execute_code` or `subagent 2/3`.
        origin: String,
        /// What happened there.
        inner: Box<Event>,
    },
}
