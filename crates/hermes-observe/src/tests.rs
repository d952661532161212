#![allow(clippy::unwrap_used, clippy::expect_used)]

use hermes_protocol::{Event, Message, ToolOutcome, TurnEnd, Usage};

use super::spans::{OpenTurn, Value};
use super::*;

fn model_call(status: &str, input: u64, output: u64) -> Event {
    Event::ModelCall {
        provider: "openrouter".into(),
        model: "m".into(),
        status: status.into(),
        duration_ms: 40,
        usage: Usage {
            input_tokens: input,
            output_tokens: output,
            ..Usage::default()
        },
    }
}

fn tool(started: bool, id: &str, name: &str) -> Event {
    if started {
        Event::ToolStarted {
            call_id: id.into(),
            name: name.into(),
            arguments: r#"{"command":"echo sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"}"#
                .into(),
        }
    } else {
        Event::ToolFinished {
            call_id: id.into(),
            name: name.into(),
            outcome: ToolOutcome::Ok,
            result: "ok".into(),
            duration_ms: 3,
        }
    }
}

fn done() -> Event {
    Event::TurnComplete {
        final_text: "done".into(),
        reason: TurnEnd::Completed,
        usage: Usage::default(),
        api_calls: 2,
    }
}

fn metrics_only() -> Observer {
    let settings = ObserveSettings {
        metrics: true,
        ..ObserveSettings::off()
    };
    Observer::new(&settings).unwrap()
}

#[test]
fn turns_calls_tokens_and_errors_are_counted() {
    let observer = metrics_only();
    for event in [
        Event::MessageAppended {
            message: Message::user("hi"),
        },
        model_call("rate_limit", 0, 0),
        model_call("ok", 100, 7),
        tool(true, "c1", "terminal"),
        tool(false, "c1", "terminal"),
        Event::Nested {
            origin: "subagent 1/1".into(),
            inner: Box::new(model_call("ok", 10, 1)),
        },
        done(),
    ] {
        observer.record("s1", "s1", "telegram", &event);
    }
    // An error outside any turn is no turn.
    observer.record(
        "s1",
        "s1",
        "telegram",
        &Event::Error {
            message: "x".into(),
        },
    );
    let text = observer.metrics_text();
    for line in [
        r#"hermes_turns_total{platform="telegram",outcome="completed"} 1"#,
        r#"hermes_tool_calls_total{tool="terminal",outcome="ok"} 1"#,
        r#"hermes_model_calls_total{provider="openrouter",model="m",status="ok"} 2"#,
        r#"hermes_model_calls_total{provider="openrouter",model="m",status="rate_limit"} 1"#,
        r#"hermes_tokens_total{provider="openrouter",model="m",kind="input"} 110"#,
        r#"hermes_errors_total{class="rate_limit"} 1"#,
    ] {
        assert!(text.contains(line), "{line} missing from\n{text}");
    }
    assert!(!text.contains("outcome=\"error\""), "{text}");
    assert!(text.ends_with("# EOF\n"));
}

#[test]
fn a_failed_turn_counts_as_an_error() {
    let observer = metrics_only();
    observer.record("s", "s", "cli", &model_call("auth", 0, 0));
    observer.record(
        "s",
        "s",
        "cli",
        &Event::Error {
            message: "no key".into(),
        },
    );
    let text = observer.metrics_text();
    assert!(
        text.contains(r#"hermes_turns_total{platform="cli",outcome="error"} 1"#),
        "{text}"
    );
    assert!(
        text.contains(r#"hermes_errors_total{class="turn_error"} 1"#),
        "{text}"
    );
}

#[test]
fn a_turn_is_one_trace_with_calls_under_it_and_nested_calls_under_their_tool() {
    let mut turn = OpenTurn::start();
    turn.take(
        None,
        &Event::MessageAppended {
            message: Message::user("hi"),
        },
        false,
    );
    turn.take(None, &model_call("ok", 5, 1), false);
    turn.take(None, &tool(true, "c1", "delegate_task"), false);
    let nested = |e| Event::Nested {
        origin: "subagent 1/1".into(),
        inner: Box::new(e),
    };
    turn.take(None, &nested(model_call("ok", 1, 1)), false);
    turn.take(None, &nested(tool(true, "c1", "terminal")), false);
    turn.take(None, &nested(tool(false, "c1", "terminal")), false);
    turn.take(None, &tool(false, "c1", "delegate_task"), false);
    let spans = turn.finish("s1", "cli", Some(&TurnEnd::Completed), "done", false);
    assert_eq!(spans.len(), 5);
    let root = spans.last().unwrap();
    assert_eq!(root.name, "invoke_agent hermes");
    assert!(root.parent.is_none());
    assert!(spans.iter().all(|s| s.trace_id == root.trace_id));
    let by_name = |n: &str| spans.iter().filter(|s| s.name == n).collect::<Vec<_>>();
    let delegate = by_name("execute_tool delegate_task")[0];
    assert_eq!(delegate.parent, Some(root.span_id));
    assert_eq!(
        by_name("execute_tool terminal")[0].parent,
        Some(delegate.span_id)
    );
    let chats = by_name("chat m");
    assert_eq!(chats.len(), 2);
    assert!(chats.iter().any(|s| s.parent == Some(root.span_id)));
    assert!(chats.iter().any(|s| s.parent == Some(delegate.span_id)));
    // No content without include_content.
    let all = format!("{spans:?}");
    assert!(!all.contains("sk-ant") && !all.contains("hi\"") && !all.contains("done\""));
    assert!(
        root.attributes
            .contains(&("gen_ai.usage.input_tokens", Value::Int(5)))
    );
}

#[test]
fn content_when_asked_is_masked() {
    let mut turn = OpenTurn::start();
    turn.take(None, &tool(true, "c1", "terminal"), true);
    turn.take(None, &tool(false, "c1", "terminal"), true);
    let spans = turn.finish("s1", "cli", Some(&TurnEnd::Completed), "done", true);
    let all = format!("{spans:?}");
    assert!(all.contains("gen_ai.tool.call.arguments"), "{all}");
    assert!(
        !all.contains("abcdefghijklmnopqrstuvwxyz0123456789"),
        "{all}"
    );
}

#[test]
fn a_turn_whose_session_id_changes_midway_is_still_one_turn() {
    let observer = metrics_only();
    observer.record(
        "c",
        "s1",
        "cli",
        &Event::MessageAppended {
            message: Message::user("hi"),
        },
    );
    observer.record("c", "s2", "cli", &model_call("ok", 1, 1));
    observer.record("c", "s2", "cli", &done());
    // The turn closed: an error now is not a turn.
    observer.record(
        "c",
        "s2",
        "cli",
        &Event::Error {
            message: "later".into(),
        },
    );
    let text = observer.metrics_text();
    assert!(
        text.contains(r#"hermes_turns_total{platform="cli",outcome="completed"} 1"#),
        "{text}"
    );
    assert!(!text.contains("outcome=\"error\""), "{text}");
}
