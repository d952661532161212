//! `hermes checkpoints [status|list|clear]`: what the checkpoint store under
//! `HERMES_HOME/checkpoints/` holds, and removing it.

use std::io::{BufRead, Write};
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Subcommand};
use hermes_tools::checkpoints::Checkpoints;

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
    /// Drop projects whose directory is gone and reclaim the space of dropped checkpoints.
    Prune,
    /// Delete every checkpoint of every project.
    Clear {
        /// Do not ask.
        #[arg(short = 'f', long)]
        force: bool,
    },
}

fn size_of(path: &std::path::Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path)
        .map(|entries| entries.flatten().map(|e| size_of(&e.path())).sum())
        .unwrap_or(0)
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

fn ago(secs: u64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    match now.saturating_sub(secs) {
        0 => "now".into(),
        s if s < 60 => format!("{s}s ago"),
        s if s < 3600 => format!("{}m ago", s / 60),
        s if s < 86_400 => format!("{}h ago", s / 3600),
        s => format!("{}d ago", s / 86_400),
    }
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
            writeln!(out, "Checkpoint base: {}", base.display())?;
            writeln!(out, "Total size:      {}", human(size_of(&base)))?;
            writeln!(out, "Projects:        {}", projects.len())?;
            if !projects.is_empty() {
                writeln!(
                    out,
                    "\n  {:<60}  {:>7}  {:>12}  STATE",
                    "WORKDIR", "COMMITS", "LAST TOUCH"
                )?;
                for (dir, commits, touched) in projects.iter().take(limit) {
                    let shown = dir.display().to_string();
                    let shown = if shown.chars().count() > 60 {
                        let tail: String = shown
                            .chars()
                            .rev()
                            .take(59)
                            .collect::<Vec<_>>()
                            .into_iter()
                            .rev()
                            .collect();
                        format!("…{tail}")
                    } else {
                        shown
                    };
                    let state = if dir.is_dir() { "live" } else { "orphan" };
                    writeln!(
                        out,
                        "  {shown:<60}  {commits:>7}  {:>12}  {state}",
                        ago(*touched)
                    )?;
                }
            }
        }
        CheckpointsAction::Prune => {
            let before = size_of(&base);
            writeln!(out, "Pruning checkpoint store…")?;
            let removed = store.prune();
            let after = size_of(&base);
            writeln!(out, "Deleted orphan:  {removed}")?;
            writeln!(
                out,
                "Bytes reclaimed: {}",
                human(before.saturating_sub(after))
            )?;
        }
        CheckpointsAction::Clear { force } => {
            if !base.exists() {
                writeln!(out, "Nothing to clear — checkpoint base does not exist.")?;
                return Ok(ExitCode::SUCCESS);
            }
            let size = size_of(&base);
            writeln!(
                out,
                "This will delete the ENTIRE checkpoint base at {}",
                base.display()
            )?;
            writeln!(
                out,
                "  size: {}, projects: {}",
                human(size),
                store.projects().len()
            )?;
            writeln!(
                out,
                "\nAll /rollback history for every working directory will be lost."
            )?;
            if !force {
                write!(out, "Proceed? [y/N]: ")?;
                out.flush()?;
                let mut answer = String::new();
                std::io::stdin().lock().read_line(&mut answer)?;
                if !matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
                    writeln!(out, "Aborted.")?;
                    return Ok(ExitCode::FAILURE);
                }
            }
            std::fs::remove_dir_all(&base)?;
            writeln!(out, "Cleared. Reclaimed {}.", human(size))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
