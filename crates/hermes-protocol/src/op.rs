use serde::{Deserialize, Serialize};

/// A person's answer to "run this dangerous command?".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalChoice {
    /// Run it this time only.
    Once,
    /// Allow this kind of command for the rest of the session.
    Session,
    /// Allow it from now on (saved to `command_allowlist` in config.yaml).
    Always,
    /// Do not run it.
    Deny,
}

/// Operations a front-end sends into a running session.
///
/// A session handles one submission at a time, in order. While a turn runs,
/// the *signals* ([`Op::Interrupt`], [`Op::Steer`], [`Op::ApprovalAnswer`],
/// [`Op::ClarifyAnswer`]) act on it at once; every other op waits for the
/// turn to end (so a [`Op::UserInput`] sent mid-turn is queued behind it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// A new user message starts a turn (queued behind a running one).
    UserInput {
        /// The text the user typed.
        text: String,
    },
    /// A user message with images (`data:` URLs or http(s) addresses) for a
    /// model that can see; otherwise as [`Op::UserInput`].
    UserInputWithImages {
        /// The text the user typed.
        text: String,
        /// The images that go with it.
        images: Vec<String>,
    },
    /// Stop the running turn at the next boundary and cancel in-flight tools.
    Interrupt,
    /// Extra guidance appended to the next tool result of the running turn;
    /// with no turn running it is sent as a user message.
    Steer {
        /// The guidance text.
        text: String,
    },
    /// The answer to an [`crate::Event::ApprovalRequested`].
    ApprovalAnswer {
        /// The request being answered.
        request_id: u64,
        /// What the person chose.
        choice: ApprovalChoice,
    },
    /// The answer to an [`crate::Event::ClarifyRequested`]; `None` when the
    /// person declined to answer.
    ClarifyAnswer {
        /// The request being answered.
        request_id: u64,
        /// The chosen choice or the person's own text.
        answer: Option<String>,
    },
    /// Switch the primary model for the rest of the session: `MODEL` on the
    /// current provider, or `PROVIDER:MODEL`.
    SwitchModel {
        /// What to switch to.
        target: String,
    },
    /// End this session and continue in a new, empty one.
    NewSession,
    /// Drop the last `turns` user turns (at least one).
    Undo {
        /// How many user turns to drop.
        turns: usize,
    },
    /// Undo the last turn and send its message again (or resend the last
    /// message when it was never answered).
    Retry,
    /// Finish a turn that was cut short after the model asked for tools (the
    /// process stopped while an approval was pending, and the session was
    /// resumed): run those calls, asking again where needed, and carry on.
    ContinueTurn,
    /// Summarise the middle of the conversation now.
    Compress {
        /// A topic the summary should keep in detail.
        focus: Option<String>,
    },
    /// Continue another stored session here (by id, id prefix or title).
    Resume {
        /// The session to continue.
        key: String,
    },
    /// Dangerous commands run without asking (`true`) or ask first (`false`).
    SetYolo {
        /// The new setting.
        on: bool,
    },
    /// Sets the session's title.
    SetTitle {
        /// The title.
        title: String,
    },
    /// Adds an overlay (a personality) to the system prompt, or removes it.
    SetPromptOverlay {
        /// The overlay text; `None` restores the session's own prompt.
        overlay: Option<String>,
    },
    /// Re-read `mcp_servers:` from config.yaml and reconnect (`/reload-mcp`);
    /// the next model request carries the servers' current tools.
    ReloadMcp,
    /// Kill every background process the session started (`/stop`); a
    /// status line says how many.
    StopProcesses,
    /// Start a turn whose message is the background-process announcements
    /// waiting (see [`crate::Event::AnnouncementsWaiting`]); it begins with
    /// [`crate::Event::Announced`]. Ends with [`crate::Event::Ack`] when a
    /// turn already took them.
    Announce,
    /// End the session (recording `reason`) and stop its task.
    Shutdown {
        /// Why it ended (`cli_close`, `api_close` …), as stored in state.db.
        reason: String,
    },
}

impl Op {
    /// Whether the op acts on a running turn at once rather than waiting for it.
    pub fn is_signal(&self) -> bool {
        matches!(
            self,
            Op::Interrupt | Op::Steer { .. } | Op::ApprovalAnswer { .. } | Op::ClarifyAnswer { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_use_a_tagged_snake_case_form() {
        let op = Op::ApprovalAnswer {
            request_id: 3,
            choice: ApprovalChoice::Session,
        };
        let json = serde_json::to_value(&op).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"op": "approval_answer", "request_id": 3, "choice": "session"})
        );
        assert_eq!(serde_json::from_value::<Op>(json).unwrap(), op);
    }

    #[test]
    fn signals_are_the_mid_turn_ops() {
        assert!(Op::Interrupt.is_signal());
        assert!(Op::Steer { text: "x".into() }.is_signal());
        assert!(!Op::UserInput { text: "x".into() }.is_signal());
        assert!(!Op::NewSession.is_signal());
    }
}
