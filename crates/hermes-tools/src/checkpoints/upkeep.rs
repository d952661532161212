//! Upkeep of the checkpoint store, as the reference's `prune_checkpoints`,
//! `maybe_auto_prune_checkpoints`, `_enforce_size_cap` and `clear_legacy`
//! keep it: projects whose directory is gone or that were not touched for
//! `retention_days` are dropped, the oldest checkpoints go until the store
//! is under `max_total_size_mb`, and the older one-repository-per-project
//! layout is moved aside into `legacy-<time>/` folders that age out alike.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::Checkpoints;

/// The file in the checkpoint base that records when the last automatic
/// sweep ran (Unix seconds, as the reference writes it).
pub const PRUNE_MARKER: &str = ".last_prune";
/// How the folders holding an older layout's checkpoints are named.
pub const LEGACY_PREFIX: &str = "legacy-";
/// Passes of the size cap (each drops one checkpoint per project) before
/// it gives up, as the reference bounds them.
const CAP_ROUNDS: usize = 20;
const DAY: u64 = 86_400;

/// What a sweep removes (`checkpoints.*` in config.yaml).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PruneRules {
    /// Projects (and legacy archives) untouched for more days than this go; 0 keeps them.
    pub retention_days: u64,
    /// Projects whose directory no longer exists go.
    pub delete_orphans: bool,
    /// The oldest checkpoints go until the store is under this many MiB; 0 is no cap.
    pub max_total_size_mb: u64,
}

impl Default for PruneRules {
    fn default() -> Self {
        Self {
            retention_days: 7,
            delete_orphans: true,
            max_total_size_mb: 500,
        }
    }
}

/// What a sweep did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PruneReport {
    /// Projects looked at.
    pub scanned: usize,
    /// Projects dropped because their directory is gone.
    pub deleted_orphan: usize,
    /// Projects and legacy archives dropped for age.
    pub deleted_stale: usize,
    /// Checkpoints dropped to bring the store under its size cap.
    pub evicted: usize,
    /// Removals that failed.
    pub errors: usize,
    /// Bytes the checkpoint base shrank by.
    pub bytes_freed: u64,
}

/// A folder holding an older layout's checkpoints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacyArchive {
    /// Its name (`legacy-<time>`).
    pub name: String,
    /// Bytes it holds.
    pub size: u64,
    /// When it was made.
    pub modified: SystemTime,
}

enum Verdict {
    Orphan,
    Stale,
}

impl Checkpoints {
    /// The reference's `prune_checkpoints`: drops orphan and stale projects
    /// of the store and of the older layout, legacy archives older than
    /// `retention_days`, reclaims their space, then evicts the oldest
    /// checkpoints (round-robin over projects, each keeping one) until the
    /// store fits `max_total_size_mb`.
    pub fn prune(&self, rules: &PruneRules, now: SystemTime) -> PruneReport {
        let base = self.base().to_path_buf();
        let mut report = PruneReport::default();
        let Ok(entries) = std::fs::read_dir(&base) else {
            return report;
        };
        let before = disk_usage(&base);
        let cutoff = (rules.retention_days > 0)
            .then(|| now.checked_sub(Duration::from_secs(rules.retention_days * DAY)))
            .flatten();
        for entry in entries.flatten() {
            let path = entry.path();
            if path == self.store || !path.is_dir() {
                continue;
            }
            if entry
                .file_name()
                .to_string_lossy()
                .starts_with(LEGACY_PREFIX)
            {
                let old = cutoff.is_some_and(|c| modified(&path).is_some_and(|m| m < c));
                if old {
                    remove(&path, Verdict::Stale, &mut report);
                }
                continue;
            }
            // A repository of the older layout, not yet moved aside.
            if !path.join("HEAD").exists() {
                continue;
            }
            report.scanned += 1;
            if let Some(verdict) = pre_v2_verdict(&path, rules, cutoff) {
                remove(&path, verdict, &mut report);
            }
        }
        if self.store.join("HEAD").is_file() {
            let _exclusive = self.lock(true);
            let cutoff_secs = cutoff.map(unix_secs);
            for (key, workdir, touched) in self.records() {
                report.scanned += 1;
                let verdict = if rules.delete_orphans && workdir.is_none_or(|w| !w.exists()) {
                    Verdict::Orphan
                } else if cutoff_secs.is_some_and(|c| touched > 0.0 && touched < c) {
                    Verdict::Stale
                } else {
                    continue;
                };
                self.forget(&key);
                match verdict {
                    Verdict::Orphan => report.deleted_orphan += 1,
                    Verdict::Stale => report.deleted_stale += 1,
                }
            }
            self.gc();
            if rules.max_total_size_mb > 0 {
                report.evicted = self.evict(rules.max_total_size_mb.saturating_mul(1024 * 1024));
            }
        }
        let after = disk_usage(&base);
        report.bytes_freed = report.bytes_freed.max(before.saturating_sub(after));
        report
    }

