//! Creating and changing jobs: add, edit, pause, resume, remove.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use hermes_session::cron::jobs;
use hermes_session::cron::schedule::now;
use serde_json::Value;

use super::{Cron, fail, text};

/// `hermes cron add` arguments.
#[derive(Debug, Args)]
pub(super) struct AddArgs {
    /// When it runs.
    schedule: String,
    /// What the agent is asked each time (optional with --skill or --script).
    prompt: Option<String>,
    /// A name (default: the prompt's start).
    #[arg(long)]
    name: Option<String>,
    /// Where the answer goes: origin, local (saved under cron/output/), a
    /// platform's home channel (telegram, discord, slack), platform:chat_id[:thread_id], all.
    #[arg(long)]
    deliver: Option<String>,
    /// How many runs (default: one for a one-shot, forever otherwise).
    #[arg(long)]
    repeat: Option<i64>,
    /// A skill to load for each run (repeat for several).
    #[arg(long = "skill")]
    skills: Vec<String>,
    /// A script under HERMES_HOME/scripts/: its output feeds the prompt
    /// (.sh/.bash run with bash, anything else with python3).
    #[arg(long)]
    script: Option<String>,
    /// No agent: the script is the job and its output is delivered as it is.
    #[arg(long)]
    no_agent: bool,
    /// The absolute directory runs work in.
    #[arg(long)]
    workdir: Option<String>,
}

/// `hermes cron edit` arguments.
#[derive(Debug, Args)]
pub(super) struct EditArgs {
    /// The job.
    job: String,
    /// A new schedule.
    #[arg(long)]
    schedule: Option<String>,
    /// A new prompt.
    #[arg(long)]
    prompt: Option<String>,
    /// A new name.
    #[arg(long)]
    name: Option<String>,
    /// A new delivery target.
    #[arg(long)]
    deliver: Option<String>,
    /// A new repeat count (0: forever).
    #[arg(long)]
    repeat: Option<i64>,
    /// Replace the job's skills with these (repeat for several).
    #[arg(long = "skill")]
    skills: Vec<String>,
    /// Add a skill.
    #[arg(long = "add-skill")]
    add_skills: Vec<String>,
    /// Remove a skill.
    #[arg(long = "remove-skill")]
    remove_skills: Vec<String>,
    /// Remove every skill.
    #[arg(long)]
    clear_skills: bool,
    /// A script under HERMES_HOME/scripts/ ("" clears it).
    #[arg(long)]
    script: Option<String>,
    /// Deliver the script's output without the agent.
    #[arg(long, conflicts_with = "agent")]
    no_agent: bool,
    /// Run the agent again (undoes --no-agent).
    #[arg(long)]
    agent: bool,
    /// The absolute directory runs work in ("" clears it).
    #[arg(long)]
    workdir: Option<String>,
}

/// `hermes cron add`.
pub(super) fn add(cron: &Cron<'_>, args: AddArgs) -> Result<ExitCode> {
    let prompt = args.prompt.unwrap_or_default();
    if prompt.trim().is_empty() && args.skills.is_empty() && args.script.is_none() {
        return fail("Failed to create job: give a prompt, a --skill or a --script");
    }
    let mut extras = serde_json::json!({"script": args.script, "workdir": args.workdir});
    if !args.skills.is_empty() {
        extras["skills"] = serde_json::json!(args.skills);
    }
    if args.no_agent {
        extras["no_agent"] = Value::Bool(true);
    }
    let name = args
        .name
        .or_else(|| args.skills.first().cloned())
        .or_else(|| {
            args.script.as_deref().map(|s| {
                std::path::Path::new(s)
                    .file_stem()
                    .map_or_else(|| s.to_owned(), |n| n.to_string_lossy().into_owned())
            })
        });
    let made = jobs::new_job(
        &args.schedule,
        &prompt,
        name.as_deref(),
        args.deliver.as_deref(),
        args.repeat,
        now(),
        &cron.zone()?,
    )
    .and_then(|mut job| jobs::set_extras(&cron.root, &mut job, &extras).map(|_| job));
    let job = match made {
        Ok(job) => job,
        Err(e) => return fail(&format!("Failed to create job: {e}")),
    };
    let mut out = std::io::stdout().lock();
    writeln!(out, "Created job: {}", text(&job["id"]))?;
    writeln!(out, "  Name: {}", text(&job["name"]))?;
    writeln!(out, "  Schedule: {}", text(&job["schedule"]["display"]))?;
    writeln!(out, "  Next run: {}", text(&job["next_run_at"]))?;
    if hermes_gateway::lock::running_pid(&cron.root).is_none() {
        writeln!(
            out,
            "  ⚠  Gateway is not running — jobs won't fire automatically."
        )?;
        writeln!(
            out,
            "     Start it with: hermes gateway run   (or run `hermes cron tick` from a crontab)"
        )?;
    }
    jobs::add(&cron.book()?, job, now()).map_err(anyhow::Error::msg)?;
    Ok(ExitCode::SUCCESS)
}

