//! The lifecycle points hooks can attach to, named as in the reference.

/// One lifecycle point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HookEvent {
    /// Before a tool runs; may block it.
    PreToolCall,
    /// After a tool ran or was blocked (observers).
    PostToolCall,
    /// After `post_tool_call`; may replace the result the model reads.
    TransformToolResult,
    /// A foreground `terminal` command's output; may replace it.
    TransformTerminalOutput,
    /// Once per user turn before the first model call; may add context.
    PreLlmCall,
    /// Once per turn after a non-empty final answer (observers).
    PostLlmCall,
    /// Before `post_llm_call`; may replace the final answer.
    TransformLlmOutput,
    /// Before the model may finish a turn that edited files; may send it back to work.
    PreVerify,
    /// Before each provider call (observers).
    PreApiRequest,
    /// After each successful provider call (observers).
    PostApiRequest,
    /// After each failed provider call (observers).
    ApiRequestError,
    /// The first turn of a new session.
    OnSessionStart,
    /// The end of every turn.
    OnSessionEnd,
    /// The session ends for good (shutdown, `/new`).
    OnSessionFinalize,
    /// After `/new` started a fresh session.
    OnSessionReset,
    /// A subagent starts.
    SubagentStart,
    /// A subagent finished (its summary and status).
    SubagentStop,
    /// A chat message before the gateway hands it to a session; may drop or rewrite it.
    PreGatewayDispatch,
    /// A dangerous command is about to be put to a person (observers).
    PreApprovalRequest,
    /// A person answered an approval, or it timed out (observers).
    PostApprovalResponse,
    /// Before the conversation is compressed (ours: the reference has no such hook).
    PreCompress,
    /// After the conversation was compressed (ours).
    PostCompress,
    /// Kanban lifecycle (accepted, not fired: no kanban board here).
    KanbanTaskClaimed,
    /// Kanban lifecycle (accepted, not fired).
    KanbanTaskCompleted,
    /// Kanban lifecycle (accepted, not fired).
    KanbanTaskBlocked,
}

impl HookEvent {
    /// Every event, in name order.
    pub const ALL: [HookEvent; 25] = [
        HookEvent::ApiRequestError,
        HookEvent::KanbanTaskBlocked,
        HookEvent::KanbanTaskClaimed,
        HookEvent::KanbanTaskCompleted,
        HookEvent::OnSessionEnd,
        HookEvent::OnSessionFinalize,
        HookEvent::OnSessionReset,
        HookEvent::OnSessionStart,
        HookEvent::PostApiRequest,
        HookEvent::PostApprovalResponse,
        HookEvent::PostLlmCall,
        HookEvent::PostCompress,
        HookEvent::PostToolCall,
        HookEvent::PreApiRequest,
        HookEvent::PreApprovalRequest,
        HookEvent::PreCompress,
        HookEvent::PreGatewayDispatch,
        HookEvent::PreLlmCall,
        HookEvent::PreToolCall,
        HookEvent::PreVerify,
        HookEvent::SubagentStart,
        HookEvent::SubagentStop,
        HookEvent::TransformLlmOutput,
        HookEvent::TransformTerminalOutput,
        HookEvent::TransformToolResult,
    ];

    /// The name used in config and payloads.
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolCall => "pre_tool_call",
            HookEvent::PostToolCall => "post_tool_call",
            HookEvent::TransformToolResult => "transform_tool_result",
            HookEvent::TransformTerminalOutput => "transform_terminal_output",
            HookEvent::PreLlmCall => "pre_llm_call",
            HookEvent::PostLlmCall => "post_llm_call",
            HookEvent::TransformLlmOutput => "transform_llm_output",
            HookEvent::PreVerify => "pre_verify",
            HookEvent::PreApiRequest => "pre_api_request",
            HookEvent::PostApiRequest => "post_api_request",
            HookEvent::ApiRequestError => "api_request_error",
            HookEvent::OnSessionStart => "on_session_start",
            HookEvent::OnSessionEnd => "on_session_end",
            HookEvent::OnSessionFinalize => "on_session_finalize",
            HookEvent::OnSessionReset => "on_session_reset",
            HookEvent::SubagentStart => "subagent_start",
            HookEvent::SubagentStop => "subagent_stop",
            HookEvent::PreGatewayDispatch => "pre_gateway_dispatch",
            HookEvent::PreApprovalRequest => "pre_approval_request",
            HookEvent::PostApprovalResponse => "post_approval_response",
            HookEvent::PreCompress => "pre_compress",
            HookEvent::PostCompress => "post_compress",
            HookEvent::KanbanTaskClaimed => "kanban_task_claimed",
            HookEvent::KanbanTaskCompleted => "kanban_task_completed",
            HookEvent::KanbanTaskBlocked => "kanban_task_blocked",
        }
    }

    /// The event named `name`.
    pub fn parse(name: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|e| e.as_str() == name)
    }

    /// Whether a `matcher` (a tool-name pattern) applies to this event.
    pub fn is_tool_event(self) -> bool {
        matches!(self, HookEvent::PreToolCall | HookEvent::PostToolCall)
    }

    /// Every event name, comma-separated (for error messages).
    pub fn names() -> String {
        HookEvent::ALL.map(HookEvent::as_str).join(", ")
    }
}

impl std::fmt::Display for HookEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
