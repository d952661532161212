use super::*;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, UNIX_EPOCH};

use serde_json::json;

const START: u64 = 1_800_000_000;

/// A clock the test moves by hand.
#[derive(Clone)]
struct TestClock(Arc<AtomicU64>);

impl TestClock {
    fn new() -> Self {
        Self(Arc::new(AtomicU64::new(START)))
    }
    fn advance(&self, d: Duration) {
        self.0.fetch_add(d.as_secs(), Ordering::SeqCst);
    }
    fn at(&self, offset: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(START + offset)
    }
}

impl Clock for TestClock {
    fn now(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(self.0.load(Ordering::SeqCst))
    }
}

/// Replays fixed numbers.
struct Scripted(Vec<u64>, usize);

impl RandomSource for Scripted {
    fn next_u64(&mut self) -> u64 {
        let v = self.0[self.1 % self.0.len()];
        self.1 += 1;
        v
    }
}

/// A pool over `n` keys named `k0..` with labels `l0..`.
fn pool_with(dir: &Path, n: usize, strategy: Strategy, clock: &TestClock) -> CredentialPool {
    let path = dir.join("auth.json");
    let mut store = AuthStore::new(&path, Arc::new(clock.clone()), Box::new(SplitMix64::new(1)));
    for i in 0..n {
        store
            .add(
                "openrouter",
                &format!("sk-test-key-number-{i}"),
                Some(&format!("l{i}")),
            )
            .unwrap();
    }
    CredentialPool::load(&path, "openrouter", strategy, Arc::new(clock.clone())).unwrap()
}

fn labels(picks: &[Option<Credential>]) -> Vec<String> {
    picks
        .iter()
        .map(|c| c.as_ref().map_or("-".into(), |c| c.label.clone()))
        .collect()
}

fn select_n(pool: &mut CredentialPool, n: usize) -> Vec<String> {
    let picks: Vec<_> = (0..n).map(|_| pool.select().unwrap()).collect();
    labels(&picks)
}

#[test]
fn strategy_parsing_falls_back_to_fill_first() {
    assert_eq!(Strategy::resolve(Some("Round_Robin")), Strategy::RoundRobin);
    assert_eq!(Strategy::resolve(Some("least_used")), Strategy::LeastUsed);
    assert_eq!(Strategy::resolve(Some("random")), Strategy::Random);
    assert_eq!(Strategy::resolve(Some("bogus")), Strategy::FillFirst);
    assert_eq!(Strategy::resolve(None), Strategy::FillFirst);
    assert_eq!(Strategy::RoundRobin.as_str(), "round_robin");
}

#[test]
fn fill_first_keeps_picking_the_top_entry() {
    let dir = tempfile::tempdir().unwrap();
    let clock = TestClock::new();
    let mut pool = pool_with(dir.path(), 3, Strategy::FillFirst, &clock);
    assert_eq!(select_n(&mut pool, 3), ["l0", "l0", "l0"]);
    assert_eq!(pool.current().map(|c| c.label.as_str()), Some("l0"));
}

#[test]
fn round_robin_cycles_and_persists_order() {
    let dir = tempfile::tempdir().unwrap();
    let clock = TestClock::new();
    let mut pool = pool_with(dir.path(), 3, Strategy::RoundRobin, &clock);
    assert_eq!(select_n(&mut pool, 4), ["l0", "l1", "l2", "l0"]);
    // The rotated order is on disk: a fresh pool continues from it.
    let mut again = CredentialPool::load(
        dir.path().join("auth.json"),
        "openrouter",
        Strategy::RoundRobin,
        Arc::new(clock.clone()),
    )
    .unwrap();
    assert_eq!(select_n(&mut again, 2), ["l1", "l2"]);
    let prios: Vec<i64> = again.entries().iter().map(|c| c.priority).collect();
    assert_eq!(prios, [0, 1, 2]);
}

#[test]
fn round_robin_skips_exhausted_entries() {
    let dir = tempfile::tempdir().unwrap();
    let clock = TestClock::new();
    let mut pool = pool_with(dir.path(), 3, Strategy::RoundRobin, &clock);
    let l1 = pool.entries()[1].id.clone();
    pool.mark_exhausted(&l1, 429, None).unwrap();
    assert_eq!(select_n(&mut pool, 4), ["l0", "l2", "l0", "l2"]);
}

#[test]
fn random_uses_the_injected_source() {
    let dir = tempfile::tempdir().unwrap();
    let clock = TestClock::new();
    let path = dir.path().join("auth.json");
    drop(pool_with(dir.path(), 3, Strategy::FillFirst, &clock));
    let mut pool = CredentialPool::load_with_random(
        &path,
        "openrouter",
        Strategy::Random,
        Arc::new(clock.clone()),
        Box::new(Scripted(vec![2, 0, 4, 1], 0)),
    )
    .unwrap();
    assert_eq!(select_n(&mut pool, 4), ["l2", "l0", "l1", "l1"]);
    // Random picks only among available entries.
    let l1 = pool.entries()[1].id.clone();
    pool.mark_exhausted(&l1, 401, None).unwrap();
    assert_eq!(select_n(&mut pool, 4), ["l0", "l0", "l0", "l2"]);
}

