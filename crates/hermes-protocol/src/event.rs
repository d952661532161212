use serde::{Deserialize, Serialize};

use crate::{Message, Usage};

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
    /// One model API call ended, answered or failed: what metrics and traces
    /// count. Front-ends that show a conversation ignore it.
    ModelCall {
        /// The provider id.
        provider: String,
        /// The model id.
        model: String,
        /// `ok`, `cancelled`, or the failure's class (`rate_limit`, `timeout`, …).
        status: String,
        /// Wall time of the call in milliseconds, streaming included.
        duration_ms: u64,
        /// Tokens it used (zero when it failed).
        usage: Usage,
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
    /// The turn (or another op) failed for good.
    Error {
        /// What went wrong and what to do about it.
        message: String,
    },
    /// A tool wants to run a dangerous command and a person must decide;
    /// answer with [`crate::Op::ApprovalAnswer`]. The tool waits (up to
    /// `approvals.timeout`, then the command is denied).
    ApprovalRequested {
        /// Identifies the answer.
        request_id: u64,
        /// The full command text.
        command: String,
        /// Why it was flagged.
        reason: String,
    },
    /// The model asks the user a question (the `clarify` tool); answer with
    /// [`crate::Op::ClarifyAnswer`]. Unanswered after `clarify.timeout`, the
    /// model is told to decide itself.
    ClarifyRequested {
        /// Identifies the answer.
        request_id: u64,
        /// The question.
        question: String,
        /// Choices to offer; empty for an open question.
        choices: Vec<String>,
    },
    /// A question stopped waiting for its answer; `timed_out` when nobody
    /// answered in time (the model was told to decide itself).
    QuestionClosed {
        /// The request that closed.
        request_id: u64,
        /// It expired rather than being withdrawn.
        timed_out: bool,
    },
    /// Steer text that no tool result carried before the turn ended; the
    /// front-end decides whether to send it as the next message.
    SteerUnused {
        /// The undelivered text.
        text: String,
    },
    /// The conversation continues under another session id: a new session
    /// (`new`), another stored one (`resumed`).
    SessionChanged {
        /// The session id now.
        session_id: String,
        /// Why: `new` or `resumed`.
        reason: String,
        /// Messages the conversation holds now (the system prompt excluded).
        messages: usize,
    },
    /// The result of [`crate::Op::Undo`]: `removed` messages went; `text` is the
    /// undone user message (`None` when there was nothing to undo).
    Undone {
        /// The text of the earliest undone user message.
        text: Option<String>,
        /// How many messages were dropped.
        removed: usize,
    },
    /// The primary model changed ([`crate::Op::SwitchModel`]).
    ModelChanged {
        /// The model id.
        model: String,
        /// The provider id.
        provider: String,
        /// The endpoint.
        base_url: String,
    },
    /// The result of [`crate::Op::Compress`]; equal counts mean there was nothing to compress.
    Compressed {
        /// Messages before.
        before: usize,
        /// Messages after.
        after: usize,
    },
    /// Background processes have news for the model (an announced end, a
    /// watched pattern) and no turn is running. Sent outside any submission
    /// (`0`); a front-end that can start a turn answers [`crate::Op::Announce`],
    /// otherwise the news rides ahead of the next message.
    AnnouncementsWaiting,
    /// The message an [`crate::Op::Announce`] turn gives the model: the
    /// announcements, in the reference's `[IMPORTANT: …]` form.
    Announced {
        /// The message text.
        text: String,
    },
    /// An op with nothing to report finished.
    Ack,
    /// The session ended and its task stopped; nothing follows.
    ShutdownComplete,
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

impl Event {
    /// Whether this event ends a submission: every submission that is not a
    /// signal ends with exactly one terminal event.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            Event::TurnComplete { .. }
                | Event::Error { .. }
                | Event::SessionChanged { .. }
                | Event::Undone { .. }
                | Event::ModelChanged { .. }
                | Event::Compressed { .. }
                | Event::Ack
                | Event::ShutdownComplete
        )
    }
}

/// An event as a session emits it: tagged with the submission that caused it
/// (`0` for events no submission caused, such as start-up warnings).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionEvent {
    /// The submission id [`crate::Op`]s get when submitted.
    pub submission: u64,
    /// What happened.
    pub event: Event,
}
