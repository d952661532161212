//! `scripts/prereqs.sh`, the README's first step, on a machine without cmake,
//! a C++ compiler, clang, libclang or pip: as root it installs them with
//! apt-get; without root or apt-get it says exactly what to install.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/prereqs.sh");
const NEEDED: &str = "cmake g++ clang libclang-dev python3-pip";

/// A bare machine: a PATH with only the basic tools the script uses, a fake
/// `id` answering `uid`, and (when `apt`) a fake `apt-get` that records its calls.
struct Bare {
    dir: tempfile::TempDir,
}

impl Bare {
    fn new(uid: u32, apt: bool) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        for tool in ["sh", "ls", "env", "cat"] {
            let real = which(tool);
            std::os::unix::fs::symlink(real, bin.join(tool)).unwrap();
        }
        script(&bin.join("id"), &format!("#!/bin/sh\necho {uid}\n"));
        if apt {
            let log = dir.path().join("apt.log");
            script(
                &bin.join("apt-get"),
                &format!(
                    "#!/bin/sh\necho \"DEBIAN_FRONTEND=$DEBIAN_FRONTEND $*\" >> '{}'\n",
                    log.display()
                ),
            );
        }
        Self { dir }
    }

    fn run(&self) -> Output {
        std::process::Command::new(self.dir.path().join("bin/sh"))
            .arg(SCRIPT)
            .env_clear()
            .env("PATH", self.dir.path().join("bin"))
            .env("LIBCLANG_SEARCH", self.dir.path())
            .output()
            .unwrap()
    }

    fn apt_calls(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("apt.log")).unwrap_or_default()
    }
}

fn which(tool: &str) -> PathBuf {
    ["/usr/bin", "/bin"]
        .iter()
        .map(|d| Path::new(d).join(tool))
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("{tool} not found"))
}

fn script(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn as_root_it_installs_what_is_missing() {
    let bare = Bare::new(0, true);
    let out = bare.run();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let calls = bare.apt_calls();
    let lines: Vec<&str> = calls.lines().collect();
    assert_eq!(lines.len(), 2, "{calls}");
    assert!(lines[0].ends_with("update -qq"), "{calls}");
    assert_eq!(
        lines[1],
        format!("DEBIAN_FRONTEND=noninteractive install -y -qq {NEEDED}")
    );
}

#[test]
fn without_root_or_apt_it_says_exactly_what_to_install() {
    for (uid, apt) in [(1000, true), (0, false)] {
        let bare = Bare::new(uid, apt);
        let out = bare.run();
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("apt-get install -y {NEEDED}")),
            "{err}"
        );
        assert!(err.contains("--no-default-features"), "{err}");
        assert_eq!(bare.apt_calls(), "", "nothing installed");
    }
}