#[test]
fn least_used_prefers_fewest_uses() {
    let dir = tempfile::tempdir().unwrap();
    let clock = TestClock::new();
    let mut pool = pool_with(dir.path(), 3, Strategy::LeastUsed, &clock);
    let ids: Vec<String> = pool.entries().iter().map(|c| c.id.clone()).collect();
    // Selection alone spreads load (in-memory provisional count).
    assert_eq!(select_n(&mut pool, 3), ["l0", "l1", "l2"]);
    // Persisted use counts decide after a reload.
    for _ in 0..3 {
        pool.record_use(&ids[0]).unwrap();
    }
    pool.record_use(&ids[2]).unwrap();
    pool.reload().unwrap();
    let counts: Vec<u64> = pool.entries().iter().map(|c| c.request_count).collect();
    assert_eq!(counts, [3, 0, 1]);
    assert_eq!(select_n(&mut pool, 3), ["l1", "l1", "l2"]);
}

#[test]
fn exhausted_after_401_returns_after_five_minutes() {
    let dir = tempfile::tempdir().unwrap();
    let clock = TestClock::new();
    let mut pool = pool_with(dir.path(), 1, Strategy::FillFirst, &clock);
    let id = pool.entries()[0].id.clone();
    assert!(pool.mark_exhausted(&id, 401, None).unwrap());
    assert_eq!(pool.entries()[0].exhausted_until(), Some(clock.at(300)));
    assert!(pool.select().unwrap().is_none());
    assert!(!pool.has_available());
    clock.advance(Duration::from_secs(299));
    assert!(pool.select().unwrap().is_none());
    clock.advance(Duration::from_secs(1));
    assert_eq!(pool.select().unwrap().map(|c| c.id), Some(id));
    // The elapsed cooldown was cleared on disk, as the reference does.
    assert_eq!(pool.entries()[0].last_status, Some(Status::Ok));
    assert_eq!(pool.entries()[0].last_error_code, None);
}

#[test]
fn exhausted_after_429_or_402_returns_after_an_hour() {
    for status in [429, 402] {
        let dir = tempfile::tempdir().unwrap();
        let clock = TestClock::new();
        let mut pool = pool_with(dir.path(), 1, Strategy::FillFirst, &clock);
        let id = pool.entries()[0].id.clone();
        pool.mark_exhausted(&id, status, None).unwrap();
        clock.advance(Duration::from_secs(3599));
        assert!(pool.select().unwrap().is_none(), "{status}");
        clock.advance(Duration::from_secs(1));
        assert!(pool.select().unwrap().is_some(), "{status}");
    }
}

#[test]
fn provider_reset_time_overrides_the_ttl() {
    let dir = tempfile::tempdir().unwrap();
    let clock = TestClock::new();
    let mut pool = pool_with(dir.path(), 2, Strategy::FillFirst, &clock);
    let (a, b) = (pool.entries()[0].id.clone(), pool.entries()[1].id.clone());
    // Sooner than the 1 h TTL.
    pool.mark_exhausted(&a, 429, Some(clock.at(30))).unwrap();
    // Later than the 5 min TTL.
    pool.mark_exhausted(&b, 401, Some(clock.at(7200))).unwrap();
    assert!(pool.select().unwrap().is_none());
    clock.advance(Duration::from_secs(30));
    assert_eq!(pool.select().unwrap().map(|c| c.id), Some(a.clone()));
    pool.mark_exhausted(&a, 429, None).unwrap();
    clock.advance(Duration::from_secs(3600));
    // a is back (TTL), b still waits for its reset time.
    assert_eq!(pool.select().unwrap().map(|c| c.id), Some(a));
    clock.advance(Duration::from_secs(3570));
    pool.mark_exhausted(&pool.entries()[0].id.clone(), 429, None)
        .unwrap();
    assert_eq!(pool.select().unwrap().map(|c| c.id), Some(b));
}

