use super::*;

const TOOLS: ReplyShape = ReplyShape {
    tool_calls: true,
    text: false,
    reasoning: false,
};
const TEXT: ReplyShape = ReplyShape {
    tool_calls: false,
    text: true,
    reasoning: false,
};
const EMPTY: ReplyShape = ReplyShape {
    tool_calls: false,
    text: false,
    reasoning: false,
};
const THINKING: ReplyShape = ReplyShape {
    tool_calls: false,
    text: false,
    reasoning: true,
};

fn call(kind: CallKind, before: Before) -> Step {
    Step::CallModel { kind, before }
}

/// What the driver feeds the machine after a step.
#[derive(Debug, Clone, Copy)]
enum Input {
    Reply(ReplyShape, bool),
    Tools(bool),
}

/// Runs `inputs` through a fresh machine and returns every step, the first included.
fn steps(max_turns: u32, inputs: &[Input]) -> Vec<Step> {
    let mut m = TurnMachine::new(max_turns);
    let mut out = vec![m.start()];
    for input in inputs {
        out.push(match *input {
            Input::Reply(shape, fallback) => m.after_reply(shape, fallback),
            Input::Tools(halted) => m.after_tools(halted),
        });
    }
    out
}

#[test]
fn next_step_table() {
    use CallKind::{Grace, Normal, Summary};
    use Input::{Reply, Tools};
    let cases: Vec<(&str, u32, Vec<Input>, Vec<Step>)> = vec![
        (
            "a plain answer finishes",
            5,
            vec![Reply(TEXT, false)],
            vec![
                call(Normal, Before::Nothing),
                Step::Finish(TurnEnd::Completed),
            ],
        ),
        (
            "tool calls run, then the answer",
            5,
            vec![Reply(TOOLS, false), Tools(false), Reply(TEXT, false)],
            vec![
                call(Normal, Before::Nothing),
                Step::RunTools,
                call(Normal, Before::Nothing),
                Step::Finish(TurnEnd::Completed),
            ],
        ),
        (
            "a guardrail halt ends the turn",
            5,
            vec![Reply(TOOLS, false), Tools(true)],
            vec![call(Normal, Before::Nothing), Step::RunTools, Step::Halt],
        ),
        (
            "budget spent: grace call, its tools ignored, then a summary",
            1,
            vec![
                Reply(TOOLS, false),
                Tools(false),
                Reply(TOOLS, false),
                Reply(TEXT, false),
            ],
            vec![
                call(Normal, Before::Nothing),
                Step::RunTools,
                call(Grace, Before::Nothing),
                call(Summary, Before::Nothing),
                Step::Finish(TurnEnd::BudgetExhausted),
            ],
        ),
        (
            "the grace call may answer",
            1,
            vec![Reply(TOOLS, false), Tools(false), Reply(TEXT, false)],
            vec![
                call(Normal, Before::Nothing),
                Step::RunTools,
                call(Grace, Before::Nothing),
                Step::Finish(TurnEnd::BudgetExhausted),
            ],
        ),
        (
            "an empty reply is retried three times, then the turn gives up",
            10,
            vec![
                Reply(EMPTY, false),
                Reply(EMPTY, false),
                Reply(EMPTY, false),
                Reply(EMPTY, false),
            ],
            vec![
                call(Normal, Before::Nothing),
                call(Normal, Before::RetryEmpty(1)),
                call(Normal, Before::RetryEmpty(2)),
                call(Normal, Before::RetryEmpty(3)),
                Step::GiveUp,
            ],
        ),
        (
            "an empty reply then a real one",
            10,
            vec![Reply(EMPTY, false), Reply(TEXT, false)],
            vec![
                call(Normal, Before::Nothing),
                call(Normal, Before::RetryEmpty(1)),
                Step::Finish(TurnEnd::Completed),
            ],
        ),
        (
            "exhausted empty retries fall back when a route is left",
            10,
            vec![
                Reply(EMPTY, true),
                Reply(EMPTY, true),
                Reply(EMPTY, true),
                Reply(EMPTY, true),
                Reply(TEXT, false),
            ],
            vec![
                call(Normal, Before::Nothing),
                call(Normal, Before::RetryEmpty(1)),
                call(Normal, Before::RetryEmpty(2)),
                call(Normal, Before::RetryEmpty(3)),
                call(Normal, Before::FallBack),
                Step::Finish(TurnEnd::Completed),
            ],
        ),
        (
            "silence after tool results gets one nudge before plain retries",
            10,
            vec![
                Reply(TOOLS, false),
                Tools(false),
                Reply(EMPTY, false),
                Reply(EMPTY, false),
            ],
            vec![
                call(Normal, Before::Nothing),
                Step::RunTools,
                call(Normal, Before::Nothing),
                call(Normal, Before::Nudge),
                call(Normal, Before::RetryEmpty(1)),
            ],
        ),
        (
            "reasoning-only replies are continued twice, then retried",
            10,
            vec![
                Reply(THINKING, false),
                Reply(THINKING, false),
                Reply(THINKING, false),
            ],
            vec![
                call(Normal, Before::Nothing),
                call(Normal, Before::Prefill(1)),
                call(Normal, Before::Prefill(2)),
                call(Normal, Before::RetryEmpty(1)),
            ],
        ),
        (
            "retries consume the budget like any call",
            2,
            vec![
                Reply(EMPTY, false),
                Reply(EMPTY, false),
                Reply(EMPTY, false),
            ],
            vec![
                call(Normal, Before::Nothing),
                call(Normal, Before::RetryEmpty(1)),
                call(Grace, Before::RetryEmpty(2)),
                call(Summary, Before::RetryEmpty(3)),
            ],
        ),
        (
            "a summary reply that also asks for tools is still the answer",
            1,
            vec![
                Reply(TOOLS, false),
                Tools(false),
                Reply(TOOLS, false),
                Reply(
                    ReplyShape {
                        tool_calls: true,
                        text: true,
                        reasoning: false,
                    },
                    false,
                ),
            ],
            vec![
                call(Normal, Before::Nothing),
                Step::RunTools,
                call(Grace, Before::Nothing),
                call(Summary, Before::Nothing),
                Step::Finish(TurnEnd::BudgetExhausted),
            ],
        ),
    ];
    for (name, max, inputs, want) in cases {
        assert_eq!(steps(max, &inputs), want, "{name}");
    }
}

