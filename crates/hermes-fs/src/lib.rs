//! File-system helpers shared by every hermes crate.
#![deny(clippy::print_stdout, clippy::print_stderr)]

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Distinguishes temp files of concurrent writers in one process.
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Who may read the replaced file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Access {
    /// The existing file's permissions (new files get the process default).
    #[default]
    Keep,
    /// Owner only (0600), for files holding secrets or private notes.
    Private,
}

/// Replaces `path`'s contents so readers see the old file or the new one,
/// never a mix: writes a uniquely named temp file beside it (creating the
/// directory if needed), syncs it, renames it into place and syncs the
/// directory. On failure the temp file is removed and the original is untouched.
pub fn write_atomic(path: &Path, bytes: &[u8], access: Access) -> io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&dir)?;
    let keep = match access {
        Access::Keep => fs::metadata(path).ok().map(|m| m.permissions()),
        Access::Private => None,
    };
    let (tmp, mut file) = create_temp(&dir, path, access)?;
    let result = (|| {
        file.write_all(bytes)?;
        if let Some(perms) = keep {
            file.set_permissions(perms)?;
        }
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
        return result;
    }
    // The rename is durable only once the directory entry is on disk.
    if let Ok(handle) = File::open(&dir) {
        let _ = handle.sync_all();
    }
    Ok(())
}

fn create_temp(dir: &Path, target: &Path, access: Access) -> io::Result<(PathBuf, File)> {
    let stem = target
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mut last = None;
    for _ in 0..16 {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let candidate = dir.join(format!(
            ".{stem}.hermes-tmp.{}.{nanos:x}.{n}",
            std::process::id()
        ));
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        if access == Access::Private {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        match options.open(&candidate) {
            Ok(file) => return Ok((candidate, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("could not create a temporary file")))
}

/// Where scratch space is looked for, in Python `tempfile`'s order: `$TMPDIR`,
/// `$TEMP`, `$TMP`, then `/tmp`, `/var/tmp`, `/usr/tmp`, then `cwd`. `env`
/// reads a variable (injected so tests and callers decide where it comes from).
pub fn temp_dir_candidates(env: impl Fn(&str) -> Option<String>, cwd: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = ["TMPDIR", "TEMP", "TMP"]
        .iter()
        .filter_map(|k| env(k))
        .filter(|v| !v.trim().is_empty())
        .map(PathBuf::from)
        .collect();
    out.extend(["/tmp", "/var/tmp", "/usr/tmp"].iter().map(PathBuf::from));
    out.push(cwd.to_path_buf());
    out
}

/// A new private directory named `prefix…` in the first of `candidates` where
/// one can be made; the error lists every directory tried and why it failed.
pub fn scratch_dir_in(prefix: &str, candidates: &[PathBuf]) -> Result<tempfile::TempDir, String> {
    let mut tried = Vec::new();
    for dir in candidates {
        match tempfile::Builder::new().prefix(prefix).tempdir_in(dir) {
            Ok(made) => return Ok(made),
            Err(e) => tried.push(format!("{} ({e})", dir.display())),
        }
    }
    Err(format!(
        "no writable directory for scratch files; tried {}. Set TMPDIR to a writable directory.",
        tried.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_creates_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("a.txt");
        write_atomic(&path, b"one", Access::Keep).unwrap();
        write_atomic(&path, b"two", Access::Keep).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "two");
        let names: Vec<_> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("a.txt")]);
    }

    #[cfg(unix)]
    #[test]
    fn private_files_are_owner_only_and_kept_modes_survive() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("auth.json");
        write_atomic(&secret, b"{}", Access::Private).unwrap();
        let mode = fs::metadata(&secret).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let script = dir.path().join("run.sh");
        fs::write(&script, "old").unwrap();
        fs::set_permissions(&script, fs::Permissions::from_mode(0o751)).unwrap();
        write_atomic(&script, b"new", Access::Keep).unwrap();
        let mode = fs::metadata(&script).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o751);
    }

    #[test]
    fn scratch_space_is_found_as_python_finds_it() {
        let dir = tempfile::tempdir().unwrap();
        let env = |k: &str| (k == "TEMP").then(|| "/from/temp".to_owned());
        let list = temp_dir_candidates(env, dir.path());
        assert_eq!(list[0], PathBuf::from("/from/temp"));
        assert_eq!(list[1], PathBuf::from("/tmp"));
        assert_eq!(list.last().unwrap(), dir.path());

        // Unusable places are skipped: a file, a missing directory.
        let file = dir.path().join("a-file");
        fs::write(&file, "x").unwrap();
        let good = dir.path().join("good");
        fs::create_dir(&good).unwrap();
        let made = scratch_dir_in(
            "hermes_",
            &[file.clone(), dir.path().join("missing"), good.clone()],
        )
        .unwrap();
        assert!(made.path().starts_with(&good));
        let err = scratch_dir_in("hermes_", &[file, dir.path().join("missing")]).unwrap_err();
        assert!(err.contains("a-file") && err.contains("missing") && err.contains("TMPDIR"));
    }

    #[test]
    fn a_failed_rename_keeps_the_original() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("d");
        fs::create_dir(&target).unwrap();
        fs::write(target.join("inside"), "x").unwrap();
        assert!(write_atomic(&target, b"data", Access::Keep).is_err());
        assert!(target.join("inside").is_file());
        let leftovers = fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(leftovers, 1, "the temp file is removed");
    }
}
