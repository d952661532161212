use serde_json::json;

use super::*;

fn call(index: usize, name: &str, args: Value) -> PreparedCall {
    PreparedCall {
        index,
        id: format!("c{index}"),
        name: name.into(),
        args_text: args.to_string(),
        args,
    }
}

fn kinds(calls: &[PreparedCall]) -> Vec<(SegmentKind, Vec<usize>)> {
    plan(
        calls,
        &Registry::with_builtins(),
        &ToolContext::new("/work", "t"),
    )
}

#[test]
fn independent_reads_run_together() {
    let calls = [
        call(0, "read_file", json!({"path": "a.txt"})),
        call(1, "read_file", json!({"path": "b.txt"})),
    ];
    assert_eq!(kinds(&calls), vec![(SegmentKind::Parallel, vec![0, 1])]);
}

#[test]
fn overlapping_paths_split_the_run() {
    let calls = [
        call(0, "write_file", json!({"path": "dir"})),
        call(1, "read_file", json!({"path": "dir/x.txt"})),
        call(2, "search_files", json!({"pattern": "x"})),
    ];
    assert_eq!(
        kinds(&calls),
        vec![
            (SegmentKind::Sequential, vec![0]),
            (SegmentKind::Parallel, vec![1, 2])
        ]
    );
}

#[test]
fn exclusive_tools_are_barriers_and_order_is_kept() {
    let calls = [
        call(0, "read_file", json!({"path": "a"})),
        call(1, "search_files", json!({"pattern": "x"})),
        call(2, "terminal", json!({"command": "ls"})),
        call(3, "todo", json!({})),
        call(4, "read_file", json!({"path": "b"})),
    ];
    assert_eq!(
        kinds(&calls),
        vec![
            (SegmentKind::Parallel, vec![0, 1]),
            (SegmentKind::Sequential, vec![2, 3, 4])
        ]
    );
}

#[test]
fn unknown_tools_and_non_object_args_are_barriers() {
    let calls = [
        call(0, "read_file", json!("a")),
        call(1, "nope", json!({})),
        call(2, "read_file", json!({})),
    ];
    assert_eq!(
        kinds(&calls),
        vec![(SegmentKind::Sequential, vec![0, 1, 2])]
    );
}
