//! `hermes chat` and `hermes -z`: start a session through the session runtime
//! and run turns on it.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use anyhow::{Context, Result};
use hermes_protocol::{Event, Op, TurnEnd};
use hermes_session::{Conversation, Notice, ResumeRequest, SessionManager, SessionSpec, Setup};
use hermes_state::Env;

use crate::args::{ChatArgs, Cli, Command, RunArgs};
use crate::driver::{self, Display};
use crate::logging::LogSettings;
use crate::render::Verbosity;

/// Exit code when the turn was interrupted (as shells report SIGINT).
const EXIT_INTERRUPTED: u8 = 130;

/// How the output of a run is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Streamed answer, tool progress, session id hint.
    Interactive,
    /// `chat -Q`: final answer on stdout, `session_id:` on stderr.
    Quiet,
    /// `-z`: final answer only.
    Oneshot,
}

/// Entry point after argument parsing.
pub async fn dispatch(cli: Cli) -> ExitCode {
    crate::hooks_cmd::set_accept(cli.accept_hooks);
    let result = match (cli.oneshot, cli.command) {
        (Some(prompt), _) => run_query(&cli.run, prompt, Mode::Oneshot).await,
        (None, Some(Command::Chat(chat))) => run_chat(chat, &cli.run).await,
        (None, Some(Command::Sessions(args))) => crate::sessions::run(*args),
        (None, Some(Command::Model(args))) => crate::model_cmd::run(args, &cli.run).await,
        (None, Some(Command::Auth(args))) => crate::auth_cmd::run(args),
        (None, Some(Command::Skills(args))) => crate::skills_cmd::run(args),
        (None, Some(Command::Mcp(args))) => crate::mcp_cmd::run(args, &cli.run).await,
        (None, Some(Command::Gateway(args))) => crate::gateway_cmd::run(args, &cli.run).await,
        (None, Some(Command::Dashboard(args))) => crate::dashboard_cmd::run(args, &cli.run).await,
        (None, Some(Command::Profile(args))) => crate::profile_cmd::run(args),
        (None, Some(Command::Send(args))) => crate::send_cmd::run(args, &cli.run).await,
        (None, Some(Command::Insights(args))) => crate::insights_cmd::run(&args, &cli.run),
        (None, Some(Command::Config(args))) => crate::config_cmd::run(args, &cli.run),
        (None, Some(Command::Status)) => {
            load_setup(&cli.run).and_then(|setup| crate::status_cmd::status(&setup))
        }
        (None, Some(Command::Version)) => crate::status_cmd::version(),
        (None, Some(Command::Logs(args))) => home().and_then(|h| crate::logs_cmd::run(args, &h)),
        (None, Some(Command::Completion { shell })) => completion(shell),
        (None, Some(Command::Doctor(args))) => crate::doctor::run(args).await,
        (None, Some(Command::Checkpoints(args))) => crate::checkpoints_cmd::run(args),
        (None, Some(Command::Cron(args))) => crate::cron_cmd::run(args, &cli.run).await,
        (None, Some(Command::Batch(args))) => crate::batch_cmd::run(*args, &cli.run).await,
        (None, Some(Command::Setup(args))) => crate::setup_cmd::run(&args),
        (None, Some(Command::Pairing(args))) => {
            load_setup(&cli.run).and_then(|setup| crate::pairing_cmd::run(args, &setup))
        }
        (None, Some(Command::Webhook(args))) => match load_setup(&cli.run) {
            Ok(setup) => crate::webhook_cmd::run(args, &setup).await,
            Err(e) => Err(e),
        },
        (None, Some(Command::Acp(args))) => crate::acp_cmd::run(args, &cli.run).await,
        (None, Some(Command::Hooks(args))) => match load_setup(&cli.run) {
            Ok(setup) => crate::hooks_cmd::run(args, &setup).await,
            Err(e) => Err(e),
        },
        (None, Some(Command::Plugins(args))) => {
            load_setup(&cli.run).and_then(|setup| crate::plugins_cmd::run(args, &setup))
        }
        (None, Some(Command::Tools(args))) => {
            load_setup(&cli.run).and_then(|setup| crate::tools_cmd::run(args, &setup))
        }
        (None, None) => {
            run_chat(
                ChatArgs {
                    query: None,
                    quiet: false,
                    run: RunArgs::default(),
                },
                &cli.run,
            )
            .await
        }
    };
    result.unwrap_or_else(|e| fail(&e))
}

/// The Hermes home the environment names (without loading its config).
pub(crate) fn home() -> Result<hermes_state::HermesHome> {
    hermes_state::HermesHome::from_env(
        std::env::var("HERMES_HOME").ok().as_deref(),
        std::env::var("HOME").ok().as_deref(),
    )
    .ok_or_else(|| anyhow::anyhow!("cannot locate the Hermes home: set HERMES_HOME or HOME"))
}

