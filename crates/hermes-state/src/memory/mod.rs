//! Persistent curated memory: `memories/MEMORY.md` (the agent's notes) and
//! `memories/USER.md` (the user profile), each a list of entries joined by
//! `\n§\n`, bounded by a character budget.
//!
//! Reads are lock-free (writers replace the file atomically); every
//! read-modify-write runs under an exclusive lock on a sidecar `*.lock` file
//! so concurrent Hermes processes never lose each other's entries. The
//! [`MemoryStore::snapshot_block`] rendering is taken once at session start
//! and is what enters the system prompt; later writes only show up in the
//! next session.

pub mod facts;
pub mod fence;
mod file;
pub mod hrr;

pub use crate::numfmt::thousands;
use std::path::{Path, PathBuf};

use crate::{Config, HermesHome};

pub use file::ENTRY_DELIMITER;

/// Default budget of `MEMORY.md`, in characters.
pub const DEFAULT_MEMORY_CHAR_LIMIT: usize = 2_200;
/// Default budget of `USER.md`, in characters.
pub const DEFAULT_USER_CHAR_LIMIT: usize = 1_375;

/// Header of the `MEMORY.md` block in the system prompt (kept as the reference spells it).
pub const MEMORY_HEADER: &str = "MEMORY (your personal notes)";
/// Header of the `USER.md` block in the system prompt.
pub const USER_HEADER: &str = "USER PROFILE (who the user is)";

/// Which of the two stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemoryTarget {
    /// `MEMORY.md`: the agent's own notes.
    Memory,
    /// `USER.md`: what the agent knows about the user.
    User,
}

impl MemoryTarget {
    /// The name the tool uses (`memory` / `user`).
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryTarget::Memory => "memory",
            MemoryTarget::User => "user",
        }
    }

    /// Parses the tool's `target` value.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "memory" => Some(MemoryTarget::Memory),
            "user" => Some(MemoryTarget::User),
            _ => None,
        }
    }

    /// The file name inside `memories/`.
    pub fn file_name(self) -> &'static str {
        match self {
            MemoryTarget::Memory => "MEMORY.md",
            MemoryTarget::User => "USER.md",
        }
    }

    fn header(self) -> &'static str {
        match self {
            MemoryTarget::Memory => MEMORY_HEADER,
            MemoryTarget::User => USER_HEADER,
        }
    }
}

/// Character budgets of the two stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryLimits {
    /// `MEMORY.md` budget.
    pub memory: usize,
    /// `USER.md` budget.
    pub user: usize,
}

impl Default for MemoryLimits {
    fn default() -> Self {
        Self {
            memory: DEFAULT_MEMORY_CHAR_LIMIT,
            user: DEFAULT_USER_CHAR_LIMIT,
        }
    }
}

/// The `memory:` section of `config.yaml` this build reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemorySettings {
    /// `memory.memory_enabled` (default on): MEMORY.md in the prompt.
    pub memory_enabled: bool,
    /// `memory.user_profile_enabled` (default on): USER.md in the prompt.
    pub user_profile_enabled: bool,
    /// `memory.memory_char_limit` / `memory.user_char_limit`.
    pub limits: MemoryLimits,
}

impl Default for MemorySettings {
    fn default() -> Self {
        Self {
            memory_enabled: true,
            user_profile_enabled: true,
            limits: MemoryLimits::default(),
        }
    }
}

impl MemorySettings {
    /// Reads the settings, falling back to the defaults for absent or malformed values.
    pub fn from_config(config: &Config) -> Self {
        let m = &config.sections.memory;
        let limit = |n: Option<f64>, default: usize| {
            crate::settings::lenient::count(n)
                .and_then(|n| usize::try_from(n).ok())
                .unwrap_or(default)
        };
        Self {
            memory_enabled: m.memory_enabled.unwrap_or(true),
            user_profile_enabled: m.user_profile_enabled.unwrap_or(true),
            limits: MemoryLimits {
                memory: limit(m.memory_char_limit, DEFAULT_MEMORY_CHAR_LIMIT),
                user: limit(m.user_char_limit, DEFAULT_USER_CHAR_LIMIT),
            },
        }
    }

    /// Whether either store is on (otherwise the memory tool is not offered).
    pub fn any_enabled(&self) -> bool {
        self.memory_enabled || self.user_profile_enabled
    }
}

/// Why a memory operation failed.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// Reading, locking or writing a file failed.
    #[error("memory file {path}: {source}")]
    Io {
        /// The file involved.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file holds content that would not survive a rewrite (edited by
    /// hand or by another tool); it was copied to `backup` and left alone.
    #[error("{} has content the memory tool cannot rewrite safely; a copy is at {backup}", file.display())]
    Drift {
        /// The memory file.
        file: PathBuf,
        /// Where the copy was written (or a note that the copy failed).
        backup: String,
    },
}

/// Whether a locked update checks the file for outside edits first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DriftCheck {
    /// Refuse when the file would not round-trip (rewrites: replace, remove, batch).
    Refuse,
    /// Skip the check (appends never clobber what is there).
    Skip,
}

/// The two memory files under one `memories/` directory.
#[derive(Debug, Clone)]
pub struct MemoryStore {
    dir: PathBuf,
    limits: MemoryLimits,
}