#[test]
fn rotation_between_two_keys() {
    let dir = tempfile::tempdir().unwrap();
    let clock = TestClock::new();
    let mut pool = pool_with(dir.path(), 2, Strategy::FillFirst, &clock);
    let first = pool.select().unwrap().unwrap();
    assert_eq!(first.label, "l0");
    let second = pool.rotate(&first.id, 429, None).unwrap().unwrap();
    assert_eq!(second.label, "l1");
    assert_eq!(
        pool.current().map(|c| c.id.clone()),
        Some(second.id.clone())
    );
    assert!(pool.rotate(&second.id, 401, None).unwrap().is_none());
    assert!(pool.current().is_none());
    // After 5 minutes the 401'd key is back; the 429'd one is not.
    clock.advance(Duration::from_secs(300));
    assert_eq!(pool.select().unwrap().map(|c| c.label), Some("l1".into()));
    let disk: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("auth.json")).unwrap()).unwrap();
    let stored = &disk["credential_pool"]["openrouter"];
    assert_eq!(stored[0]["last_status"], "exhausted");
    assert_eq!(stored[0]["last_error_code"], 429);
    assert_eq!(
        stored[0]["last_status_at"].as_f64(),
        Some(START as f64),
        "float epoch seconds, as the reference writes"
    );
}

#[test]
fn dead_entries_are_skipped_and_reset_statuses_clears() {
    let dir = tempfile::tempdir().unwrap();
    let clock = TestClock::new();
    let path = dir.path().join("auth.json");
    let doc = json!({"version": 1, "providers": {}, "credential_pool": {"openrouter": [
        {"id": "dead01", "label": "d", "priority": 0, "access_token": "dead-key-xxxxxxx",
         "last_status": "dead", "last_status_at": 1.0, "last_error_code": 401},
        {"label": "no-id", "priority": 1, "access_token": "live-key-xxxxxxx"},
        {"id": "empty1", "label": "e", "priority": 2, "access_token": ""}
    ]}});
    std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
    let mut pool = CredentialPool::load(
        &path,
        "openrouter",
        Strategy::FillFirst,
        Arc::new(clock.clone()),
    )
    .unwrap();
    // The id-less entry got an id on load.
    assert_eq!(pool.entries()[1].id.len(), 6);
    assert_eq!(select_n(&mut pool, 2), ["no-id", "no-id"]);
    assert_eq!(pool.reset_statuses().unwrap(), 1);
    assert_eq!(select_n(&mut pool, 1), ["d"]);
    assert_eq!(pool.reset_statuses().unwrap(), 0);
}

#[test]
fn pool_add_and_remove_update_the_view() {
    let dir = tempfile::tempdir().unwrap();
    let clock = TestClock::new();
    let mut pool = pool_with(dir.path(), 1, Strategy::FillFirst, &clock);
    let added = pool.add("sk-added-key-9999", Some("added")).unwrap();
    assert_eq!(pool.entries().len(), 2);
    let first = pool.select().unwrap().unwrap();
    assert_eq!(pool.remove(&first.id).unwrap().id, first.id);
    assert!(pool.current().is_none());
    assert_eq!(pool.select().unwrap().map(|c| c.id), Some(added.id));
    assert!(pool.peek().is_some());
}

#[test]
fn mutations_see_other_writers() {
    let dir = tempfile::tempdir().unwrap();
    let clock = TestClock::new();
    let mut a = pool_with(dir.path(), 1, Strategy::FillFirst, &clock);
    let path = dir.path().join("auth.json");
    let mut b = CredentialPool::load(
        &path,
        "openrouter",
        Strategy::FillFirst,
        Arc::new(clock.clone()),
    )
    .unwrap();
    let id = a.entries()[0].id.clone();
    b.add("sk-from-b-xxxxxxxx", None).unwrap();
    a.record_use(&id).unwrap();
    b.record_use(&id).unwrap();
    assert_eq!(a.entries().len(), 2, "a's write merged b's addition");
    assert_eq!(b.entries()[0].request_count, 2);
}

#[test]
fn terminal_reason_marks_dead_and_records_detail() {
    let dir = tempfile::tempdir().unwrap();
    let clock = TestClock::new();
    let mut pool = pool_with(dir.path(), 2, Strategy::FillFirst, &clock);
    let (a, b) = (pool.entries()[0].id.clone(), pool.entries()[1].id.clone());
    let revoked = FailureDetail {
        reason: Some("token_revoked"),
        message: Some("revoked by admin"),
        ..FailureDetail::default()
    };
    pool.mark_failed(&a, 401, &revoked).unwrap();
    let limited = FailureDetail {
        reason: Some("rate_limit"),
        ..FailureDetail::default()
    };
    pool.mark_failed(&b, 429, &limited).unwrap();
    assert_eq!(pool.entries()[0].last_status, Some(Status::Dead));
    assert_eq!(
        pool.entries()[0].last_error_message.as_deref(),
        Some("revoked by admin")
    );
    assert_eq!(
        pool.entries()[1].last_error_reason.as_deref(),
        Some("rate_limit")
    );
    clock.advance(Duration::from_secs(365 * 86_400));
    // The rate limit is over; the revoked key stays out.
    assert_eq!(select_n(&mut pool, 2), ["l1", "l1"]);
}
