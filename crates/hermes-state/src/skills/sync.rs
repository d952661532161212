//! Seeding `$HERMES_HOME/skills/` with the skills shipped in the binary.
//!
//! `skills/.bundled_manifest` holds one `name:md5` line per bundled skill: the hash of
//! the copy last written. A skill whose files no longer hash to that value was changed
//! by the user and is never overwritten; one the user deleted is not brought back.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::md5::Md5;

/// The manifest's file name inside the skills directory.
pub const MANIFEST_FILE: &str = ".bundled_manifest";
/// A file in HERMES_HOME that turns bundled-skill seeding off.
pub const NO_BUNDLED_MARKER: &str = ".no-bundled-skills";

/// One skill shipped in the binary.
#[derive(Debug, Clone, Copy)]
pub struct BundledSkill {
    /// Its directory under `skills/`, e.g. `software-development/commit-messages`.
    pub path: &'static str,
    /// Its files as (relative path, content); `SKILL.md` among them.
    pub files: &'static [(&'static str, &'static str)],
}

impl BundledSkill {
    /// The skill's name: the last component of its path.
    pub fn name(&self) -> &'static str {
        self.path.rsplit('/').next().unwrap_or(self.path)
    }

    fn hash(&self) -> String {
        let mut files: Vec<_> = self.files.to_vec();
        files.sort_by(|a, b| a.0.cmp(b.0));
        let mut h = Md5::default();
        for (rel, content) in files {
            h.update(rel.as_bytes());
            h.update(content.as_bytes());
        }
        h.hex()
    }
}

/// What a sync did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SyncReport {
    /// Newly copied skills.
    pub copied: Vec<String>,
    /// Unmodified copies refreshed from a newer bundled version.
    pub updated: Vec<String>,
    /// Skills left alone because the user changed them.
    pub kept_modified: Vec<String>,
}

/// Hash of every file under `dir`: relative path then bytes, in sorted path order.
pub fn dir_hash(dir: &Path) -> String {
    let mut files = Vec::new();
    collect(dir, dir, &mut files);
    files.sort();
    let mut h = Md5::default();
    for (rel, path) in files {
        h.update(rel.as_bytes());
        if let Ok(bytes) = std::fs::read(&path) {
            h.update(&bytes);
        }
    }
    h.hex()
}

fn collect(base: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(base, &path, out);
        } else if let Ok(rel) = path.strip_prefix(base) {
            out.push((rel.to_string_lossy().replace('\\', "/"), path));
        }
    }
}

fn read_manifest(path: &Path) -> BTreeMap<String, String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| match l.split_once(':') {
            Some((n, h)) => (n.trim().to_owned(), h.trim().to_owned()),
            None => (l.to_owned(), String::new()),
        })
        .collect()
}

fn write_skill(dest: &Path, skill: &BundledSkill) -> std::io::Result<()> {
    if dest.exists() {
        std::fs::remove_dir_all(dest)?;
    }
    for (rel, content) in skill.files {
        let path = dest.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, content)?;
    }
    Ok(())
}

/// Copies new bundled skills into `skills_dir` and refreshes unmodified ones.
pub fn sync_bundled(skills_dir: &Path, bundled: &[BundledSkill]) -> std::io::Result<SyncReport> {
    let mut report = SyncReport::default();
    if skills_dir
        .parent()
        .is_some_and(|home| home.join(NO_BUNDLED_MARKER).exists())
    {
        return Ok(report);
    }
    std::fs::create_dir_all(skills_dir)?;
    let manifest_path = skills_dir.join(MANIFEST_FILE);
    let old = read_manifest(&manifest_path);
    let mut new = BTreeMap::new();
    for skill in bundled {
        let name = skill.name().to_owned();
        let dest = skills_dir.join(skill.path);
        let bundled_hash = skill.hash();
        match old.get(&name) {
            None if dest.exists() => {
                // Present before we ever synced it: only adopt an identical copy.
                if dir_hash(&dest) == bundled_hash {
                    new.insert(name, bundled_hash);
                } else {
                    report.kept_modified.push(name);
                }
            }
            None => {
                write_skill(&dest, skill)?;
                new.insert(name.clone(), bundled_hash);
                report.copied.push(name);
            }
            // Deleted by the user: respected.
            Some(origin) if !dest.exists() => {
                new.insert(name, origin.clone());
            }
            Some(origin) => {
                let current = dir_hash(&dest);
                if current != *origin && !origin.is_empty() {
                    report.kept_modified.push(name.clone());
                    new.insert(name, origin.clone());
                } else if current != bundled_hash {
                    write_skill(&dest, skill)?;
                    new.insert(name.clone(), bundled_hash);
                    report.updated.push(name);
                } else {
                    new.insert(name, bundled_hash);
                }
            }
        }
    }
    if new != old {
        let text: String = new.iter().map(|(n, h)| format!("{n}:{h}\n")).collect();
        hermes_fs::write_atomic(&manifest_path, text.as_bytes(), hermes_fs::Access::Keep)?;
    }
    Ok(report)
}
