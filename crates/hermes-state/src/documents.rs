//! Small named text documents the gateway, cron and the CLI edit together:
//! `cron/jobs.json`, the pairing files, cron outputs. On one machine they are
//! the reference's files under `HERMES_HOME` (names are paths relative to
//! it); replicas keep them in their shared database. Edits are
//! compare-and-swap: read, change, and write only if nobody wrote in between
//! (else read again), so two processes never lose each other's edits.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::coordination::Fence;
use crate::store::StoreError;

/// One document's change: written only while it still reads `before`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Swap {
    /// The document (a relative path such as `cron/jobs.json`).
    pub name: String,
    /// Its text when it was read (`None`: it did not exist).
    pub before: Option<String>,
    /// Its new text (`None`: remove it).
    pub after: Option<String>,
}

/// What [`Documents::swap`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Swapped {
    /// Every change was written.
    Done,
    /// Nothing was written: a document no longer reads as `before`.
    Changed,
    /// Nothing was written: the fence's lease is no longer held.
    Fenced,
}

/// Named text documents, edited by compare-and-swap.
pub trait Documents: Send + Sync {
    /// The text of `name`, if it exists.
    fn read(&self, name: &str) -> Result<Option<String>, StoreError>;
    /// Writes all of `changes` or none: none when one no longer reads as its
    /// `before`, or when `fence` is given and no longer held.
    fn swap(&self, changes: &[Swap], fence: Option<&Fence>) -> Result<Swapped, StoreError>;
    /// The names inside `folder` at any depth (`cron/output/ID/…`), sorted;
    /// names starting with a dot are not documents.
    fn list(&self, folder: &str) -> Result<Vec<String>, StoreError>;
    /// Removes `folder` and everything in it.
    fn remove_folder(&self, folder: &str) -> Result<(), StoreError>;
    /// Where `name` is kept, for messages (a file's path, a database's name).
    fn describe(&self, name: &str) -> String;
}

/// Why [`update`] wrote nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UpdateError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The fence's lease is no longer held.
    #[error("the lease this write was made under is held by another process now")]
    Fenced,
    /// Others kept writing the documents.
    #[error("the documents kept changing under this edit; try again")]
    Busy,
}

/// Tries before [`update`] gives up on documents others keep changing.
const ATTEMPTS: u32 = 64;

/// A pause before trying again, growing with the attempt and spread by the
/// clock's nanoseconds, so writers that collided do not collide again in step.
fn back_off(attempt: u32) {
    let spread = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() % 1000);
    let micros = u64::from(attempt.min(20)) * 500 + u64::from(spread);
    std::thread::sleep(std::time::Duration::from_micros(micros));
}

/// Reads `names`, lets `edit` change their texts (it may run more than once,
/// so it must not act beyond the texts it is given), and writes back what it
/// changed, all or nothing. Returns what `edit` returned the last time.
pub fn update<R>(
    docs: &dyn Documents,
    names: &[&str],
    fence: Option<&Fence>,
    mut edit: impl FnMut(&mut [Option<String>]) -> R,
) -> Result<R, UpdateError> {
    for attempt in 0..ATTEMPTS {
        if attempt > 0 {
            back_off(attempt);
        }
        let before = names
            .iter()
            .map(|n| docs.read(n))
            .collect::<Result<Vec<_>, _>>()?;
        let mut after = before.clone();
        let result = edit(&mut after);
        let changes: Vec<Swap> = names
            .iter()
            .zip(before)
            .zip(after)
            .filter(|((_, b), a)| b != a)
            .map(|((name, before), after)| Swap {
                name: (*name).to_owned(),
                before,
                after,
            })
            .collect();
        if changes.is_empty() {
            return Ok(result);
        }
        match docs.swap(&changes, fence)? {
            Swapped::Done => return Ok(result),
            Swapped::Fenced => return Err(UpdateError::Fenced),
            Swapped::Changed => continue,
        }
    }
    Err(UpdateError::Busy)
}

/// The folders of a home whose documents replicas share (and `hermes
/// sessions migrate` copies): cron jobs and outputs, the pairing files.
pub const SHARED_FOLDERS: &[&str] = &["cron", "pairing", "platforms/pairing"];

/// Copies every document in `folders` from `from` to `to` (replacing what
/// `to` has under the same names), then reads each back; how many.
pub fn copy_all(
    from: &dyn Documents,
    to: &dyn Documents,
    folders: &[&str],
) -> Result<usize, UpdateError> {
    let mut copied = 0;
    for folder in folders {
        for name in from.list(folder)? {
            let Some(text) = from.read(&name)? else {
                continue;
            };
            update(to, &[&name], None, |docs| docs[0] = Some(text.clone()))?;
            if to.read(&name)?.as_deref() != Some(text.as_str()) {
                return Err(UpdateError::Store(StoreError(format!(
                    "{} does not read back as written",
                    to.describe(&name)
                ))));
            }
            copied += 1;
        }
    }
    Ok(copied)
}

/// The documents of one machine: files under `HERMES_HOME`, owner-only,
/// replaced atomically; a swap holds `flock` on each file's directory.
#[derive(Debug)]
pub struct HomeDocuments {
    root: PathBuf,
    /// Orders this process's swaps (`flock` is per open file description).
    guard: Mutex<()>,
}

impl HomeDocuments {
    /// The documents under `root` (the Hermes home).
    pub fn new(root: &Path) -> Self {
        Self {
            root: root.to_owned(),
            guard: Mutex::new(()),
        }
    }

