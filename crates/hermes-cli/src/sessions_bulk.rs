//! `hermes sessions prune | archive | optimize | repair`: the bulk and
//! maintenance actions, with the reference's flags and safety rails (a preview
//! and a confirmation, `--dry-run`, only ended sessions, a backup before repair).

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Result, bail};
use hermes_state::session_db::{BulkCandidate, SessionDb};
use hermes_state::store::SessionAdmin;

use crate::session_filters::{FilterArgs, describe, format_time};

/// Rows shown before asking, when not a dry run.
const PREVIEW_ROWS: usize = 15;

/// Prune (delete) or archive (hide) the ended sessions the flags select.
pub(crate) fn bulk(
    db: &dyn SessionAdmin,
    out: &mut impl Write,
    args: &FilterArgs,
    delete: bool,
    include_archived: bool,
) -> Result<()> {
    let mut args = args.clone();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let mut filter = args.to_filter(now).map_err(anyhow::Error::msg)?;
    // Only a completely bare `prune` keeps the old 90-day default; any filter
    // (even --source alone) selects all ages, and the preview shows the span.
    if delete && args.no_time_window() && !filter.has_non_time_filters() {
        args.older_than = Some("90".into());
        filter = args.to_filter(now).map_err(anyhow::Error::msg)?;
    }
    if !delete
        && filter.started_before.is_none()
        && filter.started_after.is_none()
        && !filter.has_non_time_filters()
    {
        bail!(
            "refusing to archive every ended session: pass at least one filter (e.g. --newer-than 5h, --source cli, --title codex)"
        );
    }
    filter.archived = if delete && include_archived {
        None
    } else {
        Some(false)
    };
    let candidates = db.bulk_candidates(&filter)?;
    if candidates.is_empty() {
        writeln!(out, "No sessions match ({}).", describe(&filter))?;
        return Ok(());
    }
    let span = span(&candidates);
    if args.dry_run || !args.yes {
        let shown = if args.dry_run {
            candidates.len()
        } else {
            PREVIEW_ROWS.min(candidates.len())
        };
        writeln!(
            out,
            "{} session(s) match ({}; {span}):",
            candidates.len(),
            describe(&filter)
        )?;
        for c in &candidates[..shown] {
            preview_row(out, c)?;
        }
        if candidates.len() > shown {
            writeln!(out, "  … and {} more", candidates.len() - shown)?;
        }
        if args.dry_run {
            let what = if delete { "deleted" } else { "archived" };
            writeln!(out, "Dry run: nothing {what}.")?;
            return Ok(());
        }
        out.flush()?;
        let verb = if delete { "Delete" } else { "Archive" };
        crate::sessions::confirm(
            false,
            &format!("{verb} these {} session(s) ({span})?", candidates.len()),
        )?;
    }
    if delete {
        let n = db.prune_matching(&filter)?;
        writeln!(out, "Pruned {n} session(s).")?;
    } else {
        let n = db.archive_matching(&filter)?;
        writeln!(
            out,
            "Archived {n} session(s): hidden from listings, nothing deleted."
        )?;
    }
    Ok(())
}

fn span(candidates: &[BulkCandidate]) -> String {
    let (first, last) = match (candidates.first(), candidates.last()) {
        (Some(f), Some(l)) => (f.started_at, l.started_at),
        _ => return String::new(),
    };
    format!(
        "oldest {}, newest {}",
        format_time(first),
        format_time(last)
    )
}

fn preview_row(out: &mut impl Write, c: &BulkCandidate) -> Result<()> {
    let model = c.model.as_deref().unwrap_or("-");
    let model = model.rsplit('/').next().unwrap_or(model);
    writeln!(
        out,
        "  {}  {:<16}  {:<10} {:<24} {:>4} msgs  {}",
        c.id,
        format_time(c.started_at),
        c.source,
        crate::render::preview(model, 24),
        c.message_count,
        crate::render::preview(c.title.as_deref().unwrap_or(""), 36),
    )?;
    Ok(())
}

/// Merges the search indexes and compacts the file.
pub(crate) fn optimize(db: &mut SessionDb, out: &mut impl Write) -> Result<()> {
    let size = |p: &Path| std::fs::metadata(p).map_or(0.0, |m| m.len() as f64 / 1_048_576.0);
    let before = size(db.path());
    writeln!(
        out,
        "Optimizing the session store (FTS merge, then VACUUM)…"
    )?;
    out.flush()?;
    let merged = db.vacuum()?;
    let after = size(db.path());
    writeln!(out, "Merged {merged} FTS index(es).")?;
    writeln!(
        out,
        "Database size: {before:.1} MB -> {after:.1} MB (reclaimed {:.1} MB)",
        before - after
    )?;
    Ok(())
}

/// Checks the file and, unless `check_only`, repairs it (backup first unless `no_backup`).
pub(crate) fn repair(
    path: &Path,
    out: &mut impl Write,
    check_only: bool,
    no_backup: bool,
) -> Result<ExitCode> {
    if !path.exists() {
        writeln!(
            out,
            "No session database at {} (nothing to repair).",
            path.display()
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let Some(reason) = SessionDb::check_file(path) else {
        writeln!(out, "✓ {} opens cleanly: no repair needed.", path.display())?;
        return Ok(ExitCode::SUCCESS);
    };
    writeln!(out, "✗ {} does not open cleanly: {reason}", path.display())?;
    if check_only {
        return Ok(ExitCode::FAILURE);
    }
    writeln!(
        out,
        "Repairing{}…",
        if no_backup {
            ""
        } else {
            " (a backup copy is made first)"
        }
    )?;
    match SessionDb::repair_file(path, !no_backup) {
        Ok(report) => {
            if let Some(backup) = &report.backup {
                writeln!(out, "  backup: {}", backup.display())?;
            }
            writeln!(out, "  strategy: {}", report.strategy)?;
            let sessions = SessionDb::open(path).and_then(|db| db.session_count());
            match sessions {
                Ok(n) => writeln!(out, "✓ Repaired: {n} sessions kept.")?,
                Err(_) => writeln!(out, "✓ Repaired.")?,
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            writeln!(out, "✗ Repair failed: {e}")?;
            writeln!(
                out,
                "  Keep state.db (and any state.db.bak-* copy next to it); do not delete them."
            )?;
            Ok(ExitCode::FAILURE)
        }
    }
}
