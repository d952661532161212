//! The run: dataset in, prompts run concurrently, one durable record out per
//! prompt, then the statistics. Prompts that already have a trajectory in
//! the output directory are skipped, so a run stopped at any point and
//! started again ends with every prompt exactly once.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Instant;

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use hermes_protocol::{Message, ToolSchema, TurnEnd, Usage};

use crate::BatchError;
use crate::clock::Clock;
use crate::dataset::{self, Entry};
use crate::distributions::{self, Distribution, SeededDice};
use crate::output::{
    Appender, CHECKPOINT, Checkpoint, DirLock, FAILED, SAMPLES, STATISTICS, Scan, TRAJECTORIES,
    Target, best_records, read_records,
};
use crate::report::{RunFacts, Statistics};
use crate::shard::{self, Shard};
use crate::stats;
use crate::trajectory::{self, DiscardRecord, ErrorRecord, Metadata, TrajectoryRecord};

/// What `hermes batch` was asked to do.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchConfig {
    /// The JSONL dataset.
    pub dataset: PathBuf,
    /// The run's name (its directory under `output_dir`).
    pub run_name: String,
    /// Prompts per batch (the `batch_num` of each record).
    pub batch_size: usize,
    /// The toolset distribution.
    pub distribution: String,
    /// Prompts run at once.
    pub num_workers: usize,
    /// Keep only the first N valid prompts.
    pub max_samples: Option<usize>,
    /// Where runs are written (`./data`).
    pub output_dir: PathBuf,
    /// Also skip prompts whose text already has a trajectory.
    pub resume: bool,
    /// Run only this shard's prompts.
    pub shard: Option<Shard>,
    /// Seeds the toolset draws.
    pub seed: u64,
    /// Keep samples without reasoning (the reference discards them).
    pub keep_no_reasoning: bool,
    /// The model asked for, for the statistics when no prompt ran.
    pub model: Option<String>,
}

impl BatchConfig {
    /// Checks the numbers and names; returns the distribution.
    pub fn validate(&self) -> Result<&'static Distribution, BatchError> {
        shard::check_run_name(&self.run_name)?;
        if self.batch_size == 0 {
            return Err(BatchError::Usage("--batch-size must be at least 1".into()));
        }
        if self.num_workers == 0 {
            return Err(BatchError::Usage("--num-workers must be at least 1".into()));
        }
        if self.max_samples == Some(0) {
            return Err(BatchError::Usage(
                "--max-samples must be at least 1 (leave it out to run every prompt)".into(),
            ));
        }
        distributions::get(&self.distribution).ok_or_else(|| {
            BatchError::Usage(format!(
                "Unknown distribution: {}. Available: {} (`hermes batch --list-distributions` describes them)",
                self.distribution,
                distributions::names().join(", ")
            ))
        })
    }
}

/// One prompt to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// Its index in the dataset.
    pub index: usize,
    /// The user message.
    pub prompt: String,
    /// `index / batch_size`.
    pub batch_num: usize,
    /// The toolsets drawn for it.
    pub toolsets: Vec<String>,
}

/// A prompt's session that ran to the end of its turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    /// The conversation: the user's message first.
    pub messages: Vec<Message>,
    /// The tools the session offered.
    pub tools: Vec<ToolSchema>,
    /// How the turn ended.
    pub end: TurnEnd,
    /// Tokens used.
    pub usage: Usage,
    /// Model calls made.
    pub api_calls: u32,
    /// The model that answered.
    pub model: String,
    /// Its provider (for pricing).
    pub provider: String,
    /// Its endpoint (for pricing).
    pub base_url: String,
    /// Warnings the session started with.
    pub notices: Vec<String>,
}

/// Why a prompt has no trajectory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptError {
    /// This prompt failed; it is recorded and retried by the next run.
    Failed(String),
    /// Nothing can run (the configuration is unusable): the run stops.
    Fatal(String),
}

