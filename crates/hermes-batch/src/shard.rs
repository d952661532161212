//! `--shard I/N`: one of N runs over the same dataset, each on the prompts
//! whose index is I modulo N, each in its own directory under the run's.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::BatchError;

/// Shard `index` of `count` (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// Which shard, `0..count`.
    pub index: usize,
    /// How many shards.
    pub count: usize,
}

impl Shard {
    /// Whether the prompt at `prompt_index` belongs to this shard.
    pub fn contains(&self, prompt_index: usize) -> bool {
        prompt_index % self.count == self.index
    }

    /// Its directory name: `I-of-N`.
    pub fn dir_name(&self) -> String {
        format!("{}-of-{}", self.index, self.count)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = BatchError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || {
            BatchError::Usage(format!(
                "invalid --shard '{s}': expected I/N with 0 <= I < N, e.g. --shard 0/4 (shards are numbered from 0)"
            ))
        };
        let (i, n) = s.trim().split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Self { index, count })
    }
}

/// Where a run writes: `<output_dir>/<run_name>/`, or
/// `<output_dir>/<run_name>/shards/I-of-N/` for a shard.
pub fn run_dir(output_dir: &Path, run_name: &str, shard: Option<Shard>) -> PathBuf {
    let root = output_dir.join(run_name);
    match shard {
        Some(s) => root.join("shards").join(s.dir_name()),
        None => root,
    }
}

/// Checks a run name: one path component, no separators.
pub fn check_run_name(name: &str) -> Result<(), BatchError> {
    let trimmed = name.trim();
    if trimmed.is_empty()
        || trimmed != name
        || name == "."
        || name == ".."
        || name.contains(['/', '\\', '\0'])
    {
        return Err(BatchError::Usage(format!(
            "invalid --run-name '{name}': use a plain directory name such as my_run (no slashes)"
        )));
    }
    Ok(())
}

#[cfg(test)]
#[path = "shard_tests.rs"]
mod tests;
