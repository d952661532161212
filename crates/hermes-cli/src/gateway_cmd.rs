//! `hermes gateway`: run the gateway in the foreground (the API server
//! today), show whether one runs, install it as a systemd user service.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use std::sync::Arc;

use hermes_gateway::log::{API_LOGGER, LogFn, LogLevel, RUN_LOGGER};
use hermes_gateway::messaging::Messaging;
use hermes_gateway::messaging::config::MessagingConfig;
use hermes_gateway::{config, lock};
use hermes_session::{SessionManager, Setup};
use tokio_util::sync::CancellationToken;

use crate::args::RunArgs;
use crate::logging::{Level, LogFiles, LogSettings};

/// `hermes gateway` arguments.
#[derive(Debug, Args)]
pub struct GatewayArgs {
    #[command(subcommand)]
    action: Option<GatewayAction>,
}

#[derive(Debug, Subcommand)]
enum GatewayAction {
    /// Run the gateway in the foreground (Ctrl+C or SIGTERM drains and stops it).
    Run {
        /// Stop a gateway already running for this HERMES_HOME first.
        #[arg(long)]
        replace: bool,
    },
    /// Show whether a gateway runs for this HERMES_HOME, and what it serves.
    Status,
    /// Write a systemd unit that runs `hermes gateway run` (and enable it with systemctl).
    Install(crate::gateway_service::InstallArgs),
    /// Stop and remove the systemd unit.
    Uninstall(crate::gateway_service::Scope),
    /// Start the installed service.
    Start(crate::gateway_service::Scope),
    /// Stop the service (or, without systemd, the gateway running for this home).
    Stop(crate::gateway_service::Scope),
    /// Restart the installed service.
    Restart(crate::gateway_service::Scope),
}

fn say(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
}

fn api_config(setup: &Setup) -> Result<Option<config::ApiServerConfig>> {
    config::from_tree(&setup.config.raw, &|name| {
        setup.env.get(name).map(str::to_owned)
    })
    .map_err(anyhow::Error::msg)
}

/// Runs a `hermes gateway` action.
pub async fn run(args: GatewayArgs, run: &RunArgs) -> Result<ExitCode> {
    let setup = crate::chat::load_setup(run)?;
    match args.action.unwrap_or(GatewayAction::Run { replace: false }) {
        GatewayAction::Run { replace } => serve(setup, replace).await,
        GatewayAction::Status => status(&setup),
        GatewayAction::Install(args) => crate::gateway_service::install(&setup, &args),
        GatewayAction::Uninstall(scope) => crate::gateway_service::uninstall(&setup, &scope),
        GatewayAction::Start(scope) => crate::gateway_service::control(&setup, &scope, "start"),
        GatewayAction::Stop(scope) => crate::gateway_service::stop(&setup, &scope),
        GatewayAction::Restart(scope) => crate::gateway_service::control(&setup, &scope, "restart"),
    }
}

pub(crate) fn messaging_config(setup: &Setup) -> MessagingConfig {
    let env = |name: &str| setup.env.get(name).map(str::to_owned);
    let plugins = hermes_session::plugins::enabled_platforms(setup)
        .into_iter()
        .map(|p| {
            let launch = hermes_gateway::messaging::config::PluginLaunch {
                argv: p.argv,
                dir: p.dir,
            };
            (p.platform, launch)
        })
        .collect();
    MessagingConfig::read(&setup.config.raw, &env).with_plugins(plugins, &setup.config.raw, &env)
}

