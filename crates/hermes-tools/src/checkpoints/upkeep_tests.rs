use std::process::Command;

use super::*;

const MIB: u64 = 1024 * 1024;

fn no_git() -> bool {
    let missing = Command::new("git").arg("--version").output().is_err();
    if missing {
        eprintln!("SKIPPED: git is not installed");
    }
    missing
}

fn project(root: &Path, name: &str) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("Cargo.toml"), "[package]\n").unwrap();
    dir
}

/// Bytes git cannot compress, different for each seed.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

fn days(n: u64) -> Duration {
    Duration::from_secs(n * DAY)
}

fn rules(retention_days: u64, delete_orphans: bool, max_total_size_mb: u64) -> PruneRules {
    PruneRules {
        retention_days,
        delete_orphans,
        max_total_size_mb,
    }
}

#[test]
fn projects_untouched_past_retention_go_and_orphans_go_unless_kept() {
    if no_git() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let (a, b) = (project(root.path(), "a"), project(root.path(), "b"));
    let cp = Checkpoints::new(&root.path().join("home"), true, 20);
    assert!(cp.ensure(&a, "before write_file", None));
    assert!(cp.ensure(&b, "before write_file", None));
    let now = SystemTime::now();
    let report = cp.prune(&rules(7, true, 0), now + days(6));
    assert_eq!((report.scanned, report.deleted_stale), (2, 0), "{report:?}");
    std::fs::remove_dir_all(&b).unwrap();
    let report = cp.prune(&rules(7, false, 0), now + days(6));
    assert_eq!(report.deleted_orphan, 0, "--keep-orphans");
    assert_eq!(cp.projects().len(), 2);
    let report = cp.prune(&rules(7, true, 0), now + days(6));
    assert_eq!(report.deleted_orphan, 1, "{report:?}");
    assert_eq!(cp.projects().len(), 1);
    // retention_days 0 keeps projects however old.
    let report = cp.prune(&rules(0, true, 0), now + days(365));
    assert_eq!(report.deleted_stale, 0);
    let report = cp.prune(&rules(7, true, 0), now + days(8));
    assert_eq!(report.deleted_stale, 1, "{report:?}");
    assert!(cp.projects().is_empty());
    assert!(cp.list(&a).is_empty(), "its checkpoints are gone too");
    // The project can start over.
    cp.new_turn();
    assert!(cp.ensure(&a, "before patch", None));
    assert_eq!(cp.list(&a).len(), 1);
}

/// Four checkpoints of a 400 KiB file that does not compress (1.6 MiB) in
/// `a`, one small one in `b`.
fn big_history(cp: &Checkpoints, a: &Path, b: &Path) {
    for i in 0..4 {
        std::fs::write(a.join("data.bin"), noise(i, 400 * 1024)).unwrap();
        cp.new_turn();
        assert!(cp.ensure(a, &format!("v{i}"), None));
    }
    assert!(cp.ensure(b, "small", None));
}

#[test]
fn the_size_cap_drops_the_oldest_checkpoints_until_the_store_fits() {
    if no_git() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let (a, b) = (project(root.path(), "a"), project(root.path(), "b"));
    let cp = Checkpoints::new(&root.path().join("home"), true, 20);
    big_history(&cp, &a, &b);
    let store = cp.base().join("store");
    assert!(disk_usage(&store) > 3 * MIB / 2);
    let report = cp.prune(&rules(0, true, 1), SystemTime::now());
    assert!(disk_usage(&store) <= MIB, "{}", disk_usage(&store));
    // 1.6 MiB → 1.2 → 0.8: two passes, each dropping a's oldest; b keeps
    // its only checkpoint.
    assert_eq!(report.evicted, 2, "{report:?}");
    assert!(report.bytes_freed >= 700 * 1024, "{report:?}");
    let reasons: Vec<String> = cp.list(&a).into_iter().map(|c| c.reason).collect();
    assert_eq!(reasons, ["v3", "v2"]);
    assert_eq!(cp.list(&b).len(), 1);
    // What is kept still restores.
    std::fs::write(a.join("data.bin"), "broken").unwrap();
    let oldest = cp.list(&a)[1].hash.clone();
    cp.restore(&a, &oldest, Some("data.bin")).unwrap();
    assert_eq!(
        std::fs::read(a.join("data.bin")).unwrap(),
        noise(2, 400 * 1024)
    );
    // Without a cap nothing is evicted.
    assert_eq!(cp.prune(&rules(0, true, 0), SystemTime::now()).evicted, 0);
}

#[test]
fn with_a_size_cap_each_checkpoint_keeps_the_store_under_it() {
    if no_git() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let (a, b) = (project(root.path(), "a"), project(root.path(), "b"));
    let cp = Checkpoints::new(&root.path().join("home"), true, 20).with_size_cap(1);
    big_history(&cp, &a, &b);
    assert!(disk_usage(&cp.base().join("store")) <= MIB);
    let reasons: Vec<String> = cp.list(&a).into_iter().map(|c| c.reason).collect();
    assert_eq!(reasons, ["v3", "v2"]);
}

