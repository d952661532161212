//! The on-disk format of a memory file, its sidecar lock and atomic rewrite.

use std::fs::{self, File, OpenOptions};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use super::MemoryError;

/// What separates two entries. Splitting on a bare `§` would break entries
/// that contain the sign, so the newlines are part of the delimiter.
pub const ENTRY_DELIMITER: &str = "\n§\n";

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> MemoryError + '_ {
    move |source| MemoryError::Io {
        path: path.to_owned(),
        source,
    }
}

/// The raw text of a memory file; a missing file reads as empty.
fn read_raw(path: &Path) -> Result<Option<String>, MemoryError> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err(path)(e)),
    }
}

/// Splits a file's text into trimmed, non-empty entries.
pub(super) fn parse(raw: &str) -> Vec<String> {
    if raw.trim().is_empty() {
        return Vec::new();
    }
    raw.split(ENTRY_DELIMITER)
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The entries of the file at `path` (duplicates kept).
pub(super) fn read_entries(path: &Path) -> Result<Vec<String>, MemoryError> {
    Ok(read_raw(path)?.map(|raw| parse(&raw)).unwrap_or_default())
}

/// Writes the entries joined by the delimiter (no trailing newline; an empty
/// list leaves an empty file) via a temp file and rename, so lock-free
/// readers see either the old or the new file, never a truncated one.
pub(super) fn write_entries(path: &Path, entries: &[String]) -> Result<(), MemoryError> {
    let content = entries.join(ENTRY_DELIMITER);
    hermes_fs::write_atomic(path, content.as_bytes(), hermes_fs::Access::Private)
        .map_err(io_err(path))
}

/// `MEMORY.md` → `MEMORY.md.lock`: a separate file, so the memory file
/// itself can be replaced by rename while the lock is held.
pub(super) fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    path.with_file_name(name)
}

/// An exclusive advisory lock, released on drop.
pub(super) struct FileLock {
    file: File,
}

impl FileLock {
    /// Blocks until the lock at `path` is ours (creating the file and its directory).
    pub(super) fn acquire(path: &Path) -> Result<Self, MemoryError> {
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(io_err(dir))?;
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(io_err(path))?;
        file.lock().map_err(io_err(path))?;
        Ok(Self { file })
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // Closing releases it too; unlocking first keeps the window short.
        let _ = self.file.unlock();
    }
}

/// Checks whether rewriting the file from its parsed entries would lose
/// anything: text that does not round-trip, or one "entry" larger than the
/// whole budget (free-form text appended by something other than this tool).
/// On drift the file is copied to `<file>.bak.<unix secs>` and that path is
/// returned.
pub(super) fn detect_drift(path: &Path, limit: usize) -> Result<Option<String>, MemoryError> {
    let Some(raw) = read_raw(path)? else {
        return Ok(None);
    };
    if raw.trim().is_empty() {
        return Ok(None);
    }
    let parsed = parse(&raw);
    let round_trip = parsed.join(ENTRY_DELIMITER);
    let too_big = parsed.iter().any(|e| e.chars().count() > limit);
    if raw.trim() == round_trip && !too_big {
        return Ok(None);
    }
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".bak.{secs}"));
    let backup = path.with_file_name(name);
    let shown = backup.display().to_string();
    Ok(Some(match fs::write(&backup, raw.as_bytes()) {
        Ok(()) => shown,
        Err(_) => format!("{shown} (BACKUP FAILED — file unchanged on disk)"),
    }))
}
