use std::process::Command;

use super::*;

/// The store is git: without it checkpoints are off, and these tests skip.
fn no_git() -> bool {
    let missing = Command::new("git").arg("--version").output().is_err();
    if missing {
        eprintln!("SKIPPED: git is not installed");
    }
    missing
}

fn setup() -> (tempfile::TempDir, PathBuf, Checkpoints) {
    let root = tempfile::tempdir().unwrap();
    let project = root.path().join("project");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(project.join("Cargo.toml"), "[package]\n").unwrap();
    std::fs::write(project.join("src/lib.rs"), "pub fn one() {}\n").unwrap();
    let cp = Checkpoints::new(&root.path().join("home"), true, 20);
    (root, project, cp)
}

#[test]
fn a_checkpoint_restores_a_broken_file_byte_for_byte() {
    if no_git() {
        return;
    }
    let (_root, project, cp) = setup();
    let file = project.join("src/lib.rs");
    let original = std::fs::read(&file).unwrap();
    assert!(cp.ensure(&project, "before patch", None));
    // Once per iteration.
    assert!(!cp.ensure(&project, "before patch", None));
    std::fs::write(&file, "garbage\n").unwrap();
    std::fs::write(project.join("new.txt"), "created later\n").unwrap();
    let list = cp.list(&project);
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].reason, "before patch");
    let diff = cp.diff(&project, &list[0].hash).unwrap();
    assert!(
        diff.contains("-pub fn one() {}") && diff.contains("+garbage"),
        "{diff}"
    );
    cp.restore(&project, &list[0].hash, None).unwrap();
    assert_eq!(std::fs::read(&file).unwrap(), original);
    // Files created since are left alone; the pre-rollback state was saved.
    assert!(project.join("new.txt").is_file());
    let list = cp.list(&project);
    assert_eq!(list.len(), 2);
    assert!(
        list[0].reason.starts_with("pre-rollback snapshot"),
        "{list:?}"
    );
    // The project's own repository is never created or touched.
    assert!(!project.join(".git").exists());
}

#[test]
fn one_file_can_be_restored_and_paths_cannot_escape() {
    if no_git() {
        return;
    }
    let (_root, project, cp) = setup();
    std::fs::write(project.join("a.txt"), "a1\n").unwrap();
    cp.ensure(&project, "before write_file", None);
    std::fs::write(project.join("a.txt"), "a2\n").unwrap();
    std::fs::write(project.join("src/lib.rs"), "changed\n").unwrap();
    let hash = cp.list(&project)[0].hash.clone();
    cp.restore(&project, &hash, Some("a.txt")).unwrap();
    assert_eq!(
        std::fs::read_to_string(project.join("a.txt")).unwrap(),
        "a1\n"
    );
    assert_eq!(
        std::fs::read_to_string(project.join("src/lib.rs")).unwrap(),
        "changed\n"
    );
    assert!(cp.restore(&project, &hash, Some("../x")).is_err());
    assert!(cp.restore(&project, &hash, Some("/etc/passwd")).is_err());
}

#[test]
fn nothing_is_taken_when_disabled_unchanged_or_at_home() {
    if no_git() {
        return;
    }
    let (root, project, _) = setup();
    let off = Checkpoints::new(&root.path().join("home"), false, 20);
    assert!(!off.ensure(&project, "before patch", None));
    let cp = Checkpoints::new(&root.path().join("home"), true, 20);
    assert!(cp.ensure(&project, "before patch", None));
    cp.new_turn();
    assert!(
        !cp.ensure(&project, "before patch", None),
        "nothing changed"
    );
    cp.new_turn();
    assert!(!cp.ensure(&project, "x", Some(&project.canonicalize().unwrap())));
    std::fs::write(project.join("build.log"), "excluded\n").unwrap();
    cp.new_turn();
    assert!(
        !cp.ensure(&project, "before patch", None),
        "*.log is excluded"
    );
}

#[test]
fn project_roots_and_destructive_commands() {
    let (_root, project, _) = setup();
    assert_eq!(project_dir(&project.join("src/lib.rs")), project);
    for cmd in [
        "rm -rf x",
        "ls && rm x",
        "echo hi > f",
        "sed -i s/a/b/ f",
        "git checkout -- .",
        "mv a b",
    ] {
        assert!(is_destructive(cmd), "{cmd}");
    }
    for cmd in [
        "ls -la",
        "cat a >> b",
        "cargo build 2>&1",
        "echo hi 2>/dev/null",
    ] {
        assert!(!is_destructive(cmd), "{cmd}");
    }
}

#[test]
fn only_the_newest_checkpoints_are_kept_and_prune_drops_gone_projects() {
    if no_git() {
        return;
    }
    let (root, project, _) = setup();
    let cp = Checkpoints::new(&root.path().join("home"), true, 3);
    for i in 0..5 {
        std::fs::write(project.join("a.txt"), format!("version {i}\n")).unwrap();
        cp.new_turn();
        assert!(cp.ensure(&project, &format!("before write_file {i}"), None));
    }
    let list = cp.list(&project);
    let reasons: Vec<&str> = list.iter().map(|c| c.reason.as_str()).collect();
    assert_eq!(
        reasons,
        [
            "before write_file 4",
            "before write_file 3",
            "before write_file 2"
        ]
    );
    // The oldest kept one still restores its content.
    cp.restore(&project, &list[2].hash, Some("a.txt")).unwrap();
    assert_eq!(
        std::fs::read_to_string(project.join("a.txt")).unwrap(),
        "version 2\n"
    );
    assert_eq!(cp.projects().len(), 1);
    std::fs::remove_dir_all(&project).unwrap();
    let report = cp.prune(&PruneRules::default(), std::time::SystemTime::now());
    assert_eq!(report.deleted_orphan, 1, "{report:?}");
    assert!(cp.projects().is_empty());
}
