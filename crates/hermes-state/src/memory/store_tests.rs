use std::sync::Arc;

use super::*;

fn store(dir: &Path) -> MemoryStore {
    MemoryStore::new(dir.join("memories"), MemoryLimits::default())
}

fn no_threats(_: &str) -> Option<String> {
    None
}

fn add(store: &MemoryStore, target: MemoryTarget, entry: &str) {
    store
        .update(target, DriftCheck::Skip, |entries| {
            entries.push(entry.to_owned());
            ((), true)
        })
        .unwrap();
}

#[test]
fn paths_follow_the_home_layout() {
    let home = HermesHome::new("/h");
    let s = MemoryStore::for_home(&home, MemoryLimits::default());
    assert_eq!(
        s.path(MemoryTarget::Memory),
        Path::new("/h/memories/MEMORY.md")
    );
    assert_eq!(s.path(MemoryTarget::User), Path::new("/h/memories/USER.md"));
    assert_eq!(s.limit(MemoryTarget::Memory), 2_200);
    assert_eq!(s.limit(MemoryTarget::User), 1_375);
}

#[test]
fn missing_and_blank_files_have_no_entries() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    assert!(s.entries(MemoryTarget::Memory).unwrap().is_empty());
    std::fs::create_dir_all(s.dir()).unwrap();
    std::fs::write(s.path(MemoryTarget::Memory), " \n\n").unwrap();
    assert!(s.entries(MemoryTarget::Memory).unwrap().is_empty());
}

#[test]
fn entries_are_written_with_the_section_delimiter_and_no_trailing_newline() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    add(&s, MemoryTarget::Memory, "first");
    add(&s, MemoryTarget::Memory, "second\nspans lines");
    let raw = std::fs::read_to_string(s.path(MemoryTarget::Memory)).unwrap();
    assert_eq!(raw, "first\n§\nsecond\nspans lines");
    assert_eq!(
        s.entries(MemoryTarget::Memory).unwrap(),
        ["first", "second\nspans lines"]
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(s.path(MemoryTarget::Memory))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // Emptying the list leaves an empty file.
    s.update(MemoryTarget::Memory, DriftCheck::Refuse, |e| {
        e.clear();
        ((), true)
    })
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(s.path(MemoryTarget::Memory)).unwrap(),
        ""
    );
}

#[test]
fn parsing_trims_entries_keeps_inline_section_signs_and_dedupes() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    std::fs::create_dir_all(s.dir()).unwrap();
    std::fs::write(
        s.path(MemoryTarget::User),
        "  a § b  \n§\n\n§\nc\n§\n  a § b\n",
    )
    .unwrap();
    assert_eq!(s.entries(MemoryTarget::User).unwrap(), ["a § b", "c"]);
    // A rewrite persists the deduplicated list.
    s.update(MemoryTarget::User, DriftCheck::Skip, |_| ((), true))
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(s.path(MemoryTarget::User)).unwrap(),
        "a § b\n§\nc"
    );
}

#[test]
fn unchanged_updates_do_not_touch_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    let n = s
        .update(MemoryTarget::Memory, DriftCheck::Skip, |e| (e.len(), false))
        .unwrap();
    assert_eq!(n, 0);
    assert!(!s.path(MemoryTarget::Memory).exists());
    assert!(s.dir().join("MEMORY.md.lock").exists());
}

#[test]
fn hand_edited_files_are_backed_up_and_not_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    std::fs::create_dir_all(s.dir()).unwrap();
    let path = s.path(MemoryTarget::Memory);
    // An empty entry between delimiters does not round-trip.
    std::fs::write(&path, "a\n§\n\n§\nb").unwrap();
    let err = s
        .update(MemoryTarget::Memory, DriftCheck::Refuse, |e| {
            e.clear();
            ((), true)
        })
        .unwrap_err();
    let MemoryError::Drift { file, backup } = err else {
        panic!("expected drift, got {err:?}");
    };
    assert_eq!(file, path);
    assert!(backup.contains("MEMORY.md.bak."), "{backup}");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), "a\n§\n\n§\nb");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "a\n§\n\n§\nb");
    // Appends skip the check.
    add(&s, MemoryTarget::Memory, "c");
    assert_eq!(s.entries(MemoryTarget::Memory).unwrap(), ["a", "b", "c"]);
}

#[test]
fn an_entry_larger_than_the_budget_counts_as_drift() {
    let dir = tempfile::tempdir().unwrap();
    let s = MemoryStore::new(
        dir.path(),
        MemoryLimits {
            memory: 10,
            user: 10,
        },
    );
    std::fs::write(s.path(MemoryTarget::User), "x".repeat(11)).unwrap();
    assert!(matches!(
        s.update(MemoryTarget::User, DriftCheck::Refuse, |_| ((), true)),
        Err(MemoryError::Drift { .. })
    ));
    std::fs::write(s.path(MemoryTarget::User), "x".repeat(10)).unwrap();
    assert!(
        s.update(MemoryTarget::User, DriftCheck::Refuse, |_| ((), false))
            .is_ok()
    );
}

#[test]
fn counting_uses_characters_and_the_delimiter() {
    assert_eq!(char_count(&[]), 0);
    assert_eq!(char_count(&["ab".into()]), 2);
    assert_eq!(char_count(&["ab".into(), "é✓".into()]), 2 + 3 + 2);
}

#[test]
fn usage_figures_match_the_reference_arithmetic() {
    assert_eq!(thousands(0), "0");
    assert_eq!(thousands(999), "999");
    assert_eq!(thousands(2_200), "2,200");
    assert_eq!(thousands(1_234_567), "1,234,567");
    // 638/2200 is 0.29 exactly, but the float product is 28.999…: 28 like Python's int().
    assert_eq!(usage_percent(638, 2_200), 28);
    assert_eq!(usage_percent(5_000, 2_200), 100);
    assert_eq!(usage_percent(1, 0), 0);
    assert_eq!(usage_line(264, 2_200), "12% — 264/2,200 chars");
}