#[test]
fn the_automatic_sweep_runs_at_most_once_per_interval() {
    if no_git() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let cp = Checkpoints::new(&root.path().join("home"), true, 20);
    let now = SystemTime::now();
    assert_eq!(cp.auto_prune(&PruneRules::default(), 24, now), None);
    let gone = |name: &str| {
        let dir = project(root.path(), name);
        cp.new_turn();
        assert!(cp.ensure(&dir, "before patch", None));
        std::fs::remove_dir_all(&dir).unwrap();
    };
    gone("a");
    let report = cp.auto_prune(&PruneRules::default(), 24, now).unwrap();
    assert_eq!(report.deleted_orphan, 1);
    let marker = std::fs::read_to_string(cp.base().join(PRUNE_MARKER)).unwrap();
    assert!((marker.parse::<f64>().unwrap() - unix_secs(now)).abs() < 1.0);
    gone("b");
    let hour = Duration::from_secs(3600);
    assert_eq!(
        cp.auto_prune(&PruneRules::default(), 24, now + 23 * hour),
        None
    );
    assert_eq!(cp.projects().len(), 1, "not due: nothing swept");
    let report = cp.auto_prune(&PruneRules::default(), 24, now + 25 * hour);
    assert_eq!(report.map(|r| r.deleted_orphan), Some(1));
    // A marker that does not parse does not stop the sweep.
    std::fs::write(cp.base().join(PRUNE_MARKER), "garbage").unwrap();
    assert!(cp.auto_prune(&PruneRules::default(), 24, now).is_some());
}

/// A repository of the reference's older layout: one per project, straight
/// under the checkpoint base, naming its directory in `HERMES_WORKDIR`.
fn old_repo(base: &Path, name: &str, workdir: &Path) -> PathBuf {
    let repo = base.join(name);
    std::fs::create_dir_all(repo.join("objects")).unwrap();
    std::fs::write(repo.join("HEAD"), "ref: refs/heads/master\n").unwrap();
    std::fs::write(repo.join("objects/blob"), vec![7; 4096]).unwrap();
    std::fs::write(repo.join("HERMES_WORKDIR"), workdir.display().to_string()).unwrap();
    repo
}

#[test]
fn the_older_layout_is_moved_aside_ages_out_and_can_be_cleared() {
    if no_git() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let a = project(root.path(), "a");
    let cp = Checkpoints::new(&root.path().join("home"), true, 20);
    let base = cp.base().to_path_buf();
    old_repo(&base, "0123456789abcdef", &a);
    std::fs::write(base.join(PRUNE_MARKER), "1").unwrap();
    assert!(cp.ensure(&a, "before patch", None));
    let archives = cp.legacy_archives();
    assert_eq!(archives.len(), 1, "{archives:?}");
    let archive = base.join(&archives[0].name);
    assert!(archive.join("0123456789abcdef/HEAD").is_file());
    assert!(archives[0].size >= 4096);
    assert!(base.join(PRUNE_MARKER).is_file(), "the marker stays");
    assert!(!base.join("0123456789abcdef").exists());
    let now = SystemTime::now();
    cp.prune(&rules(7, true, 0), now + days(6));
    assert!(archive.is_dir(), "younger than retention_days");
    let report = cp.prune(&rules(7, true, 0), now + days(8));
    assert!(!archive.exists());
    assert!(report.deleted_stale >= 1 && report.bytes_freed >= 4096);
    // clear-legacy removes them whatever their age.
    std::fs::create_dir_all(base.join("legacy-20240101-000000/x")).unwrap();
    std::fs::write(base.join("legacy-20240101-000000/x/HEAD"), "ref").unwrap();
    assert_eq!(cp.clear_legacy(), (1, 3));
    assert!(cp.legacy_archives().is_empty());
    assert_eq!(cp.clear_legacy(), (0, 0));
}

#[test]
fn repositories_of_the_older_layout_not_yet_moved_are_pruned_in_place() {
    let root = tempfile::tempdir().unwrap();
    let live = project(root.path(), "live");
    let cp = Checkpoints::new(&root.path().join("home"), true, 20);
    let base = cp.base().to_path_buf();
    let orphan = old_repo(&base, "aaaa", &root.path().join("gone"));
    let kept = old_repo(&base, "bbbb", &live);
    let now = SystemTime::now();
    let report = cp.prune(&PruneRules::default(), now);
    assert_eq!(
        (report.scanned, report.deleted_orphan),
        (2, 1),
        "{report:?}"
    );
    assert!(!orphan.exists() && kept.is_dir());
    assert!(!base.join("store").exists(), "a sweep creates no store");
    let report = cp.prune(&PruneRules::default(), now + days(8));
    assert_eq!(report.deleted_stale, 1);
    assert!(!kept.exists());
}

#[test]
fn archive_names_carry_the_utc_time() {
    let t = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    assert_eq!(stamp(t), "20231114-221320");
    assert_eq!(stamp(UNIX_EPOCH), "19700101-000000");
    assert_eq!(
        stamp(UNIX_EPOCH + Duration::from_secs(951_782_400)),
        "20000229-000000"
    );
}