async fn serve(setup: Setup, replace: bool) -> Result<ExitCode> {
    let api = api_config(&setup)?;
    let messaging_cfg = messaging_config(&setup);
    let webhooks = hermes_gateway::webhook::routes::WebhookConfig::read(&setup.config.raw, &|k| {
        setup.env.get(k).map(str::to_owned)
    });
    if api.is_none() && messaging_cfg.platforms.is_empty() && webhooks.is_none() {
        bail!(
            "nothing to run: no gateway platform is enabled. Connect a messaging platform with \
             TELEGRAM_BOT_TOKEN, DISCORD_BOT_TOKEN, SLACK_BOT_TOKEN (+ SLACK_APP_TOKEN) or \
             MATRIX_HOMESERVER + MATRIX_ACCESS_TOKEN in {env}, \
             enable webhooks with `platforms: {{webhook: {{enabled: true}}}}` in config.yaml, \
             or enable the API server with `platforms: {{api_server: {{enabled: true}}}}` in config.yaml \
             (or API_SERVER_ENABLED=true) and a key: API_SERVER_KEY=$(openssl rand -hex 32) in {env}",
            env = setup.home.root().join(".env").display()
        );
    }
    let home = setup.home.root().to_path_buf();
    let _lock = lock::GatewayLock::acquire(&home, replace, std::time::Duration::from_secs(35))
        .map_err(anyhow::Error::msg)?;
    let cwd = std::env::current_dir()?;
    // As the reference's gateway does at start; its sessions take no
    // checkpoints, so the sweep need not hold up the start.
    let upkeep = setup.clone();
    tokio::task::spawn_blocking(move || {
        hermes_session::checkpoint_upkeep(&upkeep, std::time::SystemTime::now())
    });
    let files = LogFiles::open(&LogSettings::from_config(&setup.home, &setup.config), true);
    let log = gateway_log(&files);
    log(LogLevel::Info, RUN_LOGGER, "Starting Hermes Gateway...");
    let manager = SessionManager::new(setup);
    let observer = crate::observe::tap_sessions(manager.services(), &files, true);
    crate::hooks_cmd::install(manager.services(), false);
    let stop = CancellationToken::new();
    stop_on_signals(stop.clone(), log.clone());
    let status = Arc::new(hermes_gateway::status::RuntimeStatus::start(&home));
    let messaging = Messaging::new(manager.clone(), messaging_cfg, cwd.clone(), log.clone())
        .map_err(anyhow::Error::msg)?
        .map(|m| m.with_status(status.clone()));
    if let Some(messaging) = &messaging {
        manager
            .services()
            .set_cron_delivery(Arc::new(messaging.sender()));
    }
    tick_cron(
        manager.clone(),
        files.clone(),
        log.clone(),
        observer.clone(),
    );
    status.gateway("running");
    let mut counted: Vec<(&'static str, Counter)> = Vec::new();
    let mut tasks = Vec::new();
    if let Some(messaging) = messaging {
        let turns = messaging.turns_in_flight();
        counted.push((
            "messaging",
            Arc::new(move || turns.load(std::sync::atomic::Ordering::Relaxed)),
        ));
        log(
            LogLevel::Info,
            RUN_LOGGER,
            &format!("messaging on {}", messaging.platform_names().join(", ")),
        );
        let stop = stop.clone();
        tasks.push(tokio::spawn(async move {
            messaging.run(stop).await;
            Ok::<(), String>(())
        }));
    }
    if let Some(api) = api {
        let ctx = (&manager, cwd.as_path(), &log, &stop);
        let (task, counters) = start_api_server(api, ctx, observer.clone()).await?;
        counted.extend(counters.into_iter().map(|c| ("api_server", c)));
        tasks.push(task);
    }
    if let Some(config) = webhooks {
        let ctx = (&manager, cwd.as_path(), &log, &stop);
        let (task, counter) = start_webhooks(config, &home, ctx);
        counted.push(("webhook", counter));
        status.platform("webhook", "connected", None);
        tasks.push(task);
    }
    count_sessions(status.clone(), counted, observer.clone(), stop.clone());
    for task in tasks {
        match task.await {
            Ok(Err(e)) => bail!(e),
            Err(e) => bail!("gateway task failed: {e}"),
            Ok(Ok(())) => {}
        }
    }
    // Another replica's scheduler takes over now, not when the lease lapses.
    hermes_session::cron::run::release_scheduler(&manager);
    crate::observe::flush(observer.as_ref()).await;
    status.gateway("stopped");
    log(LogLevel::Info, RUN_LOGGER, "stopped.");
    Ok(ExitCode::SUCCESS)
}

/// What a gateway part runs with: the sessions, the working directory, the
/// log and the stop signal.
type PartContext<'a> = (
    &'a SessionManager,
    &'a std::path::Path,
    &'a LogFn,
    &'a CancellationToken,
);

/// How to count a part's runs in flight.
type Counter = Arc<dyn Fn() -> usize + Send + Sync>;

/// A running part of the gateway.
type Task = tokio::task::JoinHandle<Result<(), String>>;