#[test]
fn blocks_render_with_rules_header_and_usage() {
    let entries = vec![
        "Project uses cargo nextest".to_owned(),
        "User is Ada".to_owned(),
    ];
    let block = render_block(MemoryTarget::Memory, &entries, 2_200).unwrap();
    let rule = "═".repeat(46);
    assert_eq!(
        block,
        format!(
            "{rule}\nMEMORY (your personal notes) [1% — 40/2,200 chars]\n{rule}\nProject uses cargo nextest\n§\nUser is Ada"
        )
    );
    assert!(render_block(MemoryTarget::User, &[], 1_375).is_none());
    let user = render_block(MemoryTarget::User, &["Ada".into()], 1_375).unwrap();
    assert!(user.contains("USER PROFILE (who the user is) [0% — 3/1,375 chars]"));
}

#[test]
fn snapshot_joins_enabled_blocks_and_is_frozen_by_value() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    assert_eq!(s.snapshot_block(true, true, &no_threats).unwrap(), None);
    add(&s, MemoryTarget::Memory, "note one");
    add(&s, MemoryTarget::User, "user fact");
    let snap = s.snapshot_block(true, true, &no_threats).unwrap().unwrap();
    let mem = s
        .render_target(MemoryTarget::Memory, &no_threats)
        .unwrap()
        .unwrap();
    let user = s
        .render_target(MemoryTarget::User, &no_threats)
        .unwrap()
        .unwrap();
    assert_eq!(snap, format!("{mem}\n\n{user}"));
    assert_eq!(
        s.snapshot_block(false, true, &no_threats).unwrap(),
        Some(user)
    );
    assert_eq!(s.snapshot_block(false, false, &no_threats).unwrap(), None);
    // A later write changes the next snapshot, not the one already taken.
    add(&s, MemoryTarget::Memory, "note two");
    assert!(!snap.contains("note two"));
    assert!(
        s.snapshot_block(true, false, &no_threats)
            .unwrap()
            .unwrap()
            .contains("note two")
    );
}

#[test]
fn poisoned_entries_are_replaced_in_the_snapshot_but_kept_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    add(&s, MemoryTarget::Memory, "fine");
    add(&s, MemoryTarget::Memory, "EVIL entry");
    let scan = |e: &str| e.contains("EVIL").then(|| "prompt_injection".to_owned());
    let snap = s.snapshot_block(true, true, &scan).unwrap().unwrap();
    assert!(!snap.contains("EVIL"), "{snap}");
    assert!(
        snap.contains(
            "[BLOCKED: an entry in MEMORY.md matched threat pattern(s): prompt_injection."
        )
    );
    assert!(snap.contains("fine"));
    assert_eq!(
        s.entries(MemoryTarget::Memory).unwrap(),
        ["fine", "EVIL entry"]
    );
}

#[test]
fn concurrent_writers_lose_no_entries() {
    let dir = tempfile::tempdir().unwrap();
    let root = Arc::new(dir.path().to_path_buf());
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let root = Arc::clone(&root);
            std::thread::spawn(move || {
                // A store per thread: separate lock handles, like separate processes.
                let s = store(&root);
                for i in 0..15 {
                    add(&s, MemoryTarget::Memory, &format!("t{t}-e{i}"));
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let entries = store(&root).entries(MemoryTarget::Memory).unwrap();
    assert_eq!(entries.len(), 60);
    for t in 0..4 {
        for i in 0..15 {
            assert!(entries.contains(&format!("t{t}-e{i}")));
        }
    }
    let leftovers: Vec<_> = std::fs::read_dir(root.join("memories"))
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn concurrent_processes_lose_no_entries() {
    // Re-runs this test binary as writer children (see `child_writer`).
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..2)
        .map(|n| {
            std::process::Command::new(&exe)
                .args([
                    "--exact",
                    "memory::tests::child_writer",
                    "--ignored",
                    "--nocapture",
                ])
                .env("HERMES_MEMORY_CHILD_DIR", dir.path())
                .env("HERMES_MEMORY_CHILD_TAG", format!("p{n}"))
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let entries = store(dir.path()).entries(MemoryTarget::Memory).unwrap();
    assert_eq!(entries.len(), 40, "{entries:?}");
}

#[test]
#[ignore = "helper run as a child process by concurrent_processes_lose_no_entries"]
fn child_writer() {
    let (Some(dir), Some(tag)) = (
        std::env::var_os("HERMES_MEMORY_CHILD_DIR"),
        std::env::var("HERMES_MEMORY_CHILD_TAG").ok(),
    ) else {
        return;
    };
    let s = store(Path::new(&dir));
    for i in 0..20 {
        add(&s, MemoryTarget::Memory, &format!("{tag}-e{i}"));
    }
}

#[test]
fn settings_come_from_the_memory_section() {
    assert_eq!(
        MemorySettings::from_config(&Config::default()),
        MemorySettings::default()
    );
    let raw = serde_json::json!({"memory": {
        "memory_enabled": false,
        "user_profile_enabled": "yes",
        "memory_char_limit": 500,
        "user_char_limit": "300",
    }});
    let config = Config {
        sections: crate::settings::Sections::from_tree(&raw),
        raw,
        ..Config::default()
    };
    let s = MemorySettings::from_config(&config);
    assert!(!s.memory_enabled);
    assert!(s.user_profile_enabled);
    assert!(s.any_enabled());
    assert_eq!(
        s.limits,
        MemoryLimits {
            memory: 500,
            user: 300
        }
    );
}
