use super::*;

fn trajectory(index: usize, completed: bool) -> String {
    format!(
        "{{\"prompt_index\": {index}, \"conversations\": [{{\"from\": \"human\", \"value\": \"p{index}\"}}], \"completed\": {completed}, \"api_calls\": 1}}"
    )
}

fn error(index: usize) -> String {
    format!(
        "{{\"prompt_index\": {index}, \"prompt\": \"p{index}\", \"error\": \"x\", \"failed\": true}}"
    )
}

fn write(dir: &Path, file: &str, lines: &[String]) {
    std::fs::create_dir_all(dir).unwrap();
    let mut text = lines.join("\n");
    text.push('\n');
    std::fs::write(dir.join(file), text).unwrap();
}

fn indices(path: &Path) -> Vec<u64> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["prompt_index"]
                .as_u64()
                .unwrap()
        })
        .collect()
}

#[test]
fn shards_merge_into_one_sorted_deduplicated_set() {
    let out = tempfile::tempdir().unwrap();
    let run = out.path().join("r");
    let s0 = run.join("shards/0-of-2");
    let s1 = run.join("shards/1-of-2");
    write(&s0, SAMPLES, &[trajectory(2, true), trajectory(0, true)]);
    write(&s0, FAILED, &[error(4), "{not json".to_owned()]);
    write(&s1, SAMPLES, &[trajectory(3, true)]);
    write(&s1, FAILED, &[trajectory(1, false), error(3), error(5)]);
    // A later retry of prompt 4 succeeded in another copy of the shard.
    write(
        &run.join("shards/0-of-2-retry"),
        SAMPLES,
        &[trajectory(4, true)],
    );
    for (dir, n, input) in [(&s0, 3, 100), (&s1, 3, 50)] {
        let stats = Statistics {
            run_name: "r".into(),
            distribution: "default".into(),
            total_prompts: 6,
            batch_size: 10,
            model: "m".into(),
            total: n,
            duration_seconds: 1.5,
            ..Statistics::default()
        };
        std::fs::write(dir.join(STATISTICS), serde_json::to_string(&stats).unwrap()).unwrap();
        let mut cp = Checkpoint::new("r");
        cp.usage.input = input;
        cp.save(&dir.join(CHECKPOINT), "t".into()).unwrap();
    }
    let outcome = merge(out.path(), "r", "now".into()).unwrap();
    assert_eq!(
        outcome.sources,
        ["shards/0-of-2", "shards/0-of-2-retry", "shards/1-of-2"]
    );
    assert_eq!(outcome.invalid_lines, 1);
    assert_eq!(outcome.trajectories, 5);
    assert_eq!(indices(&run.join(TRAJECTORIES)), [0, 1, 2, 3, 4]);
    assert_eq!(indices(&run.join(SAMPLES)), [0, 2, 3, 4]);
    assert_eq!(indices(&run.join(FAILED)), [1, 5]);
    let s = &outcome.statistics;
    assert_eq!(
        (s.total, s.completed, s.failed, s.errors, s.pending),
        (6, 4, 2, 1, 0)
    );
    assert_eq!(s.tokens.input, 150);
    assert_eq!(s.duration_seconds, 3.0);
    assert_eq!(s.model, "m");
    let written: Statistics =
        serde_json::from_str(&std::fs::read_to_string(run.join(STATISTICS)).unwrap()).unwrap();
    assert_eq!(&written, s);
    // Merging again gives the same result (the merged statistics are not counted twice).
    let again = merge(out.path(), "r", "now".into()).unwrap();
    assert_eq!(again.statistics.tokens.input, 150);
    assert_eq!(again.statistics.completed, 4);
    assert_eq!(indices(&run.join(TRAJECTORIES)), [0, 1, 2, 3, 4]);
}

#[test]
fn merging_an_unknown_run_says_what_to_do() {
    let out = tempfile::tempdir().unwrap();
    let err = merge(out.path(), "nope", "now".into()).unwrap_err();
    assert!(err.to_string().contains("no run named 'nope'"), "{err}");
}
