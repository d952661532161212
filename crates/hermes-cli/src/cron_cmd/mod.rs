//! `hermes cron`: list, add, pause, resume, remove and run scheduled jobs in
//! `HERMES_HOME/cron/jobs.json` (the reference's file), `tick` to run what is
//! due (the gateway ticks every minute; a system crontab can too), and `runs`
//! / `output` to read what past runs answered.

mod change;
mod fire;
mod show;

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Subcommand};
use hermes_session::SessionManager;
use hermes_session::cron::jobs;
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
    Add(change::AddArgs),
    /// Change a job (by id or name).
    Edit(change::EditArgs),
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
    /// Past runs, newest first: when, ok or failed, and the output to read.
    #[command(alias = "history")]
    Runs {
        /// Only this job's runs (id or name).
        job: Option<String>,
        /// How many to show (1-500).
        #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u16).range(1..=500))]
        limit: u16,
    },
    /// Print what a run answered (the job's latest run unless RUN is given).
    Output {
        /// The job (id or name).
        job: String,
        /// The run, as `hermes cron runs` names it (e.g. 2026-11-28_09-00-00).
        run: Option<String>,
    },
}

/// What every action gets: the home, the flags, and the job book.
struct Cron<'a> {
    root: std::path::PathBuf,
    flags: &'a RunArgs,
}

impl Cron<'_> {
    /// The jobs live where the session store says: the home's files, or the
    /// shared database (opened only by the actions that read jobs).
    fn book(&self) -> Result<jobs::Book> {
        let setup = crate::chat::load_setup(self.flags)?;
        let docs = hermes_session::stores::documents(&setup).map_err(anyhow::Error::msg)?;
        Ok(jobs::Book {
            home: self.root.clone(),
            docs,
        })
    }

    /// The zone schedules are read in (`HERMES_TIMEZONE`, `timezone:`, the
    /// server's); a name that is not understood is said once.
    fn zone(&self) -> Result<hermes_session::cron::zone::Zone> {
        let setup = crate::chat::load_setup(self.flags)?;
        let (zone, warning) = hermes_session::cron::zone::Zone::for_setup(&setup);
        if let Some(warning) = warning {
            writeln!(std::io::stderr(), "Warning: {warning}")?;
        }
        Ok(zone)
    }
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

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

/// Says `message` on stderr; the action failed.
fn fail(message: &str) -> Result<ExitCode> {
    writeln!(std::io::stderr(), "{message}")?;
    Ok(ExitCode::FAILURE)
}

/// Runs a `hermes cron` action.
pub async fn run(args: CronArgs, flags: &RunArgs) -> Result<ExitCode> {
    let cron = Cron {
        root: crate::chat::home()?.root().to_path_buf(),
        flags,
    };
    match args.action.unwrap_or(CronAction::List { all: false }) {
        CronAction::List { all } => show::list(&cron, all),
        CronAction::Status => show::status(&cron),
        CronAction::Runs { job, limit } => show::runs(&cron, job.as_deref(), usize::from(limit)),
        CronAction::Output { job, run } => show::output(&cron, &job, run.as_deref()),
        CronAction::Add(add) => change::add(&cron, add),
        CronAction::Edit(edit) => change::edit(&cron, edit),
        CronAction::Pause { job } => change::pause(&cron, &job),
        CronAction::Resume { job } => change::resume(&cron, &job),
        CronAction::Remove { job } => change::remove(&cron, &job),
        CronAction::Run { job } => fire::run_now(&cron, &job).await,
        CronAction::Tick => fire::tick(&cron).await,
    }
}
