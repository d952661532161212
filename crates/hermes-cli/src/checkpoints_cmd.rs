//! `hermes checkpoints [status|list|prune|clear|clear-legacy]`: what the
//! checkpoint store under `HERMES_HOME/checkpoints/` holds, sweeping it as
//! the daily upkeep does, and removing it.

use std::io::{BufRead, Write};
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Subcommand};
use hermes_tools::checkpoints::{Checkpoints, PruneRules, disk_usage};

/// `hermes checkpoints` arguments.
#[derive(Debug, Args)]
pub struct CheckpointsArgs {
    #[command(subcommand)]
    action: Option<CheckpointsAction>,
}

#[derive(Debug, Subcommand)]
enum CheckpointsAction {
    /// The store's size and its projects (the default).
    #[command(alias = "list")]
    Status {
        /// Projects to show.
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// Delete orphan/stale checkpoints and GC the store (whenever the last sweep ran).
    Prune {
        /// Drop projects whose last checkpoint is older than N days (0 keeps them).
        #[arg(long, default_value_t = 7)]
        retention_days: u64,
        /// Then drop the oldest checkpoints until the store is under this many MB (0: no cap).
        #[arg(long, default_value_t = 500)]
        max_size_mb: u64,
        /// Keep projects whose directory no longer exists.
        #[arg(long)]
        keep_orphans: bool,
    },
    /// Delete every checkpoint of every project.
    Clear {
        /// Do not ask.
        #[arg(short = 'f', long)]
        force: bool,
    },
    /// Delete only the legacy-<time>/ archives of the older per-project layout.
    ClearLegacy {
        /// Do not ask.
        #[arg(short = 'f', long)]
        force: bool,
    },
}

fn human(bytes: u64) -> String {
    let units = ["B", "KB", "MB", "GB", "TB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < units.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", units[unit])
    }
}

/// Asks a yes/no question on the terminal; anything but yes is no.
fn confirm(out: &mut impl Write, prompt: &str) -> Result<bool> {
    write!(out, "{prompt} [y/N]: ")?;
    out.flush()?;
    let mut answer = String::new();
    if std::io::stdin().lock().read_line(&mut answer)? == 0 {
        writeln!(out)?;
    }
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// Shortens a path from the left to `width` characters.
fn tail(text: &str, width: usize) -> String {
    let count = text.chars().count();
    if count <= width {
        return text.to_owned();
    }
    let kept: String = text.chars().skip(count - (width - 1)).collect();
    format!("…{kept}")
}

/// Runs `hermes checkpoints`.
pub fn run(args: CheckpointsArgs) -> Result<ExitCode> {
    let home = crate::chat::home()?;
    let store = Checkpoints::new(home.root(), true, 20);
    let base = store.base().to_path_buf();
    let mut out = std::io::stdout().lock();
    match args
        .action
        .unwrap_or(CheckpointsAction::Status { limit: 20 })
    {
        CheckpointsAction::Status { limit } => {
            let projects = store.projects();
            let legacy = store.legacy_archives();
            let legacy_size: u64 = legacy.iter().map(|a| a.size).sum();
            writeln!(out, "Checkpoint base: {}", base.display())?;
            writeln!(out, "Total size:      {}", human(disk_usage(&base)))?;
            writeln!(
                out,
                "  store/         {}",
                human(disk_usage(&base.join("store")))
            )?;
            writeln!(out, "  legacy-*       {}", human(legacy_size))?;
            writeln!(out, "Projects:        {}", projects.len())?;
            if !projects.is_empty() {
                writeln!(
                    out,
                    "\n  {:<60}  {:>7}  {:>12}  STATE",
                    "WORKDIR", "COMMITS", "LAST TOUCH"
                )?;
                for (dir, commits, touched) in projects.iter().take(limit) {
                    let shown = tail(&dir.display().to_string(), 60);
                    let state = if dir.is_dir() { "live" } else { "orphan" };
                    writeln!(
                        out,
                        "  {shown:<60}  {commits:>7}  {:>12}  {state}",
                        crate::render::ago(*touched)
                    )?;
                }
            }
            if !legacy.is_empty() {
                writeln!(out, "\nLegacy archives ({}):", legacy.len())?;
                for archive in &legacy {
                    writeln!(out, "  {:<40}  {:>10}", archive.name, human(archive.size))?;
                }
                writeln!(out, "\nClear with: hermes checkpoints clear-legacy")?;
            }
        }
        CheckpointsAction::Prune {
            retention_days,
            max_size_mb,
            keep_orphans,
        } => {
            writeln!(out, "Pruning checkpoint store…")?;
            writeln!(out, "  retention_days:    {retention_days}")?;
            writeln!(out, "  delete_orphans:    {}", !keep_orphans)?;
            writeln!(out, "  max_total_size_mb: {max_size_mb}\n")?;
            let rules = PruneRules {
                retention_days,
                delete_orphans: !keep_orphans,
                max_total_size_mb: max_size_mb,
            };
            let report = store.prune(&rules, std::time::SystemTime::now());
            writeln!(out, "Scanned:         {}", report.scanned)?;
            writeln!(out, "Deleted orphan:  {}", report.deleted_orphan)?;
            writeln!(out, "Deleted stale:   {}", report.deleted_stale)?;
            writeln!(out, "Evicted (size):  {}", report.evicted)?;
            writeln!(out, "Errors:          {}", report.errors)?;
            writeln!(out, "Bytes reclaimed: {}", human(report.bytes_freed))?;
        }
        CheckpointsAction::Clear { force } => {
            if !base.exists() {
                writeln!(out, "Nothing to clear — checkpoint base does not exist.")?;
                return Ok(ExitCode::SUCCESS);
            }
            let size = disk_usage(&base);
            writeln!(
                out,
                "This will delete the ENTIRE checkpoint base at {}",
                base.display()
            )?;
            writeln!(out, "  size:        {}", human(size))?;
            writeln!(out, "  projects:    {}", store.projects().len())?;
            writeln!(out, "  legacy dirs: {}", store.legacy_archives().len())?;
            writeln!(
                out,
                "\nAll /rollback history for every working directory will be lost."
            )?;
            if !force && !confirm(&mut out, "Proceed?")? {
                writeln!(out, "Aborted.")?;
                return Ok(ExitCode::FAILURE);
            }
            std::fs::remove_dir_all(&base)?;
            writeln!(out, "Cleared. Reclaimed {}.", human(size))?;
        }
        CheckpointsAction::ClearLegacy { force } => {
            let legacy = store.legacy_archives();
            if legacy.is_empty() {
                writeln!(out, "No legacy archives to clear.")?;
                return Ok(ExitCode::SUCCESS);
            }
            let total: u64 = legacy.iter().map(|a| a.size).sum();
            writeln!(
                out,
                "Found {} legacy archive(s), total {}:",
                legacy.len(),
                human(total)
            )?;
            for archive in &legacy {
                writeln!(out, "  {:<40}  {:>10}", archive.name, human(archive.size))?;
            }
            writeln!(
                out,
                "\nLegacy archives hold pre-v2 per-project shadow repos, moved aside\n\
                 during the single-store migration. Delete when you're confident\n\
                 you don't need the old /rollback history."
            )?;
            if !force && !confirm(&mut out, "Delete all legacy archives?")? {
                writeln!(out, "Aborted.")?;
                return Ok(ExitCode::FAILURE);
            }
            let (deleted, freed) = store.clear_legacy();
            writeln!(
                out,
                "Deleted {deleted} archive(s), reclaimed {}.",
                human(freed)
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