    /// The reference's `maybe_auto_prune_checkpoints`, run as a session
    /// starts: [`Checkpoints::prune`] at most once per `min_interval_hours`
    /// (the time of the last run is kept in [`PRUNE_MARKER`]). `None` when
    /// it was not due or there is no checkpoint base.
    pub fn auto_prune(
        &self,
        rules: &PruneRules,
        min_interval_hours: u64,
        now: SystemTime,
    ) -> Option<PruneReport> {
        let marker = self.base().join(PRUNE_MARKER);
        if !self.base().is_dir() {
            return None;
        }
        let now_secs = unix_secs(now);
        let last = std::fs::read_to_string(&marker)
            .ok()
            .and_then(|t| t.trim().parse::<f64>().ok());
        // A clock set back also waits: the reference compares the same way.
        if last.is_some_and(|l| now_secs - l < (min_interval_hours * 3600) as f64) {
            return None;
        }
        let report = self.prune(rules, now);
        let _ = std::fs::write(&marker, now_secs.to_string());
        Some(report)
    }

    /// The legacy archives in the checkpoint base, newest first.
    pub fn legacy_archives(&self) -> Vec<LegacyArchive> {
        let Ok(entries) = std::fs::read_dir(self.base()) else {
            return Vec::new();
        };
        let mut out: Vec<LegacyArchive> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.starts_with(LEGACY_PREFIX).then(|| LegacyArchive {
                    size: disk_usage(&e.path()),
                    modified: modified(&e.path()).unwrap_or(UNIX_EPOCH),
                    name,
                })
            })
            .collect();
        out.sort_by_key(|a| std::cmp::Reverse(a.modified));
        out
    }

    /// Deletes every legacy archive; returns how many went and the bytes
    /// they held (one that cannot be deleted is left).
    pub fn clear_legacy(&self) -> (usize, u64) {
        let mut done = (0, 0);
        for archive in self.legacy_archives() {
            if std::fs::remove_dir_all(self.base().join(&archive.name)).is_ok() {
                done.0 += 1;
                done.1 += archive.size;
            }
        }
        done
    }

    /// Moves whatever the checkpoint base holds besides the store, the
    /// marker and earlier archives (the reference's one-repository-per-
    /// project layout) into a new `legacy-<UTC time>/`; returns it, if any.
    pub(super) fn archive_legacy(&self, now: SystemTime) -> Option<PathBuf> {
        let base = self.base().to_path_buf();
        let entries = std::fs::read_dir(&base).ok()?;
        let mut archive: Option<PathBuf> = None;
        for entry in entries.flatten() {
            let name = entry.file_name();
            let shown = name.to_string_lossy();
            if entry.path() == self.store
                || shown == PRUNE_MARKER
                || shown.starts_with(LEGACY_PREFIX)
            {
                continue;
            }
            let root = match &archive {
                Some(root) => root,
                None => {
                    let root = base.join(format!("{LEGACY_PREFIX}{}", stamp(now)));
                    std::fs::create_dir_all(&root).ok()?;
                    archive.insert(root)
                }
            };
            // One that cannot move stays: the shared store never reads it.
            let _ = std::fs::rename(entry.path(), root.join(&name));
        }
        archive
    }

    /// After a checkpoint: if the store outgrew its cap, drop what is
    /// unreachable, then the oldest checkpoints until it fits.
    pub(super) fn cap_size(&self) {
        if disk_usage(&self.store) <= self.max_total_bytes {
            return;
        }
        let _exclusive = self.lock(true);
        self.gc();
        self.evict(self.max_total_bytes);
    }

    /// Drops the oldest checkpoint of every project holding more than one,
    /// and collects, until the store is under `cap` bytes; returns how many
    /// went. The reference measures without collecting between passes, so
    /// it drops about all; collecting each pass stops as soon as it fits.
    fn evict(&self, cap: u64) -> usize {
        let mut dropped = 0;
        for _ in 0..CAP_ROUNDS {
            if disk_usage(&self.store) <= cap {
                break;
            }
            let refs = self
                .git_store(&["for-each-ref", "--format=%(refname)", "refs/hermes"])
                .unwrap_or_default();
            let mut any = false;
            for reference in refs.lines().filter(|r| !r.trim().is_empty()) {
                let count = self.count(reference);
                if count > 1 && self.rechain(reference, count - 1).is_ok() {
                    dropped += 1;
                    any = true;
                }
            }
            if !any {
                break;
            }
            self.gc();
        }
        dropped
    }

    /// Deletes the objects no checkpoint reaches any more.
    fn gc(&self) {
        let _ = self.git_store(&["reflog", "expire", "--expire=now", "--all"]);
        let _ = self.git_store(&["gc", "--prune=now", "--quiet"]);
        // `gc` can remove the empty folders newer git wants in a repository.
        for sub in ["refs/heads", "branches"] {
            let _ = std::fs::create_dir_all(self.store.join(sub));
        }
    }

    /// Every project record: its key, directory and last save (Unix seconds).
    fn records(&self) -> Vec<(String, Option<PathBuf>, f64)> {
        let Ok(entries) = std::fs::read_dir(self.store.join("projects")) else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .filter_map(|e| {
                let text = std::fs::read_to_string(e.path()).ok()?;
                let v: serde_json::Value = serde_json::from_str(&text).ok()?;
                let key = e.path().file_stem()?.to_string_lossy().into_owned();
                let dir = v["workdir"]
                    .as_str()
                    .filter(|d| !d.is_empty())
                    .map(PathBuf::from);
                Some((key, dir, v["last_touch"].as_f64().unwrap_or(0.0)))
            })
            .collect()
    }

    /// Removes a project's checkpoints, index and record.
    fn forget(&self, key: &str) {
        let _ = self.git_store(&["update-ref", "-d", &format!("refs/hermes/{key}")]);
        let _ = std::fs::remove_file(self.store.join("indexes").join(key));
        let _ = std::fs::remove_file(self.store.join("projects").join(format!("{key}.json")));
    }
}