    /// The file of document `name`; names that would leave the home are refused.
    fn path(&self, name: &str) -> Result<PathBuf, StoreError> {
        let rel = Path::new(name);
        let inside = rel
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
        if !inside || name.is_empty() {
            return Err(StoreError(format!("not a document name: {name:?}")));
        }
        Ok(self.root.join(rel))
    }
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> StoreError {
    StoreError(format!("cannot {what} {}: {e}", path.display()))
}

impl Documents for HomeDocuments {
    fn read(&self, name: &str) -> Result<Option<String>, StoreError> {
        let path = self.path(name)?;
        match std::fs::read_to_string(&path) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_error("read", &path, e)),
        }
    }

    fn swap(&self, changes: &[Swap], _fence: Option<&Fence>) -> Result<Swapped, StoreError> {
        // One machine has no leases: the directory locks are the fence.
        let _guard = self.guard.lock().unwrap_or_else(|p| p.into_inner());
        let mut dirs: Vec<PathBuf> = changes
            .iter()
            .map(|c| self.path(&c.name))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .filter_map(|p| p.parent().map(Path::to_path_buf))
            .collect();
        dirs.sort();
        dirs.dedup();
        let mut held = Vec::with_capacity(dirs.len());
        for dir in &dirs {
            std::fs::create_dir_all(dir).map_err(|e| io_error("create", dir, e))?;
            // A file system that cannot lock a directory leaves the swap
            // guarded by this process's mutex and the compare alone.
            if let Ok(handle) = std::fs::File::open(dir)
                && handle.lock().is_ok()
            {
                held.push(handle);
            }
        }
        for change in changes {
            if self.read(&change.name)? != change.before {
                return Ok(Swapped::Changed);
            }
        }
        for change in changes {
            let path = self.path(&change.name)?;
            match &change.after {
                Some(text) => {
                    hermes_fs::write_atomic(&path, text.as_bytes(), hermes_fs::Access::Private)
                        .map_err(|e| io_error("write", &path, e))?;
                }
                None => match std::fs::remove_file(&path) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(io_error("remove", &path, e)),
                },
            }
        }
        drop(held);
        Ok(Swapped::Done)
    }

    fn list(&self, folder: &str) -> Result<Vec<String>, StoreError> {
        let folder = folder.trim_end_matches('/');
        let mut names = Vec::new();
        let mut pending = vec![folder.to_owned()];
        while let Some(rel) = pending.pop() {
            let dir = self.path(&rel)?;
            let entries = match std::fs::read_dir(&dir) {
                Ok(entries) => entries,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io_error("list", &dir, e)),
            };
            for entry in entries.flatten() {
                let Ok(name) = entry.file_name().into_string() else {
                    continue;
                };
                if name.starts_with('.') {
                    continue;
                }
                match entry.file_type() {
                    Ok(t) if t.is_dir() => pending.push(format!("{rel}/{name}")),
                    Ok(t) if t.is_file() => names.push(format!("{rel}/{name}")),
                    _ => {}
                }
            }
        }
        names.sort();
        Ok(names)
    }

    fn describe(&self, name: &str) -> String {
        self.root.join(name).display().to_string()
    }

    fn remove_folder(&self, folder: &str) -> Result<(), StoreError> {
        let dir = self.path(folder)?;
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io_error("remove", &dir, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_lands_and_a_stale_swap_is_refused() {
        let home = tempfile::tempdir().unwrap();
        let docs = HomeDocuments::new(home.path());
        let n = update(&docs, &["cron/jobs.json"], None, |d| {
            d[0] = Some("one".into());
            1
        })
        .unwrap();
        assert_eq!(n, 1);
        assert_eq!(
            std::fs::read_to_string(home.path().join("cron/jobs.json")).unwrap(),
            "one"
        );
        let stale = Swap {
            name: "cron/jobs.json".into(),
            before: None,
            after: Some("two".into()),
        };
        assert_eq!(docs.swap(&[stale], None).unwrap(), Swapped::Changed);
        assert_eq!(docs.read("cron/jobs.json").unwrap().as_deref(), Some("one"));
        assert!(docs.read("../outside").is_err());
    }

    #[test]
    fn folders_list_their_files_and_go_away_whole() {
        let home = tempfile::tempdir().unwrap();
        let docs = HomeDocuments::new(home.path());
        for name in ["out/a/2.md", "out/a/1.md", "out/b/1.md"] {
            update(&docs, &[name], None, |d| d[0] = Some(name.into())).unwrap();
        }
        assert_eq!(docs.list("out/a").unwrap(), ["out/a/1.md", "out/a/2.md"]);
        assert_eq!(
            docs.list("out").unwrap(),
            ["out/a/1.md", "out/a/2.md", "out/b/1.md"]
        );
        docs.remove_folder("out/a").unwrap();
        assert!(docs.list("out/a").unwrap().is_empty());
        assert_eq!(docs.list("out/b").unwrap(), ["out/b/1.md"]);
    }

    #[test]
    fn concurrent_edits_from_many_threads_are_all_kept() {
        let home = tempfile::tempdir().unwrap();
        let docs = std::sync::Arc::new(HomeDocuments::new(home.path()));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let docs = docs.clone();
                std::thread::spawn(move || {
                    for _ in 0..10 {
                        update(docs.as_ref(), &["n"], None, |d| {
                            let n: u32 = d[0].as_deref().map_or(0, |t| t.parse().unwrap());
                            d[0] = Some((n + 1).to_string());
                        })
                        .unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(docs.read("n").unwrap().as_deref(), Some("80"));
    }
}
