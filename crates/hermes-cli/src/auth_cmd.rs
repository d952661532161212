//! `hermes auth add|list|remove`: API keys in the credential pool (`auth.json`).

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use hermes_llm::credentials::{AuthStore, SplitMix64, SystemClock};
use hermes_state::{Env, HermesHome};

/// `hermes auth` arguments.
#[derive(Debug, Args)]
pub struct AuthArgs {
    #[command(subcommand)]
    action: AuthAction,
}

#[derive(Debug, Subcommand)]
enum AuthAction {
    /// Add an API key to a provider's pool (rotated through on 401/429).
    Add {
        /// Provider id (openrouter, openai, anthropic, …).
        provider: String,
        /// The key; read from standard input when omitted, so it stays out of shell history.
        #[arg(long)]
        api_key: Option<String>,
        /// A name for the key.
        #[arg(long)]
        label: Option<String>,
    },
    /// List pooled keys (masked) and their status.
    List {
        /// Only this provider.
        provider: Option<String>,
    },
    /// Remove a key by id, label or 1-based number.
    Remove {
        /// Provider id.
        provider: String,
        /// Id, label or number as shown by `hermes auth list`.
        target: String,
    },
}

/// Runs a `hermes auth` action.
pub fn run(args: AuthArgs) -> Result<ExitCode> {
    let env = Env::from_pairs(std::env::vars());
    let home = HermesHome::from_env(env.get("HERMES_HOME"), env.get("HOME"))
        .context("cannot locate the Hermes home: set HERMES_HOME or HOME")?;
    let path = home.root().join("auth.json");
    let seed = std::process::id() as u64 ^ hermes_llm::backoff::unit_random().to_bits();
    let mut store = AuthStore::new(
        &path,
        Arc::new(SystemClock),
        Box::new(SplitMix64::new(seed)),
    );
    let mut out = std::io::stdout().lock();
    match args.action {
        AuthAction::Add {
            provider,
            api_key,
            label,
        } => {
            let key = match api_key {
                Some(k) => k,
                None => {
                    let mut line = String::new();
                    std::io::stdin()
                        .read_line(&mut line)
                        .context("reading the key from stdin")?;
                    line.trim().to_owned()
                }
            };
            let cred = store.add(&provider, &key, label.as_deref())?;
            writeln!(
                out,
                "Added {} key {} ({}) to {}",
                provider,
                cred.label,
                cred.redacted_key(),
                path.display()
            )?;
        }
        AuthAction::List { provider } => {
            let providers: Vec<String> = match provider {
                Some(p) => vec![p],
                None => hermes_llm::providers::PROVIDERS
                    .iter()
                    .map(|p| p.id.to_owned())
                    .collect(),
            };
            let mut any = false;
            for p in providers {
                for (i, c) in store.list(&p)?.iter().enumerate() {
                    any = true;
                    let status = c.last_status.as_ref().map_or("ok", |s| s.as_str());
                    writeln!(
                        out,
                        "{p:<12} #{:<2} {:<16} {:<14} {status:<9} uses {}",
                        i + 1,
                        c.label,
                        c.redacted_key(),
                        c.request_count
                    )?;
                }
            }
            if !any {
                writeln!(
                    out,
                    "No pooled keys. Add one with: hermes auth add PROVIDER"
                )?;
            }
        }
        AuthAction::Remove { provider, target } => {
            let cred = store.remove(&provider, &target)?;
            writeln!(
                out,
                "Removed {} key {} ({})",
                provider,
                cred.label,
                cred.redacted_key()
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
