//! `hermes batch` through the binary against the mock: every prompt of a
//! dataset becomes one ShareGPT trajectory (a tool call, its result and a
//! reasoned answer), exactly once even when the run is killed half-way and
//! started again; shards merge into the same set; the ephemeral system
//! prompt reaches the model but never a trajectory; bad input is refused.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hermes_mock::{RecordedRequest, Reply};
use serde_json::{Value, json};
use support::{Sandbox, stderr, stdout};

const EPHEMERAL: &str = "EPHEMERAL-ZEBRA-42: answer tersely";

/// The dataset: prompt k asks to echo k (some text is not ASCII).
fn dataset(sb: &Sandbox, n: usize) -> String {
    let text: String = (0..n)
        .map(|k| {
            format!(
                "{}\n",
                json!({"prompt": format!("Tâche #{k}: echo {k} — s'il vous plaît")})
            )
        })
        .collect();
    std::fs::write(sb.work_path("prompts.jsonl"), text).unwrap();
    "prompts.jsonl".to_owned()
}

/// The k of `#k` in the request's user message.
fn prompt_number(req: &RecordedRequest) -> Option<usize> {
    let messages = req.body["messages"].as_array()?;
    let user = messages.iter().find(|m| m["role"] == "user")?;
    let text = user["content"].as_str()?;
    let rest = &text[text.find('#')? + 1..];
    rest[..rest.find(':')?].parse().ok()
}

/// First call of prompt k: run `echo k` in the terminal; second call: a
/// reasoned answer. Every reply waits `delay`.
fn answer(req: &RecordedRequest, delay: Duration) -> Option<Reply> {
    let k = prompt_number(req)?;
    let results = req.body["messages"]
        .as_array()?
        .iter()
        .filter(|m| m["role"] == "tool")
        .count();
    let reply = if results == 0 {
        Reply::tool_call(
            &format!("call_{k}"),
            "terminal",
            &json!({"command": format!("echo out{k}")}).to_string(),
        )
    } else {
        Reply::text(format!("The answer is {k}."))
            .with_reasoning(format!("The terminal said out{k}."))
    };
    Some(reply.with_delay(delay))
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Checks a trajectory line is valid ShareGPT in the reference's shape;
/// returns (prompt_index, the human prompt).
fn check_trajectory(line: &str) -> (u64, String) {
    assert!(line.starts_with("{\"prompt_index\": "), "{line}");
    assert!(
        line.contains(", \"conversations\": [{\"from\": \"system\", \"value\": "),
        "{line}"
    );
    assert!(!line.contains("EPHEMERAL-ZEBRA"), "{line}");
    let v: Value = serde_json::from_str(line).unwrap();
    let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    let mut expected = [
        "prompt_index",
        "conversations",
        "metadata",
        "completed",
        "partial",
        "api_calls",
        "toolsets_used",
        "tool_stats",
        "tool_error_counts",
    ];
    expected.sort_unstable();
    assert_eq!(keys, expected);
    // The reference's key order, after the conversations.
    let at: Vec<usize> = [
        ", \"metadata\": {\"batch_num\": ",
        ", \"completed\": ",
        ", \"partial\": ",
        ", \"api_calls\": ",
        ", \"toolsets_used\": [",
        ", \"tool_stats\": {",
        ", \"tool_error_counts\": {",
    ]
    .iter()
    .map(|k| {
        line.rfind(k)
            .unwrap_or_else(|| panic!("{k} missing in {line}"))
    })
    .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{line}");
    let turns = v["conversations"].as_array().unwrap();
    let froms: Vec<&str> = turns.iter().map(|t| t["from"].as_str().unwrap()).collect();
    assert!(
        froms
            .iter()
            .all(|f| ["system", "human", "gpt", "tool"].contains(f)),
        "{froms:?}"
    );
    assert_eq!(froms, ["system", "human", "gpt", "tool", "gpt"], "{line}");
    let system = turns[0]["value"].as_str().unwrap();
    assert!(system.starts_with("You are a function calling AI model."));
    assert!(system.contains("<tools>\n[{\"name\": "), "{system}");
    assert!(system.contains("\"name\": \"terminal\""));
    let k = v["prompt_index"].as_u64().unwrap();
    let call = turns[2]["value"].as_str().unwrap();
    assert_eq!(
        call,
        format!(
            "<think>\n</think>\n<tool_call>\n{{\"name\": \"terminal\", \"arguments\": {{\"command\": \"echo out{k}\"}}}}\n</tool_call>"
        )
    );
    let result = turns[3]["value"].as_str().unwrap();
    assert!(result.starts_with(&format!("<tool_response>\n{{\"tool_call_id\": \"call_{k}\", \"name\": \"terminal\", \"content\": {{")), "{result}");
    assert!(result.contains(&format!("out{k}")), "{result}");
    assert_eq!(
        turns[4]["value"],
        format!("<think>\nThe terminal said out{k}.\n</think>\nThe answer is {k}.")
    );
    assert_eq!(v["completed"], true);
    assert_eq!(v["api_calls"], 2);
    assert_eq!(
        v["tool_stats"]["terminal"],
        json!({"count": 1, "success": 1, "failure": 0})
    );
    assert_eq!(v["metadata"]["model"], "mock-model");
    let human = turns[1]["value"].as_str().unwrap().to_owned();
    assert_eq!(human, format!("Tâche #{k}: echo {k} — s'il vous plaît"));
    (k, human)
}

/// The (prompt_index, prompt) pairs of a file, checking every line.
fn pairs(path: &Path) -> Vec<(u64, String)> {
    lines(path).iter().map(|l| check_trajectory(l)).collect()
}

fn statistics(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("statistics.json")).unwrap()).unwrap()
}