/// Whether a repository of the older layout goes: its recorded directory
/// (`HERMES_WORKDIR`) is gone, or nothing in it changed since `cutoff`.
fn pre_v2_verdict(repo: &Path, rules: &PruneRules, cutoff: Option<SystemTime>) -> Option<Verdict> {
    if rules.delete_orphans {
        let workdir = std::fs::read_to_string(repo.join("HERMES_WORKDIR"))
            .ok()
            .map(|t| PathBuf::from(t.trim()));
        if workdir.is_none_or(|w| !w.exists()) {
            return Some(Verdict::Orphan);
        }
    }
    let cutoff = cutoff?;
    newest_change(repo)
        .is_some_and(|n| n < cutoff)
        .then_some(Verdict::Stale)
}

fn remove(path: &Path, verdict: Verdict, report: &mut PruneReport) {
    let size = disk_usage(path);
    if std::fs::remove_dir_all(path).is_err() {
        report.errors += 1;
        return;
    }
    report.bytes_freed += size;
    match verdict {
        Verdict::Orphan => report.deleted_orphan += 1,
        Verdict::Stale => report.deleted_stale += 1,
    }
}

/// Bytes of the files under `path` (links not followed).
pub fn disk_usage(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path)
        .map(|entries| entries.flatten().map(|e| disk_usage(&e.path())).sum())
        .unwrap_or(0)
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::symlink_metadata(path).ok()?.modified().ok()
}

/// The latest modification of anything under `dir`.
fn newest_change(dir: &Path) -> Option<SystemTime> {
    let mut newest: Option<SystemTime> = None;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            if let Ok(m) = meta.modified() {
                newest = newest.max(Some(m));
            }
            if meta.is_dir() {
                stack.push(entry.path());
            }
        }
    }
    newest
}

fn unix_secs(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// `YYYYmmdd-HHMMSS` in UTC.
fn stamp(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / DAY, secs % DAY);
    // Howard Hinnant's days-to-civil, for days since 1970-01-01.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}{month:02}{day:02}-{:02}{:02}{:02}",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[cfg(test)]
#[path = "upkeep_tests.rs"]
mod tests;
