//! `hermes cron`: list, add, pause, resume, remove and run scheduled jobs in
//! `HERMES_HOME/cron/jobs.json` (the reference's file), and `tick` to run
//! what is due (the gateway ticks every minute; a system crontab can too).

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Subcommand};
use hermes_session::SessionManager;
use hermes_session::cron::schedule::now;
use hermes_session::cron::{jobs, run};
use serde_json::Value;

use crate::args::RunArgs;

/// `hermes cron` arguments.
#[derive(Debug, Args)]
pub struct CronArgs {
    #[command(subcommand)]
    action: Option<CronAction>,
}

#[derive(Debug, Subcommand)]
enum CronAction {
    /// List the jobs (the default).
    List {
        /// Paused and finished jobs too.
        #[arg(long)]
        all: bool,
    },
    /// Create a job: SCHEDULE ('30m', 'every 2h', '0 9 * * *', an ISO time) and PROMPT.
    #[command(alias = "create")]
    Add {
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
    },
    /// Change a job (by id or name).
    Edit {
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
    },
    /// Pause a job (by id or name).
    Pause {
        /// The job.
        job: String,
    },
    /// Resume a paused job.
    Resume {
        /// The job.
        job: String,
    },
    /// Run a job now.
    Run {
        /// The job.
        job: String,
    },
    /// Remove a job and its saved outputs.
    #[command(alias = "rm", alias = "delete")]
    Remove {
        /// The job.
        job: String,
    },
    /// Run every job that is due, once.
    Tick,
    /// Whether jobs fire automatically, and what comes next.
    Status,
}

/// A session manager whose job answers go to the configured chat platforms
/// (their send calls need no running gateway).
fn delivering_manager(flags: &RunArgs) -> Result<SessionManager> {
    let setup = crate::chat::load_setup(flags)?;
    let messaging = crate::gateway_cmd::messaging_config(&setup);
    let home = setup.home.root().to_path_buf();
    let manager = SessionManager::new(setup);
    crate::hooks_cmd::install(manager.services(), false);
    if let Some(sender) = hermes_gateway::messaging::Deliverer::standalone(&messaging, &home)
        .map_err(anyhow::Error::msg)?
    {
        manager
            .services()
            .set_cron_delivery(std::sync::Arc::new(sender));
    }
    Ok(manager)
}

