//! The output directory: append-only JSONL files written one fsynced line
//! per finished prompt, the scan that finds what an earlier (possibly
//! killed) run already did, and `checkpoint.json`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::BatchError;
use crate::stats::UsageTally;

/// Completed trajectories.
pub const SAMPLES: &str = "trajectory_samples.jsonl";
/// Trajectories that did not complete, and error records.
pub const FAILED: &str = "failed_trajectories.jsonl";
/// Every trajectory, sorted by prompt index (written at the end).
pub const TRAJECTORIES: &str = "trajectories.jsonl";
/// Progress, in the reference's format.
pub const CHECKPOINT: &str = "checkpoint.json";
/// Totals of the run.
pub const STATISTICS: &str = "statistics.json";

/// What a line of an output file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// A trajectory that completed.
    Completed,
    /// A trajectory that did not complete.
    Incomplete,
    /// A sample discarded for having no reasoning (done: not run again).
    Discarded,
    /// A prompt whose run failed (no trajectory); retried by the next run.
    Error,
}

/// One valid line of an output file.
#[derive(Debug, Clone, PartialEq)]
pub struct Scanned {
    /// The prompt's index.
    pub index: usize,
    /// What the line is.
    pub kind: Kind,
    /// The prompt: the first `human` turn, or an error record's `prompt`.
    pub prompt: String,
    /// The line as written (copied verbatim when files are merged).
    pub line: String,
    /// The line parsed.
    pub value: serde_json::Value,
}

/// The records of one JSONL line, `None` when it is not a record of ours.
pub fn parse_line(line: &str) -> Option<Scanned> {
    let value: serde_json::Value = serde_json::from_str(line).ok()?;
    let index = usize::try_from(value.get("prompt_index")?.as_u64()?).ok()?;
    let (kind, prompt) = if value.get("conversations").is_some_and(|c| c.is_array()) {
        let prompt = value["conversations"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| t["from"] == "human")
            .and_then(|t| t["value"].as_str())
            .unwrap_or("")
            .to_owned();
        let kind = if value["completed"] == true {
            Kind::Completed
        } else {
            Kind::Incomplete
        };
        (kind, prompt)
    } else if value["discarded"].is_string() {
        (
            Kind::Discarded,
            value["prompt"].as_str().unwrap_or("").to_owned(),
        )
    } else if value["failed"] == true {
        (
            Kind::Error,
            value["prompt"].as_str().unwrap_or("").to_owned(),
        )
    } else {
        return None;
    };
    Some(Scanned {
        index,
        kind,
        prompt,
        line: line.to_owned(),
        value,
    })
}

/// The records in `path` (none when it does not exist), and how many
/// non-blank lines were not records.
pub fn read_records(path: &Path) -> Result<(Vec<Scanned>, usize), BatchError> {
    let text = match std::fs::read(path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((Vec::new(), 0)),
        Err(e) => return Err(BatchError::io(path, e)),
    };
    let mut records = Vec::new();
    let mut invalid = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match parse_line(line) {
            Some(r) => records.push(r),
            None => invalid += 1,
        }
    }
    Ok((records, invalid))
}

/// Cuts a line that a crash left half-written off the end of `path`:
/// everything after the last newline goes. Returns how many bytes went.
pub fn repair_tail(path: &Path) -> Result<u64, BatchError> {
    let mut file = match OpenOptions::new().read(true).write(true).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(BatchError::io(path, e)),
    };
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| BatchError::io(path, e))?;
    let keep = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |p| p + 1);
    let dropped = (bytes.len() - keep) as u64;
    if dropped > 0 {
        file.set_len(keep as u64)
            .and_then(|()| file.sync_all())
            .map_err(|e| BatchError::io(path, e))?;
    }
    Ok(dropped)
}

/// What an output directory already holds.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Scan {
    /// Every record of both files, samples first.
    pub records: Vec<Scanned>,
    /// Bytes of half-written last lines cut off, per file.
    pub repaired: Vec<(PathBuf, u64)>,
    /// Lines that were not records.
    pub invalid_lines: usize,
}

impl Scan {
    /// Repairs and reads `dir`'s two record files.
    pub fn of(dir: &Path) -> Result<Self, BatchError> {
        let mut scan = Scan::default();
        for name in [SAMPLES, FAILED] {
            let path = dir.join(name);
            let dropped = repair_tail(&path)?;
            if dropped > 0 {
                scan.repaired.push((path.clone(), dropped));
            }
            let (records, invalid) = read_records(&path)?;
            scan.records.extend(records);
            scan.invalid_lines += invalid;
        }
        Ok(scan)
    }

    /// Indices that have a trajectory (error records do not count: their
    /// prompts are run again).
    pub fn done(&self) -> BTreeSet<usize> {
        self.records
            .iter()
            .filter(|r| r.kind != Kind::Error)
            .map(|r| r.index)
            .collect()
    }

    /// Indices of samples discarded for having no reasoning.
    pub fn discarded(&self) -> BTreeSet<usize> {
        self.records
            .iter()
            .filter(|r| r.kind == Kind::Discarded)
            .map(|r| r.index)
            .collect()
    }

    /// The trimmed prompts of the trajectories (`--resume` skips dataset
    /// entries with the same text, as the reference does).
    pub fn done_prompts(&self) -> BTreeSet<String> {
        self.records
            .iter()
            .filter(|r| r.kind != Kind::Error)
            .map(|r| r.prompt.trim().to_owned())
            .collect()
    }
}

