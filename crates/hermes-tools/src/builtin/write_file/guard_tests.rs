use std::path::{Path, PathBuf};

use serde_json::json;

use super::*;
use crate::builtin::patch::PatchTool;
use crate::builtin::write_file::WriteFileTool;
use crate::{Tool, ToolContext, ToolError};

/// A fake `$HOME` with a Hermes home inside it.
fn homes(home: &Path, hermes_home: Option<PathBuf>) -> Homes {
    Homes {
        home: Some(home.to_path_buf()),
        hermes_home,
    }
}

const HOME_DENIED: &[&str] = &[
    ".ssh/authorized_keys",
    ".ssh/id_rsa",
    ".ssh/id_ed25519",
    ".ssh/config",
    ".ssh/known_hosts",
    ".ssh/new_key.pub",
    ".aws/credentials",
    ".aws/config",
    ".gnupg/pubring.kbx",
    ".kube/config",
    ".docker/config.json",
    ".azure/accessTokens.json",
    ".config/gh/hosts.yml",
    ".config/gcloud/credentials.db",
    ".netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".hermes/config.yaml",
    ".hermes/.env",
    ".hermes/.anthropic_oauth.json",
    ".hermes/state.db",
    ".hermes/sessions/s1.json",
    ".hermes/mcp-tokens/github.json",
    ".hermes/pairing/telegram.json",
];

const SYSTEM_DENIED: &[&str] = &[
    "/etc/passwd",
    "/etc/shadow",
    "/etc/sudoers",
    "/etc/sudoers.d/hermes",
    "/etc/systemd/system/evil.service",
    "/boot/grub/grub.cfg",
    "/usr/lib/systemd/system/x.service",
    "/var/run/docker.sock",
    "/run/docker.sock",
    "/private/etc/hosts",
];

const HOME_ALLOWED: &[&str] = &[
    "project/src/main.rs",
    "project/.env",
    "project/.ssh-notes.md",
    ".bashrc",
    ".config/nvim/init.lua",
    ".hermes/skills/mine/SKILL.md",
    ".hermes/memories/MEMORY.md",
    ".hermes/config.yaml.bak",
    "notes/.aws-setup.txt",
];

#[test]
fn deny_list_table() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let h = homes(home, None);
    for rel in HOME_DENIED {
        let path = home.join(rel);
        assert!(
            write_denied(&h, &path, rel).is_some(),
            "{rel} should be denied"
        );
    }
    for path in SYSTEM_DENIED {
        let msg = write_denied(&h, Path::new(path), path).unwrap_or_default();
        assert!(msg.contains("sensitive system path"), "{path}: {msg:?}");
    }
    for rel in HOME_ALLOWED {
        let path = home.join(rel);
        assert_eq!(
            write_denied(&h, &path, rel),
            None,
            "{rel} should be allowed"
        );
    }
}

#[test]
fn errors_say_what_and_why() {
    let dir = tempfile::tempdir().unwrap();
    let h = homes(dir.path(), None);
    let msg = write_denied(
        &h,
        &dir.path().join(".ssh/authorized_keys"),
        "~/.ssh/authorized_keys",
    )
    .unwrap();
    assert!(
        msg.contains("~/.ssh/authorized_keys") && msg.contains("protected"),
        "{msg}"
    );
    let msg = write_denied(&h, &dir.path().join(".hermes/config.yaml"), "config.yaml").unwrap();
    assert!(msg.contains("Hermes config file"), "{msg}");
}

#[test]
fn profile_sessions_also_guard_the_root_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join(".hermes");
    let profile = root.join("profiles/work");
    let h = homes(dir.path(), Some(profile.clone()));
    for path in [
        root.join(".env"),
        root.join(".anthropic_oauth.json"),
        root.join("state.db"),
        profile.join(".env"),
        profile.join("config.yaml"),
    ] {
        assert!(write_denied(&h, &path, "p").is_some(), "{}", path.display());
    }
    assert!(read_blocked(&h, &root.join("auth.json"), "auth.json").is_some());
    assert_eq!(write_denied(&h, &profile.join("skills/x.md"), "x"), None);
}

