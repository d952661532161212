//! Filesystem checkpoints: before a tool changes files in a project, its
//! tree is committed to a shadow git store under `HERMES_HOME/checkpoints/`
//! (the project's own `.git` is never touched), so `/rollback` can put the
//! files back. Git stores only what changed, so a checkpoint of a large tree
//! costs one `git add` of the changes, not a copy. The store's upkeep
//! (retention, size cap, older layouts) is in [`upkeep`].

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sha2::{Digest, Sha256};

mod site;
mod upkeep;
pub use upkeep::{LEGACY_PREFIX, LegacyArchive, PRUNE_MARKER, PruneReport, PruneRules, disk_usage};

/// Files in a project above which it is not checkpointed (too slow to scan).
const MAX_ENTRIES: usize = 50_000;
/// What marks a project root when walking up from a file.
const ROOT_MARKERS: &[&str] = &[
    ".git",
    "pyproject.toml",
    "package.json",
    "Cargo.toml",
    "go.mod",
    "Makefile",
    "pom.xml",
    ".hg",
    "Gemfile",
];
/// Never stored: build output, caches, dependencies, secrets, archives.
const EXCLUDES: &[&str] = &[
    "node_modules/",
    "dist/",
    "build/",
    "target/",
    "out/",
    ".next/",
    ".nuxt/",
    "__pycache__/",
    "*.pyc",
    "*.pyo",
    ".cache/",
    ".pytest_cache/",
    ".mypy_cache/",
    ".ruff_cache/",
    "coverage/",
    ".coverage",
    ".venv/",
    "venv/",
    "env/",
    ".git/",
    ".hg/",
    ".svn/",
    ".worktrees/",
    "*.so",
    "*.dylib",
    "*.dll",
    "*.o",
    "*.a",
    "*.jar",
    "*.class",
    "*.exe",
    "*.obj",
    "*.mp4",
    "*.mov",
    "*.mkv",
    "*.webm",
    "*.zip",
    "*.tar",
    "*.tar.gz",
    "*.tgz",
    "*.7z",
    "*.rar",
    "*.iso",
    ".env",
    ".env.*",
    ".env.local",
    ".env.*.local",
    ".DS_Store",
    "Thumbs.db",
    "*.log",
];

/// One checkpoint of a project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    /// The full commit hash.
    pub hash: String,
    /// `YYYY-MM-DD HH:MM` (local time of the commit).
    pub when: String,
    /// Why it was taken (`before patch` …).
    pub reason: String,
    /// Files changed since the checkpoint before it, with lines added and removed.
    pub stat: Option<(u32, u32, u32)>,
}

/// The checkpoints of one session: where the store is, whether it is on,
/// and which directories were already saved in this model iteration.
#[derive(Debug)]
pub struct Checkpoints {
    store: PathBuf,
    /// Where the store and the projects are (this host, or an environment).
    site: site::Site,
    enabled: bool,
    max_snapshots: usize,
    max_total_bytes: u64,
    done: Mutex<HashSet<PathBuf>>,
}

impl Checkpoints {
    /// Checkpoints kept in `hermes_home/checkpoints/store`, taken when `enabled`.
    pub fn new(hermes_home: &Path, enabled: bool, max_snapshots: usize) -> Self {
        Self {
            store: hermes_home.join("checkpoints").join("store"),
            site: site::Site::Host,
            enabled,
            max_snapshots: max_snapshots.max(1),
            max_total_bytes: 0,
            done: Mutex::new(HashSet::new()),
        }
    }

    /// Checkpoints of projects inside `env` (an SSH host, a container), kept
    /// there in `~/.hermes/checkpoints/store` of its user: the store goes
    /// where the files are, and `git` runs there.
    pub fn in_environment(
        env: std::sync::Arc<dyn hermes_env::Environment>,
        enabled: bool,
        max_snapshots: usize,
    ) -> Self {
        Self {
            store: PathBuf::new(),
            site: site::Site::env(env),
            enabled,
            max_snapshots: max_snapshots.max(1),
            max_total_bytes: 0,
            done: Mutex::new(HashSet::new()),
        }
    }

