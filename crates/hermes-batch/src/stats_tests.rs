use super::*;
use hermes_protocol::ToolCall;

#[test]
fn failures_follow_the_reference_rules() {
    for failed in [
        r#"{"error": "no such file"}"#,
        r#"{"content": {"error": "x"}, "output": ""}"#,
        r#"{"success": false}"#,
        "",
        "  Error: something broke",
        "ERROR: nope",
    ] {
        assert!(is_failure(Some(failed)), "{failed:?}");
    }
    for ok in [
        r#"{"error": null, "output": "hi"}"#,
        r#"{"exit_code": 1, "output": "fail"}"#,
        r#"{"content": "error: text inside"}"#,
        r#"[{"error": "in a list"}]"#,
        "42",
        "plain text mentioning error: later",
    ] {
        assert!(!is_failure(Some(ok)), "{ok:?}");
    }
    assert!(!is_failure(None));
}

#[test]
fn results_count_for_the_call_with_their_id() {
    let mut call = Message::assistant("");
    call.tool_calls = vec![
        ToolCall::new("a", "terminal", "{}"),
        ToolCall::new("b", "read_file", "{}"),
        ToolCall::new("c", "terminal", "{}"),
    ];
    let messages = vec![
        Message::user("q"),
        call,
        Message::tool_result("a", "terminal", r#"{"output": "ok"}"#),
        Message::tool_result("b", "read_file", r#"{"error": "missing"}"#),
        Message::tool_result("zzz", "terminal", r#"{"error": "unmatched"}"#),
    ];
    let stats = tool_stats(&messages);
    assert_eq!(
        stats["terminal"],
        ToolStat {
            count: 2,
            success: 1,
            failure: 0
        }
    );
    assert_eq!(
        stats["read_file"],
        ToolStat {
            count: 1,
            success: 0,
            failure: 1
        }
    );
    let (all, errors) = normalized(&stats);
    assert_eq!(all["patch"], ToolStat::default());
    assert_eq!(errors["read_file"], 1);
    assert_eq!(errors["web_search"], 0);
    assert!(known_tools().contains("browser_navigate"));
}

#[test]
fn unknown_tools_are_kept_after_normalising() {
    let raw = BTreeMap::from([(
        "made_up".to_owned(),
        ToolStat {
            count: 1,
            success: 0,
            failure: 1,
        },
    )]);
    let (all, errors) = normalized(&raw);
    assert_eq!(all["made_up"].count, 1);
    assert_eq!(errors["made_up"], 1);
}

#[test]
fn rates_are_percentages_of_results() {
    let r = ToolRates::of(ToolStat {
        count: 4,
        success: 2,
        failure: 1,
    });
    assert_eq!((r.success_rate, r.failure_rate), (66.67, 33.33));
    let none = ToolRates::of(ToolStat {
        count: 2,
        success: 0,
        failure: 0,
    });
    assert_eq!((none.success_rate, none.failure_rate), (0.0, 0.0));
}

#[test]
fn record_totals_sum_used_tools_and_reasoning() {
    let record = serde_json::json!({
        "completed": true,
        "api_calls": 2,
        "tool_stats": {"terminal": {"count": 1, "success": 1, "failure": 0},
                       "patch": {"count": 0, "success": 0, "failure": 0}},
        "conversations": [
            {"from": "system", "value": "s"},
            {"from": "human", "value": "q"},
            {"from": "gpt", "value": "<think>\n</think>\n<tool_call>…"},
            {"from": "tool", "value": "…"},
            {"from": "gpt", "value": "<think>\nhmm\n</think>\nDone"}
        ]
    });
    let mut totals = RecordTotals::default();
    totals.add_trajectory(&record);
    totals.add_trajectory(&serde_json::json!({"completed": false, "api_calls": 1}));
    assert_eq!(
        (totals.completed, totals.incomplete, totals.api_calls),
        (1, 1, 3)
    );
    assert_eq!(totals.tools.keys().collect::<Vec<_>>(), ["terminal"]);
    assert_eq!(totals.tool_calls(), 1);
    assert_eq!(
        totals.reasoning,
        ReasoningStats {
            total_assistant_turns: 2,
            turns_with_reasoning: 1,
            turns_without_reasoning: 1
        }
    );
}

#[test]
fn usage_is_tallied_and_priced_when_possible() {
    let mut tally = UsageTally::default();
    let usage = Usage {
        input_tokens: 1000,
        output_tokens: 100,
        cache_read_tokens: 10,
        cache_write_tokens: 0,
        reasoning_tokens: 5,
    };
    tally.add_prompt(&usage, 2, ("mock-model", "custom", "http://127.0.0.1:1/v1"));
    tally.add_prompt(
        &Usage::default(),
        1,
        ("mock-model", "custom", "http://127.0.0.1:1/v1"),
    );
    assert_eq!((tally.input, tally.output, tally.api_calls), (1000, 100, 3));
    assert_eq!(tally.priced + tally.unpriced, 1);
    let tokens = Tokens::from(&tally);
    assert_eq!(tokens.total, 1100);
    let mut both = tally;
    both.add(&tally);
    assert_eq!(both.input, 2000);
}