/// Runs one prompt (a session per prompt, in practice).
pub trait Executor {
    /// Runs `job` to the end of its turn.
    fn run<'a>(&'a self, job: &'a Job) -> BoxFuture<'a, Result<Finished, PromptError>>;
}

/// How a prompt ended, for progress lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A completed trajectory.
    Completed,
    /// A trajectory that did not complete (budget used up, interrupted).
    Incomplete,
    /// A sample without reasoning, discarded as the reference does.
    Discarded,
    /// No trajectory: the error (retried by the next run).
    Error(String),
}

/// What the runner reports while it works.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    /// Something to warn about (skipped dataset lines, a repaired file …).
    Warning(String),
    /// What will run: prompts in scope, already done, skipped by text, to run now.
    Plan {
        /// Prompts this run (or shard) is responsible for.
        in_scope: usize,
        /// Of those, prompts with a trajectory already.
        already_done: usize,
        /// Of those, prompts skipped because their text has one (`--resume`).
        same_text: usize,
        /// Prompts to run now.
        to_run: usize,
    },
    /// A prompt finished.
    Finished {
        /// Its index.
        index: usize,
        /// How.
        outcome: Outcome,
        /// Prompts finished so far this run.
        done: usize,
        /// Prompts to run this run.
        of: usize,
    },
}

/// What a run did.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    /// Where it wrote.
    pub run_dir: PathBuf,
    /// Prompts run this time.
    pub ran: usize,
    /// Of those, prompts that errored (retried by the next run).
    pub errors: usize,
    /// The statistics written.
    pub statistics: Statistics,
    /// The files the run directory holds.
    pub files: Vec<PathBuf>,
}