/// Binds and starts the API server (and the profiles it serves).
async fn start_api_server(
    api: hermes_gateway::ApiServerConfig,
    (manager, cwd, log, stop): PartContext<'_>,
    observer: Option<Arc<hermes_observe::Observer>>,
) -> Result<(Task, Vec<Counter>)> {
    let server =
        hermes_gateway::serve::Server::bind(api.clone(), manager.clone(), cwd.to_path_buf())
            .await
            .map_err(|e| {
                log(LogLevel::Error, API_LOGGER, &format!("[Api_Server] {e}"));
                anyhow::Error::msg(e)
            })?
            .with_log(log.clone())
            .with_observer(observer)
            .with_profiles(multiplexed(manager, log));
    let counters: Vec<Counter> = server
        .inflight()
        .into_iter()
        .map(|inflight| Arc::new(move || inflight.count()) as Counter)
        .collect();
    let addr = server
        .local_addr()
        .map_or_else(|| format!("{}:{}", api.host, api.port), |a| a.to_string());
    let cap = if api.max_concurrent_runs == 0 {
        "unlimited".to_owned()
    } else {
        api.max_concurrent_runs.to_string()
    };
    log(
        LogLevel::Info,
        API_LOGGER,
        &format!(
            "API server listening on http://{addr}/v1 (model '{}', max {cap} concurrent runs)",
            api.model_name
        ),
    );
    let stop = stop.clone();
    Ok((
        tokio::spawn(async move { server.run(stop).await }),
        counters,
    ))
}

/// Starts the webhook listener.
fn start_webhooks(
    config: hermes_gateway::webhook::routes::WebhookConfig,
    home: &std::path::Path,
    (manager, cwd, log, stop): PartContext<'_>,
) -> (Task, Counter) {
    let webhooks = Arc::new(hermes_gateway::webhook::Webhooks::new(
        config,
        home,
        manager.clone(),
        cwd.to_path_buf(),
        log.clone(),
    ));
    let runs = webhooks.inflight();
    let stop = stop.clone();
    (
        tokio::spawn(async move { webhooks.serve(stop).await }),
        Arc::new(move || runs.load(std::sync::atomic::Ordering::Relaxed)),
    )
}

/// With `gateway.multiplex_profiles: true`, every other profile under the
/// root, each with its own home (its config, .env, state.db), for the API
/// server's `/p/<name>/…` routes. Its environment is this process's own plus
/// the profile's `.env` — never the default profile's keys.
fn multiplexed(manager: &SessionManager, log: &LogFn) -> Vec<(String, SessionManager)> {
    let setup = manager.services().setup();
    if setup.config.raw.pointer("/gateway/multiplex_profiles")
        != Some(&serde_json::Value::Bool(true))
    {
        return Vec::new();
    }
    let Some(root) = crate::profile::root(
        std::env::var("HERMES_HOME").ok().as_deref(),
        std::env::var("HOME").ok().as_deref(),
    ) else {
        return Vec::new();
    };
    let mut served = Vec::new();
    for name in crate::profile::names(&root) {
        let dir = crate::profile::dir(&root, &name);
        if name == "default" || dir == setup.home.root() {
            continue;
        }
        let mut env = hermes_state::Env::from_pairs(std::env::vars());
        env.set("HERMES_HOME", dir.display().to_string());
        match Setup::load(env, false) {
            Ok(profile) => served.push((name, SessionManager::new(profile))),
            Err(e) => log(
                LogLevel::Warning,
                API_LOGGER,
                &format!("profile {name} is not served: {e}"),
            ),
        }
    }
    if !served.is_empty() {
        let names: Vec<&str> = served.iter().map(|(n, _)| n.as_str()).collect();
        log(
            LogLevel::Info,
            API_LOGGER,
            &format!(
                "also serving profiles under /p/<name>/: {}",
                names.join(", ")
            ),
        );
    }
    served
}

/// Gateway lines go to `logs/gateway.log` (and agent/errors logs) and to
/// stderr, where a service manager's journal picks them up; per-request API
/// lines only to the files.
fn gateway_log(files: &Arc<LogFiles>) -> LogFn {
    let files = files.clone();
    Arc::new(move |level: LogLevel, logger: &str, line: &str| {
        let written = match level {
            LogLevel::Info => Level::Info,
            LogLevel::Warning => Level::Warning,
            LogLevel::Error => Level::Error,
        };
        files.write(written, "", logger, line);
        let request_line = logger == API_LOGGER && line.starts_with("[Api_Server] ");
        if !request_line || level > LogLevel::Info {
            say(&format!("Hermes gateway: {line}"));
        }
    })
}

/// Writes the sessions working now (chat turns and API runs) to
/// `gateway_state.json` as `active_agents`, checked every two seconds.
fn count_sessions(
    status: Arc<hermes_gateway::status::RuntimeStatus>,
    counted: Vec<(&'static str, Counter)>,
    observer: Option<Arc<hermes_observe::Observer>>,
    stop: CancellationToken,
) {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(std::time::Duration::from_secs(2));
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = every.tick() => {}
            }
            status.active_agents(counted.iter().map(|(_, count)| count()).sum());
            if let Some(metrics) = observer.as_ref().and_then(|o| o.metrics()) {
                for (part, count) in &counted {
                    metrics
                        .in_flight
                        .get_or_create(&vec![("part", (*part).to_owned())])
                        .set(i64::try_from(count()).unwrap_or(i64::MAX));
                }
            }
        }
    });
}

