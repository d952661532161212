//! Reading jobs and their runs: list, status, runs, output.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use hermes_session::cron::jobs;
use serde_json::Value;

use super::{Cron, fail, text};

/// `hermes cron list`.
pub(super) fn list(cron: &Cron<'_>, all: bool) -> Result<ExitCode> {
    let listed = jobs::load(&cron.book()?).map_err(anyhow::Error::msg)?;
    let shown: Vec<&Value> = listed
        .iter()
        .filter(|j| all || j["enabled"].as_bool().unwrap_or(true))
        .collect();
    let mut out = std::io::stdout().lock();
    if shown.is_empty() {
        writeln!(out, "No scheduled jobs.")?;
        writeln!(out, "Create one with 'hermes cron add SCHEDULE PROMPT'.")?;
    }
    for job in shown {
        write_job(&mut out, job)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn write_job(out: &mut impl Write, job: &Value) -> Result<()> {
    let state = match (
        job["enabled"].as_bool().unwrap_or(true),
        job["state"].as_str(),
    ) {
        (true, _) => "active",
        (false, Some("paused")) => "paused",
        (false, Some("completed")) => "completed",
        _ => "disabled",
    };
    let repeat = match (
        job["repeat"]["times"].as_i64(),
        job["repeat"]["completed"].as_i64(),
    ) {
        (Some(t), Some(c)) => format!("{c}/{t}"),
        (None, _) => "∞".to_owned(),
        (Some(t), None) => format!("0/{t}"),
    };
    writeln!(out, "  {} [{state}]", job["id"].as_str().unwrap_or("?"))?;
    writeln!(out, "    Name:      {}", text(&job["name"]))?;
    writeln!(out, "    Schedule:  {}", text(&job["schedule"]["display"]))?;
    writeln!(out, "    Repeat:    {repeat}")?;
    writeln!(
        out,
        "    Next run:  {}",
        job["next_run_at"].as_str().unwrap_or("—")
    )?;
    writeln!(
        out,
        "    Deliver:   {}",
        job["deliver"].as_str().unwrap_or("local")
    )?;
    if let Some(last) = job["last_run_at"].as_str() {
        let status = match job["last_status"].as_str() {
            Some("error") => format!("error: {}", text(&job["last_error"])),
            Some(s) => s.to_owned(),
            None => String::new(),
        };
        writeln!(out, "    Last run:  {last}  {status}")?;
    }
    writeln!(out)?;
    Ok(())
}

/// `hermes cron status`.
pub(super) fn status(cron: &Cron<'_>) -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    match hermes_gateway::lock::running_pid(&cron.root) {
        Some(pid) => writeln!(
            out,
            "✓ Gateway is running (pid {pid}) — cron jobs fire automatically"
        )?,
        None => {
            writeln!(out, "✗ Gateway is not running — cron jobs will NOT fire")?;
            writeln!(
                out,
                "  Start it with: hermes gateway run   (or run `hermes cron tick` every minute)"
            )?;
        }
    }
    let all = jobs::load(&cron.book()?).map_err(anyhow::Error::msg)?;
    let active: Vec<&Value> = all
        .iter()
        .filter(|j| j["enabled"].as_bool().unwrap_or(true))
        .collect();
    writeln!(out, "  {} active job(s)", active.len())?;
    if let Some(next) = active
        .iter()
        .filter_map(|j| j["next_run_at"].as_str())
        .min()
    {
        writeln!(out, "  Next run: {next}")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// One saved run of a job, with the job it belongs to.
struct SavedRun {
    saved: jobs::SavedRun,
    job_id: String,
    job_name: String,
}

/// The saved runs of `jobs`, oldest first per job.
fn saved_runs(book: &jobs::Book, jobs: &[&Value]) -> Result<Vec<SavedRun>> {
    let mut runs = Vec::new();
    for job in jobs {
        let id = text(&job["id"]);
        if id.is_empty() {
            continue;
        }
        for saved in jobs::saved_runs(book, id).map_err(anyhow::Error::msg)? {
            runs.push(SavedRun {
                saved,
                job_id: id.to_owned(),
                job_name: text(&job["name"]).to_owned(),
            });
        }
    }
    Ok(runs)
}

/// The job `key` names, or a message saying it names none.
fn find_job<'a>(all: &'a [Value], key: &str) -> Result<&'a Value, String> {
    jobs::find(all, key)
        .map(|i| &all[i])
        .map_err(|_| format!("Job not found: {key} (see `hermes cron list --all`)"))
}

/// `hermes cron runs [JOB] [--limit N]`: newest first, each with its outcome
/// (read from the saved output's heading) and where the output is.
pub(super) fn runs(cron: &Cron<'_>, job: Option<&str>, limit: usize) -> Result<ExitCode> {
    let book = cron.book()?;
    let all = jobs::load(&book).map_err(anyhow::Error::msg)?;
    let chosen: Vec<&Value> = match job {
        Some(key) => match find_job(&all, key) {
            Ok(job) => vec![job],
            Err(e) => return fail(&e),
        },
        None => all.iter().collect(),
    };
    let mut runs = saved_runs(&book, &chosen)?;
    let mut out = std::io::stdout().lock();
    if runs.is_empty() {
        writeln!(out, "No cron runs recorded.")?;
        return Ok(ExitCode::SUCCESS);
    }
    runs.sort_by(|a, b| {
        b.saved
            .run
            .cmp(&a.saved.run)
            .then_with(|| a.job_id.cmp(&b.job_id))
    });
    for saved in runs.iter().take(limit) {
        let body = book.docs.read(&saved.saved.name)?.unwrap_or_default();
        let failed = jobs::output_failed(&body);
        writeln!(
            out,
            "{}  {:<9}  job={} ({})  {}",
            saved.saved.run,
            if failed { "failed" } else { "ok" },
            saved.job_id,
            saved.job_name,
            book.docs.describe(&saved.saved.name)
        )?;
    }
    if runs.len() > limit {
        writeln!(out, "({} older; --limit N shows more)", runs.len() - limit)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `hermes cron output JOB [RUN]`: the saved output, as written.
pub(super) fn output(cron: &Cron<'_>, job: &str, run: Option<&str>) -> Result<ExitCode> {
    let book = cron.book()?;
    let all = jobs::load(&book).map_err(anyhow::Error::msg)?;
    let found = match find_job(&all, job) {
        Ok(found) => found,
        Err(e) => return fail(&e),
    };
    let runs = saved_runs(&book, &[found])?;
    let picked = match run {
        Some(run) => runs
            .iter()
            .find(|r| r.saved.run == run.trim_end_matches(".md")),
        None => runs.iter().max_by(|a, b| a.saved.run.cmp(&b.saved.run)),
    };
    let Some(saved) = picked else {
        return fail(&match run {
            Some(run) => format!(
                "No run {run} of job {} ({}); `hermes cron runs {}` lists them",
                text(&found["name"]),
                text(&found["id"]),
                text(&found["id"])
            ),
            None => format!(
                "Job {} ({}) has no saved output yet; run it now with `hermes cron run {}`",
                text(&found["name"]),
                text(&found["id"]),
                text(&found["id"])
            ),
        });
    };
    let body = book.docs.read(&saved.saved.name)?.unwrap_or_default();
    let mut out = std::io::stdout().lock();
    write!(out, "{body}")?;
    if !body.ends_with('\n') {
        writeln!(out)?;
    }
    Ok(ExitCode::SUCCESS)
}
