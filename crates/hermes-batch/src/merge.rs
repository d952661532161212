//! `hermes batch merge NAME`: combine a run's own files and those of every
//! shard into one set, one record per prompt, sorted by prompt index.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::BatchError;
use crate::output::{
    CHECKPOINT, Checkpoint, DirLock, FAILED, Kind, SAMPLES, STATISTICS, Scanned, TRAJECTORIES,
    best_records, read_records,
};
use crate::report::{RunFacts, Statistics};
use crate::stats::UsageTally;

/// What a merge did.
#[derive(Debug, Clone, PartialEq)]
pub struct MergeOutcome {
    /// The run's directory.
    pub run_dir: PathBuf,
    /// The directories read, relative to the run's (`.` for its own files).
    pub sources: Vec<String>,
    /// Records read, before removing duplicates.
    pub records_read: usize,
    /// Lines left out because they were not valid records.
    pub invalid_lines: usize,
    /// Trajectories written to `trajectories.jsonl`.
    pub trajectories: usize,
    /// The combined statistics (also written to `statistics.json`).
    pub statistics: Statistics,
}

/// Writes `file` in `dir` holding `lines`, one per line, atomically.
fn write_lines<'a>(
    dir: &Path,
    file: &str,
    lines: impl Iterator<Item = &'a str>,
) -> Result<(), BatchError> {
    let mut text = String::new();
    for line in lines {
        text.push_str(line);
        text.push('\n');
    }
    let path = dir.join(file);
    hermes_fs::write_atomic(&path, text.as_bytes(), hermes_fs::Access::Keep)
        .map_err(|e| BatchError::io(&path, e))
}

/// Writes `trajectories.jsonl` in `dir`: the trajectory of each prompt in
/// `best` (error records left out), sorted by index. Returns how many.
pub fn write_trajectories(
    dir: &Path,
    best: &BTreeMap<usize, &Scanned>,
) -> Result<usize, BatchError> {
    let lines: Vec<&str> = best
        .values()
        .filter(|r| matches!(r.kind, Kind::Completed | Kind::Incomplete))
        .map(|r| r.line.as_str())
        .collect();
    write_lines(dir, TRAJECTORIES, lines.iter().copied())?;
    Ok(lines.len())
}

/// `run_dir` and its `shards/*` directories, with names relative to it.
fn sources(run_dir: &Path) -> Result<Vec<(String, PathBuf)>, BatchError> {
    let mut out = vec![(".".to_owned(), run_dir.to_path_buf())];
    let shards = run_dir.join("shards");
    let entries = match std::fs::read_dir(&shards) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(BatchError::io(&shards, e)),
    };
    let mut dirs: Vec<(String, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| {
            (
                format!("shards/{}", e.file_name().to_string_lossy()),
                e.path(),
            )
        })
        .collect();
    dirs.sort();
    out.extend(dirs);
    Ok(out)
}

/// The statistics a directory's own run wrote (not a merge's).
fn run_statistics(dir: &Path) -> Option<Statistics> {
    let text = std::fs::read_to_string(dir.join(STATISTICS)).ok()?;
    serde_json::from_str::<Statistics>(&text)
        .ok()
        .filter(|s| s.merged_from.is_empty())
}

/// Merges `<output_dir>/<run_name>/` and its shards (see the module docs):
/// rewrites the run's `trajectory_samples.jsonl`, `failed_trajectories.jsonl`
/// and `trajectories.jsonl` and writes the combined `statistics.json`.
/// `now` is the local time to stamp it with. Do not merge while a run of
/// the same name is writing.
pub fn merge(output_dir: &Path, run_name: &str, now: String) -> Result<MergeOutcome, BatchError> {
    crate::shard::check_run_name(run_name)?;
    let run_dir = output_dir.join(run_name);
    if !run_dir.is_dir() {
        return Err(BatchError::Usage(format!(
            "no run named '{run_name}' in {} (give the --run-name of an earlier `hermes batch`, and the same --output-dir)",
            output_dir.display()
        )));
    }
    // Nothing may be writing any of the directories meanwhile.
    let dirs = sources(&run_dir)?;
    let _locks = dirs
        .iter()
        .map(|(_, dir)| DirLock::acquire(dir))
        .collect::<Result<Vec<_>, _>>()?;
    let mut records = Vec::new();
    let mut invalid_lines = 0;
    let mut usage = UsageTally::default();
    let mut stats = Vec::new();
    let mut names = Vec::new();
    for (name, dir) in dirs {
        let before = records.len();
        for file in [SAMPLES, FAILED] {
            let (found, invalid) = read_records(&dir.join(file))?;
            records.extend(found);
            invalid_lines += invalid;
        }
        let (checkpoint, _) = Checkpoint::load(&dir.join(CHECKPOINT), run_name);
        usage.add(&checkpoint.usage);
        let own = run_statistics(&dir);
        if records.len() > before || own.is_some() {
            names.push(name);
        }
        stats.extend(own);
    }
    let best = best_records(&records);
    let trajectories = write_trajectories(&run_dir, &best)?;
    write_lines(
        &run_dir,
        SAMPLES,
        best.values()
            .filter(|r| r.kind == Kind::Completed)
            .map(|r| r.line.as_str()),
    )?;
    write_lines(
        &run_dir,
        FAILED,
        best.values()
            .filter(|r| r.kind != Kind::Completed)
            .map(|r| r.line.as_str()),
    )?;
    let statistics = combined(
        run_name,
        &stats,
        &best,
        &records,
        &usage,
        names.clone(),
        now,
    );
    let text = crate::json::to_pretty_string(&statistics)
        .map_err(|e| BatchError::Fatal(format!("cannot encode the statistics: {e}")))?;
    let path = run_dir.join(STATISTICS);
    hermes_fs::write_atomic(&path, text.as_bytes(), hermes_fs::Access::Keep)
        .map_err(|e| BatchError::io(&path, e))?;
    Ok(MergeOutcome {
        run_dir,
        sources: names,
        records_read: records.len(),
        invalid_lines,
        trajectories,
        statistics,
    })
}

/// Distinct non-empty values, joined.
fn joined<'a>(values: impl Iterator<Item = &'a str>) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for v in values.filter(|v| !v.is_empty()) {
        if !seen.contains(&v) {
            seen.push(v);
        }
    }
    seen.join(", ")
}

/// The statistics of the merged records, with the sizes and timing of the
/// runs' own statistics and the usage of their checkpoints.
fn combined(
    run_name: &str,
    stats: &[Statistics],
    best: &BTreeMap<usize, &Scanned>,
    records: &[Scanned],
    usage: &UsageTally,
    sources: Vec<String>,
    now: String,
) -> Statistics {
    let total_prompts = stats
        .iter()
        .map(|s| s.total_prompts)
        .max()
        .unwrap_or(0)
        .max(best.keys().next_back().map_or(0, |i| i + 1));
    let facts = RunFacts {
        run_name: run_name.to_owned(),
        distribution: joined(stats.iter().map(|s| s.distribution.as_str())),
        total_prompts,
        batch_size: stats.iter().map(|s| s.batch_size).max().unwrap_or(1),
        model: joined(stats.iter().map(|s| s.model.as_str())),
        shard: None,
        scope: (0..total_prompts).collect::<BTreeSet<usize>>(),
        duration_seconds: stats.iter().map(|s| s.duration_seconds).sum(),
        completed_at: now,
    };
    let mut out = Statistics::build(&facts, records, usage);
    out.merged_from = sources;
    out
}

#[cfg(test)]
#[path = "merge_tests.rs"]
mod tests;
