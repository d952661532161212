//! What a checkpoint costs in a large tree: the first one (every file is
//! hashed into the shadow store), then one after a single file changed (only
//! that file is hashed), and a restore. Also the store's size against the tree's.
//!
//! `cargo bench -p hermes-tools --bench checkpoints [-- FILES]` (default 10 000 files).

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use hermes_tools::checkpoints::Checkpoints;

fn size_of(path: &Path) -> u64 {
    let meta = std::fs::symlink_metadata(path).unwrap();
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path)
        .unwrap()
        .flatten()
        .map(|e| size_of(&e.path()))
        .sum()
}

fn main() {
    if std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_err()
    {
        println!("checkpoints: SKIPPED (git is not installed)");
        return;
    }
    let files: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(10_000);
    let root = tempfile::tempdir().unwrap();
    let project = root.path().join("project");
    for i in 0..files {
        let dir = project.join(format!("src/m{:03}", i / 100));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(format!("f{:03}.rs", i % 100)),
            format!("// file {i}\npub fn f{i}() -> usize {{ {i} }}\n").repeat(20),
        )
        .unwrap();
    }
    std::fs::write(project.join("Cargo.toml"), "[package]\n").unwrap();
    let cp = Checkpoints::new(&root.path().join("home"), true, 20);
    let timed = |what: &str, f: &mut dyn FnMut()| -> Duration {
        let t = Instant::now();
        f();
        let d = t.elapsed();
        println!("checkpoints  {what:<44} {d:>10.2?}");
        d
    };
    timed(&format!("first checkpoint, {files} files"), &mut || {
        assert!(cp.ensure(&project, "before patch", None));
    });
    let mut later = Vec::new();
    for round in 0..5 {
        std::fs::write(
            project.join("src/m042/f007.rs"),
            format!("changed {round}\n"),
        )
        .unwrap();
        cp.new_turn();
        later.push(timed("checkpoint after one file changed", &mut || {
            assert!(cp.ensure(&project, "before patch", None));
        }));
    }
    later.sort();
    println!(
        "checkpoints  {:<44} {:>10.2?}",
        "  median of those",
        later[later.len() / 2]
    );
    let first = cp.list(&project).last().unwrap().hash.clone();
    timed("restore the whole tree to the first", &mut || {
        cp.restore(&project, &first, None).unwrap();
    });
    println!(
        "checkpoints  tree {:.1} MiB, store {:.1} MiB after 7 checkpoints",
        size_of(&project) as f64 / 1048576.0,
        size_of(&root.path().join("home/checkpoints")) as f64 / 1048576.0
    );
}
