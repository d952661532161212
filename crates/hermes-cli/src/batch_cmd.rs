//! `hermes batch`: run a JSONL dataset of prompts into ShareGPT tool-use
//! trajectories (the reference's `batch_runner.py`), and `hermes batch
//! merge` to combine a sharded run. The work is done by `hermes-batch`;
//! this file parses the flags and prints.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, anyhow};
use clap::{Args, Subcommand};
use hermes_batch::{
    BatchConfig, Clock, Outcome, Progress, RunOutcome, SessionExecutor, SessionSettings, Shard,
    distributions,
};
use hermes_session::cron::zone::Zone;
use hermes_session::{Services, SessionManager};
use hermes_state::numfmt::thousands;

use crate::args::RunArgs;

/// Generate tool-use trajectories from a JSONL of prompts (ShareGPT format),
/// or merge the shards of a run.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct BatchArgs {
    #[command(subcommand)]
    action: Option<BatchAction>,

    /// The JSONL dataset: one {"prompt": "…"} object per line.
    #[arg(value_name = "DATASET")]
    dataset: Option<PathBuf>,

    /// The dataset (the reference's spelling of DATASET).
    #[arg(
        long = "dataset-file",
        alias = "dataset_file",
        value_name = "FILE",
        conflicts_with = "dataset"
    )]
    dataset_file: Option<PathBuf>,

    /// Name of the run: its output goes to OUTPUT_DIR/NAME/.
    #[arg(long = "run-name", alias = "run_name", value_name = "NAME")]
    run_name: Option<String>,

    /// Prompts per batch (the batch_num of each record).
    #[arg(
        long = "batch-size",
        alias = "batch_size",
        value_name = "N",
        default_value_t = 10
    )]
    batch_size: usize,

    /// Toolset distribution to draw each prompt's toolsets from.
    #[arg(long, value_name = "NAME", default_value = "default")]
    distribution: String,

    /// Prompts run at once.
    #[arg(
        long = "num-workers",
        alias = "num_workers",
        value_name = "N",
        default_value_t = 4
    )]
    num_workers: usize,

    /// Model calls per prompt.
    #[arg(
        long = "max-turns",
        alias = "max_turns",
        value_name = "N",
        default_value_t = 10
    )]
    max_turns: u32,

    /// Run only the first N valid prompts.
    #[arg(long = "max-samples", alias = "max_samples", value_name = "N")]
    max_samples: Option<usize>,

    /// System text sent with every prompt but never written to a trajectory.
    #[arg(
        long = "ephemeral-system-prompt",
        alias = "ephemeral_system_prompt",
        value_name = "TEXT"
    )]
    ephemeral_system_prompt: Option<String>,

    /// Model to use (default: config model.default).
    #[arg(short = 'm', long = "model")]
    model: Option<String>,

    /// Inference provider (default: config model.provider).
    #[arg(long = "provider")]
    provider: Option<String>,

    /// Where runs are written.
    #[arg(
        long = "output-dir",
        alias = "output_dir",
        value_name = "DIR",
        default_value = "data"
    )]
    output_dir: PathBuf,

    /// Also skip prompts whose text already has a trajectory (prompts with
    /// one at their index are always skipped).
    #[arg(long)]
    resume: bool,

    /// Run one shard of N: the prompts whose index is I modulo N (I from 0).
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,

    /// Run dangerous commands without asking (otherwise they are refused).
    #[arg(long)]
    yolo: bool,

    /// Seed for the toolset draws (default: from the clock).
    #[arg(long, value_name = "N")]
    seed: Option<u64>,

    /// Keep samples in which no turn has reasoning (the reference discards them).
    #[arg(long = "keep-no-reasoning", alias = "keep_no_reasoning")]
    keep_no_reasoning: bool,

    /// List the toolset distributions and exit.
    #[arg(long = "list-distributions", alias = "list_distributions")]
    list_distributions: bool,
}

#[derive(Debug, Subcommand)]
enum BatchAction {
    /// Combine a run's shards into one sorted set of trajectories and statistics.
    Merge {
        /// The run's name.
        name: String,
        /// Where runs are written.
        #[arg(
            long = "output-dir",
            alias = "output_dir",
            value_name = "DIR",
            default_value = "data"
        )]
        output_dir: PathBuf,
    },
}

