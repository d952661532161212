//! Running jobs from the shell: `run` (one job now) and `tick` (what is due).
//! Their sessions and outcomes are logged to `agent.log` as the gateway's are.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;
use hermes_session::SessionManager;
use hermes_session::cron::run;

use super::{Cron, delivering_manager, fail};
use crate::logging::{LogFiles, LogSettings};

/// A delivering manager whose sessions log to the home's `logs/` (and are
/// traced where configured).
fn logged_manager(cron: &Cron<'_>) -> Result<(SessionManager, Arc<LogFiles>, Traces)> {
    let manager = delivering_manager(cron.flags)?;
    let setup = manager.services().setup();
    let files = LogFiles::open(&LogSettings::from_config(&setup.home, &setup.config), false);
    let observer = crate::observe::tap_sessions(manager.services(), &files, false);
    Ok((manager, files, observer))
}

/// The runs' tracer, flushed before the command exits.
type Traces = Option<Arc<hermes_observe::Observer>>;

/// `hermes cron run JOB`.
pub(super) async fn run_now(cron: &Cron<'_>, job: &str) -> Result<ExitCode> {
    let (manager, files, traces) = logged_manager(cron)?;
    let book = run::book(&manager).map_err(anyhow::Error::msg)?;
    let ran = run::run_job(&manager, &book, job).await;
    crate::observe::flush(traces.as_ref()).await;
    let outcome = match ran {
        Ok(outcome) => outcome,
        Err(e) => return fail(&format!("Failed to run job: {e}")),
    };
    crate::logging::log_cron_run(&files, &outcome);
    let mut out = std::io::stdout().lock();
    writeln!(out, "Triggered job: {} ({})", outcome.name, outcome.job_id)?;
    match &outcome.result {
        Ok(_) => writeln!(out, "  Ran now: succeeded.")?,
        Err(e) => writeln!(out, "  Ran now: failed. {e}")?,
    }
    if let Some(name) = &outcome.output {
        let file = cron.root.join(name);
        if file.is_file() {
            writeln!(out, "  Output: {}", file.display())?;
        } else {
            writeln!(out, "  Output: {name} (in the session database)")?;
        }
        writeln!(out, "  Read it with: hermes cron output {}", outcome.job_id)?;
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

/// `hermes cron tick`.
pub(super) async fn tick(cron: &Cron<'_>) -> Result<ExitCode> {
    let (manager, files, traces) = logged_manager(cron)?;
    let ticked = run::tick(&manager).await;
    run::release_scheduler(&manager);
    crate::observe::flush(traces.as_ref()).await;
    let mut err = std::io::stderr();
    match ticked.map_err(anyhow::Error::msg)? {
        None => writeln!(err, "Another process is running the due jobs.")?,
        Some(outcomes) => {
            if outcomes.is_empty() {
                writeln!(err, "No jobs are due.")?;
            }
            for o in outcomes {
                crate::logging::log_cron_run(&files, &o);
                match &o.result {
                    Ok(_) => writeln!(err, "ran {} ({}): ok", o.name, o.job_id)?,
                    Err(e) => writeln!(err, "ran {} ({}): failed: {e}", o.name, o.job_id)?,
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