/// `hermes cron edit`.
pub(super) fn edit(cron: &Cron<'_>, args: EditArgs) -> Result<ExitCode> {
    let book = cron.book()?;
    let all = jobs::load(&book).map_err(anyhow::Error::msg)?;
    let Ok(i) = jobs::find(&all, &args.job) else {
        return fail(&format!("Job not found: {}", args.job));
    };
    let mut changes = serde_json::json!({"schedule": args.schedule, "prompt": args.prompt,
        "name": args.name, "deliver": args.deliver, "repeat": args.repeat,
        "script": args.script, "workdir": args.workdir});
    if args.clear_skills
        || !args.skills.is_empty()
        || !args.add_skills.is_empty()
        || !args.remove_skills.is_empty()
    {
        let mut list: Vec<String> = if args.clear_skills || !args.skills.is_empty() {
            args.skills
        } else {
            hermes_session::cron::prompt::skill_names(&all[i])
        };
        list.extend(args.add_skills);
        list.retain(|s| !args.remove_skills.contains(s));
        list.dedup();
        changes["skills"] = serde_json::json!(list);
    }
    if args.no_agent || args.agent {
        changes["no_agent"] = Value::Bool(args.no_agent);
    }
    match jobs::update(&book, &args.job, &changes, now(), &cron.zone()?) {
        Ok(j) => {
            let mut out = std::io::stdout().lock();
            writeln!(
                out,
                "Updated job: {} ({})",
                text(&j["name"]),
                text(&j["id"])
            )?;
            writeln!(out, "  Schedule: {}", text(&j["schedule"]["display"]))?;
            writeln!(
                out,
                "  Next run: {}",
                j["next_run_at"].as_str().unwrap_or("—")
            )?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => fail(&format!("Failed to update job: {e}")),
    }
}

/// Says what `done` did to a job (`Paused job: NAME (ID)`, with its next run
/// when `next`), or fails with `missing`.
fn report(
    done: Result<Value, String>,
    verb: &str,
    next: bool,
    missing: impl FnOnce(String) -> String,
) -> Result<ExitCode> {
    match done {
        Ok(j) => {
            let mut out = std::io::stdout().lock();
            writeln!(out, "{verb} job: {} ({})", text(&j["name"]), text(&j["id"]))?;
            if next {
                writeln!(
                    out,
                    "  Next run: {}",
                    j["next_run_at"].as_str().unwrap_or("—")
                )?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => fail(&missing(e)),
    }
}

/// `hermes cron pause`.
pub(super) fn pause(cron: &Cron<'_>, job: &str) -> Result<ExitCode> {
    let done = jobs::pause(&cron.book()?, job, now());
    report(done, "Paused", false, |_| format!("Job not found: {job}"))
}

/// `hermes cron resume`.
pub(super) fn resume(cron: &Cron<'_>, job: &str) -> Result<ExitCode> {
    let done = jobs::resume(&cron.book()?, job, now(), &cron.zone()?);
    report(done, "Resumed", true, |_| format!("Job not found: {job}"))
}

/// `hermes cron remove`.
pub(super) fn remove(cron: &Cron<'_>, job: &str) -> Result<ExitCode> {
    let done = jobs::remove(&cron.book()?, job, now());
    report(done, "Removed", false, |e| {
        format!("Failed to remove job: {e}")
    })
}
