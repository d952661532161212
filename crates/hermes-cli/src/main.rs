//! The `hermes` binary.

mod acp_cmd;
mod approval_prompt;
mod args;
mod auth_cmd;
mod batch_cmd;
mod chat;
mod checkpoints_cmd;
mod clarify_prompt;
mod config_cmd;
mod cron_cmd;
mod dashboard_cmd;
mod doctor;
mod driver;
mod gateway_cmd;
mod gateway_service;
mod hooks_cmd;
mod insights_cmd;
mod logging;
mod logs_cmd;
mod markdown;
mod mcp_cmd;
mod mcp_oauth;
mod model_cmd;
mod not_here;
mod observe;
mod pairing_cmd;
mod plugins_cmd;
mod profile;
mod profile_cmd;
mod render;
mod repl;
mod send_cmd;
mod session_browser;
mod session_filters;
mod sessions;
mod sessions_bulk;
mod sessions_export;
mod sessions_migrate;
mod setup_cmd;
mod skills_cmd;
mod spinner;
mod status_cmd;
mod terminal_input;
mod terminal_keys;
mod tools_cmd;
mod tracing_log;
mod webhook_cmd;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // A command in a container, started through the Engine API for the
    // docker backend (before anything else: it runs once per command).
    let raw: Vec<String> = std::env::args().skip(1).collect();
    if raw.first().map(String::as_str) == Some(hermes_env::engine::relay::MODE) {
        return engine_exec(&raw[1..]);
    }
    // `-p NAME` or the sticky profile: run again with that profile's home.
    match profile::choose(&raw, &|name| std::env::var(name).ok()) {
        profile::Choice::Keep => {}
        profile::Choice::Switch { home, args } => {
            let e = profile::switch(&home, &args);
            return chat::fail(&anyhow::anyhow!(
                "cannot run as the profile at {}: {e}",
                home.display()
            ));
        }
        profile::Choice::Fail(message) => return chat::fail(&anyhow::anyhow!(message)),
    }
    let cli = match args::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            if e.use_stderr()
                && let Some(said) = not_here::explain(&raw)
            {
                #[allow(clippy::print_stderr)]
                {
                    eprintln!("{said}");
                }
                return ExitCode::from(2);
            }
            e.exit()
        }
    };
    if cli.version {
        #[allow(clippy::print_stdout)]
        {
            println!("{}", status_cmd::version_line());
        }
        return ExitCode::SUCCESS;
    }
    // One thread starts fastest for the terminal; the gateway serves many
    // conversations at once and uses every core.
    let serving = matches!(
        cli.command,
        Some(args::Command::Gateway(_) | args::Command::Dashboard(_))
    );
    let built = if serving {
        // Few blocking threads: state.db writes are serialised anyway, and
        // every extra thread costs memory (its own allocator arena).
        tokio::runtime::Builder::new_multi_thread()
            .max_blocking_threads(4)
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    };
    let runtime = match built {
        Ok(rt) => rt,
        Err(e) => return chat::fail(&anyhow::anyhow!("cannot start the async runtime: {e}")),
    };
    runtime.block_on(chat::dispatch(cli))
}

/// `hermes __engine-exec …`: one command in a container, attached to this
/// process's streams; exits with the command's status.
fn engine_exec(args: &[String]) -> ExitCode {
    use hermes_env::engine::relay;
    let code = match relay::Exec::from_args(args) {
        Ok(exec) => relay::run(&exec),
        Err(e) => {
            #[allow(clippy::print_stderr)]
            {
                eprintln!("hermes {}: {e}", relay::MODE);
            }
            2
        }
    };
    ExitCode::from(u8::try_from(code & 0xff).unwrap_or(1))
}