#[test]
fn symlinks_into_protected_places_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let work = home.join("work");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(home.join(".ssh/authorized_keys"), "").unwrap();
    std::os::unix::fs::symlink(home.join(".ssh/authorized_keys"), work.join("keys")).unwrap();
    std::os::unix::fs::symlink(home.join(".ssh"), work.join("sshdir")).unwrap();
    let h = homes(&home, None);
    assert!(write_denied(&h, &work.join("keys"), "keys").is_some());
    // A file that does not exist yet under a symlinked directory.
    assert!(write_denied(&h, &work.join("sshdir/id_new"), "sshdir/id_new").is_some());
    assert_eq!(write_denied(&h, &work.join("plain.txt"), "plain.txt"), None);
}

fn ctx(work: &Path, home: &Path) -> ToolContext {
    let mut ctx = ToolContext::new(work, "test");
    ctx.homes = homes(home, None);
    ctx
}

#[tokio::test]
async fn write_file_and_patch_refuse_a_symlink_to_authorized_keys() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let work = home.join("work");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let keys = home.join(".ssh/authorized_keys");
    std::fs::write(&keys, "ssh-ed25519 AAAA user\n").unwrap();
    std::os::unix::fs::symlink(&keys, work.join("keys.txt")).unwrap();
    let ctx = ctx(&work, &home);

    let wrote = WriteFileTool
        .call(
            json!({"path": "keys.txt", "content": "ssh-rsa EVIL\n"}),
            &ctx,
        )
        .await;
    assert!(
        matches!(&wrote, Err(ToolError::Model(m)) if m.contains("protected")),
        "{wrote:?}"
    );
    let patched = PatchTool
        .call(
            json!({"path": "keys.txt", "old_string": "user", "new_string": "evil"}),
            &ctx,
        )
        .await;
    let refused = match &patched {
        Err(ToolError::Model(m)) => m.contains("protected"),
        Ok(text) => text.contains("protected"),
        Err(_) => false,
    };
    assert!(refused, "{patched:?}");
    assert_eq!(
        std::fs::read_to_string(&keys).unwrap(),
        "ssh-ed25519 AAAA user\n"
    );
}

#[test]
fn system_and_account_credentials_are_never_read() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let work = home.join("work");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(home.join(".aws")).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE").unwrap();
    std::fs::write(home.join(".aws/credentials"), "[default]").unwrap();
    let h = homes(&home, None);
    let refused = [
        PathBuf::from("/etc/shadow"),
        PathBuf::from("/etc/gshadow"),
        PathBuf::from("/etc/sudoers"),
        PathBuf::from("/etc/sudoers.d/90-cloud"),
        PathBuf::from("/etc/ssh/ssh_host_ed25519_key"),
        PathBuf::from("/root/.ssh/id_rsa"),
        home.join(".ssh/id_ed25519"),
        home.join(".ssh/id_rsa_work"),
        home.join(".aws/credentials"),
        home.join(".netrc"),
    ];
    for p in &refused {
        let why = read_blocked(&h, p, &p.display().to_string());
        assert!(
            why.as_deref().is_some_and(|w| w.contains("credentials")),
            "{} readable: {why:?}",
            p.display()
        );
    }
    let allowed = [
        PathBuf::from("/etc/passwd"),
        PathBuf::from("/etc/hosts"),
        PathBuf::from("/etc/ssh/ssh_host_ed25519_key.pub"),
        PathBuf::from("/etc/ssh/sshd_config"),
        home.join(".ssh/id_ed25519.pub"),
        home.join(".ssh/known_hosts"),
        home.join(".aws/config"),
    ];
    for p in &allowed {
        assert_eq!(read_blocked(&h, p, "x"), None, "{}", p.display());
    }
    // A project symlink to the shadow file or to a private key is the file itself.
    std::os::unix::fs::symlink("/etc/shadow", work.join("notes.txt")).unwrap();
    std::os::unix::fs::symlink(home.join(".ssh/id_ed25519"), work.join("key.txt")).unwrap();
    assert!(read_blocked(&h, &work.join("notes.txt"), "notes.txt").is_some());
    assert!(read_blocked(&h, &work.join("key.txt"), "key.txt").is_some());
}