    /// The store's directory where its site is.
    fn store_dir(&self) -> Result<PathBuf, String> {
        match self.site.home()? {
            None => Ok(self.store.clone()),
            Some(home) => Ok(home.join(".hermes").join("checkpoints").join("store")),
        }
    }

    /// The project root for a file `path` (its nearest parent with a
    /// project marker), looked up where the files are.
    pub fn project_of(&self, path: &Path) -> PathBuf {
        self.site.project_root(path, ROOT_MARKERS)
    }

    /// After each checkpoint, the oldest are dropped until the store is
    /// under `mb` MiB (`checkpoints.max_total_size_mb`); 0 is no cap.
    pub fn with_size_cap(mut self, mb: u64) -> Self {
        // In an environment the store is its user's to size.
        if self.site.is_host() {
            self.max_total_bytes = mb.saturating_mul(1024 * 1024);
        }
        self
    }

    /// Whether checkpoints are taken.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// A new model iteration: each directory may be saved once more.
    pub fn new_turn(&self) {
        self.done
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
    }

    /// Saves `dir` before a change (`reason` says which), once per
    /// iteration; returns whether a new checkpoint was made. Failures only
    /// cost the checkpoint.
    pub fn ensure(&self, dir: &Path, reason: &str, home: Option<&Path>) -> bool {
        if !self.enabled {
            return false;
        }
        let Some(dir) = self.site.canonical_dir(dir) else {
            return false;
        };
        let env_home = self.site.home().ok().flatten();
        let home = env_home.as_deref().or(home);
        if dir == Path::new("/") || home.is_some_and(|h| h == dir) {
            return false;
        }
        if !self
            .done
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(dir.clone())
        {
            return false;
        }
        self.take(&dir, reason).unwrap_or(false)
    }

    fn project(&self, dir: &Path) -> (String, PathBuf) {
        let digest = Sha256::digest(dir.to_string_lossy().as_bytes());
        let key: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
        let store = self.store_dir().unwrap_or_else(|_| self.store.clone());
        let index = store.join("indexes").join(&key);
        (key, index)
    }

    /// `git` on the store with `dir` as the work tree (and `index`).
    fn git(&self, dir: &Path, index: Option<&Path>, args: &[&str]) -> Result<String, String> {
        self.git_with(Some(dir), index, &[], args)
    }

    /// `git` on the store alone (refs, objects), not on a project.
    fn git_store(&self, args: &[&str]) -> Result<String, String> {
        self.git_with(None, None, &[], args)
    }

    /// `git` on the store, isolated from the user's configuration, with
    /// `extra` variables.
    fn git_with(
        &self,
        dir: Option<&Path>,
        index: Option<&Path>,
        extra: &[(&str, &str)],
        args: &[&str],
    ) -> Result<String, String> {
        let store = self.store_dir()?;
        self.site.git(&site::GitCall {
            store: &store,
            work: dir,
            index,
            extra,
            args,
        })
    }

    /// A lock on the store: shared while checkpoints are written or read,
    /// exclusive while `gc` deletes unreachable objects, which would
    /// otherwise take the blobs a checkpoint has added but not yet
    /// committed (several Hermes processes share the store). `None` where
    /// the file system cannot lock: the work goes on unguarded.
    fn lock(&self, exclusive: bool) -> Option<std::fs::File> {
        if !self.site.is_host() {
            // One Hermes at a time uses an environment's store, and `gc`
            // (the only exclusive user) runs on the host's store alone.
            return None;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.store.join("hermes.flock"))
            .ok()?;
        let locked = if exclusive {
            file.lock()
        } else {
            file.lock_shared()
        };
        locked.ok().map(|()| file)
    }