fn batch(sb: &Sandbox, args: &[&str]) -> std::process::Output {
    sb.command().arg("batch").args(args).output().unwrap()
}

#[test]
fn a_run_killed_half_way_and_started_again_has_every_prompt_once() {
    let sb = Sandbox::start();
    let data = dataset(&sb, 50);
    sb.mock
        .respond_with(|req| answer(req, Duration::from_millis(60)));
    let args = [
        "batch",
        data.as_str(),
        "--run-name",
        "killed",
        "--num-workers",
        "4",
        "--distribution",
        "terminal_only",
        "--seed",
        "3",
    ];
    let samples = sb.work_path("data/killed/trajectory_samples.jsonl");
    let mut child = sb
        .command()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while lines(&samples).len() < 20 {
        assert!(
            Instant::now() < deadline,
            "no progress: {:?}",
            child.try_wait()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let kept = lines(&samples).len();
    assert!((20..50).contains(&kept), "killed too late: {kept}");
    // As if the kill had landed in the middle of a write.
    let mut text = std::fs::read_to_string(&samples).unwrap();
    text.push_str("{\"prompt_index\": 49, \"conversations\": [{\"fr");
    std::fs::write(&samples, text).unwrap();
    let before = sb.mock.chat_requests().len();

    let out = sb.command().args(args).output().unwrap();
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert!(stderr(&out).contains("half-written"), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("BATCH COMPLETE: killed"),
        "{}",
        stdout(&out)
    );
    // Only the prompts without a trajectory ran again.
    let again = sb.mock.chat_requests().len() - before;
    assert!(
        again <= 2 * (50 - kept),
        "{again} requests for {} prompts",
        50 - kept
    );

    let run = sb.work_path("data/killed");
    let found = pairs(&samples);
    assert_eq!(found.len(), 50);
    let indices: BTreeSet<u64> = found.iter().map(|(k, _)| *k).collect();
    assert_eq!(indices, (0..50).collect());
    assert!(lines(&run.join("failed_trajectories.jsonl")).is_empty());
    let sorted: Vec<u64> = pairs(&run.join("trajectories.jsonl"))
        .iter()
        .map(|(k, _)| *k)
        .collect();
    assert_eq!(sorted, (0..50).collect::<Vec<_>>());
    let stats = statistics(&run);
    assert_eq!(
        (
            stats["total"].clone(),
            stats["completed"].clone(),
            stats["failed"].clone()
        ),
        (json!(50), json!(50), json!(0))
    );
    assert_eq!(stats["completion_rate"], 100.0);
    assert_eq!(stats["tool_statistics"]["terminal"]["count"], 50);
    assert_eq!(stats["total_prompts"], 50);
    assert!(stats["tokens"]["total"].as_u64().is_some());
    let checkpoint: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("checkpoint.json")).unwrap())
            .unwrap();
    assert_eq!(
        checkpoint["completed_prompts"],
        json!((0..50).collect::<Vec<_>>())
    );
    assert_eq!(checkpoint["run_name"], "killed");

    // A third run has nothing left to do.
    let before = sb.mock.chat_requests().len();
    let out = sb.command().args(args).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(sb.mock.chat_requests().len(), before);
    assert!(stderr(&out).contains("50 already done"), "{}", stderr(&out));
    assert_eq!(lines(&samples).len(), 50);
}

