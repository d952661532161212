//! Defence-in-depth path guards for the file tools. These are not a security
//! boundary (the terminal tool runs as the same user); they stop a model that
//! respects tool errors from clobbering system or credential files, or pulling
//! secrets into the conversation.

use crate::Homes;
use std::path::{Path, PathBuf};

const SENSITIVE_PREFIXES: [&str; 5] = [
    "/etc/",
    "/boot/",
    "/usr/lib/systemd/",
    "/private/etc/",
    "/private/var/",
];
const SENSITIVE_EXACT: [&str; 2] = ["/var/run/docker.sock", "/run/docker.sock"];

/// Credential files under `$HOME` that must never be written.
const HOME_DENIED_FILES: [&str; 9] = [
    ".ssh/authorized_keys",
    ".ssh/id_rsa",
    ".ssh/id_ed25519",
    ".ssh/config",
    ".netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
];
/// Credential directories under `$HOME` whose contents must never be written.
const HOME_DENIED_DIRS: [&str; 9] = [
    ".ssh",
    ".aws",
    ".gnupg",
    ".kube",
    ".docker",
    ".azure",
    ".config/gh",
    ".config/gcloud",
    ".hermes/mcp-tokens",
];

/// Project-local environment files that usually hold secrets.
const SECRET_ENV_NAMES: [&str; 7] = [
    ".env",
    ".env.local",
    ".env.development",
    ".env.production",
    ".env.test",
    ".env.staging",
    ".envrc",
];

/// System files holding password hashes, sudo rules or private keys: never
/// read into the conversation, whoever runs Hermes (root can read them).
const SYSTEM_SECRET_FILES: [&str; 8] = [
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/security/opasswd",
    "/etc/master.passwd",
    "/private/etc/master.passwd",
];
const SYSTEM_SECRET_DIRS: [&str; 4] = [
    "/etc/sudoers.d",
    "/etc/ssl/private",
    "/root/.ssh",
    "/root/.gnupg",
];

/// Credentials under `$HOME` that are never read (private keys, cloud and
/// registry logins); public keys and configs around them stay readable.
const HOME_SECRET_FILES: [&str; 8] = [
    ".aws/credentials",
    ".git-credentials",
    ".netrc",
    ".pgpass",
    ".docker/config.json",
    ".kube/config",
    ".config/gh/hosts.yml",
    ".config/gcloud/credentials.db",
];

/// Whether `p` is a system or home credential file (an SSH private key
/// included: `id_*` under `.ssh` without `.pub`, `ssh_host_*_key`).
fn is_credential_file(p: &Path, home: Option<&Path>) -> bool {
    let s = p.to_string_lossy();
    if SYSTEM_SECRET_FILES.contains(&s.as_ref())
        || SYSTEM_SECRET_DIRS.iter().any(|d| p.starts_with(d))
    {
        return true;
    }
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    if p.parent() == Some(Path::new("/etc/ssh"))
        && name.starts_with("ssh_host_")
        && name.ends_with("_key")
    {
        return true;
    }
    let Some(home) = home else { return false };
    let private_key = p.parent() == Some(home.join(".ssh").as_path())
        && name.starts_with("id_")
        && !name.ends_with(".pub");
    private_key
        || HOME_SECRET_FILES.iter().any(|f| p == home.join(f))
        || p.starts_with(home.join(".gnupg/private-keys-v1.d"))
}

/// Devices and proc files that hang a reader or leak process secrets.
const BLOCKED_DEVICES: [&str; 12] = [
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
    "/dev/full",
    "/dev/stdin",
    "/dev/tty",
    "/dev/console",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/fd/0",
    "/dev/fd/1",
    "/dev/fd/2",
];
const BLOCKED_PROC_SUFFIXES: [&str; 12] = [
    "/fd/0",
    "/fd/1",
    "/fd/2",
    "/environ",
    "/cmdline",
    "/maps",
    "/smaps",
    "/smaps_rollup",
    "/numa_maps",
    "/mem",
    "/auxv",
    "/pagemap",
];