/// Runs `hermes batch`.
pub async fn run(args: BatchArgs, top: &RunArgs) -> Result<ExitCode> {
    if args.list_distributions {
        list_distributions()?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(BatchAction::Merge { name, output_dir }) = &args.action {
        return merge(name, output_dir);
    }
    let config = config(&args, top)?;
    config.validate()?;
    let setup = crate::chat::load_setup(top)?;
    let clock = Clock::for_setup(&setup);
    // Batch runs stay out of the session history, as the reference's do
    // (its batch agents get no session store).
    let manager = SessionManager::with_services(Services::without_store(setup));
    crate::hooks_cmd::install(manager.services(), false);
    let settings = SessionSettings {
        cwd: std::env::current_dir()
            .map_err(|e| anyhow!("cannot read the current directory: {e}"))?,
        model: config.model.clone(),
        provider: args.provider.clone().or_else(|| top.provider.clone()),
        max_turns: args.max_turns.max(1),
        yolo: args.yolo || top.yolo,
        ephemeral_system_prompt: args.ephemeral_system_prompt.clone(),
    };
    let executor = SessionExecutor::new(manager, settings);
    let workers = config.num_workers;
    let mut print = |p: Progress| show(&p, workers);
    let outcome = hermes_batch::run(&config, &executor, &clock, &mut print).await?;
    summary(&config, &outcome)?;
    Ok(if outcome.errors > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The run's settings from the flags; says what is missing.
fn config(args: &BatchArgs, top: &RunArgs) -> Result<BatchConfig> {
    let dataset = args
        .dataset
        .clone()
        .or_else(|| args.dataset_file.clone())
        .ok_or_else(|| {
            anyhow!("no dataset given: hermes batch DATASET.jsonl --run-name NAME (see hermes batch --help)")
        })?;
    let run_name = args.run_name.clone().ok_or_else(|| {
        anyhow!("no --run-name given: name the run, e.g. hermes batch {} --run-name my_run (output goes to {}/my_run/)", dataset.display(), args.output_dir.display())
    })?;
    let shard = args.shard.as_deref().map(str::parse::<Shard>).transpose()?;
    if args.max_turns == 0 {
        return Err(anyhow!("--max-turns must be at least 1"));
    }
    Ok(BatchConfig {
        dataset,
        run_name,
        batch_size: args.batch_size,
        distribution: args.distribution.clone(),
        num_workers: args.num_workers,
        max_samples: args.max_samples,
        output_dir: args.output_dir.clone(),
        resume: args.resume,
        shard,
        seed: args.seed.unwrap_or_else(clock_seed),
        model: args.model.clone().or_else(|| top.model.clone()),
        keep_no_reasoning: args.keep_no_reasoning,
    })
}

/// A seed from the clock and the process id.
fn clock_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or_default();
    nanos ^ (u64::from(std::process::id()) << 32)
}

/// One progress line on stderr.
fn show(p: &Progress, workers: usize) {
    let line = match p {
        Progress::Warning(w) => format!("⚠️  {w}"),
        Progress::Plan {
            in_scope,
            already_done,
            same_text,
            to_run,
        } => {
            let mut line = format!("📋 {in_scope} prompts");
            if *already_done > 0 {
                line.push_str(&format!(", {already_done} already done"));
            }
            if *same_text > 0 {
                line.push_str(&format!(", {same_text} skipped (same text done)"));
            }
            format!("{line}: running {to_run} with {workers} workers")
        }
        Progress::Finished {
            index,
            outcome,
            done,
            of,
        } => match outcome {
            Outcome::Completed => format!("✅ [{done}/{of}] prompt {index} completed"),
            Outcome::Incomplete => {
                format!(
                    "⚠️  [{done}/{of}] prompt {index} did not complete (saved to failed_trajectories.jsonl)"
                )
            }
            Outcome::Discarded => format!(
                "🚫 [{done}/{of}] prompt {index} discarded (no reasoning in any turn; --keep-no-reasoning keeps such samples)"
            ),
            Outcome::Error(e) => {
                format!("❌ [{done}/{of}] prompt {index} failed: {e} (retried on the next run)")
            }
        },
    };
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// The end-of-run summary on stdout.
fn summary(config: &BatchConfig, outcome: &RunOutcome) -> Result<()> {
    let s = &outcome.statistics;
    let mut out = std::io::stdout().lock();
    let shard = config
        .shard
        .map(|s| format!(" (shard {s})"))
        .unwrap_or_default();
    writeln!(out, "📊 BATCH COMPLETE: {}{shard}", config.run_name)?;
    writeln!(
        out,
        "   Prompts: {} · completed {} · failed {} ({} errors) · pending {} · completion {:.2}%",
        s.total, s.completed, s.failed, s.errors, s.pending, s.completion_rate
    )?;
    if s.discarded_no_reasoning > 0 {
        writeln!(
            out,
            "   🚫 {} sample(s) discarded: no reasoning in any turn (--keep-no-reasoning keeps them)",
            s.discarded_no_reasoning
        )?;
    }
    writeln!(
        out,
        "   This run: {} prompts in {:.1}s",
        outcome.ran, s.duration_seconds
    )?;
    let cost = match s.cost_status.as_str() {
        "unknown" => "cost unknown".to_owned(),
        "partial" => format!("≥ ${:.4}", s.estimated_cost_usd),
        _ => format!("~${:.4}", s.estimated_cost_usd),
    };
    writeln!(
        out,
        "   Tokens: {} ({} in / {} out) · API calls {} · tool calls {} · {cost}",
        thousands(s.tokens.total),
        thousands(s.tokens.input),
        thousands(s.tokens.output),
        s.api_calls,
        s.tool_calls_total
    )?;
    if outcome.errors > 0 {
        writeln!(
            out,
            "   {} prompt(s) failed this run: run the same command again to retry them",
            outcome.errors
        )?;
    }
    writeln!(out, "   Output: {}", outcome.run_dir.display())?;
    for file in &outcome.files {
        if let Some(name) = file.file_name() {
            writeln!(out, "     {}", name.to_string_lossy())?;
        }
    }
    if config.shard.is_some() {
        writeln!(
            out,
            "   When every shard is done: hermes batch merge {} --output-dir {}",
            config.run_name,
            config.output_dir.display()
        )?;
    }
    Ok(())
}

/// `hermes batch merge NAME`.
fn merge(name: &str, output_dir: &std::path::Path) -> Result<ExitCode> {
    let zone = Zone::resolve(
        std::env::var("HERMES_TIMEZONE").ok().as_deref(),
        std::env::var("TZ").ok().as_deref(),
    )
    .0;
    let outcome = hermes_batch::merge(output_dir, name, Clock::new(zone).now())?;
    let s = &outcome.statistics;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "✅ Merged {} into {}: {} trajectories ({} completed, {} failed, {} errors, {} pending of {})",
        outcome.sources.join(", "),
        outcome.run_dir.display(),
        outcome.trajectories,
        s.completed,
        s.failed,
        s.errors,
        s.pending,
        s.total
    )?;
    if outcome.invalid_lines > 0 {
        writeln!(
            out,
            "   ⚠️  left out {} invalid line(s)",
            outcome.invalid_lines
        )?;
    }
    writeln!(
        out,
        "   Files: trajectories.jsonl, trajectory_samples.jsonl, failed_trajectories.jsonl, statistics.json"
    )?;
    Ok(ExitCode::SUCCESS)
}

/// `--list-distributions`: every distribution, its description and chances.
fn list_distributions() -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "📊 Toolset distributions:")?;
    for d in distributions::sorted() {
        writeln!(out, "\n  {}: {}", d.name, d.description)?;
        let mut toolsets = d.toolsets.to_vec();
        toolsets.sort_by_key(|t| std::cmp::Reverse(t.1));
        for (toolset, pct) in toolsets {
            writeln!(out, "     • {toolset:15} : {pct:3}% chance")?;
        }
    }
    writeln!(
        out,
        "\nUsage: hermes batch DATASET.jsonl --run-name NAME --distribution NAME"
    )?;
    Ok(())
}