#[test]
fn four_shards_merge_into_the_same_set_as_one_run() {
    let sb = Sandbox::start();
    let data = dataset(&sb, 50);
    sb.mock.respond_with(|req| answer(req, Duration::ZERO));
    let common = [
        data.as_str(),
        "--run-name",
        "r",
        "--distribution",
        "terminal_only",
        "--num-workers",
        "6",
    ];
    let whole = batch(&sb, &[&common[..], &["--output-dir", "one"]].concat());
    assert!(whole.status.success(), "{}", stderr(&whole));
    for i in 0..4 {
        let shard = format!("{i}/4");
        let out = batch(
            &sb,
            &[&common[..], &["--output-dir", "many", "--shard", &shard]].concat(),
        );
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            stdout(&out).contains("hermes batch merge r"),
            "{}",
            stdout(&out)
        );
        let dir = sb.work_path(&format!("many/r/shards/{i}-of-4"));
        let mine = pairs(&dir.join("trajectory_samples.jsonl"));
        assert!(mine.iter().all(|(k, _)| k % 4 == i), "{mine:?}");
        assert_eq!(statistics(&dir)["total"], if i < 2 { 13 } else { 12 });
    }
    let merged = batch(&sb, &["merge", "r", "--output-dir", "many"]);
    assert!(merged.status.success(), "{}", stderr(&merged));
    assert!(
        stdout(&merged).contains("50 trajectories"),
        "{}",
        stdout(&merged)
    );

    let one: BTreeSet<(u64, String)> = pairs(&sb.work_path("one/r/trajectories.jsonl"))
        .into_iter()
        .collect();
    let many_list = pairs(&sb.work_path("many/r/trajectories.jsonl"));
    let indices: Vec<u64> = many_list.iter().map(|(k, _)| *k).collect();
    assert_eq!(
        indices,
        (0..50).collect::<Vec<_>>(),
        "sorted, no duplicates"
    );
    let many: BTreeSet<(u64, String)> = many_list.into_iter().collect();
    assert_eq!(one, many);
    assert_eq!(
        lines(&sb.work_path("many/r/trajectory_samples.jsonl")).len(),
        50
    );
    let stats = statistics(&sb.work_path("many/r"));
    assert_eq!(stats["total"], 50);
    assert_eq!(stats["completed"], 50);
    assert_eq!(stats["api_calls"], 100);
    assert_eq!(stats["tool_calls_total"], 50);
    assert_eq!(stats["merged_from"].as_array().unwrap().len(), 4);
    let shard_tokens: u64 = (0..4)
        .map(|i| {
            statistics(&sb.work_path(&format!("many/r/shards/{i}-of-4")))["tokens"]["total"]
                .as_u64()
                .unwrap()
        })
        .sum();
    assert_eq!(stats["tokens"]["total"], shard_tokens);
}