impl MemoryStore {
    /// A store in `dir` with the given budgets.
    pub fn new(dir: impl Into<PathBuf>, limits: MemoryLimits) -> Self {
        Self {
            dir: dir.into(),
            limits,
        }
    }

    /// The store of a Hermes home (`$HERMES_HOME/memories`).
    pub fn for_home(home: &HermesHome, limits: MemoryLimits) -> Self {
        Self::new(home.memories_dir(), limits)
    }

    /// The `memories/` directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of `target`.
    pub fn path(&self, target: MemoryTarget) -> PathBuf {
        self.dir.join(target.file_name())
    }

    /// The budget of `target`, in characters.
    pub fn limit(&self, target: MemoryTarget) -> usize {
        match target {
            MemoryTarget::Memory => self.limits.memory,
            MemoryTarget::User => self.limits.user,
        }
    }

    /// The current entries of `target`, duplicates dropped (first kept).
    pub fn entries(&self, target: MemoryTarget) -> Result<Vec<String>, MemoryError> {
        Ok(dedupe(file::read_entries(&self.path(target))?))
    }

    /// Locks `target`, re-reads it, lets `f` edit the entries and writes them
    /// back atomically when `f` reports a change (`(value, changed)`).
    pub fn update<T>(
        &self,
        target: MemoryTarget,
        drift: DriftCheck,
        f: impl FnOnce(&mut Vec<String>) -> (T, bool),
    ) -> Result<T, MemoryError> {
        let path = self.path(target);
        let _lock = file::FileLock::acquire(&file::lock_path(&path))?;
        if drift == DriftCheck::Refuse
            && let Some(backup) = file::detect_drift(&path, self.limit(target))?
        {
            return Err(MemoryError::Drift { file: path, backup });
        }
        let mut entries = dedupe(file::read_entries(&path)?);
        let (value, changed) = f(&mut entries);
        if changed {
            file::write_entries(&path, &entries)?;
        }
        Ok(value)
    }

    /// The system-prompt block of `target` as the files are now, with any
    /// entry that `scan` flags replaced by a placeholder; `None` when empty.
    /// `scan` returns the id of the threat it found.
    pub fn render_target(
        &self,
        target: MemoryTarget,
        scan: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<String>, MemoryError> {
        let entries: Vec<String> = self
            .entries(target)?
            .into_iter()
            .map(|e| blocked_placeholder(target, &e, scan).unwrap_or(e))
            .collect();
        Ok(render_block(target, &entries, self.limit(target)))
    }

    /// The memory section of a new session's system prompt: the enabled
    /// blocks joined by a blank line, or `None` when there is nothing to show.
    /// Take it once at session start; it is deliberately not refreshed.
    pub fn snapshot_block(
        &self,
        memory_enabled: bool,
        user_enabled: bool,
        scan: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<String>, MemoryError> {
        let mut parts = Vec::new();
        if memory_enabled && let Some(b) = self.render_target(MemoryTarget::Memory, scan)? {
            parts.push(b);
        }
        if user_enabled && let Some(b) = self.render_target(MemoryTarget::User, scan)? {
            parts.push(b);
        }
        Ok((!parts.is_empty()).then(|| parts.join("\n\n")))
    }
}

/// A poisoned entry must not reach the system prompt, but it stays in the
/// file so the user can see it and remove it.
fn blocked_placeholder(
    target: MemoryTarget,
    entry: &str,
    scan: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    if entry.is_empty() || entry.starts_with("[BLOCKED:") {
        return None;
    }
    scan(entry).map(|id| {
        format!(
            "[BLOCKED: an entry in {} matched threat pattern(s): {id}. It was left out of the system prompt; delete the original with memory(action=remove).]",
            target.file_name()
        )
    })
}

/// Drops repeated entries, keeping the first of each.
pub fn dedupe(entries: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    entries
        .into_iter()
        .filter(|e| seen.insert(e.clone()))
        .collect()
}

/// Characters the entries take once joined (what the budget counts).
pub fn char_count(entries: &[String]) -> usize {
    if entries.is_empty() {
        return 0;
    }
    let delimiters = ENTRY_DELIMITER.chars().count() * (entries.len() - 1);
    entries.iter().map(|e| e.chars().count()).sum::<usize>() + delimiters
}

/// Percentage of the budget used, computed in floating point and truncated,
/// capped at 100 (so the figure matches the reference's to the digit).
pub fn usage_percent(current: usize, limit: usize) -> usize {
    if limit == 0 {
        return 0;
    }
    let pct = (current as f64 / limit as f64) * 100.0;
    (pct as usize).min(100)
}

/// `12% — 264/2,200 chars`: the usage figure shown to the model.
pub fn usage_line(current: usize, limit: usize) -> String {
    format!(
        "{}% — {}/{} chars",
        usage_percent(current, limit),
        thousands(current as u64),
        thousands(limit as u64)
    )
}

/// One system-prompt block: a rule, the header with usage, a rule, the entries.
pub fn render_block(target: MemoryTarget, entries: &[String], limit: usize) -> Option<String> {
    if entries.is_empty() {
        return None;
    }
    let rule = "═".repeat(46);
    let header = format!(
        "{} [{}]",
        target.header(),
        usage_line(char_count(entries), limit)
    );
    Some(format!(
        "{rule}\n{header}\n{rule}\n{}",
        entries.join(ENTRY_DELIMITER)
    ))
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
