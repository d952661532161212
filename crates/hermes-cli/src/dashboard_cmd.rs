//! `hermes dashboard`: serve the web dashboard (127.0.0.1:9119 by default, the
//! reference's), show whether one runs (`--status`), stop it (`--stop`), or
//! write a login token into `.env` (`--new-token`) for a bind off loopback.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Args;
use hermes_dashboard::{Dashboard, DashboardConfig, TOKEN_VAR};
use hermes_session::{SessionManager, Setup};
use tokio_util::sync::CancellationToken;

use crate::args::RunArgs;

/// `hermes dashboard` flags.
#[derive(Debug, Args)]
pub struct DashboardArgs {
    /// The address to listen on (anything but loopback needs a login token).
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// The port.
    #[arg(long, default_value_t = 9119)]
    port: u16,
    /// Say whether a dashboard runs for this home, and where.
    #[arg(long, conflicts_with_all = ["stop", "new_token"])]
    status: bool,
    /// Stop the dashboard running for this home.
    #[arg(long, conflicts_with = "new_token")]
    stop: bool,
    /// Write a new login token to .env (HERMES_DASHBOARD_TOKEN) and print it once.
    #[arg(long)]
    new_token: bool,
}

/// `dashboard.pid` in the home: `PID URL`.
fn pid_file(setup: &Setup) -> std::path::PathBuf {
    setup.home.root().join("dashboard.pid")
}

/// The running dashboard's pid and address, if one runs.
fn running(setup: &Setup) -> Option<(i32, String)> {
    let text = std::fs::read_to_string(pid_file(setup)).ok()?;
    let (pid, url) = text.trim().split_once(' ')?;
    let pid: i32 = pid.parse().ok()?;
    let alive = pid > 0 && nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok();
    alive.then(|| (pid, url.to_owned()))
}

/// Runs `hermes dashboard`.
pub async fn run(args: DashboardArgs, flags: &RunArgs) -> Result<ExitCode> {
    let setup = crate::chat::load_setup(flags)?;
    let mut out = std::io::stdout().lock();
    if args.status {
        return Ok(match running(&setup) {
            Some((pid, url)) => {
                writeln!(out, "Dashboard: running (pid {pid}) at {url}")?;
                ExitCode::SUCCESS
            }
            None => {
                writeln!(
                    out,
                    "Dashboard: not running for {}",
                    setup.home.root().display()
                )?;
                ExitCode::from(3)
            }
        });
    }
    if args.stop {
        let Some((pid, _)) = running(&setup) else {
            writeln!(
                out,
                "No dashboard runs for {}.",
                setup.home.root().display()
            )?;
            return Ok(ExitCode::FAILURE);
        };
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGTERM,
        )?;
        writeln!(out, "Stopped the dashboard (pid {pid}).")?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.new_token {
        let token = hermes_dashboard::new_token();
        let path = setup.home.env_file();
        hermes_state::env_file::set_var(&path, TOKEN_VAR, Some(&token))?;
        writeln!(
            out,
            "Wrote {TOKEN_VAR} to {}. Log in with:\n  {token}",
            path.display()
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    drop(out);
    serve(setup, args).await
}

async fn serve(setup: Setup, args: DashboardArgs) -> Result<ExitCode> {
    if let Some((pid, url)) = running(&setup) {
        bail!(
            "a dashboard already runs for this home (pid {pid}) at {url}; `hermes dashboard --stop` stops it"
        );
    }
    let config = DashboardConfig {
        host: args.host,
        port: args.port,
        token: setup
            .env
            .get(TOKEN_VAR)
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_owned),
        version: env!("CARGO_PKG_VERSION").to_owned(),
    };
    let settings = crate::logging::LogSettings::from_config(&setup.home, &setup.config);
    let pid_path = pid_file(&setup);
    let manager = SessionManager::new(setup);
    crate::observe::tap_sessions(
        manager.services(),
        &crate::logging::LogFiles::open(&settings, false),
        false,
    );
    crate::hooks_cmd::install(manager.services(), false);
    let dashboard = Dashboard::bind(config.clone(), manager)
        .await
        .map_err(anyhow::Error::msg)?;
    let addr = dashboard.local_addr().map_or_else(
        || format!("{}:{}", config.host, config.port),
        |a| a.to_string(),
    );
    let url = format!("http://{addr}/");
    std::fs::write(&pid_path, format!("{} {url}\n", std::process::id()))?;
    {
        let mut err = std::io::stderr().lock();
        writeln!(err, "Hermes dashboard: {url} (Ctrl+C stops it)")?;
        if config.token.is_some() {
            writeln!(err, "  Log in with {TOKEN_VAR} from .env.")?;
        }
    }
    let stop = CancellationToken::new();
    let signals = stop.clone();
    on_signal(move || signals.cancel());
    dashboard.run(stop).await;
    let _ = std::fs::remove_file(&pid_path);
    Ok(ExitCode::SUCCESS)
}

/// Runs `then` once Ctrl+C or SIGTERM arrives (a server's graceful stop).
pub(crate) fn on_signal(then: impl FnOnce() + Send + 'static) {
    tokio::spawn(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut term), Ok(mut int)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) else {
            return;
        };
        tokio::select! {
            _ = term.recv() => {},
            _ = int.recv() => {},
        }
        then();
    });
}
