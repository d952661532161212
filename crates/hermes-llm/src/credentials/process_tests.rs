//! Two OS processes hammering one `auth.json` lose no updates.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;

use super::{CredentialPool, Status, Strategy, SystemClock};

const PATH_VAR: &str = "HERMES_CRED_POOL_CHILD_PATH";
const ROLE_VAR: &str = "HERMES_CRED_POOL_CHILD_ROLE";
const ROUNDS: usize = 200;
const ADDS_PER_CHILD: usize = 10;

/// Worker body; only does anything when spawned by the parent test.
#[test]
#[ignore = "spawned by two_processes_lose_no_updates"]
fn child_worker() {
    let (Some(path), Some(role)) = (std::env::var_os(PATH_VAR), std::env::var_os(ROLE_VAR)) else {
        return;
    };
    let role: usize = role.to_string_lossy().parse().unwrap();
    let path = PathBuf::from(path);
    let mut pool = CredentialPool::load(
        &path,
        "openrouter",
        Strategy::RoundRobin,
        Arc::new(SystemClock),
    )
    .unwrap();
    let shared = pool
        .entries()
        .iter()
        .find(|c| c.label == "shared")
        .unwrap()
        .id
        .clone();
    let own_label = format!("own{role}");
    let own = pool
        .entries()
        .iter()
        .find(|c| c.label == own_label)
        .unwrap()
        .id
        .clone();
    for i in 0..ROUNDS {
        assert!(pool.record_use(&shared).unwrap());
        let status = if i % 2 == 0 { 429 } else { 401 };
        assert!(pool.mark_exhausted(&own, status, None).unwrap());
        if i % (ROUNDS / ADDS_PER_CHILD) == 0 {
            pool.add(
                &format!("sk-child{role}-added-{i:04}"),
                Some(&format!("c{role}-{i}")),
            )
            .unwrap();
        }
        // Round-robin selection rewrites every priority; it must not clobber
        // the other process's counters or statuses either.
        pool.select().unwrap();
    }
}

#[test]
fn two_processes_lose_no_updates() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth.json");
    let mut setup = CredentialPool::load(
        &path,
        "openrouter",
        Strategy::FillFirst,
        Arc::new(SystemClock),
    )
    .unwrap();
    for label in ["shared", "own0", "own1"] {
        setup
            .add(&format!("sk-{label}-xxxxxxxxxxxx"), Some(label))
            .unwrap();
    }
    let exe = std::env::current_exe().unwrap();
    // Spawn both before waiting on either, so they really overlap.
    let handles: Vec<_> = (0..2)
        .map(|role| {
            Command::new(&exe)
                .args([
                    "--exact",
                    "credentials::process_tests::child_worker",
                    "--ignored",
                    "--nocapture",
                ])
                .env(PATH_VAR, &path)
                .env(ROLE_VAR, role.to_string())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in handles {
        let out = child.wait_with_output().unwrap();
        let log = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{log}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(log.contains("1 passed"), "the child really ran: {log}");
    }
    let pool = CredentialPool::load(
        &path,
        "openrouter",
        Strategy::FillFirst,
        Arc::new(SystemClock),
    )
    .unwrap();
    let entries = pool.entries();
    let shared = entries.iter().find(|c| c.label == "shared").unwrap();
    assert_eq!(shared.request_count, (2 * ROUNDS) as u64);
    for own in ["own0", "own1"] {
        let e = entries.iter().find(|c| c.label == own).unwrap();
        assert_eq!(e.last_status, Some(Status::Exhausted), "{own}");
        assert_eq!(e.last_error_code, Some(401), "{own}: last mark was a 401");
    }
    assert_eq!(entries.len(), 3 + 2 * ADDS_PER_CHILD);
    let mut ids: Vec<&str> = entries.iter().map(|c| c.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), entries.len(), "ids stay unique");
    let mut prios: Vec<i64> = entries.iter().map(|c| c.priority).collect();
    prios.sort_unstable();
    prios.dedup();
    assert_eq!(prios.len(), entries.len(), "priorities stay distinct");
}
