//! `hermes acp`: serve the Agent Client Protocol on stdio for an editor.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use hermes_session::SessionManager;

use crate::args::RunArgs;
use crate::chat::load_setup;

/// `hermes acp` flags.
#[derive(Debug, Args)]
pub struct AcpArgs {
    /// Print the version and exit.
    #[arg(long)]
    version: bool,
    /// Check that the configuration loads, print `Hermes ACP check OK`, and exit.
    #[arg(long)]
    check: bool,
}

/// Runs `hermes acp`. Stdout carries JSON-RPC only; everything else goes to stderr.
pub(crate) async fn run(args: AcpArgs, run: &RunArgs) -> Result<ExitCode> {
    if args.version {
        writeln!(std::io::stdout(), "{}", env!("CARGO_PKG_VERSION"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let setup = load_setup(run)?;
    if args.check {
        setup.endpoint(run.provider.as_deref(), run.model.as_deref())?;
        writeln!(std::io::stdout(), "Hermes ACP check OK")?;
        return Ok(ExitCode::SUCCESS);
    }
    let settings = crate::logging::LogSettings::from_config(&setup.home, &setup.config);
    let manager = SessionManager::new(setup);
    // The editor's sessions log their turns to agent.log, as the terminal's do.
    let observer = crate::observe::tap_sessions(
        manager.services(),
        &crate::logging::LogFiles::open(&settings, false),
        false,
    );
    crate::hooks_cmd::install(manager.services(), false);
    hermes_acp::serve_stdio(manager).await?;
    crate::observe::flush(observer.as_ref()).await;
    Ok(ExitCode::SUCCESS)
}