    fn init_store(&self) -> Result<(), String> {
        let store = self.store_dir()?;
        if self.site.is_host() && !store.exists() {
            // What else lies in the base is an older layout: kept aside, as
            // the reference does on its first use of the shared store.
            self.archive_legacy(std::time::SystemTime::now());
        }
        if self.site.is_file(&store.join("HEAD")) {
            return Ok(());
        }
        self.site.init_bare(&store)?;
        for (key, value) in [
            ("user.email", "hermes@local"),
            ("user.name", "Hermes Checkpoint"),
            ("commit.gpgsign", "false"),
            ("gc.auto", "0"),
            ("core.autocrlf", "false"),
        ] {
            let _ = self.git_store(&["config", key, value]);
        }
        self.site.write(
            &store.join("info").join("exclude"),
            &(EXCLUDES.join("\n") + "\n"),
        )
    }

    fn tip(&self, dir: &Path, key: &str) -> Option<String> {
        self.git(
            dir,
            None,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("refs/hermes/{key}"),
            ],
        )
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
    }

    /// Commits `dir`'s current tree; `Ok(false)` when nothing changed.
    /// Then holds the store to `with_size_cap`.
    fn take(&self, dir: &Path, reason: &str) -> Result<bool, String> {
        if self.site.entries_up_to(dir, MAX_ENTRIES + 1) > MAX_ENTRIES {
            return Ok(false);
        }
        self.init_store()?;
        let taken = {
            let _shared = self.lock(false);
            self.commit(dir, reason)?
        };
        if taken && self.max_total_bytes > 0 {
            self.cap_size();
        }
        Ok(taken)
    }

    fn commit(&self, dir: &Path, reason: &str) -> Result<bool, String> {
        let (key, index) = self.project(dir);
        if let Some(parent) = index.parent() {
            self.site.mkdirs(parent)?;
        }
        let tip = self.tip(dir, &key);
        if let Some(tip) = &tip
            && !self.site.is_file(&index)
        {
            self.git(dir, Some(&index), &["read-tree", tip])?;
        }
        self.git(dir, Some(&index), &["add", "-A", "--", "."])?;
        if let Some(tip) = &tip
            && self
                .git(
                    dir,
                    Some(&index),
                    &["diff-index", "--cached", "--quiet", tip],
                )
                .is_ok()
        {
            return Ok(false);
        }
        let tree = self
            .git(dir, Some(&index), &["write-tree"])?
            .trim()
            .to_owned();
        let mut args = vec!["commit-tree", tree.as_str(), "-m", reason];
        if let Some(tip) = &tip {
            args.extend(["-p", tip.as_str()]);
        }
        let commit = self.git(dir, None, &args)?.trim().to_owned();
        self.git(
            dir,
            None,
            &["update-ref", &format!("refs/hermes/{key}"), &commit],
        )?;
        self.touch_project(&key, dir);
        self.keep_newest(&key)?;
        Ok(true)
    }

    /// Drops a project's checkpoints beyond `max_snapshots`; the objects
    /// only they held go at the next `gc` (`hermes checkpoints prune`, the
    /// daily sweep, the size cap).
    fn keep_newest(&self, key: &str) -> Result<(), String> {
        let reference = format!("refs/hermes/{key}");
        if self.count(&reference) <= self.max_snapshots {
            return Ok(());
        }
        self.rechain(&reference, self.max_snapshots)
    }

    /// How many checkpoints `reference` holds.
    fn count(&self, reference: &str) -> usize {
        self.git_store(&["rev-list", "--count", reference])
            .ok()
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0)
    }

    /// Keeps only the newest `keep` checkpoints of `reference`: they are
    /// re-chained without their elders (same trees, reasons and times).
    fn rechain(&self, reference: &str, keep: usize) -> Result<(), String> {
        let keep = format!("-n{keep}");
        let log = self.git_store(&[
            "log",
            reference,
            "--format=%T%x00%ad%x00%s",
            "--date=raw",
            &keep,
            "--reverse",
        ])?;
        let mut parent: Option<String> = None;
        for line in log.lines() {
            let mut fields = line.split('\0');
            let (Some(tree), Some(date), Some(reason)) =
                (fields.next(), fields.next(), fields.next())
            else {
                continue;
            };
            let mut args = vec!["commit-tree", tree, "-m", reason];
            if let Some(p) = &parent {
                args.extend(["-p", p.as_str()]);
            }
            let dates = [("GIT_AUTHOR_DATE", date), ("GIT_COMMITTER_DATE", date)];
            let commit = self.git_with(None, None, &dates, &args)?;
            parent = Some(commit.trim().to_owned());
        }
        if let Some(tip) = parent {
            self.git_store(&["update-ref", reference, &tip])?;
        }
        Ok(())
    }

    /// Records which directory a project key stands for, and when it was last saved.
    fn touch_project(&self, key: &str, dir: &Path) {
        let Ok(store) = self.store_dir() else {
            return;
        };
        let meta = store.join("projects").join(format!("{key}.json"));
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let created = self
            .site
            .read(&meta)
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| v["created_at"].as_u64())
            .unwrap_or(now);
        let record = serde_json::json!({
            "workdir": dir.display().to_string(),
            "created_at": created,
            "last_touch": now,
        });
        let _ = self.site.write(&meta, &record.to_string());
    }

    /// Every project with checkpoints: (directory, checkpoints kept, last
    /// saved as Unix seconds), most recently saved first.
    pub fn projects(&self) -> Vec<(PathBuf, usize, u64)> {
        let Ok(store) = self.store_dir() else {
            return Vec::new();
        };
        let mut out: Vec<(PathBuf, usize, u64)> = self
            .site
            .json_files(&store.join("projects"))
            .into_iter()
            .filter_map(|(key, text)| {
                let v: serde_json::Value = serde_json::from_str(&text).ok()?;
                let dir = PathBuf::from(v["workdir"].as_str()?);
                let count = self.count(&format!("refs/hermes/{key}"));
                // The reference writes times as floats.
                let touched = v["last_touch"].as_f64().unwrap_or(0.0) as u64;
                Some((dir, count, touched))
            })
            .collect();
        out.sort_by_key(|p| std::cmp::Reverse(p.2));
        out
    }

    /// Where the checkpoints live.
    pub fn base(&self) -> &Path {
        self.store.parent().unwrap_or(&self.store)
    }

    /// The checkpoints of `dir`, newest first.
    pub fn list(&self, dir: &Path) -> Vec<Checkpoint> {
        let Some(dir) = self.site.canonical_dir(dir) else {
            return Vec::new();
        };
        let (key, _) = self.project(&dir);
        if self.tip(&dir, &key).is_none() {
            return Vec::new();
        }
        let limit = format!("-n{}", self.max_snapshots);
        let log = self
            .git(
                &dir,
                None,
                &[
                    "log",
                    &format!("refs/hermes/{key}"),
                    "--format=%H|%ad|%s",
                    "--date=format:%Y-%m-%d %H:%M",
                    &limit,
                ],
            )
            .unwrap_or_default();
        log.lines()
            .filter_map(|line| {
                let mut parts = line.splitn(3, '|');
                let (hash, when, reason) = (parts.next()?, parts.next()?, parts.next()?);
                let stat = self
                    .git(
                        &dir,
                        None,
                        &["diff", "--shortstat", &format!("{hash}~1"), hash],
                    )
                    .ok()
                    .and_then(|s| parse_shortstat(&s));
                Some(Checkpoint {
                    hash: hash.to_owned(),
                    when: when.to_owned(),
                    reason: reason.to_owned(),
                    stat,
                })
            })
            .collect()
    }

    /// What changed in `dir` since checkpoint `hash` (stat, then the diff).
    pub fn diff(&self, dir: &Path, hash: &str) -> Result<String, String> {
        let dir = self.canonical(dir)?;
        let (key, index) = self.project(&dir);
        let _shared = self.lock(false);
        self.git(&dir, Some(&index), &["add", "-A", "--", "."])?;
        let stat = self.git(&dir, Some(&index), &["diff", "--stat", hash, "--cached"]);
        let patch = self.git(
            &dir,
            Some(&index),
            &["diff", hash, "--cached", "--no-color"],
        );
        if let Some(tip) = self.tip(&dir, &key) {
            let _ = self.git(&dir, Some(&index), &["read-tree", &tip]);
        }
        Ok(format!("{}\n{}", stat?, patch?).trim().to_owned())
    }

    /// Puts `dir` (or only `file`, relative to it) back as checkpoint `hash`
    /// had it, after saving the current state as a new checkpoint. Files
    /// created since are left alone.
    pub fn restore(&self, dir: &Path, hash: &str, file: Option<&str>) -> Result<(), String> {
        let dir = self.canonical(dir)?;
        if let Some(f) = file
            && (Path::new(f).is_absolute()
                || Path::new(f)
                    .components()
                    .any(|c| c == std::path::Component::ParentDir))
        {
            return Err(format!(
                "File path must be relative to {} and stay inside it: {f}",
                dir.display()
            ));
        }
        let short: String = hash.chars().take(8).collect();
        self.take(
            &dir,
            &format!("pre-rollback snapshot (restoring to {short})"),
        )?;
        let (_, index) = self.project(&dir);
        let target = file.unwrap_or(".");
        let _shared = self.lock(false);
        self.git(&dir, Some(&index), &["checkout", hash, "--", target])
            .map(|_| ())
            .map_err(|e| format!("Restore failed: {e}"))
    }
}

