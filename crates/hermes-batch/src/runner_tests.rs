use std::sync::Mutex;

use super::*;
use crate::output::{DirLock, Kind};
use hermes_protocol::ToolCall;

/// Answers each prompt with a tool call, its result and a final answer;
/// prompts containing "fail" error, "budget" run out of budget, "fatal" stop
/// the run, "blank" answer without reasoning.
#[derive(Default)]
struct Fake {
    seen: Mutex<Vec<usize>>,
}

impl Executor for Fake {
    fn run<'a>(&'a self, job: &'a Job) -> BoxFuture<'a, Result<Finished, PromptError>> {
        Box::pin(async move {
            self.seen.lock().unwrap().push(job.index);
            tokio::task::yield_now().await;
            if job.prompt.contains("fatal") {
                return Err(PromptError::Fatal("no provider configured".into()));
            }
            if job.prompt.contains("fail") {
                return Err(PromptError::Failed("HTTP 500".into()));
            }
            let mut call = Message::assistant("");
            call.tool_calls = vec![ToolCall::new("c1", "terminal", r#"{"command": "echo hi"}"#)];
            let mut answer = Message::assistant("done");
            if !job.prompt.contains("blank") {
                answer.reasoning = Some("thinking".into());
            }
            Ok(Finished {
                messages: vec![
                    Message::user(job.prompt.clone()),
                    call,
                    Message::tool_result("c1", "terminal", r#"{"output": "hi", "exit_code": 0}"#),
                    answer,
                ],
                tools: vec![],
                end: if job.prompt.contains("budget") {
                    TurnEnd::BudgetExhausted
                } else {
                    TurnEnd::Completed
                },
                usage: Usage {
                    input_tokens: 10,
                    output_tokens: 2,
                    ..Usage::default()
                },
                api_calls: 2,
                model: "mock-model".into(),
                provider: "custom".into(),
                base_url: "http://127.0.0.1:9/v1".into(),
                notices: vec!["memory is off".into()],
            })
        })
    }
}

fn setup(prompts: &[&str]) -> (tempfile::TempDir, BatchConfig) {
    let dir = tempfile::tempdir().unwrap();
    let dataset = dir.path().join("data.jsonl");
    let text: String = prompts
        .iter()
        .map(|p| format!("{}\n", serde_json::json!({ "prompt": p })))
        .collect();
    std::fs::write(&dataset, text).unwrap();
    let config = BatchConfig {
        dataset,
        run_name: "r".into(),
        batch_size: 2,
        distribution: "terminal_only".into(),
        num_workers: 3,
        max_samples: None,
        output_dir: dir.path().join("out"),
        resume: false,
        shard: None,
        seed: 7,
        model: None,
        keep_no_reasoning: false,
    };
    (dir, config)
}

fn run_now(config: &BatchConfig, fake: &Fake) -> (Result<RunOutcome, BatchError>, Vec<Progress>) {
    let mut seen = Vec::new();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let result = rt.block_on(run(config, fake, &Clock::default(), &mut |p| seen.push(p)));
    (result, seen)
}

fn records(path: &std::path::Path) -> Vec<crate::output::Scanned> {
    read_records(path).unwrap().0
}

#[test]
fn every_prompt_gets_one_record_and_the_files_say_so() {
    let (_dir, config) = setup(&["a", "b fail", "c budget", "d"]);
    let fake = Fake::default();
    let (result, progress) = run_now(&config, &fake);
    let outcome = result.unwrap();
    assert_eq!((outcome.ran, outcome.errors), (4, 1));
    let run_dir = config.output_dir.join("r");
    let samples = records(&run_dir.join(SAMPLES));
    assert_eq!(
        samples.iter().map(|r| r.index).collect::<BTreeSet<_>>(),
        BTreeSet::from([0, 3])
    );
    let failed = records(&run_dir.join(FAILED));
    let kinds: BTreeSet<(usize, Kind)> = failed.iter().map(|r| (r.index, r.kind)).collect();
    assert_eq!(
        kinds,
        BTreeSet::from([(1, Kind::Error), (2, Kind::Incomplete)])
    );
    // Sorted trajectories: errors left out.
    let all: Vec<usize> = records(&run_dir.join(TRAJECTORIES))
        .iter()
        .map(|r| r.index)
        .collect();
    assert_eq!(all, [0, 2, 3]);
    let s = &outcome.statistics;
    assert_eq!((s.total, s.completed, s.failed, s.errors), (4, 2, 2, 1));
    assert_eq!(
        (s.tokens.input, s.api_calls, s.tool_calls_total),
        (30, 6, 3)
    );
    assert_eq!(s.model, "mock-model");
    let record = &samples[0].value;
    assert_eq!(
        record["toolsets_used"],
        serde_json::json!(["terminal", "file"])
    );
    assert_eq!(record["metadata"]["batch_num"], samples[0].index / 2);
    assert_eq!(record["tool_stats"]["terminal"]["success"], 1);
    let cp: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join(CHECKPOINT)).unwrap()).unwrap();
    assert_eq!(cp["completed_prompts"], serde_json::json!([0, 2, 3]));
    // The session's warning is reported once, not per prompt.
    let warnings = progress
        .iter()
        .filter(|p| matches!(p, Progress::Warning(w) if w == "memory is off"))
        .count();
    assert_eq!(warnings, 1);
    assert!(progress.contains(&Progress::Plan {
        in_scope: 4,
        already_done: 0,
        same_text: 0,
        to_run: 4
    }));
}

#[test]
fn a_second_run_only_retries_errors_and_never_duplicates() {
    let (_dir, config) = setup(&["a", "b fail", "c", "d"]);
    run_now(&config, &Fake::default()).0.unwrap();
    let run_dir = config.output_dir.join("r");
    // A crash left a half-written line.
    let mut text = std::fs::read_to_string(run_dir.join(SAMPLES)).unwrap();
    text.push_str("{\"prompt_index\": 3, \"conversa");
    std::fs::write(run_dir.join(SAMPLES), text).unwrap();
    let fake = Fake::default();
    let (result, progress) = run_now(&config, &fake);
    let outcome = result.unwrap();
    assert_eq!(*fake.seen.lock().unwrap(), [1]);
    assert_eq!(outcome.ran, 1);
    assert!(
        progress
            .iter()
            .any(|p| matches!(p, Progress::Warning(w) if w.contains("half-written")))
    );
    let samples = records(&run_dir.join(SAMPLES));
    let mut indices: Vec<usize> = samples.iter().map(|r| r.index).collect();
    indices.sort_unstable();
    assert_eq!(indices, [0, 2, 3]);
    assert_eq!(outcome.statistics.errors, 1);
}

#[test]
fn shards_run_their_share_and_resume_skips_same_text() {
    let (_dir, mut config) = setup(&["a", "b", "c", "a", "e"]);
    config.shard = Some(Shard { index: 1, count: 2 });
    let fake = Fake::default();
    let outcome = run_now(&config, &fake).0.unwrap();
    let mut seen = fake.seen.lock().unwrap().clone();
    seen.sort_unstable();
    assert_eq!(seen, [1, 3]);
    assert!(outcome.run_dir.ends_with("r/shards/1-of-2"));
    assert_eq!(outcome.statistics.shard.as_deref(), Some("1/2"));
    assert!(!outcome.run_dir.join(TRAJECTORIES).exists());
    // --resume skips by text only what its own directory holds.
    config.shard = Some(Shard { index: 0, count: 2 });
    config.resume = true;
    let fake = Fake::default();
    let (result, progress) = run_now(&config, &fake);
    result.unwrap();
    assert_eq!(fake.seen.lock().unwrap().len(), 3);
    assert!(progress.contains(&Progress::Plan {
        in_scope: 3,
        already_done: 0,
        same_text: 0,
        to_run: 3
    }));
    // Unsharded with --resume: once prompt 0 ("a") is done, prompt 3 ("a" too) is skipped.
    config.shard = None;
    let shard0 = records(&config.output_dir.join("r/shards/0-of-2").join(SAMPLES));
    let first = shard0.iter().find(|r| r.index == 0).unwrap();
    std::fs::write(
        config.output_dir.join("r").join(SAMPLES),
        format!("{}\n", first.line),
    )
    .unwrap();
    let fake = Fake::default();
    let (_, progress) = run_now(&config, &fake);
    let mut seen = fake.seen.lock().unwrap().clone();
    seen.sort_unstable();
    assert_eq!(seen, [1, 2, 4]);
    assert!(progress.contains(&Progress::Plan {
        in_scope: 5,
        already_done: 1,
        same_text: 1,
        to_run: 3
    }));
}

#[test]
fn a_fatal_error_stops_the_run_without_a_record() {
    let (_dir, mut config) = setup(&["fatal one", "b"]);
    config.num_workers = 1;
    let err = run_now(&config, &Fake::default()).0.unwrap_err();
    assert_eq!(err.to_string(), "no provider configured");
    let failed = config.output_dir.join("r").join(FAILED);
    assert!(records(&failed).is_empty());
}

#[test]
fn another_dataset_in_the_same_directory_is_refused() {
    let (_dir, mut config) = setup(&["a", "b"]);
    run_now(&config, &Fake::default()).0.unwrap();
    let other = config.dataset.with_file_name("other.jsonl");
    std::fs::write(&other, "{\"prompt\": \"x\"}\n").unwrap();
    config.dataset = other;
    let err = run_now(&config, &Fake::default()).0.unwrap_err();
    assert!(err.to_string().contains("different dataset"), "{err}");
}

#[test]
fn bad_settings_are_refused_with_advice() {
    let (_dir, mut config) = setup(&["a"]);
    config.distribution = "nope".into();
    let err = config.validate().unwrap_err().to_string();
    assert!(
        err.starts_with("Unknown distribution: nope. Available: default, image_gen"),
        "{err}"
    );
    config.distribution = "default".into();
    config.batch_size = 0;
    assert!(
        config
            .validate()
            .unwrap_err()
            .to_string()
            .contains("--batch-size")
    );
    config.batch_size = 1;
    config.num_workers = 0;
    assert!(
        config
            .validate()
            .unwrap_err()
            .to_string()
            .contains("--num-workers")
    );
}

#[test]
fn a_directory_in_use_is_refused() {
    let (_dir, config) = setup(&["a"]);
    let run_dir = config.output_dir.join("r");
    std::fs::create_dir_all(&run_dir).unwrap();
    let _held = DirLock::acquire(&run_dir).unwrap();
    let err = run_now(&config, &Fake::default()).0.unwrap_err();
    assert!(err.to_string().contains("another `hermes batch`"), "{err}");
}

#[test]
fn samples_without_reasoning_are_discarded_once_unless_kept() {
    let (_dir, mut config) = setup(&["think 0", "blank 1", "think 2"]);
    let fake = Fake::default();
    let (result, seen) = run_now(&config, &fake);
    let outcome = result.unwrap();
    assert!(seen.iter().any(|p| matches!(
        p,
        Progress::Finished {
            index: 1,
            outcome: Outcome::Discarded,
            ..
        }
    )));
    let dir = &outcome.run_dir;
    let samples = records(&dir.join(SAMPLES));
    let mut indices: Vec<usize> = samples.iter().map(|r| r.index).collect();
    indices.sort_unstable();
    assert_eq!(indices, [0, 2], "finished in any order");
    let failed = records(&dir.join(FAILED));
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].kind, Kind::Discarded);
    assert_eq!(outcome.statistics.discarded_no_reasoning, 1);
    assert_eq!(outcome.statistics.pending, 0);
    let cp: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(CHECKPOINT)).unwrap()).unwrap();
    assert_eq!(cp["batch_stats"]["0"]["discarded_no_reasoning"], 1);
    assert_eq!(cp["completed_prompts"], serde_json::json!([0, 1, 2]));
    let trajectories = std::fs::read_to_string(dir.join(TRAJECTORIES)).unwrap();
    assert_eq!(trajectories.lines().count(), 2);
    // Discarded means done: the next run does not ask again.
    let again = Fake::default();
    let _ = run_now(&config, &again);
    assert!(again.seen.lock().unwrap().is_empty());
    // With --keep-no-reasoning (in a fresh directory) it is kept.
    config.run_name = "kept".into();
    config.keep_no_reasoning = true;
    let (result, _) = run_now(&config, &Fake::default());
    let kept = records(&result.unwrap().run_dir.join(SAMPLES));
    assert_eq!(kept.len(), 3);
}
