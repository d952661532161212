//! `hermes config`: show, get, set, unset and edit settings, with the
//! reference's subcommands and routing (API keys and tokens go to `.env`,
//! everything else to `config.yaml`, edited in place so comments stay).

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use hermes_state::config_set::{self, Written};
use hermes_state::{Env, HermesHome};
use serde_json::Value;

use crate::args::RunArgs;

/// `hermes config` arguments.
#[derive(Debug, Args)]
pub struct ConfigArgs {
    #[command(subcommand)]
    action: Option<ConfigAction>,
}

#[derive(Debug, Subcommand)]
enum ConfigAction {
    /// Show the current configuration (the default).
    Show,
    /// List config.yaml keys that nothing reads (typos) or that this build does not honour yet.
    Check,
    /// Open config.yaml in $EDITOR.
    Edit,
    /// Print a configuration value (defaults included).
    Get {
        /// Print the value as JSON.
        #[arg(long)]
        json: bool,
        /// Dotted key (`agent.max_turns`) or an API key variable.
        key: Option<String>,
    },
    /// Set a value: API keys and tokens go to .env, the rest to config.yaml.
    Set {
        /// Skip the notice about a key Hermes does not read.
        #[arg(long)]
        force: bool,
        /// Dotted key (`agent.max_turns`) or an API key variable.
        key: Option<String>,
        /// The value (`true`/`false` and numbers are written as such).
        value: Option<String>,
    },
    /// Remove a value from config.yaml or .env.
    Unset {
        /// Dotted key or an API key variable.
        key: Option<String>,
    },
    /// Print the config.yaml path.
    Path,
    /// Print the .env path.
    EnvPath,
}

