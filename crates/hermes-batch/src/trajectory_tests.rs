use super::*;
use hermes_protocol::ToolCall;

fn assistant(
    content: Option<&str>,
    reasoning: Option<&str>,
    calls: &[(&str, &str, &str)],
) -> Message {
    let mut m = Message::assistant(content.unwrap_or(""));
    m.content = content.map(str::to_owned);
    m.reasoning = reasoning.map(str::to_owned);
    m.tool_calls = calls
        .iter()
        .map(|(id, name, args)| ToolCall::new(*id, *name, *args))
        .collect();
    m
}

fn values(turns: &[Turn]) -> Vec<(&str, &str)> {
    turns
        .iter()
        .map(|t| (t.from.as_str(), t.value.as_str()))
        .collect()
}

#[test]
fn the_system_message_is_the_fixed_template_with_the_tools() {
    let tools = [ToolSchema {
        name: "read_file".into(),
        description: "Read a file".into(),
        // Keys in sorted order: the same text whether or not serde_json keeps
        // insertion order (a workspace build may turn `preserve_order` on).
        parameters: serde_json::json!({"properties": {"path": {"type": "string"}}, "type": "object"}),
    }];
    let sys = system_message(&tools);
    assert!(sys.starts_with("You are a function calling AI model."));
    assert!(sys.contains(
        "<tools>\n[{\"name\": \"read_file\", \"description\": \"Read a file\", \"parameters\": {\"properties\": {\"path\": {\"type\": \"string\"}}, \"type\": \"object\"}, \"required\": null}]\n</tools>\n"
    ));
    assert!(sys.ends_with("{'name': <function-name>,'arguments': <args-dict>}\n</tool_call>"));
    assert!(system_message(&[]).contains("<tools>\n[]\n</tools>"));
}

#[test]
fn several_tool_calls_share_one_gpt_turn_and_one_tool_turn() {
    let messages = vec![
        Message::user("list and read"),
        assistant(
            Some("Let me look."),
            Some("I should list first."),
            &[
                (
                    "c1",
                    "terminal",
                    r#"{"command": "ls", "background": false}"#,
                ),
                ("c2", "read_file", r#"{"path": "a.txt"}"#),
            ],
        ),
        Message::tool_result("c1", "terminal", r#"{"output": "a.txt", "exit_code": 0}"#),
        Message::tool_result("c2", "read_file", "plain text, not JSON"),
        assistant(Some("Done."), None, &[]),
    ];
    let turns = to_sharegpt(&messages, "list and read", &[]);
    let v = values(&turns);
    assert_eq!(v.len(), 5);
    assert_eq!(v[1], ("human", "list and read"));
    assert_eq!(
        v[2],
        (
            "gpt",
            "<think>\nI should list first.\n</think>\nLet me look.\n<tool_call>\n{\"name\": \"terminal\", \"arguments\": {\"command\": \"ls\", \"background\": false}}\n</tool_call>\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n</tool_call>"
        )
    );
    assert_eq!(
        v[3],
        (
            "tool",
            "<tool_response>\n{\"tool_call_id\": \"c1\", \"name\": \"terminal\", \"content\": {\"output\": \"a.txt\", \"exit_code\": 0}}\n</tool_response>\n<tool_response>\n{\"tool_call_id\": \"c2\", \"name\": \"read_file\", \"content\": \"plain text, not JSON\"}\n</tool_response>"
        )
    );
    assert_eq!(v[4], ("gpt", "<think>\n</think>\nDone."));
}

#[test]
fn empty_content_still_gets_an_empty_think_block() {
    let messages = vec![
        Message::user("q"),
        assistant(None, None, &[("c1", "todo", "not json at all")]),
        assistant(None, Some("   "), &[]),
    ];
    let v = to_sharegpt(&messages, "q", &[]);
    assert_eq!(
        v[2].value,
        "<think>\n</think>\n<tool_call>\n{\"name\": \"todo\", \"arguments\": {}}\n</tool_call>"
    );
    // No tool results followed: no tool turn.
    assert_eq!(v[3].from, "gpt");
    assert_eq!(v[3].value, "<think>\n</think>");
    assert_eq!(v.len(), 4);
}

#[test]
fn scratchpads_become_think_blocks_and_inline_think_is_kept() {
    let messages = vec![
        Message::user("q"),
        assistant(
            Some("<REASONING_SCRATCHPAD>plan</REASONING_SCRATCHPAD> answer"),
            Some("native"),
            &[],
        ),
        Message::user("and?"),
        assistant(Some("<think>mine</think> ok "), None, &[]),
    ];
    let v = to_sharegpt(&messages, "q", &[]);
    assert_eq!(
        v[2].value,
        "<think>\nnative\n</think>\n<think>plan</think> answer"
    );
    assert_eq!((v[3].from.as_str(), v[3].value.as_str()), ("human", "and?"));
    assert_eq!(v[4].value, "<think>mine</think> ok");
}

#[test]
fn extra_results_are_unknown_and_stray_results_are_dropped() {
    let messages = vec![
        Message::user("q"),
        Message::tool_result("stray", "terminal", "{}"),
        assistant(None, None, &[("c1", "terminal", "{}")]),
        Message::tool_result("c1", "terminal", "[1, 2]"),
        Message::tool_result("c9", "terminal", "  {broken"),
        assistant(Some("bye"), None, &[]),
    ];
    let v = to_sharegpt(&messages, "q", &[]);
    let froms: Vec<&str> = v.iter().map(|t| t.from.as_str()).collect();
    assert_eq!(froms, ["system", "human", "gpt", "tool", "gpt"]);
    assert_eq!(
        v[3].value,
        "<tool_response>\n{\"tool_call_id\": \"c1\", \"name\": \"terminal\", \"content\": [1, 2]}\n</tool_response>\n<tool_response>\n{\"tool_call_id\": \"c9\", \"name\": \"unknown\", \"content\": \"  {broken\"}\n</tool_response>"
    );
}

#[test]
fn records_keep_the_reference_key_order() {
    let record = TrajectoryRecord {
        prompt_index: 3,
        conversations: vec![Turn::new("human", "héllo")],
        metadata: Metadata {
            batch_num: 0,
            timestamp: "2026-01-02T03:04:05.000006".into(),
            model: "m".into(),
        },
        completed: true,
        partial: false,
        api_calls: 2,
        toolsets_used: vec!["terminal".into()],
        tool_stats: BTreeMap::from([(
            "terminal".to_owned(),
            ToolStat {
                count: 1,
                success: 1,
                failure: 0,
            },
        )]),
        tool_error_counts: BTreeMap::from([("terminal".to_owned(), 0)]),
    };
    assert_eq!(
        to_line(&record).unwrap(),
        "{\"prompt_index\": 3, \"conversations\": [{\"from\": \"human\", \"value\": \"héllo\"}], \"metadata\": {\"batch_num\": 0, \"timestamp\": \"2026-01-02T03:04:05.000006\", \"model\": \"m\"}, \"completed\": true, \"partial\": false, \"api_calls\": 2, \"toolsets_used\": [\"terminal\"], \"tool_stats\": {\"terminal\": {\"count\": 1, \"success\": 1, \"failure\": 0}}, \"tool_error_counts\": {\"terminal\": 0}}"
    );
    let err = ErrorRecord {
        prompt_index: 1,
        prompt: "p".into(),
        error: "boom".into(),
        failed: true,
    };
    assert_eq!(
        to_line(&err).unwrap(),
        "{\"prompt_index\": 1, \"prompt\": \"p\", \"error\": \"boom\", \"failed\": true}"
    );
}