fn hermes_home(homes: &Homes) -> Option<PathBuf> {
    homes
        .hermes_home
        .clone()
        .or_else(|| homes.home.as_ref().map(|h| h.join(".hermes")))
}

/// The Hermes root: the parent of `profiles/<name>` when a profile is active,
/// else the Hermes home itself. Its `.env` feeds every profile, so it is guarded too.
fn hermes_root(hermes_home: &Path) -> PathBuf {
    match hermes_home.parent() {
        Some(profiles) if profiles.file_name().is_some_and(|n| n == "profiles") => profiles
            .parent()
            .map_or_else(|| hermes_home.to_path_buf(), Path::to_path_buf),
        _ => hermes_home.to_path_buf(),
    }
}

/// `path` with symlinks resolved on its longest existing prefix.
fn real(path: &Path) -> PathBuf {
    crate::paths::canonical_for_overlap(path)
}

/// Why a write to `path` (already resolved) is refused, if it is.
pub(crate) fn write_denied(homes: &Homes, path: &Path, shown: &str) -> Option<String> {
    let resolved = real(path);
    let candidates = [path.to_path_buf(), resolved];
    for p in &candidates {
        let s = p.to_string_lossy();
        if SENSITIVE_PREFIXES.iter().any(|pre| s.starts_with(pre))
            || SENSITIVE_EXACT.contains(&s.as_ref())
        {
            return Some(format!(
                "Refusing to write to sensitive system path: {shown}. Use the terminal tool \
                 (with sudo if needed) to modify system files."
            ));
        }
    }
    let credential = || format!("Write denied: '{shown}' is a protected system/credential file.");
    if let Some(home) = homes.home.clone() {
        let home_real = real(&home);
        for base in [&home, &home_real] {
            for p in &candidates {
                if HOME_DENIED_FILES.iter().any(|f| *p == base.join(f))
                    || HOME_DENIED_DIRS.iter().any(|d| p.starts_with(base.join(d)))
                {
                    return Some(credential());
                }
            }
        }
    }
    if let Some(hh) = hermes_home(homes) {
        let root = hermes_root(&hh);
        // The active profile's config is the one this session obeys.
        let config = [hh.join("config.yaml"), real(&hh).join("config.yaml")];
        let bases = [real(&hh), real(&root), hh, root];
        for base in &bases {
            for p in &candidates {
                if config.contains(p) {
                    return Some(format!(
                        "Refusing to write to the Hermes config file: {shown}. The agent cannot \
                         change security-sensitive configuration; ask the user to edit it."
                    ));
                }
                if *p == base.join(".env")
                    || *p == base.join(".anthropic_oauth.json")
                    || *p == base.join("state.db")
                    || p.starts_with(base.join("sessions"))
                    || p.starts_with(base.join("mcp-tokens"))
                    || p.starts_with(base.join("pairing"))
                {
                    return Some(credential());
                }
            }
        }
    }
    None
}

/// Files under the Hermes home that decide what runs later, outside any
/// tool call the gate sees: a write there needs approval like a dangerous
/// command. The reason is what the person is asked about.
pub(crate) fn runs_later(homes: &Homes, path: &Path) -> Option<&'static str> {
    let hh = hermes_home(homes)?;
    let root = hermes_root(&hh);
    let resolved = real(path);
    let candidates = [path.to_path_buf(), resolved];
    let bases = [real(&hh), real(&root), hh, root];
    for base in &bases {
        for p in &candidates {
            let Ok(rel) = p.strip_prefix(base) else {
                continue;
            };
            let mut parts = rel.components().map(|c| c.as_os_str().to_string_lossy());
            let first = parts.next().unwrap_or_default();
            let reason = match first.as_ref() {
                "scripts" => "write to Hermes scripts/ (cron runs them without the agent)",
                "hooks" => "write to Hermes hooks/ (they run on later events)",
                "plugins" => "write to Hermes plugins/ (they run in later sessions)",
                "cron" => "write to Hermes cron/ (its jobs run later)",
                "shell-hooks-allowlist.json" => {
                    "write to the shell-hooks allowlist (approves hooks)"
                }
                "skills" if parts.any(|c| c == "scripts") => {
                    "write to a skill's scripts/ (run when the skill is used)"
                }
                _ => continue,
            };
            return Some(reason);
        }
    }
    None
}