/// Runs a `hermes config` action.
pub fn run(args: ConfigArgs, run: &RunArgs) -> Result<ExitCode> {
    let home = crate::chat::home()?;
    let mut out = std::io::stdout().lock();
    match args.action.unwrap_or(ConfigAction::Show) {
        ConfigAction::Path => writeln!(out, "{}", home.config_file().display())?,
        ConfigAction::Check => return check(&home),
        ConfigAction::EnvPath => writeln!(out, "{}", home.env_file().display())?,
        ConfigAction::Edit => return edit(&home),
        ConfigAction::Show => crate::status_cmd::show_config(&crate::chat::load_setup(run)?)?,
        ConfigAction::Get { json, key } => {
            let Some(key) = key else {
                return usage(
                    "hermes config get <key> [--json]",
                    &["model.default", "agent.max_turns", "mcp_servers --json"],
                );
            };
            return get(&crate::chat::load_setup(run)?, &key, json);
        }
        ConfigAction::Set { force, key, value } => {
            let (Some(key), Some(value)) = (key, value) else {
                return usage(
                    "hermes config set <key> <value>",
                    &[
                        "model.default anthropic/claude-sonnet-4",
                        "agent.max_turns 60",
                        "OPENROUTER_API_KEY sk-or-...",
                    ],
                );
            };
            let written = match config_set::set(&home, &key, &value) {
                Ok(written) => written,
                Err(config_set::SetError::Refused(why)) => {
                    writeln!(std::io::stderr(), "✗ {why}\n  Nothing was changed.")?;
                    return Ok(ExitCode::FAILURE);
                }
                Err(e) => return Err(e.into()),
            };
            match &written {
                Written::Config(path, key, value) => writeln!(
                    out,
                    "✓ Set {key} = {} in {}",
                    display_of(key, value),
                    path.display()
                )?,
                Written::Env(path, name) => writeln!(out, "✓ Set {name} in {}", path.display())?,
            }
            drop(out);
            if matches!(written, Written::Config(..)) {
                warn_after_set(&key, force, run)?;
            }
        }
        ConfigAction::Unset { key } => {
            let Some(key) = key else {
                return usage(
                    "hermes config unset <key>",
                    &["agent.max_turns", "OPENROUTER_API_KEY"],
                );
            };
            return unset(&home, &key);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Says what a saved value will not do: a key Hermes never reads (with the
/// nearest known one), or terminal settings that cannot work yet.
fn warn_after_set(key: &str, force: bool, run: &RunArgs) -> Result<()> {
    let mut err = std::io::stderr().lock();
    let key = if key == "model" { "model.default" } else { key };
    if !force && let config_set::KeyCheck::Unknown(suggestion) = config_set::check_key(key) {
        writeln!(
            err,
            "⚠ '{key}' is not a recognized config key — it was saved anyway, but Hermes will not read it."
        )?;
        if let Some(suggestion) = suggestion {
            writeln!(err, "  Did you mean: {suggestion}")?;
        }
        writeln!(err, "  (--force skips this notice.)")?;
    }
    if key.starts_with("terminal.") {
        let setup = crate::chat::load_setup(run)?;
        for problem in hermes_session::environment::problems(&setup) {
            writeln!(err, "⚠ {problem}")?;
        }
    }
    Ok(())
}

/// `hermes config check`: each key of config.yaml nothing reads, or that the
/// reference reads and this build does not yet; exit 1 when there is one.
fn check(home: &HermesHome) -> Result<ExitCode> {
    let tree = config_set::user_tree(home)?;
    let mut keys = Vec::new();
    leaves("", &tree, &mut keys);
    let mut out = std::io::stdout().lock();
    let mut found = 0;
    for key in &keys {
        match config_set::status(key) {
            config_set::KeyStatus::Honoured => {}
            config_set::KeyStatus::NotHonoured => {
                found += 1;
                writeln!(
                    out,
                    "⚠ {key}: read by the reference, not by hermes-rs yet (ignored)"
                )?;
            }
            config_set::KeyStatus::Unknown(near) => {
                found += 1;
                match near {
                    Some(near) => {
                        writeln!(out, "✗ {key}: not a config key — did you mean {near}?")?
                    }
                    None => writeln!(out, "✗ {key}: not a config key (nothing reads it)")?,
                }
            }
        }
    }
    if found == 0 {
        writeln!(
            out,
            "✓ All {} keys in {} are read.",
            keys.len(),
            home.config_file().display()
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(
        out,
        "{found} of {} keys in {} will not take effect.",
        keys.len(),
        home.config_file().display()
    )?;
    Ok(ExitCode::FAILURE)
}

/// The dotted paths of a tree's leaves (open sections count as one leaf each level).
fn leaves(prefix: &str, value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                leaves(&key, v, out);
            }
        }
        _ if !prefix.is_empty() => out.push(prefix.to_owned()),
        _ => {}
    }
}

fn usage(line: &str, examples: &[&str]) -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "Usage: {line}\n\nExamples:")?;
    let command = line.split(" <").next().unwrap_or(line);
    for e in examples {
        writeln!(out, "  {command} {e}")?;
    }
    Ok(ExitCode::FAILURE)
}

fn get(setup: &hermes_session::Setup, key: &str, json: bool) -> Result<ExitCode> {
    let value = if config_set::is_env_key(key) {
        setup
            .env
            .get(&key.to_ascii_uppercase())
            .map(|v| Value::String(v.to_owned()))
    } else {
        setup.config.get(key).cloned()
    };
    let Some(value) = value else {
        let mut err = std::io::stderr().lock();
        writeln!(err, "Config key not set: {key}")?;
        return Ok(ExitCode::FAILURE);
    };
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{value}")?;
        return Ok(ExitCode::SUCCESS);
    }
    match &value {
        Value::String(s) => writeln!(out, "{s}")?,
        Value::Object(_) | Value::Array(_) => {
            writeln!(out, "{}", hermes_state::config_edit::render_value(&value))?;
        }
        other => writeln!(out, "{other}")?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The value as typed on the command line, as config.yaml should hold it.
/// How a set value is echoed: masked when the key names a secret.
fn display_of(key: &str, value: &Value) -> String {
    let text = match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    // A number or a switch is no secret (`display.nonsense.key 5` shows 5).
    if config_set::is_secret_name(key) && value.is_string() {
        hermes_llm::redact::mask_token(&text)
    } else {
        text
    }
}

fn unset(home: &HermesHome, key: &str) -> Result<ExitCode> {
    match config_set::unset(home, key)? {
        Some(path) => {
            let shown = if config_set::is_env_key(key) {
                key.to_ascii_uppercase()
            } else {
                key.to_owned()
            };
            writeln!(std::io::stdout(), "✓ Unset {shown} from {}", path.display())?;
            Ok(ExitCode::SUCCESS)
        }
        None => {
            writeln!(std::io::stderr(), "Config key not set: {key}")?;
            Ok(ExitCode::FAILURE)
        }
    }
}

/// Sets (or removes) a dotted key in config.yaml, editing only its lines.
pub(crate) fn write_key(home: &HermesHome, key: &str, value: Option<Value>) -> Result<()> {
    Ok(config_set::write_key(home, key, value)?)
}

fn edit(home: &HermesHome) -> Result<ExitCode> {
    let path = home.config_file();
    let mut out = std::io::stdout().lock();
    if !path.exists() {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&path, "# Hermes configuration\n")?;
        writeln!(out, "Created {}", path.display())?;
    }
    let env = Env::from_pairs(std::env::vars());
    let editor = ["EDITOR", "VISUAL"]
        .iter()
        .find_map(|v| {
            env.get(v)
                .filter(|e| !e.trim().is_empty())
                .map(str::to_owned)
        })
        .or_else(|| {
            ["nano", "vim", "vi"]
                .iter()
                .find(|e| crate::status_cmd::on_path(e).is_some())
                .map(|e| (*e).to_owned())
        });
    let Some(editor) = editor else {
        writeln!(
            out,
            "No editor found. Config file is at:\n  {}",
            path.display()
        )?;
        return Ok(ExitCode::SUCCESS);
    };
    writeln!(out, "Opening {} in {editor}...", path.display())?;
    drop(out);
    // $EDITOR may carry arguments (`code --wait`).
    let mut words = editor.split_whitespace();
    let program = words.next().unwrap_or("vi");
    let status = std::process::Command::new(program)
        .args(words)
        .arg(&path)
        .status()
        .with_context(|| format!("cannot start {program}"))?;
    Ok(if status.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_masked_when_echoed() {
        let shown = display_of(
            "model.api_key",
            &Value::from("sk-abcdefghijklmnopqrstuvwxyz"),
        );
        assert!(!shown.contains("klmnop"), "{shown}");
        assert_eq!(display_of("agent.max_turns", &Value::from(5)), "5");
    }
}