/// The record that stands for each prompt among `records`: a completed
/// trajectory before an incomplete one before an error record; the first
/// of equals. Sorted by prompt index.
pub fn best_records(records: &[Scanned]) -> BTreeMap<usize, &Scanned> {
    let mut best: BTreeMap<usize, &Scanned> = BTreeMap::new();
    for r in records {
        match best.get(&r.index) {
            Some(kept) if kept.kind <= r.kind => {}
            _ => {
                best.insert(r.index, r);
            }
        }
    }
    best
}

/// Which record file a line goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// `trajectory_samples.jsonl`.
    Samples,
    /// `failed_trajectories.jsonl`.
    Failed,
}

/// Appends records to the two files, one durable line at a time.
#[derive(Debug)]
pub struct Appender {
    dir: PathBuf,
    samples: File,
    failed: File,
}

impl Appender {
    /// Opens (creating) `dir`'s record files for appending.
    pub fn open(dir: &Path) -> Result<Self, BatchError> {
        let open = |name: &str| {
            let path = dir.join(name);
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(|e| BatchError::io(&path, e))
        };
        Ok(Self {
            dir: dir.to_path_buf(),
            samples: open(SAMPLES)?,
            failed: open(FAILED)?,
        })
    }

    /// Appends `line` and a newline in one write, then syncs the file: once
    /// this returns, the record survives a crash.
    pub fn append(&mut self, target: Target, line: &str) -> Result<(), BatchError> {
        let (file, name) = match target {
            Target::Samples => (&mut self.samples, SAMPLES),
            Target::Failed => (&mut self.failed, FAILED),
        };
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        file.seek(SeekFrom::End(0))
            .and_then(|_| file.write_all(&bytes))
            .and_then(|()| file.sync_data())
            .map_err(|e| BatchError::io(&self.dir.join(name), e))
    }
}

/// The lock file that keeps two runs from writing one directory.
pub const LOCK: &str = ".lock";

/// An exclusive lock on a run directory, held while a run or a merge
/// writes there (released when dropped, or by the OS when the process dies).
#[derive(Debug)]
pub struct DirLock {
    _file: File,
}

impl DirLock {
    /// Locks `dir`, or says that another run holds it.
    pub fn acquire(dir: &Path) -> Result<Self, BatchError> {
        let path = dir.join(LOCK);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| BatchError::io(&path, e))?;
        match file.try_lock() {
            Ok(()) => Ok(Self { _file: file }),
            Err(std::fs::TryLockError::WouldBlock) => Err(BatchError::Usage(format!(
                "another `hermes batch` is writing to {}: wait for it to finish (or stop it) and try again",
                dir.display()
            ))),
            Err(std::fs::TryLockError::Error(e)) => Err(BatchError::io(&path, e)),
        }
    }
}

/// Per batch, in `checkpoint.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct BatchStat {
    /// Prompts of the batch with a trajectory.
    pub processed: u64,
    /// Prompts skipped (always 0 here: skipped prompts are simply not run).
    pub skipped: u64,
    /// Samples discarded for having no reasoning.
    pub discarded_no_reasoning: u64,
}

/// `checkpoint.json`: the reference's keys, plus the usage so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The run it belongs to.
    pub run_name: String,
    /// Sorted indices of the prompts with a trajectory.
    pub completed_prompts: Vec<usize>,
    /// Per batch number.
    pub batch_stats: BTreeMap<u64, BatchStat>,
    /// When it was written (local ISO-8601).
    pub last_updated: Option<String>,
    /// Tokens, calls and cost of every prompt run so far in this directory.
    #[serde(default)]
    pub usage: UsageTally,
}

impl Checkpoint {
    /// An empty checkpoint for `run_name`.
    pub fn new(run_name: &str) -> Self {
        Self {
            run_name: run_name.to_owned(),
            completed_prompts: Vec::new(),
            batch_stats: BTreeMap::new(),
            last_updated: None,
            usage: UsageTally::default(),
        }
    }

    /// The checkpoint in `path` if it belongs to `run_name`, else a new one;
    /// with a warning when the file was there but unusable.
    pub fn load(path: &Path, run_name: &str) -> (Self, Option<String>) {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return (Self::new(run_name), None),
            Err(e) => {
                return (
                    Self::new(run_name),
                    Some(format!("Failed to load checkpoint {}: {e}", path.display())),
                );
            }
        };
        match serde_json::from_str::<Checkpoint>(&text) {
            Ok(cp) if cp.run_name == run_name => (cp, None),
            Ok(_) => (Self::new(run_name), None),
            Err(e) => (
                Self::new(run_name),
                Some(format!("Failed to load checkpoint {}: {e}", path.display())),
            ),
        }
    }

    /// Sets the completed prompts (and their per-batch counts) to `done`.
    pub fn set_done(
        &mut self,
        done: &BTreeSet<usize>,
        discarded: &BTreeSet<usize>,
        batch_size: usize,
    ) {
        self.completed_prompts = done.iter().copied().collect();
        self.batch_stats.clear();
        for i in done {
            let batch = (i / batch_size.max(1)) as u64;
            let stat = self.batch_stats.entry(batch).or_default();
            if discarded.contains(i) {
                stat.discarded_no_reasoning += 1;
            } else {
                stat.processed += 1;
            }
        }
    }

    /// Writes it to `path` atomically (indent 2, as the reference).
    pub fn save(&mut self, path: &Path, now: String) -> Result<(), BatchError> {
        self.last_updated = Some(now);
        let text = crate::json::to_pretty_string(self)
            .map_err(|e| BatchError::Fatal(format!("cannot encode the checkpoint: {e}")))?;
        hermes_fs::write_atomic(path, text.as_bytes(), hermes_fs::Access::Keep)
            .map_err(|e| BatchError::io(path, e))
    }
}

#[cfg(test)]
#[path = "output_tests.rs"]
mod tests;
