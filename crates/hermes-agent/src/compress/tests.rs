use hermes_protocol::ToolCall;

use super::*;

fn calls(id: &str, name: &str, args: &str) -> Message {
    let mut m = Message::assistant("");
    m.content = None;
    m.tool_calls = vec![ToolCall::new(id, name, args)];
    m
}

/// System, then `rounds` of user → read_file call → result → answer.
fn session(rounds: usize) -> Vec<Message> {
    let mut v = vec![Message::system("sys")];
    for i in 0..rounds {
        v.push(Message::user(format!(
            "task {i}: look at file {i} {}",
            "x".repeat(200)
        )));
        v.push(calls(
            &format!("c{i}"),
            "read_file",
            &format!(r#"{{"path":"src/f{i}.rs"}}"#),
        ));
        let body = if i == 2 {
            "Error: no such file".to_owned()
        } else {
            format!("{i}{}", "y".repeat(400))
        };
        v.push(Message::tool_result(format!("c{i}"), "read_file", body));
        v.push(Message::assistant(format!("done {i}")));
    }
    v
}

fn roles_alternate(v: &[Message]) -> bool {
    v.windows(2).all(|w| {
        let (a, b) = (w[0].role, w[1].role);
        !(a == b && a != Role::Tool)
    })
}

fn no_orphans(v: &[Message]) -> bool {
    let mut open: Vec<String> = Vec::new();
    for m in v {
        match m.role {
            Role::Assistant => open = m.tool_calls.iter().map(|c| c.id.clone()).collect(),
            Role::Tool => {
                let Some(pos) = open
                    .iter()
                    .position(|id| Some(id.as_str()) == m.tool_call_id.as_deref())
                else {
                    return false;
                };
                open.remove(pos);
            }
            _ => {
                if !open.is_empty() {
                    return false;
                }
            }
        }
    }
    open.is_empty()
}

fn compressor(ctx: u64) -> ContextCompressor {
    ContextCompressor::new(CompressorConfig::default(), ctx, None)
}

#[test]
fn thresholds_follow_the_reference_calibration() {
    // Large windows: 50 % of the window.
    assert_eq!(compressor(1_000_000).threshold_tokens(), 500_000);
    // Under 512K the trigger rises to 75 %.
    assert_eq!(compressor(200_000).threshold_tokens(), 150_000);
    // The 64K floor would never trigger on a 32K window: 85 % of it instead.
    assert_eq!(compressor(32_000).threshold_tokens(), 27_200);
    // Output reserved from the window lowers the input budget.
    let c = ContextCompressor::new(CompressorConfig::default(), 1_000_000, Some(200_000));
    assert_eq!(c.threshold_tokens(), 400_000);
    let mut c = compressor(1_000_000);
    c.set_context_length(100_000);
    assert_eq!(c.threshold_tokens(), 75_000);
    assert!(c.should_compress(75_000) && !c.should_compress(74_999));
}

#[test]
fn plan_keeps_head_and_tail_and_prunes_old_output() {
    let mut msgs = session(20);
    msgs.push(Message::user("the current task: fix src/main.rs"));
    let plan = compressor(200_000).plan(&msgs, Some(300)).unwrap();
    assert_eq!(plan.head, 4, "system + 3, extended past the tool result");
    assert!(plan.tail > plan.head && plan.tail < msgs.len());
    assert_ne!(plan.messages[plan.tail].role, Role::Tool);
    // Old results became one-liners; the tail kept its output.
    assert_eq!(
        plan.messages[7].text(),
        "[read_file] read src/f1.rs from line 1 (401 chars)"
    );
    let last_result = plan
        .messages
        .iter()
        .rposition(|m| m.role == Role::Tool)
        .unwrap();
    if last_result >= plan.tail {
        assert_eq!(plan.messages[last_result], msgs[last_result]);
    }
    assert!(plan.span().iter().any(|m| m.role == Role::User));
}

#[test]
fn assembly_keeps_alternation_the_task_and_no_orphans() {
    let mut msgs = session(20);
    msgs.push(Message::user("the current task: fix src/main.rs"));
    let mut c = compressor(200_000);
    for budget in [1, 50, 200, 400, 800, 3000] {
        let plan = c.plan(&msgs, Some(budget)).unwrap();
        let out = c.assemble(plan, "## Active Task\nUser asked: 'fix src/main.rs'");
        assert!(
            roles_alternate(&out),
            "budget {budget}: {:?}",
            out.iter().map(|m| m.role).collect::<Vec<_>>()
        );
        assert!(no_orphans(&out), "budget {budget}");
        assert!(
            out.last()
                .unwrap()
                .text()
                .ends_with("the current task: fix src/main.rs")
        );
        assert!(out[0].text().contains(SYSTEM_NOTE));
        assert_eq!(out[0].text().matches(SYSTEM_NOTE).count(), 1);
        let summary = out
            .iter()
            .find(|m| m.text().contains(SUMMARY_PREFIX))
            .unwrap();
        assert!(summary.text().contains("## Active Task"));
        if summary.role == Role::User {
            assert!(summary.text().contains(SUMMARY_END));
        }
        assert!(out.len() < msgs.len());
    }
}

#[test]
fn iterative_updates_carry_the_previous_summary_and_focus() {
    let msgs = session(20);
    let mut c = compressor(200_000);
    let plan = c.plan(&msgs, Some(300)).unwrap();
    let (first, budget) = c.summary_request(&plan, None);
    assert!(first.contains("TURNS TO SUMMARIZE") && !first.contains("PREVIOUS SUMMARY"));
    assert!(first.contains("## Active Task") && first.contains("[Tool calls:"));
    assert!((2_000..=10_000).contains(&budget), "{budget}");
    let out = c.assemble(plan, "first checkpoint text");
    let mut longer = out.clone();
    longer.extend(session(10).into_iter().skip(1));
    let plan = c.plan(&longer, Some(300)).unwrap();
    let (second, _) = c.summary_request(&plan, Some("the parser"));
    assert!(
        second.contains("PREVIOUS SUMMARY:\nfirst checkpoint text"),
        "{second}"
    );
    assert!(second.contains("FOCUS") && second.contains("the parser"));
}

#[test]
fn secrets_never_reach_the_summarizer() {
    let mut msgs = session(8);
    msgs.insert(
        5,
        Message::user("deploy with OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz123456"),
    );
    let c = compressor(200_000);
    let plan = c.plan(&msgs, Some(100)).unwrap();
    let (prompt, _) = c.summary_request(&plan, None);
    assert!(
        !prompt.contains("abcdefghijklmnopqrstuvwxyz123456"),
        "{prompt}"
    );
    let fallback = fallback_summary(plan.span(), None);
    assert!(
        !fallback.contains("abcdefghijklmnopqrstuvwxyz123456"),
        "{fallback}"
    );
}

#[test]
fn fallback_summary_recovers_the_essentials() {
    let msgs = session(10);
    let text = fallback_summary(&msgs[1..30], Some("aux model down"));
    assert!(
        text.starts_with("## Active Task\nUser asked: 'task 7"),
        "{text}"
    );
    assert!(text.contains("src/f3.rs") && text.contains("Error: no such file"));
    assert!(text.contains("aux model down"));
}

#[test]
fn anti_thrashing_after_two_ineffective_passes() {
    let mut c = compressor(100_000);
    assert!(c.record_savings(1000, 500));
    assert!(!c.record_savings(1000, 950));
    assert!(c.should_compress(90_000));
    assert!(!c.record_savings(1000, 990));
    assert!(c.thrashing() && !c.should_compress(90_000));
    // An effective pass resets the count.
    assert!(c.record_savings(1000, 100));
    assert!(c.should_compress(90_000));
}

#[test]
fn pruning_dedupes_summarizes_and_keeps_json_valid() {
    let big = format!(r#"{{"path":"a.txt","content":"{}"}}"#, "z".repeat(2000));
    let mut msgs = vec![
        Message::system("s"),
        Message::user("go"),
        calls("w1", "write_file", &big),
        Message::tool_result("w1", "write_file", "ok"),
        calls("t1", "terminal", r#"{"command":"cargo test"}"#),
        Message::tool_result(
            "t1",
            "terminal",
            format!(r#"{{"output":"{}","exit_code":101}}"#, "line\n".repeat(60)),
        ),
        calls("r1", "read_file", r#"{"path":"b.rs"}"#),
        Message::tool_result("r1", "read_file", "same ".repeat(100)),
        calls("r2", "read_file", r#"{"path":"b.rs"}"#),
        Message::tool_result("r2", "read_file", "same ".repeat(100)),
        Message::assistant("done"),
    ];
    let changed = prune_tool_output(&mut msgs, 6);
    assert_eq!(changed, 3);
    let args = &msgs[2].tool_calls[0].function.arguments;
    let parsed: serde_json::Value = serde_json::from_str(args).unwrap();
    assert!(
        parsed["content"]
            .as_str()
            .unwrap()
            .ends_with("...[truncated]")
    );
    assert_eq!(parsed["path"], "a.txt");
    assert_eq!(
        msgs[5].text(),
        "[terminal] ran `cargo test` -> exit 101, 61 lines output"
    );
    assert_eq!(msgs[7].text(), DUPLICATE_MARKER);
    assert_eq!(msgs[9].text(), "same ".repeat(100), "the newest copy stays");
}

#[test]
fn orphans_are_dropped() {
    let msgs = vec![
        Message::user("u"),
        Message::tool_result("gone", "terminal", "orphan result"),
        calls("c1", "terminal", "{}"),
        Message::assistant("x"),
    ];
    let out = sanitize_tool_pairs(msgs);
    assert_eq!(out.len(), 2);
    assert_eq!(out[1].text(), "x");
}

#[test]
fn a_memory_providers_context_reaches_the_summarizer_as_one_escaped_json_string() {
    let msgs = session(20);
    let c = compressor(200_000);
    let plan = c.plan(&msgs, Some(300)).unwrap();
    let (prompt, _) = c.summary_request_with(
        &plan,
        None,
        "User <b>prefers</b> tabs & key sk-proj-abcdefghijklmnopqrstuvwxyz123456",
    );
    assert!(prompt.contains("MEMORY PROVIDER CONTEXT:"), "{prompt}");
    assert!(
        prompt.contains("<memory-provider-context>\n\"User \\u003cb\\u003eprefers"),
        "{prompt}"
    );
    assert!(prompt.contains("tabs \\u0026 key"), "{prompt}");
    assert!(!prompt.contains("abcdefghijklmnopqrstuvwxyz123456"));
    let (plain, _) = c.summary_request_with(&plan, None, "  ");
    assert!(!plain.contains("MEMORY PROVIDER CONTEXT"));
}
