use super::*;
use crate::output::parse_line;

fn facts(scope: impl IntoIterator<Item = usize>) -> RunFacts {
    RunFacts {
        run_name: "r".into(),
        distribution: "default".into(),
        total_prompts: 6,
        batch_size: 2,
        model: "m".into(),
        shard: None,
        scope: scope.into_iter().collect(),
        duration_seconds: 1.234,
        completed_at: "now".into(),
    }
}

fn line(index: usize, completed: bool, tool_count: u64) -> Scanned {
    parse_line(&format!(
        "{{\"prompt_index\": {index}, \"conversations\": [{{\"from\": \"human\", \"value\": \"p{index}\"}}, {{\"from\": \"gpt\", \"value\": \"<think>\\nr\\n</think>\\nok\"}}], \"completed\": {completed}, \"api_calls\": 2, \"tool_stats\": {{\"terminal\": {{\"count\": {tool_count}, \"success\": {tool_count}, \"failure\": 0}}}}}}"
    ))
    .unwrap()
}

fn error(index: usize) -> Scanned {
    parse_line(&format!(
        "{{\"prompt_index\": {index}, \"prompt\": \"p{index}\", \"error\": \"x\", \"failed\": true}}"
    ))
    .unwrap()
}

#[test]
fn counts_use_the_best_record_of_each_prompt_in_scope() {
    let records = vec![
        line(0, true, 1),
        error(1),
        line(1, true, 2), // a retried error: the trajectory counts
        line(2, false, 0),
        error(3),
        line(9, true, 5), // outside the scope
    ];
    let usage = UsageTally {
        input: 10,
        output: 5,
        ..UsageTally::default()
    };
    let s = Statistics::build(&facts(0..5), &records, &usage);
    assert_eq!(
        (s.total, s.completed, s.failed, s.errors, s.pending),
        (5, 2, 2, 1, 1)
    );
    assert_eq!(s.completion_rate, 40.0);
    assert_eq!(s.total_batches, 3);
    assert_eq!(s.api_calls, 6);
    assert_eq!(s.tool_calls_total, 3);
    assert_eq!(s.tool_statistics["terminal"].success_rate, 100.0);
    assert_eq!(s.tokens.total, 15);
    assert_eq!(s.duration_seconds, 1.23);
    assert_eq!(s.reasoning_statistics.turns_with_reasoning, 3);
    assert_eq!(s.cost_status, "known");
}

#[test]
fn the_file_starts_with_the_reference_keys() {
    let s = Statistics::build(&facts(0..2), &[], &UsageTally::default());
    let text = crate::json::to_pretty_string(&s).unwrap();
    assert!(
        text.starts_with("{\n  \"run_name\": \"r\",\n  \"distribution\": \"default\",\n  \"total_prompts\": 6,\n  \"total_batches\": 1,\n  \"batch_size\": 2,"),
        "{text}"
    );
    assert!(!text.contains("\"shard\""));
    assert!(!text.contains("merged_from"));
    let back: Statistics = serde_json::from_str(&text).unwrap();
    assert_eq!(back, s);
}