#[test]
fn a_successful_reply_resets_the_empty_counters() {
    let mut m = TurnMachine::new(20);
    m.start();
    for _ in 0..EMPTY_RETRIES {
        m.after_reply(EMPTY, false);
    }
    assert_eq!(m.after_reply(TOOLS, false), Step::RunTools);
    m.after_tools(false);
    // The nudge is spent once per turn; after it the retries start again from one.
    assert_eq!(
        m.after_reply(EMPTY, false),
        call(CallKind::Normal, Before::Nudge)
    );
    assert_eq!(
        m.after_reply(EMPTY, false),
        call(CallKind::Normal, Before::RetryEmpty(1))
    );
}

#[test]
fn refunds_give_calls_back() {
    let mut m = TurnMachine::new(1);
    m.start();
    assert_eq!(m.after_reply(TOOLS, false), Step::RunTools);
    m.refund();
    assert_eq!(
        m.after_tools(false),
        call(CallKind::Normal, Before::Nothing)
    );
    assert_eq!(m.calls_used(), 1);
}

#[test]
fn a_resumed_turn_starts_with_its_tools_and_counts_the_call() {
    let mut m = TurnMachine::new(1);
    assert_eq!(m.resume(), Step::RunTools);
    assert_eq!(m.calls_used(), 1);
    assert_eq!(
        m.after_tools(false),
        call(CallKind::Grace, Before::Nothing),
        "the reply's call used the budget of one"
    );
}

#[test]
fn keep_going_after_a_finish_makes_another_call_within_the_budget() {
    let mut m = TurnMachine::new(2);
    assert_eq!(m.start(), call(CallKind::Normal, Before::Nothing));
    assert_eq!(m.after_reply(TEXT, false), Step::Finish(TurnEnd::Completed));
    assert_eq!(m.keep_going(), call(CallKind::Normal, Before::Nothing));
    assert_eq!(m.after_reply(TEXT, false), Step::Finish(TurnEnd::Completed));
    assert_eq!(
        m.keep_going(),
        call(CallKind::Grace, Before::Nothing),
        "the budget of two is spent"
    );
}