/// Runs the batch `config` asks for with `executor`, reporting to `progress`.
pub async fn run(
    config: &BatchConfig,
    executor: &dyn Executor,
    clock: &Clock,
    progress: &mut dyn FnMut(Progress),
) -> Result<RunOutcome, BatchError> {
    let started = Instant::now();
    let dist = config.validate()?;
    let data = dataset::load(&config.dataset, config.max_samples)?;
    for w in data.warnings {
        progress(Progress::Warning(w));
    }
    let entries = data.entries;
    let run_dir = shard::run_dir(&config.output_dir, &config.run_name, config.shard);
    std::fs::create_dir_all(&run_dir).map_err(|e| BatchError::io(&run_dir, e))?;
    let _lock = DirLock::acquire(&run_dir)?;
    let scan = Scan::of(&run_dir)?;
    for (path, bytes) in &scan.repaired {
        progress(Progress::Warning(format!(
            "{}: removed a half-written last line ({bytes} bytes) left by an interrupted run",
            path.display()
        )));
    }
    check_same_dataset(&scan, &entries, &run_dir)?;
    let checkpoint_path = run_dir.join(CHECKPOINT);
    let (mut checkpoint, warning) = Checkpoint::load(&checkpoint_path, &config.run_name);
    progress_opt(progress, warning);
    let mut done = scan.done();
    let mut discarded = scan.discarded();
    checkpoint.set_done(&done, &discarded, config.batch_size);
    let scope: Vec<&Entry> = entries
        .iter()
        .filter(|e| config.shard.is_none_or(|s| s.contains(e.index)))
        .collect();
    let done_prompts = scan.done_prompts();
    let pending: Vec<&Entry> = scope
        .iter()
        .copied()
        .filter(|e| !done.contains(&e.index))
        .collect();
    let todo: Vec<&Entry> = pending
        .iter()
        .copied()
        .filter(|e| !(config.resume && done_prompts.contains(e.prompt.trim())))
        .collect();
    progress(Progress::Plan {
        in_scope: scope.len(),
        already_done: scope.len() - pending.len(),
        same_text: pending.len() - todo.len(),
        to_run: todo.len(),
    });
    let mut out = Appender::open(&run_dir)?;
    let mut warned = BTreeSet::new();
    let mut model_seen = config.model.clone().or_else(|| recorded_model(&scan));
    let (mut ran, mut errors) = (0, 0);
    let total = todo.len();
    let jobs: Vec<Job> = todo
        .into_iter()
        .map(|entry| job_for(entry, dist, config, &mut warned, progress))
        .collect();
    let mut results = futures_util::stream::iter(jobs.into_iter().map(|job| async move {
        let result = executor.run(&job).await;
        (job, result)
    }))
    .buffer_unordered(config.num_workers);
    while let Some((job, result)) = results.next().await {
        let outcome = match result {
            Ok(finished) => {
                for n in &finished.notices {
                    if warned.insert(n.clone()) {
                        progress(Progress::Warning(n.clone()));
                    }
                }
                checkpoint.usage.add_prompt(
                    &finished.usage,
                    finished.api_calls,
                    (&finished.model, &finished.provider, &finished.base_url),
                );
                model_seen = Some(finished.model.clone());
                done.insert(job.index);
                if !config.keep_no_reasoning && !trajectory::has_reasoning(&finished.messages) {
                    let record = DiscardRecord {
                        prompt_index: job.index,
                        prompt: job.prompt.clone(),
                        discarded: trajectory::NO_REASONING.to_owned(),
                    };
                    out.append(Target::Failed, &line(&record)?)?;
                    discarded.insert(job.index);
                    Outcome::Discarded
                } else {
                    let record = record_for(&job, &finished, config.batch_size, clock);
                    let target = if record.completed {
                        Target::Samples
                    } else {
                        Target::Failed
                    };
                    out.append(target, &line(&record)?)?;
                    if record.completed {
                        Outcome::Completed
                    } else {
                        Outcome::Incomplete
                    }
                }
            }
            Err(PromptError::Failed(error)) => {
                errors += 1;
                let record = ErrorRecord {
                    prompt_index: job.index,
                    prompt: job.prompt.clone(),
                    error: error.clone(),
                    failed: true,
                };
                out.append(Target::Failed, &line(&record)?)?;
                Outcome::Error(error)
            }
            Err(PromptError::Fatal(error)) => return Err(BatchError::Fatal(error)),
        };
        ran += 1;
        checkpoint.set_done(&done, &discarded, config.batch_size);
        if let Err(e) = checkpoint.save(&checkpoint_path, clock.now()) {
            progress(Progress::Warning(format!(
                "could not save the checkpoint: {e}"
            )));
        }
        progress(Progress::Finished {
            index: job.index,
            outcome,
            done: ran,
            of: total,
        });
    }
    drop(results);
    let facts = RunFacts {
        run_name: config.run_name.clone(),
        distribution: config.distribution.clone(),
        total_prompts: entries.len(),
        batch_size: config.batch_size,
        model: model_seen.unwrap_or_default(),
        shard: config.shard.map(|s| s.to_string()),
        scope: scope.iter().map(|e| e.index).collect(),
        duration_seconds: started.elapsed().as_secs_f64(),
        completed_at: clock.now(),
    };
    finish(&run_dir, config, &facts, &mut checkpoint, clock).map(|statistics| RunOutcome {
        files: existing_files(&run_dir),
        run_dir,
        ran,
        errors,
        statistics,
    })
}

/// Passes a warning on, if there is one.
fn progress_opt(progress: &mut dyn FnMut(Progress), warning: Option<String>) {
    if let Some(w) = warning {
        progress(Progress::Warning(w));
    }
}

/// Refuses to add to a directory whose records were made from other prompts.
fn check_same_dataset(
    scan: &Scan,
    entries: &[Entry],
    run_dir: &std::path::Path,
) -> Result<(), BatchError> {
    for r in &scan.records {
        if let Some(e) = entries.get(r.index)
            && e.prompt != r.prompt
        {
            return Err(BatchError::Usage(format!(
                "{} holds results for a different dataset (prompt {} differs): use another --run-name, or remove that directory to start over",
                run_dir.display(),
                r.index
            )));
        }
    }
    Ok(())
}