/// Ctrl+C or SIGTERM fires `stop` (runs in flight are finished first).
fn stop_on_signals(stop: CancellationToken, log: LogFn) {
    crate::dashboard_cmd::on_signal(move || {
        log(
            LogLevel::Info,
            RUN_LOGGER,
            "stopping (finishing runs in flight)...",
        );
        stop.cancel();
    });
}

/// Scheduled jobs fire from here, once a minute (the lock in the cron
/// directory, or among replicas the scheduler lease, keeps a second process
/// from running the same job); their answers go out through the platforms.
fn tick_cron(
    manager: SessionManager,
    files: Arc<LogFiles>,
    log: LogFn,
    observer: Option<Arc<hermes_observe::Observer>>,
) {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(std::time::Duration::from_secs(60));
        loop {
            every.tick().await;
            let ticked = hermes_session::cron::run::tick(&manager).await;
            if let Some(metrics) = observer.as_ref().and_then(|o| o.metrics()) {
                metrics
                    .scheduler_lease
                    .set(i64::from(matches!(ticked, Ok(Some(_)))));
            }
            match ticked {
                Ok(Some(outcomes)) => {
                    for outcome in outcomes {
                        crate::logging::log_cron_run(&files, &outcome);
                        let (level, how) = if outcome.result.is_ok() {
                            (LogLevel::Info, "ok")
                        } else {
                            (LogLevel::Warning, "failed")
                        };
                        log(
                            level,
                            RUN_LOGGER,
                            &format!("cron job {} ran ({how})", outcome.name),
                        );
                    }
                }
                Ok(None) => {}
                Err(e) => log(
                    LogLevel::Warning,
                    RUN_LOGGER,
                    &format!("cron tick failed: {e}"),
                ),
            }
        }
    });
}

fn status(setup: &Setup) -> Result<ExitCode> {
    let home = setup.home.root();
    let mut out = std::io::stdout().lock();
    match lock::running_pid(home) {
        Some(pid) => writeln!(out, "Gateway: running (pid {pid}) for {}", home.display())?,
        None => writeln!(out, "Gateway: not running for {}", home.display())?,
    }
    match api_config(setup) {
        Ok(Some(api)) => writeln!(
            out,
            "API server: enabled on http://{}:{}/v1 (model '{}')",
            api.host, api.port, api.model_name
        )?,
        Ok(None) => writeln!(
            out,
            "API server: not enabled (platforms.api_server.enabled / API_SERVER_KEY)"
        )?,
        Err(problem) => writeln!(out, "API server: cannot start: {problem}")?,
    }
    let messaging = messaging_config(setup);
    if messaging.platforms.is_empty() {
        writeln!(
            out,
            "Messaging: no platform configured (TELEGRAM_BOT_TOKEN, DISCORD_BOT_TOKEN, SLACK_BOT_TOKEN)"
        )?;
    } else {
        let names: Vec<&str> = messaging.platforms.iter().map(|p| p.name).collect();
        writeln!(out, "Messaging: {}", names.join(", "))?;
    }
    // What the running gateway last wrote (gateway_state.json).
    let live = lock::running_pid(home)
        .and_then(|_| hermes_gateway::status::read(home))
        .unwrap_or_default();
    if let Some(active) = live["active_agents"].as_u64() {
        writeln!(out, "Sessions in flight: {active}")?;
    }
    if let Some(platforms) = live["platforms"].as_object() {
        for (name, p) in platforms {
            let mut line = format!("  {name}: {}", p["state"].as_str().unwrap_or("unknown"));
            if let Some(error) = p["error_message"].as_str() {
                line.push_str(&format!(" ({error})"));
            }
            if let Some(at) = p["updated_at"].as_str() {
                line.push_str(&format!(", since {at}"));
            }
            if let Some(at) = p["last_poll_at"].as_str() {
                line.push_str(&format!(", last poll {at}"));
            }
            if let Some(at) = p["last_message_at"].as_str() {
                line.push_str(&format!(", last message {at}"));
            }
            writeln!(out, "{line}")?;
        }
    }
    Ok(if lock::running_pid(home).is_some() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(3)
    })
}