/// Writes the completion script for `shell` to stdout.
fn completion(shell: crate::args::CompletionShell) -> Result<ExitCode> {
    use clap::CommandFactory;
    use clap_complete::Shell;
    let shell = match shell {
        crate::args::CompletionShell::Bash => Shell::Bash,
        crate::args::CompletionShell::Zsh => Shell::Zsh,
        crate::args::CompletionShell::Fish => Shell::Fish,
    };
    let mut command = Cli::command();
    // Generated into memory: the generator panics on a write error (a closed pipe).
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "hermes", &mut script);
    std::io::stdout().write_all(&script)?;
    Ok(ExitCode::SUCCESS)
}

/// Prints an error the way the binary reports them and returns exit code 1;
/// output cut short by its reader (`hermes sessions list | head -2`) ends
/// quietly with 0, as a well-behaved filter does.
pub fn fail(err: &anyhow::Error) -> ExitCode {
    if is_broken_pipe(err) {
        return ExitCode::SUCCESS;
    }
    #[allow(clippy::print_stderr)]
    {
        eprintln!("error: {err:#}");
    }
    ExitCode::FAILURE
}

/// Whether `err` is a write to a pipe whose reader went away.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

async fn run_chat(chat: ChatArgs, top: &RunArgs) -> Result<ExitCode> {
    let run = merge(&chat.run, top);
    if let Some(code) = first_run(&run)? {
        return Ok(code);
    }
    let mode = if chat.quiet {
        Mode::Quiet
    } else {
        Mode::Interactive
    };
    match chat.query {
        Some(q) => run_query(&run, q, mode).await,
        None if std::io::stdin().is_terminal() => crate::repl::run(&run, chat.quiet).await,
        None => {
            let mut input = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut input)
                .context("reading the prompt from stdin")?;
            if input.trim().is_empty() {
                anyhow::bail!("no prompt given: pass one with -q \"…\" or on standard input");
            }
            run_query(&run, input, mode).await
        }
    }
}

/// On a terminal with nothing configured (no provider, no local model), offers
/// the setup wizard before the chat; `Some` is the exit code when the user
/// declines. Elsewhere the session's own error says what to configure.
fn first_run(run: &RunArgs) -> Result<Option<ExitCode>> {
    if run.provider.is_some() || !crate::setup_cmd::interactive() {
        return Ok(None);
    }
    let setup = load_setup(run)?;
    match setup.endpoint(None, run.model.as_deref()) {
        Err(hermes_session::SetupError::NoProvider { .. })
            if !crate::status_cmd::local_model_file(&setup).is_file() => {}
        _ => return Ok(None),
    }
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "\nIt looks like Hermes isn't configured yet -- no API keys or providers found.\n\n  Run:  hermes setup\n"
    )?;
    write!(out, "Run setup now? [Y/n] ")?;
    out.flush()?;
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    let yes = matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "" | "y" | "yes"
    );
    if yes && crate::setup_cmd::wizard(&setup.home)? {
        return Ok(None);
    }
    writeln!(
        out,
        "\nYou can run 'hermes setup' at any time to configure."
    )?;
    Ok(Some(ExitCode::FAILURE))
}

/// Subcommand flags win over the same flags given before the subcommand.
fn merge(sub: &RunArgs, top: &RunArgs) -> RunArgs {
    RunArgs {
        model: sub.model.clone().or_else(|| top.model.clone()),
        provider: sub.provider.clone().or_else(|| top.provider.clone()),
        toolsets: sub.toolsets.clone().or_else(|| top.toolsets.clone()),
        max_turns: sub.max_turns.or(top.max_turns),
        yolo: sub.yolo || top.yolo,
        ignore_user_config: sub.ignore_user_config || top.ignore_user_config,
        ignore_rules: sub.ignore_rules || top.ignore_rules,
        resume: sub.resume.clone().or_else(|| top.resume.clone()),
        continue_last: sub
            .continue_last
            .clone()
            .or_else(|| top.continue_last.clone()),
        skills: sub.skills.clone().or_else(|| top.skills.clone()),
        checkpoints: sub.checkpoints || top.checkpoints,
    }
}

/// The resume request the flags make, if any.
fn resume_request(run: &RunArgs) -> Option<ResumeRequest> {
    match (&run.resume, &run.continue_last) {
        (Some(key), _) => Some(ResumeRequest::Resume(key.clone())),
        (None, Some(name)) => Some(ResumeRequest::Continue(
            Some(name.clone()).filter(|n| !n.is_empty()),
        )),
        (None, None) => None,
    }
}