/// The zone schedules are read in (`HERMES_TIMEZONE`, `timezone:`, the
/// server's); a name that is not understood is said once.
fn zone(flags: &RunArgs) -> Result<hermes_session::cron::zone::Zone> {
    let setup = crate::chat::load_setup(flags)?;
    let (zone, warning) = hermes_session::cron::zone::Zone::for_setup(&setup);
    if let Some(warning) = warning {
        writeln!(std::io::stderr(), "Warning: {warning}")?;
    }
    Ok(zone)
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

/// Runs a `hermes cron` action.
pub async fn run(args: CronArgs, flags: &RunArgs) -> Result<ExitCode> {
    let home = crate::chat::home()?;
    let root = home.root().to_path_buf();
    // The jobs live where the session store says: the home's files, or the
    // shared database (opened only by the actions that read jobs).
    let book = || -> Result<jobs::Book> {
        let setup = crate::chat::load_setup(flags)?;
        let docs = hermes_session::stores::documents(&setup).map_err(anyhow::Error::msg)?;
        Ok(jobs::Book {
            home: root.clone(),
            docs,
        })
    };
    let mut out = std::io::stdout().lock();
    let fail = |message: String| -> Result<ExitCode> {
        writeln!(std::io::stderr(), "{message}")?;
        Ok(ExitCode::FAILURE)
    };
    match args.action.unwrap_or(CronAction::List { all: false }) {
        CronAction::List { all } => {
            let listed = jobs::load(&book()?).map_err(anyhow::Error::msg)?;
            let shown: Vec<&Value> = listed
                .iter()
                .filter(|j| all || j["enabled"].as_bool().unwrap_or(true))
                .collect();
            if shown.is_empty() {
                writeln!(out, "No scheduled jobs.")?;
                writeln!(out, "Create one with 'hermes cron add SCHEDULE PROMPT'.")?;
            }
            for job in shown {
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
                writeln!(out, "    Name:      {}", job["name"].as_str().unwrap_or(""))?;
                writeln!(
                    out,
                    "    Schedule:  {}",
                    job["schedule"]["display"].as_str().unwrap_or("")
                )?;
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
                        Some("error") => {
                            format!("error: {}", job["last_error"].as_str().unwrap_or(""))
                        }
                        Some(s) => s.to_owned(),
                        None => String::new(),
                    };
                    writeln!(out, "    Last run:  {last}  {status}")?;
                }
                writeln!(out)?;
            }
        }
        CronAction::Add {
            schedule: when,
            prompt,
            name,
            deliver,
            repeat,
            skills,
            script,
            no_agent,
            workdir,
        } => {
            let prompt = prompt.unwrap_or_default();
            if prompt.trim().is_empty() && skills.is_empty() && script.is_none() {
                return fail("Failed to create job: give a prompt, a --skill or a --script".into());
            }
            let mut extras = serde_json::json!({"script": script, "workdir": workdir});
            if !skills.is_empty() {
                extras["skills"] = serde_json::json!(skills);
            }
            if no_agent {
                extras["no_agent"] = Value::Bool(true);
            }
            let name = name.or_else(|| skills.first().cloned()).or_else(|| {
                script.as_deref().map(|s| {
                    std::path::Path::new(s)
                        .file_stem()
                        .map_or_else(|| s.to_owned(), |n| n.to_string_lossy().into_owned())
                })
            });
            let made = jobs::new_job(
                &when,
                &prompt,
                name.as_deref(),
                deliver.as_deref(),
                repeat,
                now(),
                &zone(flags)?,
            )
            .and_then(|mut job| jobs::set_extras(&root, &mut job, &extras).map(|_| job));
            let job = match made {
                Ok(job) => job,
                Err(e) => return fail(format!("Failed to create job: {e}")),
            };
            writeln!(out, "Created job: {}", job["id"].as_str().unwrap_or(""))?;
            writeln!(out, "  Name: {}", job["name"].as_str().unwrap_or(""))?;
            writeln!(
                out,
                "  Schedule: {}",
                job["schedule"]["display"].as_str().unwrap_or("")
            )?;
            writeln!(
                out,
                "  Next run: {}",
                job["next_run_at"].as_str().unwrap_or("")
            )?;
            if hermes_gateway::lock::running_pid(&root).is_none() {
                writeln!(
                    out,
                    "  ⚠  Gateway is not running — jobs won't fire automatically."
                )?;
                writeln!(
                    out,
                    "     Start it with: hermes gateway run   (or run `hermes cron tick` from a crontab)"
                )?;
            }
            jobs::add(&book()?, job, now()).map_err(anyhow::Error::msg)?;
        }
        CronAction::Edit {
            job,
            schedule,
            prompt,
            name,
            deliver,
            repeat,
            skills,
            add_skills,
            remove_skills,
            clear_skills,
            script,
            no_agent,
            agent,
            workdir,
        } => {
            let all = jobs::load(&book()?).map_err(anyhow::Error::msg)?;
            let Ok(i) = jobs::find(&all, &job) else {
                return fail(format!("Job not found: {job}"));
            };
            let mut changes = serde_json::json!({"schedule": schedule, "prompt": prompt, "name": name,
                "deliver": deliver, "repeat": repeat, "script": script, "workdir": workdir});
            if clear_skills
                || !skills.is_empty()
                || !add_skills.is_empty()
                || !remove_skills.is_empty()
            {
                let mut list: Vec<String> = if clear_skills || !skills.is_empty() {
                    skills
                } else {
                    hermes_session::cron::prompt::skill_names(&all[i])
                };
                list.extend(add_skills);
                list.retain(|s| !remove_skills.contains(s));
                list.dedup();
                changes["skills"] = serde_json::json!(list);
            }
            if no_agent || agent {
                changes["no_agent"] = Value::Bool(no_agent);
            }
            match jobs::update(&book()?, &job, &changes, now(), &zone(flags)?) {
                Ok(j) => {
                    writeln!(
                        out,
                        "Updated job: {} ({})",
                        text(&j["name"]),
                        text(&j["id"])
                    )?;
                    writeln!(
                        out,
                        "  Schedule: {}",
                        j["schedule"]["display"].as_str().unwrap_or("")
                    )?;
                    writeln!(
                        out,
                        "  Next run: {}",
                        j["next_run_at"].as_str().unwrap_or("—")
                    )?;
                }
                Err(e) => return fail(format!("Failed to update job: {e}")),
            }
        }
        CronAction::Pause { job } => match jobs::pause(&book()?, &job, now()) {
            Ok(j) => writeln!(out, "Paused job: {} ({})", text(&j["name"]), text(&j["id"]))?,
            Err(_) => return fail(format!("Job not found: {job}")),
        },
        CronAction::Resume { job } => match jobs::resume(&book()?, &job, now(), &zone(flags)?) {
            Ok(j) => {
                writeln!(
                    out,
                    "Resumed job: {} ({})",
                    text(&j["name"]),
                    text(&j["id"])
                )?;
                writeln!(
                    out,
                    "  Next run: {}",
                    j["next_run_at"].as_str().unwrap_or("—")
                )?;
            }
            Err(_) => return fail(format!("Job not found: {job}")),
        },
        CronAction::Remove { job } => match jobs::remove(&book()?, &job, now()) {
            Ok(j) => writeln!(
                out,
                "Removed job: {} ({})",
                text(&j["name"]),
                text(&j["id"])
            )?,
            Err(e) => return fail(format!("Failed to remove job: {e}")),
        },
        CronAction::Run { job } => {
            let manager = delivering_manager(flags)?;
            drop(out);
            let book = run::book(&manager).map_err(anyhow::Error::msg)?;
            return match run::run_job(&manager, &book, &job).await {
                Ok(outcome) => {
                    let mut out = std::io::stdout().lock();
                    writeln!(out, "Triggered job: {} ({})", outcome.name, outcome.job_id)?;
                    match &outcome.result {
                        Ok(_) => writeln!(out, "  Ran now: succeeded.")?,
                        Err(e) => writeln!(out, "  Ran now: failed. {e}")?,
                    }
                    if let Some(name) = &outcome.output {
                        let file = root.join(name);
                        if file.is_file() {
                            writeln!(out, "  Output: {}", file.display())?;
                        } else {
                            writeln!(out, "  Output: {name} (in the session database)")?;
                        }
                    }
                    if let Some(e) = &outcome.delivery_error {
                        writeln!(out, "  Delivery failed: {e}")?;
                    }
                    Ok(if outcome.result.is_ok() {
                        ExitCode::SUCCESS
                    } else {
                        ExitCode::FAILURE
                    })
                }
                Err(e) => fail(format!("Failed to run job: {e}")),
            };
        }
        CronAction::Tick => {
            let manager = delivering_manager(flags)?;
            drop(out);
            let ticked = run::tick(&manager).await;
            run::release_scheduler(&manager);
            match ticked.map_err(anyhow::Error::msg)? {
                None => writeln!(
                    std::io::stderr(),
                    "Another process is running the due jobs."
                )?,
                Some(outcomes) => {
                    let mut err = std::io::stderr();
                    if outcomes.is_empty() {
                        writeln!(err, "No jobs are due.")?;
                    }
                    for o in outcomes {
                        match &o.result {
                            Ok(_) => writeln!(err, "ran {} ({}): ok", o.name, o.job_id)?,
                            Err(e) => writeln!(err, "ran {} ({}): failed: {e}", o.name, o.job_id)?,
                        }
                    }
                }
            }
        }
        CronAction::Status => {
            match hermes_gateway::lock::running_pid(&root) {
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
            let all = jobs::load(&book()?).map_err(anyhow::Error::msg)?;
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
        }
    }
    Ok(ExitCode::SUCCESS)
}