#[test]
fn the_ephemeral_prompt_reaches_the_model_but_never_a_trajectory() {
    let sb = Sandbox::start();
    let data = dataset(&sb, 3);
    sb.mock.respond_with(|req| answer(req, Duration::ZERO));
    // The reference's spellings of the flags.
    let out = batch(
        &sb,
        &[
            "--dataset_file",
            &data,
            "--run_name",
            "eph",
            "--batch_size",
            "2",
            "--num_workers",
            "2",
            "--max_turns",
            "5",
            "--distribution=terminal_only",
            "--ephemeral_system_prompt",
            EPHEMERAL,
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = sb.requests();
    assert_eq!(requests.len(), 6);
    for body in &requests {
        let system = body["messages"][0]["content"].as_str().unwrap();
        assert_eq!(body["messages"][0]["role"], "system");
        assert!(system.contains(EPHEMERAL), "{system}");
    }
    let run = sb.work_path("data/eph");
    for entry in std::fs::read_dir(&run).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap_or_default();
        assert!(!text.contains("EPHEMERAL-ZEBRA"));
    }
    let found = pairs(&run.join("trajectory_samples.jsonl"));
    assert_eq!(found.len(), 3);
    let batches: BTreeMap<u64, u64> = lines(&run.join("trajectories.jsonl"))
        .iter()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|v| {
            (
                v["prompt_index"].as_u64().unwrap(),
                v["metadata"]["batch_num"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(batches, BTreeMap::from([(0, 0), (1, 0), (2, 1)]));
    // Batch sessions stay out of the history, as the reference's do.
    let listed = sb.command().args(["sessions", "list"]).output().unwrap();
    assert!(!stdout(&listed).contains("Tâche"), "{}", stdout(&listed));
}

#[test]
fn a_failed_prompt_is_recorded_and_retried_by_the_next_run() {
    let sb = Sandbox::start();
    sb.no_retries();
    let data = dataset(&sb, 3);
    let broken = Arc::new(AtomicBool::new(true));
    let flag = broken.clone();
    sb.mock.respond_with(move |req| {
        if prompt_number(req) == Some(1) && flag.load(Ordering::SeqCst) {
            return Some(Reply::error(
                400,
                r#"{"error": {"message": "bad request"}}"#,
            ));
        }
        answer(req, Duration::ZERO)
    });
    let args = [
        data.as_str(),
        "--run-name",
        "f",
        "--distribution",
        "terminal_only",
    ];
    let out = batch(&sb, &args);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("prompt 1 failed"), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("run the same command again"),
        "{}",
        stdout(&out)
    );
    let run = sb.work_path("data/f");
    let failed = lines(&run.join("failed_trajectories.jsonl"));
    assert_eq!(failed.len(), 1);
    let record: Value = serde_json::from_str(&failed[0]).unwrap();
    assert!(
        failed[0].starts_with("{\"prompt_index\": 1, \"prompt\": \"Tâche #1"),
        "{}",
        failed[0]
    );
    assert_eq!(record["failed"], true);
    assert!(
        record["error"].as_str().unwrap().contains("400"),
        "{record}"
    );
    assert_eq!(statistics(&run)["errors"], 1);

    broken.store(false, Ordering::SeqCst);
    let out = batch(&sb, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let indices: BTreeSet<u64> = pairs(&run.join("trajectory_samples.jsonl"))
        .iter()
        .map(|(k, _)| *k)
        .collect();
    assert_eq!(indices, BTreeSet::from([0, 1, 2]));
    let stats = statistics(&run);
    assert_eq!(
        (stats["completed"].clone(), stats["failed"].clone()),
        (json!(3), json!(0))
    );
    assert_eq!(lines(&run.join("trajectories.jsonl")).len(), 3);
}

#[test]
fn bad_input_is_refused_with_advice() {
    let sb = Sandbox::start();
    let owned = dataset(&sb, 2);
    let data = owned.as_str();
    std::fs::write(sb.work_path("empty.jsonl"), "not json\n{\"x\": 1}\n").unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["missing.jsonl", "--run-name", "r"],
            "Dataset file not found: missing.jsonl",
        ),
        (
            vec!["empty.jsonl", "--run-name", "r"],
            "No valid entries found",
        ),
        (
            vec![data, "--run-name", "r", "--distribution", "nope"],
            "Unknown distribution: nope. Available: default",
        ),
        (
            vec![data, "--run-name", "r", "--shard", "4/4"],
            "invalid --shard '4/4'",
        ),
        (
            vec![data, "--run-name", "r", "--shard", "two"],
            "expected I/N",
        ),
        (vec![data], "no --run-name given"),
        (vec!["--run-name", "r"], "no dataset given"),
        (vec![data, "--run-name", "a/b"], "invalid --run-name"),
        (
            vec![data, "--run-name", "r", "--batch-size", "0"],
            "--batch-size must be at least 1",
        ),
        (vec!["merge", "never-ran"], "no run named 'never-ran'"),
    ];
    for (args, expected) in cases {
        let out = batch(&sb, &args);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(
            stderr(&out).contains(expected),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    assert!(sb.mock.chat_requests().is_empty());
    let list = batch(&sb, &["--list_distributions"]);
    assert!(list.status.success());
    assert!(
        stdout(&list).matches("% chance").count() > 17,
        "{}",
        stdout(&list)
    );
    assert!(
        stdout(&list).contains("mixed_tasks: Mixed distribution"),
        "{}",
        stdout(&list)
    );
}

#[test]
fn samples_without_reasoning_are_discarded_as_the_reference_does_unless_kept() {
    let sb = Sandbox::start();
    let data = dataset(&sb, 3);
    sb.mock
        .respond_with(|_| Some(Reply::text("A plain answer, no thinking.")));
    let out = batch(&sb, &[&data, "--run-name", "plain"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("discarded (no reasoning in any turn"),
        "{}",
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("3 sample(s) discarded"),
        "{}",
        stdout(&out)
    );
    let run = sb.work_path("data/plain");
    assert!(lines(&run.join("trajectory_samples.jsonl")).is_empty());
    assert_eq!(statistics(&run)["discarded_no_reasoning"], 3);
    let asked = sb.mock.chat_requests().len();
    let again = batch(&sb, &[&data, "--run-name", "plain"]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(
        sb.mock.chat_requests().len(),
        asked,
        "discarded prompts are done"
    );
    let kept = batch(&sb, &[&data, "--run-name", "kept", "--keep-no-reasoning"]);
    assert!(kept.status.success(), "{}", stderr(&kept));
    assert_eq!(
        lines(&sb.work_path("data/kept/trajectory_samples.jsonl")).len(),
        3
    );
}