/// Why a read of `path` (already resolved) is refused, if it is.
pub(crate) fn read_blocked(homes: &Homes, path: &Path, shown: &str) -> Option<String> {
    ReadGuard::new(homes).check(path, &real(path), shown)
}

/// The read deny-list with its base directories resolved once, for checking
/// many files (a directory walk).
pub(crate) struct ReadGuard {
    /// `$HOME` as given and resolved.
    homes: Vec<PathBuf>,
    /// The Hermes home and root, as given and resolved.
    hermes_bases: Vec<PathBuf>,
}

impl ReadGuard {
    /// The guard for `homes`.
    pub(crate) fn new(homes: &Homes) -> Self {
        let with_real = |p: PathBuf| {
            let resolved = real(&p);
            if resolved == p {
                vec![p]
            } else {
                vec![resolved, p]
            }
        };
        let hermes_bases = hermes_home(homes)
            .map(|hh| {
                let root = hermes_root(&hh);
                let mut bases = with_real(hh);
                bases.extend(with_real(root));
                bases
            })
            .unwrap_or_default();
        Self {
            homes: homes.home.clone().map(with_real).unwrap_or_default(),
            hermes_bases,
        }
    }

    /// Why `path` (`resolved` with its symlinks resolved) is not read, if it is not.
    pub(crate) fn check(&self, path: &Path, resolved: &Path, shown: &str) -> Option<String> {
        let both = [path, resolved];
        let credential = both.iter().any(|p| {
            is_credential_file(p, None) || self.homes.iter().any(|h| is_credential_file(p, Some(h)))
        });
        if credential {
            return Some(format!(
                "Access denied: {shown} holds system or account credentials (password hashes, \
                 private keys, cloud logins) and is not read, so they never reach the conversation."
            ));
        }
        for base in &self.hermes_bases {
            for p in both {
                if p.starts_with(base.join("skills/.hub")) {
                    return Some(format!(
                        "Access denied: {shown} is an internal Hermes cache file and cannot be \
                         read directly."
                    ));
                }
                let cred = ["auth.json", "auth.lock", ".anthropic_oauth.json", ".env"]
                    .iter()
                    .any(|n| p == base.join(n));
                if cred || p.starts_with(base.join("mcp-tokens")) {
                    return Some(format!(
                        "Access denied: {shown} is a Hermes credential store and cannot be read \
                         directly."
                    ));
                }
            }
        }
        let name = resolved
            .file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase());
        if name.is_some_and(|n| SECRET_ENV_NAMES.contains(&n.as_str())) {
            return Some(format!(
                "Access denied: {shown} is a secret-bearing environment file and is not read, to \
                 keep credentials out of the conversation. Read .env.example (or similar) to see \
                 the expected structure instead."
            ));
        }
        None
    }
}

/// True for device/proc paths whose reading would hang or leak process secrets.
pub(crate) fn is_blocked_device(path: &Path) -> bool {
    let check = |p: &Path| {
        let s = p.to_string_lossy();
        BLOCKED_DEVICES.contains(&s.as_ref())
            || (s.starts_with("/proc/") && BLOCKED_PROC_SUFFIXES.iter().any(|suf| s.ends_with(suf)))
    };
    if check(path) {
        return true;
    }
    // Follow symlink hops so an alias to a device cannot slip through.
    let mut current = path.to_path_buf();
    for _ in 0..20 {
        let Ok(target) = std::fs::read_link(&current) else {
            break;
        };
        let next = match current.parent() {
            Some(parent) if target.is_relative() => crate::paths::normalize(&parent.join(&target)),
            _ => target,
        };
        if check(&next) {
            return true;
        }
        current = next;
    }
    std::fs::canonicalize(path).is_ok_and(|p| check(&p))
}

#[cfg(test)]
#[path = "guard_tests.rs"]
mod tests;