impl Checkpoints {
    fn canonical(&self, dir: &Path) -> Result<PathBuf, String> {
        self.site
            .canonical_dir(dir)
            .ok_or_else(|| format!("{} is not a directory", dir.display()))
    }
}

/// The project root for a file: the nearest parent holding a project marker,
/// else the file's own directory.
pub fn project_dir(path: &Path) -> PathBuf {
    let start = if path.is_dir() {
        path.to_path_buf()
    } else {
        path.parent()
            .map_or_else(|| path.to_path_buf(), Path::to_path_buf)
    };
    let mut dir = start.as_path();
    loop {
        if ROOT_MARKERS.iter().any(|m| dir.join(m).exists()) {
            return dir.to_path_buf();
        }
        match dir.parent() {
            Some(parent) if parent != Path::new("/") && parent != dir => dir = parent,
            _ => return start,
        }
    }
}

/// Whether a shell command is likely to change or remove files.
pub fn is_destructive(command: &str) -> bool {
    let words = [
        "rm ",
        "rmdir ",
        "cp ",
        "install ",
        "mv ",
        "truncate ",
        "dd ",
        "shred ",
        "git reset ",
        "git clean ",
        "git checkout ",
    ];
    let padded = format!(" {command}");
    let separated = |w: &str| {
        [" ", "&&", "||", ";", "`", "("]
            .iter()
            .any(|sep| padded.contains(&format!("{sep}{w}")))
    };
    if words.iter().any(|w| separated(w)) || padded.contains("sed -i") {
        return true;
    }
    // `>` that overwrites (not `>>`, not `2>&1`-style redirections of fds).
    let bytes = command.as_bytes();
    bytes.iter().enumerate().any(|(i, &b)| {
        b == b'>'
            && bytes.get(i + 1) != Some(&b'>')
            && bytes.get(i + 1) != Some(&b'&')
            && (i == 0 || (bytes[i - 1] != b'>' && !bytes[i - 1].is_ascii_digit()))
    })
}

fn count_entries(dir: &Path, stop_at: usize) -> usize {
    let mut count = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            count += 1;
            if count >= stop_at {
                return count;
            }
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(entry.path());
            }
        }
    }
    count
}

fn parse_shortstat(text: &str) -> Option<(u32, u32, u32)> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let number_before = |word: &str| {
        text.split(", ")
            .find(|part| part.contains(word))
            .and_then(|part| part.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    Some((
        number_before("changed"),
        number_before("insertion"),
        number_before("deletion"),
    ))
}

#[cfg(test)]
mod tests;
