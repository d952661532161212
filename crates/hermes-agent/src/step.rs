//! The decisions of one turn, with no I/O: after each model reply and each
//! tool round, [`TurnMachine`] says what the driver does next (call the model,
//! run the tools, finish, halt, or give up). The driver in `agent/turn.rs`
//! performs the step and reports what came of it.

use hermes_protocol::TurnEnd;

use crate::budget::{CallKind, TurnBudget};

/// How many times a reply with nothing in it is retried before falling back
/// (the reference retries three times).
pub const EMPTY_RETRIES: u32 = 3;
/// How many times a reasoning-only reply is continued (the reference's prefill).
pub const PREFILL_CONTINUATIONS: u32 = 2;

/// What the model's reply held, as far as the decision needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReplyShape {
    /// It asked for tool calls.
    pub tool_calls: bool,
    /// It has visible text (whitespace alone does not count).
    pub text: bool,
    /// It has reasoning (summary text, a signature or opaque items) but maybe no text.
    pub reasoning: bool,
}

/// What to do before the next model call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Before {
    /// Nothing: a normal call.
    Nothing,
    /// The last call came back empty: just retry (attempt `n` of [`EMPTY_RETRIES`]).
    RetryEmpty(u32),
    /// The model went silent after tool results: add the empty reply and a user
    /// nudge (kept out of the store) so it carries on.
    Nudge,
    /// The reply was reasoning only: keep it (out of the store) so the model
    /// continues from its own reasoning (`n` of [`PREFILL_CONTINUATIONS`]).
    Prefill(u32),
    /// Empty replies were exhausted on this route: switch to the next fallback.
    FallBack,
}

/// The next step of a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Call the model (tools offered unless `kind` is [`CallKind::Summary`]).
    CallModel {
        /// Normal, grace or summary call.
        kind: CallKind,
        /// What to do first.
        before: Before,
    },
    /// Keep the reply and run its tool calls.
    RunTools,
    /// The reply is the answer.
    Finish(TurnEnd),
    /// A guardrail stopped the turn.
    Halt,
    /// The model kept answering with nothing; the turn fails.
    GiveUp,
}

/// The turn's decision state: the iteration budget plus the empty-reply counters.
#[derive(Debug, Clone)]
pub struct TurnMachine {
    budget: TurnBudget,
    kind: CallKind,
    empty_retries: u32,
    prefills: u32,
    nudged: bool,
    after_tools: bool,
}

impl TurnMachine {
    /// A turn allowed `max_turns` normal calls.
    pub fn new(max_turns: u32) -> Self {
        Self {
            budget: TurnBudget::new(max_turns),
            kind: CallKind::Normal,
            empty_retries: 0,
            prefills: 0,
            nudged: false,
            after_tools: false,
        }
    }

    /// The first step: a normal call.
    pub fn start(&mut self) -> Step {
        self.call(Before::Nothing)
    }

    /// The first step of a turn resumed after its model call: run the tools
    /// that reply asked for (the call counts against the budget).
    pub fn resume(&mut self) -> Step {
        self.kind = self.budget.next_call();
        Step::RunTools
    }

    /// Calls counted against the budget so far.
    pub fn calls_used(&self) -> u32 {
        self.budget.used()
    }

    /// The kind of the call in flight.
    pub fn kind(&self) -> CallKind {
        self.kind
    }

    /// Gives one call back to the budget (a round of `execute_code` only).
    pub fn refund(&mut self) {
        self.budget.refund();
    }

    fn call(&mut self, before: Before) -> Step {
        self.kind = self.budget.next_call();
        Step::CallModel {
            kind: self.kind,
            before,
        }
    }

    /// Decides after a reply. `can_fall_back` says whether another route is left.
    pub fn after_reply(&mut self, reply: ReplyShape, can_fall_back: bool) -> Step {
        if reply.tool_calls && self.kind == CallKind::Normal {
            self.reset_empty();
            return Step::RunTools;
        }
        if reply.tool_calls && self.kind == CallKind::Grace {
            // The grace call exists to let the model answer; its tool calls are not run.
            return self.call(Before::Nothing);
        }
        if reply.text {
            self.reset_empty();
            return Step::Finish(if self.kind == CallKind::Normal {
                TurnEnd::Completed
            } else {
                TurnEnd::BudgetExhausted
            });
        }
        if self.after_tools && !self.nudged {
            self.nudged = true;
            return self.call(Before::Nudge);
        }
        if reply.reasoning && self.prefills < PREFILL_CONTINUATIONS {
            self.prefills += 1;
            return self.call(Before::Prefill(self.prefills));
        }
        if self.empty_retries < EMPTY_RETRIES {
            self.empty_retries += 1;
            return self.call(Before::RetryEmpty(self.empty_retries));
        }
        if can_fall_back {
            self.reset_empty();
            return self.call(Before::FallBack);
        }
        Step::GiveUp
    }

    /// After a finished answer that a `pre_verify` hook sent back for more
    /// work: another call, within the budget.
    pub fn keep_going(&mut self) -> Step {
        self.after_tools = false;
        self.nudged = false;
        self.reset_empty();
        self.call(Before::Nothing)
    }

    /// Decides after a tool round; `halted` when a guardrail stopped the turn.
    pub fn after_tools(&mut self, halted: bool) -> Step {
        if halted {
            return Step::Halt;
        }
        self.after_tools = true;
        self.call(Before::Nothing)
    }

    fn reset_empty(&mut self) {
        self.empty_retries = 0;
        self.prefills = 0;
    }
}

#[cfg(test)]
#[path = "step_tests.rs"]
mod tests;
