//! Path resolution shared by the file tools.

use std::path::{Component, Path, PathBuf};

/// Resolves `raw` against `cwd`, expanding a leading `~` to `home`, and
/// normalises `.`/`..` lexically (the file may not exist yet).
pub fn resolve(cwd: &Path, raw: &str, home: Option<&Path>) -> PathBuf {
    let raw = raw.trim();
    let expanded = if raw == "~" || raw.starts_with("~/") {
        match home {
            Some(home) => home.join(raw.trim_start_matches('~').trim_start_matches('/')),
            None => PathBuf::from(raw),
        }
    } else {
        PathBuf::from(raw)
    };
    let joined = if expanded.is_absolute() {
        expanded
    } else {
        cwd.join(expanded)
    };
    normalize(&joined)
}

/// Lexical normalisation: drops `.` and folds `..` without touching the disk.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Canonical form for overlap checks: symlinks resolved on the longest existing prefix.
pub fn canonical_for_overlap(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut tail = Vec::new();
    while !existing.exists() {
        match (
            existing.file_name().map(|n| n.to_os_string()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                tail.push(name);
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
    let mut resolved = std::fs::canonicalize(&existing).unwrap_or(existing);
    for name in tail.into_iter().rev() {
        resolved.push(name);
    }
    resolved
}

/// True when one path is the other or contains it.
pub fn overlap(a: &Path, b: &Path) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// Whether `path` (canonical) is somewhere files must never be sent from or
/// shown to a model: system files, credentials, Hermes's own secrets.
pub fn is_secret(path: &Path, user_home: Option<&Path>, hermes_home: &Path) -> bool {
    const SYSTEM: [&str; 5] = ["/etc", "/proc", "/sys", "/dev", "/boot"];
    if SYSTEM.iter().any(|p| path.starts_with(p)) {
        return true;
    }
    if let Some(home) = user_home {
        let home = home.canonicalize().unwrap_or_else(|_| home.to_path_buf());
        for secret in [
            ".ssh",
            ".aws",
            ".gnupg",
            ".kube",
            ".docker",
            ".netrc",
            ".config/gcloud",
        ] {
            if path.starts_with(home.join(secret)) {
                return true;
            }
        }
    }
    let hermes = hermes_home
        .canonicalize()
        .unwrap_or_else(|_| hermes_home.to_path_buf());
    if let Ok(inside) = path.strip_prefix(&hermes) {
        let first = inside
            .components()
            .next()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .unwrap_or_default();
        let secret = [".env", "auth.json", "pairing", "gateway", "checkpoints"]
            .contains(&first.as_str())
            || first.starts_with("state.db")
            || first.starts_with('.') && first.ends_with(".json");
        if secret {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tilde_expands_to_the_given_home_only() {
        let home = Path::new("/home/u");
        assert_eq!(
            resolve(Path::new("/w"), "~/a/../b.txt", Some(home)),
            PathBuf::from("/home/u/b.txt")
        );
        assert_eq!(
            resolve(Path::new("/w"), "~", Some(home)),
            PathBuf::from("/home/u")
        );
        assert_eq!(
            resolve(Path::new("/w"), "./x/./y", None),
            PathBuf::from("/w/x/y")
        );
        assert_eq!(
            resolve(Path::new("/w"), "~/k", None),
            PathBuf::from("/w/~/k")
        );
    }

    #[test]
    fn overlap_is_containment_either_way() {
        assert!(overlap(Path::new("/a/b"), Path::new("/a")));
        assert!(overlap(Path::new("/a"), Path::new("/a/b/c")));
        assert!(!overlap(Path::new("/a/b"), Path::new("/a/bc")));
    }
}