/// A comma-separated flag as a list.
fn list(text: &str) -> Vec<String> {
    text.split(',')
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The environment, home and configuration the flags select. The binary is
/// the composition root: it installs the installation's known secrets (the
/// values of `.env` and `auth.json`) for every redaction in the process.
pub(crate) fn load_setup(run: &RunArgs) -> Result<Setup> {
    let setup = Setup::load(Env::from_pairs(std::env::vars()), run.ignore_user_config)?;
    hermes_llm::redact::install_known_secrets(hermes_session::secrets::known_secrets(&setup));
    Ok(setup)
}

/// A running session plus what the terminal needs to show it.
pub(crate) struct Session {
    pub(crate) conv: Conversation,
    pub(crate) setup: Setup,
    pub(crate) log: LogSettings,
    /// Traces the turns, when a collector is configured.
    pub(crate) observer: Option<std::sync::Arc<hermes_observe::Observer>>,
}

impl Session {
    /// Starts a CLI session as the flags ask; `interactive` when a person at
    /// this terminal can answer approvals and questions.
    pub(crate) async fn start(run: &RunArgs, interactive: bool) -> Result<Self> {
        let setup = load_setup(run)?;
        let cwd = std::env::current_dir().context("cannot read the current directory")?;
        let spec = SessionSpec {
            provider: run.provider.clone(),
            model: run.model.clone(),
            toolsets: run.toolsets.as_deref().map(list),
            resume: resume_request(run),
            skills: run.skills.as_deref().map(list).unwrap_or_default(),
            yolo: run.yolo,
            max_turns: run.max_turns,
            ignore_rules: run.ignore_rules,
            interactive,
            // The REPL titles its sessions, as the reference's does.
            auto_title: interactive,
            checkpoints: run.checkpoints,
            ..SessionSpec::new("cli", cwd)
        };
        // The daily sweep of the checkpoint store runs while the session
        // starts, and is over before its first turn can take a checkpoint.
        let upkeep = {
            let setup = setup.clone();
            tokio::task::spawn_blocking(move || {
                hermes_session::checkpoint_upkeep(&setup, std::time::SystemTime::now())
            })
        };
        let manager = SessionManager::new(setup.clone());
        crate::hooks_cmd::install(manager.services(), interactive);
        crate::mcp_oauth::install(manager.services(), interactive);
        let observer = crate::observe::observer(&setup, false);
        crate::observe::tap(manager.services(), None, observer.clone());
        let log = LogSettings::from_config(&setup.home, &setup.config);
        crate::tracing_log::collect(crate::logging::LogFiles::open(&log, false));
        let (conv, _) = tokio::join!(manager.start(spec), upkeep);
        let conv = conv?;
        let mut err = std::io::stderr();
        for notice in conv.notices() {
            match notice {
                Notice::Info(text) => writeln!(err, "{text}")?,
                Notice::Warning(text) => writeln!(err, "warning: {text}")?,
            }
        }
        Ok(Self {
            conv,
            setup,
            log,
            observer,
        })
    }

    /// The session id now (a compression continues the transcript in a child session).
    pub(crate) fn id(&self) -> String {
        self.conv.info().session_id
    }

    /// How events are shown in `verbosity`.
    pub(crate) fn display(&self, verbosity: Verbosity, rich: bool) -> Display {
        Display {
            verbosity,
            rich,
            log: self.log.clone(),
            clarify_timeout: self
                .setup
                .config
                .sections
                .clarify
                .timeout
                .filter(|t| *t > 0.0)
                .map_or(
                    hermes_session::DEFAULT_CLARIFY_TIMEOUT,
                    std::time::Duration::from_secs_f64,
                ),
        }
    }

    /// Ends the session in the store and tells the user how to come back to it.
    pub(crate) async fn finish(self, mode: Mode) -> Result<()> {
        let id = self.id();
        let info = self.conv.info();
        // A session nothing was said in is discarded at close: no hint for it.
        let resumable = info.recorded && info.messages > 1;
        let mut err = std::io::stderr();
        if let Err(e) = self.conv.shutdown("cli_close").await {
            writeln!(err, "warning: could not close the session record: {e}")?;
        }
        crate::observe::flush(self.observer.as_ref()).await;
        if mode == Mode::Interactive && resumable {
            writeln!(err, "Resume this session with:\n  hermes --resume {id}")?;
        }
        Ok(())
    }
}

async fn run_query(run: &RunArgs, prompt: String, mode: Mode) -> Result<ExitCode> {
    let mut session = Session::start(run, false).await?;
    let verbosity = if mode == Mode::Interactive {
        Verbosity::Normal
    } else {
        Verbosity::FinalOnly
    };
    let display = session.display(verbosity, false);
    let outcome = driver::run(
        &mut session.conv,
        Op::UserInput { text: prompt },
        &display,
        None,
        &mut |_| Ok(None),
    )
    .await?;
    let id = session.id();
    session.finish(mode).await?;
    let mut out = std::io::stdout();
    let mut err = std::io::stderr();
    match outcome.last {
        Event::TurnComplete {
            final_text, reason, ..
        } => {
            if mode != Mode::Interactive {
                writeln!(out, "{}", final_text.trim_end())?;
            }
            if mode == Mode::Quiet {
                writeln!(err, "session_id: {id}")?;
            }
            if reason == TurnEnd::Interrupted {
                writeln!(err, "Interrupted.")?;
                return Ok(ExitCode::from(EXIT_INTERRUPTED));
            }
            Ok(ExitCode::SUCCESS)
        }
        Event::Error { message } => {
            // Printed by the renderer in interactive mode; the others show nothing while working.
            if mode != Mode::Interactive {
                writeln!(err, "error: {message}")?;
            }
            if mode == Mode::Quiet {
                writeln!(err, "session_id: {id}")?;
            }
            Ok(ExitCode::FAILURE)
        }
        other => anyhow::bail!("the session ended the turn unexpectedly ({other:?})"),
    }
}
