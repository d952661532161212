//! Upkeep of the checkpoint store through the binary: the sweep a session
//! runs as it starts (at most once a day, `checkpoints.auto_prune`,
//! `retention_days`), the `max_total_size_mb` cap after each checkpoint and
//! in `hermes checkpoints prune`, and the older per-project layout moved
//! aside and removed with `hermes checkpoints clear-legacy`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use hermes_mock::Reply;
use serde_json::{Value, json};
use support::{Sandbox, stderr, stdout};

const DAY: f64 = 86_400.0;

fn call(id: usize, name: &str, args: Value) -> Reply {
    Reply::tool_call(&format!("c{id}"), name, &args.to_string())
}

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

fn base(sb: &Sandbox) -> PathBuf {
    sb.home.path().join("checkpoints")
}

/// A chat in `dir` whose model writes one file there, with checkpoints on.
fn write_in(sb: &Sandbox, dir: &Path) {
    std::fs::write(dir.join("Cargo.toml"), "[package]\n").unwrap();
    sb.mock.push(call(
        0,
        "write_file",
        json!({"path": "notes.txt", "content": "changed\n"}),
    ));
    sb.mock.push(Reply::text("done"));
    let out = sb
        .command()
        .current_dir(dir)
        .args([
            "chat",
            "-q",
            "change the notes",
            "-Q",
            "--checkpoints",
            "--yolo",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

/// A chat that takes no checkpoint: only the startup sweep touches the store.
fn plain_chat(sb: &Sandbox) {
    sb.mock.push(Reply::text("hello"));
    let out = sb.chat("hi", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
}

fn status(sb: &Sandbox) -> String {
    stdout(
        &sb.command()
            .args(["checkpoints", "status"])
            .output()
            .unwrap(),
    )
}

/// The COMMITS column of `hermes checkpoints status`, one per project.
fn commits(status: &str) -> Vec<usize> {
    status
        .lines()
        .filter(|l| l.ends_with(" live") || l.ends_with(" orphan"))
        .map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap())
        .collect()
}

/// Sets when `dir`'s project was last checkpointed.
fn touched(sb: &Sandbox, dir: &Path, when: f64) {
    let dir = dir.canonicalize().unwrap().display().to_string();
    for entry in std::fs::read_dir(base(sb).join("store/projects")).unwrap() {
        let path = entry.unwrap().path();
        let mut record: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        if record["workdir"] == dir.as_str() {
            record["last_touch"] = json!(when);
            std::fs::write(&path, record.to_string()).unwrap();
            return;
        }
    }
    panic!("no project record for {dir}");
}

fn marker(sb: &Sandbox) -> Option<f64> {
    std::fs::read_to_string(base(sb).join(".last_prune"))
        .ok()
        .map(|t| t.trim().parse().unwrap())
}

#[test]
fn sessions_sweep_stale_and_orphan_projects_at_most_once_a_day() {
    let sb = Sandbox::start();
    let other = tempfile::tempdir().unwrap();
    write_in(&sb, sb.work.path());
    // No store yet when the first session started: nothing swept, no marker.
    assert_eq!(marker(&sb), None);
    write_in(&sb, other.path());
    let swept = marker(&sb).expect("the second session swept the store as it started");
    assert!((now() - swept).abs() < 120.0);
    assert_eq!(commits(&status(&sb)), [1, 1]);

    // A week and a day later the first project is stale; the other is gone.
    touched(&sb, sb.work.path(), now() - 8.0 * DAY);
    drop(other);
    plain_chat(&sb);
    let text = status(&sb);
    assert!(
        text.contains("Projects:        2"),
        "swept once a day: {text}"
    );
    assert!(text.contains(" orphan"), "{text}");

    // A day after the last sweep the next session sweeps both.
    std::fs::write(
        base(&sb).join(".last_prune"),
        (now() - DAY - 60.0).to_string(),
    )
    .unwrap();
    plain_chat(&sb);
    let text = status(&sb);
    assert!(text.contains("Projects:        0"), "{text}");
    assert!(now() - marker(&sb).unwrap() < 120.0, "the marker moved on");

    // checkpoints.auto_prune: false leaves the store alone.
    write_in(&sb, sb.work.path());
    touched(&sb, sb.work.path(), now() - 30.0 * DAY);
    std::fs::write(base(&sb).join(".last_prune"), "0").unwrap();
    sb.add_config("checkpoints:\n  auto_prune: false\n");
    plain_chat(&sb);
    assert!(status(&sb).contains("Projects:        1"));
    assert_eq!(marker(&sb), Some(0.0));

    // `hermes checkpoints prune` applies retention whenever it is asked.
    let pruned = stdout(
        &sb.command()
            .args(["checkpoints", "prune", "--retention-days", "40"])
            .output()
            .unwrap(),
    );
    assert!(pruned.contains("Deleted stale:   0"), "{pruned}");
    let pruned = stdout(
        &sb.command()
            .args(["checkpoints", "prune"])
            .output()
            .unwrap(),
    );
    assert!(pruned.contains("retention_days:    7"), "{pruned}");
    assert!(pruned.contains("Deleted stale:   1"), "{pruned}");
    assert!(status(&sb).contains("Projects:        0"));
}

/// A chat whose model overwrites a 400 kB file of random bytes five times
/// (each a destructive command, each checkpointed first: the tree before,
/// then four versions of the file, 1.6 MB that does not compress).
fn five_big_rewrites(sb: &Sandbox) -> Output {
    std::fs::write(sb.work_path("Cargo.toml"), "[package]\n").unwrap();
    for i in 0..5 {
        sb.mock.push(call(
            i,
            "terminal",
            json!({"command": "head -c 400000 /dev/urandom > blob.bin"}),
        ));
    }
    sb.mock.push(Reply::text("done"));
    sb.chat("rewrite the blob five times", &["--checkpoints", "--yolo"])
}

fn store_mb(sb: &Sandbox) -> f64 {
    let line = status(sb)
        .lines()
        .find(|l| l.starts_with("  store/"))
        .unwrap()
        .to_owned();
    let mut words = line.split_whitespace().skip(1);
    let (value, unit) = (words.next().unwrap(), words.next().unwrap());
    let value: f64 = value.parse().unwrap();
    match unit {
        "B" => value / 1_048_576.0,
        "KB" => value / 1024.0,
        "MB" => value,
        other => panic!("unexpected unit {other}"),
    }
}

#[test]
fn the_size_cap_evicts_the_oldest_checkpoints_after_each_one_and_on_prune() {
    let sb = Sandbox::start();
    let out = five_big_rewrites(&sb);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(commits(&status(&sb)), [5]);
    assert!(store_mb(&sb) > 1.4, "{}", status(&sb));
    let pruned = stdout(
        &sb.command()
            .args(["checkpoints", "prune", "--max-size-mb", "1"])
            .output()
            .unwrap(),
    );
    // The first checkpoint held no blob; dropping it and the next two
    // brings 1.6 MB under 1 MB.
    assert!(pruned.contains("max_total_size_mb: 1"), "{pruned}");
    assert!(pruned.contains("Evicted (size):  3"), "{pruned}");
    assert_eq!(commits(&status(&sb)), [2]);
    assert!(store_mb(&sb) <= 1.0, "{}", status(&sb));

    // With the cap in config.yaml, each checkpoint keeps the store under it.
    let capped = Sandbox::start();
    capped.add_config("checkpoints:\n  max_total_size_mb: 1\n");
    let out = five_big_rewrites(&capped);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(commits(&status(&capped)), [2]);
    assert!(store_mb(&capped) <= 1.0, "{}", status(&capped));
}

#[test]
fn the_older_layout_is_moved_aside_and_clear_legacy_removes_it() {
    let sb = Sandbox::start();
    // The reference's layout before its shared store: one repository per
    // project straight under the checkpoint base.
    let old = base(&sb).join("0123456789abcdef");
    std::fs::create_dir_all(old.join("objects")).unwrap();
    std::fs::write(old.join("HEAD"), "ref: refs/heads/master\n").unwrap();
    std::fs::write(old.join("objects/pack"), vec![1u8; 8192]).unwrap();
    std::fs::write(
        old.join("HERMES_WORKDIR"),
        sb.work.path().display().to_string(),
    )
    .unwrap();
    write_in(&sb, sb.work.path());
    assert!(!old.exists(), "moved aside when the shared store was made");
    let text = status(&sb);
    assert!(text.contains("Legacy archives (1):"), "{text}");
    assert!(text.contains("  legacy-"), "{text}");
    assert!(
        text.contains("Clear with: hermes checkpoints clear-legacy"),
        "{text}"
    );
    assert_eq!(commits(&text), [1]);

    let mut asked = sb
        .command()
        .args(["checkpoints", "clear-legacy"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    asked.stdin.take().unwrap().write_all(b"n\n").unwrap();
    let asked = asked.wait_with_output().unwrap();
    assert!(!asked.status.success());
    let text = stdout(&asked);
    assert!(text.contains("Found 1 legacy archive(s)"), "{text}");
    assert!(text.contains("Aborted."), "{text}");
    assert!(status(&sb).contains("Legacy archives (1):"));

    let cleared = stdout(
        &sb.command()
            .args(["checkpoints", "clear-legacy", "-f"])
            .output()
            .unwrap(),
    );
    assert!(
        cleared.contains("Deleted 1 archive(s), reclaimed"),
        "{cleared}"
    );
    let text = status(&sb);
    assert!(!text.contains("Legacy archives"), "{text}");
    assert_eq!(commits(&text), [1], "the store is left alone");
    let again = stdout(
        &sb.command()
            .args(["checkpoints", "clear-legacy"])
            .output()
            .unwrap(),
    );
    assert!(again.contains("No legacy archives to clear."), "{again}");
}