/// The model named by an earlier run's records.
fn recorded_model(scan: &Scan) -> Option<String> {
    scan.records
        .iter()
        .find_map(|r| r.value["metadata"]["model"].as_str().map(str::to_owned))
}

/// The job for `entry`, its toolsets drawn from `dist`.
fn job_for(
    entry: &Entry,
    dist: &Distribution,
    config: &BatchConfig,
    warned: &mut BTreeSet<String>,
    progress: &mut dyn FnMut(Progress),
) -> Job {
    let mut dice = SeededDice::for_prompt(config.seed, entry.index);
    let sample = distributions::sample(dist, &mut dice, distributions::is_valid_toolset);
    for w in sample.warnings {
        if warned.insert(w.clone()) {
            progress(Progress::Warning(w));
        }
    }
    Job {
        index: entry.index,
        prompt: entry.prompt.clone(),
        batch_num: entry.index / config.batch_size,
        toolsets: sample.toolsets,
    }
}

/// The trajectory record of a finished prompt.
pub fn record_for(
    job: &Job,
    finished: &Finished,
    batch_size: usize,
    clock: &Clock,
) -> TrajectoryRecord {
    let raw = stats::tool_stats(&finished.messages);
    let (tool_stats, tool_error_counts) = stats::normalized(&raw);
    TrajectoryRecord {
        prompt_index: job.index,
        conversations: trajectory::to_sharegpt(&finished.messages, &job.prompt, &finished.tools),
        metadata: Metadata {
            batch_num: job.index / batch_size.max(1),
            timestamp: clock.now(),
            model: finished.model.clone(),
        },
        completed: finished.end == TurnEnd::Completed,
        partial: finished.end == TurnEnd::Interrupted,
        api_calls: finished.api_calls,
        toolsets_used: job.toolsets.clone(),
        tool_stats,
        tool_error_counts,
    }
}

/// A record as a line.
fn line<T: serde::Serialize>(record: &T) -> Result<String, BatchError> {
    trajectory::to_line(record)
        .map_err(|e| BatchError::Fatal(format!("cannot encode a record: {e}")))
}

/// Writes the end-of-run files: checkpoint, statistics and (for a run that
/// is not a shard) `trajectories.jsonl`.
fn finish(
    run_dir: &std::path::Path,
    config: &BatchConfig,
    facts: &RunFacts,
    checkpoint: &mut Checkpoint,
    clock: &Clock,
) -> Result<Statistics, BatchError> {
    let mut records = Vec::new();
    for file in [SAMPLES, FAILED] {
        records.extend(read_records(&run_dir.join(file))?.0);
    }
    let checkpoint_path = run_dir.join(CHECKPOINT);
    checkpoint.save(&checkpoint_path, clock.now())?;
    if config.shard.is_none() {
        crate::merge::write_trajectories(run_dir, &best_records(&records))?;
    }
    let statistics = Statistics::build(facts, &records, &checkpoint.usage);
    let text = crate::json::to_pretty_string(&statistics)
        .map_err(|e| BatchError::Fatal(format!("cannot encode the statistics: {e}")))?;
    let path = run_dir.join(STATISTICS);
    hermes_fs::write_atomic(&path, text.as_bytes(), hermes_fs::Access::Keep)
        .map_err(|e| BatchError::io(&path, e))?;
    Ok(statistics)
}

/// The run directory's files that exist, in a fixed order.
fn existing_files(run_dir: &std::path::Path) -> Vec<PathBuf> {
    [SAMPLES, FAILED, TRAJECTORIES, CHECKPOINT, STATISTICS]
        .iter()
        .map(|f| run_dir.join(f))
        .filter(|p| p.is_file())
        .collect()
}

#[cfg(test)]
#[path = "runner_tests.rs"]
mod tests;
