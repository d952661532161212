use super::*;

fn trajectory(index: usize, prompt: &str, completed: bool) -> String {
    format!(
        "{{\"prompt_index\": {index}, \"conversations\": [{{\"from\": \"system\", \"value\": \"s\"}}, {{\"from\": \"human\", \"value\": \"{prompt}\"}}], \"completed\": {completed}}}"
    )
}

#[test]
fn a_torn_last_line_is_cut_off_and_the_rest_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(SAMPLES);
    let text = format!(
        "{}\n{}\n{{\"prompt_index\": 2, \"conv",
        trajectory(0, "a", true),
        trajectory(1, "b", true)
    );
    std::fs::write(&path, &text).unwrap();
    std::fs::write(
        dir.path().join(FAILED),
        format!(
            "{}\n{{\"prompt_index\": 3, \"prompt\": \"d\", \"error\": \"x\", \"failed\": true}}\nnot json\n",
            trajectory(4, "e", false)
        ),
    )
    .unwrap();
    let scan = Scan::of(dir.path()).unwrap();
    assert_eq!(scan.repaired, [(path.clone(), 25)]);
    assert_eq!(scan.invalid_lines, 1);
    assert_eq!(scan.done().into_iter().collect::<Vec<_>>(), [0, 1, 4]);
    assert!(scan.done_prompts().contains("e"));
    assert!(!scan.done_prompts().contains("d"));
    let kinds: Vec<Kind> = scan.records.iter().map(|r| r.kind).collect();
    assert_eq!(
        kinds,
        [
            Kind::Completed,
            Kind::Completed,
            Kind::Incomplete,
            Kind::Error
        ]
    );
    assert!(std::fs::read_to_string(&path).unwrap().ends_with("}\n"));
    // Nothing torn: nothing cut.
    assert_eq!(repair_tail(&path).unwrap(), 0);
    assert_eq!(repair_tail(&dir.path().join("missing.jsonl")).unwrap(), 0);
}

#[test]
fn a_file_with_only_a_torn_line_becomes_empty() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(SAMPLES);
    std::fs::write(&path, "{\"prompt_in").unwrap();
    assert_eq!(repair_tail(&path).unwrap(), 11);
    assert_eq!(std::fs::read(&path).unwrap(), b"");
}

#[test]
fn appended_lines_go_to_their_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut out = Appender::open(dir.path()).unwrap();
    out.append(Target::Samples, &trajectory(0, "a", true))
        .unwrap();
    out.append(Target::Failed, &trajectory(1, "b", false))
        .unwrap();
    out.append(Target::Samples, &trajectory(2, "c", true))
        .unwrap();
    let samples = std::fs::read_to_string(dir.path().join(SAMPLES)).unwrap();
    assert_eq!(samples.lines().count(), 2);
    let (records, invalid) = read_records(&dir.path().join(FAILED)).unwrap();
    assert_eq!((records.len(), invalid), (1, 0));
    assert_eq!(records[0].prompt, "b");
}

#[test]
fn the_checkpoint_round_trips_in_the_reference_shape() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(CHECKPOINT);
    let mut cp = Checkpoint::new("run");
    cp.set_done(&BTreeSet::from([0, 1, 12]), &BTreeSet::from([12]), 10);
    cp.usage.input = 5;
    cp.save(&path, "2026-01-01T00:00:00".into()).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with("{\n  \"run_name\": \"run\",\n  \"completed_prompts\": [\n    0,"),
        "{text}"
    );
    assert!(
        text.contains("\"batch_stats\": {\n    \"0\": {\n      \"processed\": 2,"),
        "{text}"
    );
    let (loaded, warning) = Checkpoint::load(&path, "run");
    assert_eq!(warning, None);
    assert_eq!(loaded, cp);
    // Another run's checkpoint is not used.
    let (other, _) = Checkpoint::load(&path, "other");
    assert!(other.completed_prompts.is_empty());
    std::fs::write(&path, "{broken").unwrap();
    let (fresh, warning) = Checkpoint::load(&path, "run");
    assert!(fresh.completed_prompts.is_empty());
    assert!(warning.unwrap().contains("Failed to load checkpoint"));
}

#[test]
fn foreign_lines_are_not_records() {
    assert!(parse_line("{\"prompt_index\": 1}").is_none());
    assert!(parse_line("{\"conversations\": []}").is_none());
    assert!(parse_line("[]").is_none());
}
