//! `hermes config`: show, get, set, unset and edit settings, with the
//! reference's subcommands and routing (API keys and tokens go to `.env`,
//! everything else to `config.yaml`, edited in place so comments stay).

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use hermes_state::config_edit::{Entry, update_config_entries, update_top_level};
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

/// Variables that belong in `.env` whatever their name looks like.
const ENV_KEYS: &[&str] = &[
    "OPENROUTER_API_KEY",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "VOICE_TOOLS_OPENAI_KEY",
    "EXA_API_KEY",
    "PARALLEL_API_KEY",
    "FIRECRAWL_API_KEY",
    "FIRECRAWL_API_URL",
    "TAVILY_API_KEY",
    "BROWSERBASE_API_KEY",
    "BROWSERBASE_PROJECT_ID",
    "BROWSER_USE_API_KEY",
    "FAL_KEY",
    "TELEGRAM_BOT_TOKEN",
    "DISCORD_BOT_TOKEN",
    "SUDO_PASSWORD",
    "SLACK_BOT_TOKEN",
    "SLACK_APP_TOKEN",
    "GITHUB_TOKEN",
];

/// Keys whose values stay strings even when they read as booleans or numbers.
const TEXT_KEYS: &[&str] = &[
    "model",
    "model.default",
    "model.provider",
    "model.base_url",
    "approvals.mode",
    "terminal.backend",
    "terminal.cwd",
    "display.personality",
    "timezone",
];

/// Last key segments whose values are masked when echoed.
const SECRET_NAMES: &[&str] = &[
    "api_key",
    "apikey",
    "key",
    "token",
    "access_token",
    "refresh_token",
    "secret",
    "client_secret",
    "password",
    "private_key",
];

/// Whether `key` names an environment variable kept in `.env`.
pub(crate) fn is_env_key(key: &str) -> bool {
    if key.contains('.') {
        return false;
    }
    let upper = key.to_ascii_uppercase();
    // Beyond the reference's list: any variable named like a secret
    // (`API_SERVER_KEY`, `*_SECRET`, `*_PASSWORD`) goes to `.env` too, so a
    // secret never lands in config.yaml or on the screen.
    ENV_KEYS.contains(&upper.as_str())
        || upper.ends_with("_KEY")
        || upper.ends_with("_TOKEN")
        || upper.ends_with("_SECRET")
        || upper.ends_with("_PASSWORD")
        || upper.starts_with("TERMINAL_SSH")
        || is_variable_name(key)
}

/// `API_SERVER_ENABLED`, `HERMES_TIMEZONE`: written in capitals, the name of
/// an environment variable, which Hermes reads from `.env`, never from a
/// top-level config.yaml key.
fn is_variable_name(key: &str) -> bool {
    key.contains('_')
        && key.bytes().any(|b| b.is_ascii_uppercase())
        && key
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// Runs a `hermes config` action.
pub fn run(args: ConfigArgs, run: &RunArgs) -> Result<ExitCode> {
    let home = crate::chat::home()?;
    let mut out = std::io::stdout().lock();
    match args.action.unwrap_or(ConfigAction::Show) {
        ConfigAction::Path => writeln!(out, "{}", home.config_file().display())?,
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
            if let Some(refusal) = refusal(&key, &value) {
                writeln!(std::io::stderr(), "✗ {refusal}\n  Nothing was changed.")?;
                return Ok(ExitCode::FAILURE);
            }
            let (path, display) = set(&home, &key, &value)?;
            match display {
                Some(shown) => writeln!(out, "✓ Set {key} = {shown} in {}", path.display())?,
                None => writeln!(
                    out,
                    "✓ Set {} in {}",
                    key.to_ascii_uppercase(),
                    path.display()
                )?,
            }
            drop(out);
            if !is_env_key(&key) {
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

/// The terminal backends this binary runs commands through.
const BACKENDS: &[&str] = &["local", "sandbox", "ssh", "docker"];

/// Why `key = value` is refused outright: a value Hermes could never honour.
fn refusal(key: &str, value: &str) -> Option<String> {
    if key == "terminal.backend" {
        let name = value.trim().to_ascii_lowercase();
        if !BACKENDS.contains(&name.as_str()) {
            return Some(format!(
                "terminal.backend '{value}' is not a backend hermes-rs runs commands through. \
                 Choose one of: {} (the reference's modal, daytona and singularity are not supported).",
                BACKENDS.join(", ")
            ));
        }
    }
    None
}

/// Says what a saved value will not do: a key Hermes never reads (with the
/// nearest known one), or terminal settings that cannot work yet.
fn warn_after_set(key: &str, force: bool, run: &RunArgs) -> Result<()> {
    let mut err = std::io::stderr().lock();
    let key = if key == "model" { "model.default" } else { key };
    if !force
        && let crate::config_keys::KeyCheck::Unknown(suggestion) = crate::config_keys::check(key)
    {
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
        for problem in terminal_problems(&setup) {
            writeln!(err, "⚠ {problem}")?;
        }
    }
    Ok(())
}

/// What stops the configured terminal backend from running commands now.
pub(crate) fn terminal_problems(setup: &hermes_session::Setup) -> Vec<String> {
    let read = hermes_env::TerminalSettings::read(&setup.config.raw, &|name| {
        setup.env.get(name).map(str::to_owned)
    });
    match read {
        Err(problem) => vec![problem],
        Ok(settings) => match settings.backend {
            hermes_env::Backend::Docker(docker) => {
                let wanted: Vec<String> = match &docker.cli {
                    Some(cli) => vec![cli.clone()],
                    None => vec!["docker".into(), "podman".into()],
                };
                let path = setup.env.get("PATH").unwrap_or_default().to_owned();
                let engine = docker.cli.is_none()
                    && hermes_env::engine::find_socket(
                        setup.env.get("DOCKER_HOST"),
                        setup.env.get("XDG_RUNTIME_DIR"),
                    )
                    .is_some();
                let found = engine
                    || wanted.iter().any(|name| {
                        std::env::split_paths(&path).any(|dir| dir.join(name).is_file())
                            || std::path::Path::new(name).is_file()
                    });
                if found {
                    Vec::new()
                } else {
                    vec![format!(
                        "terminal.backend is docker but no container engine answers (no engine \
                         socket, and {} is not on PATH): every command will fail until one is \
                         installed (or set terminal.backend local).",
                        wanted.join(" or ")
                    )]
                }
            }
            hermes_env::Backend::Unavailable(name) => vec![format!(
                "terminal.backend '{name}' is not a backend hermes-rs runs commands through \
                 ({}); sessions will not start until it is changed.",
                BACKENDS.join(", ")
            )],
            _ => Vec::new(),
        },
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
    let value = if is_env_key(key) {
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
fn typed_value(key: &str, raw: &str) -> Value {
    if TEXT_KEYS.contains(&key) {
        return Value::String(raw.to_owned());
    }
    match raw.to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" => return Value::Bool(true),
        "false" | "no" | "off" => return Value::Bool(false),
        _ => {}
    }
    if !raw.is_empty()
        && raw.bytes().all(|b| b.is_ascii_digit())
        && let Ok(n) = raw.parse::<u64>()
    {
        return Value::from(n);
    }
    if raw.matches('.').count() == 1
        && raw.len() > 1
        && raw.replace('.', "").bytes().all(|b| b.is_ascii_digit())
        && let Ok(f) = raw.parse::<f64>()
    {
        return Value::from(f);
    }
    Value::String(raw.to_owned())
}

/// How a set value is echoed: masked when the key names a secret.
fn display_of(key: &str, value: &Value) -> String {
    let last = key.rsplit('.').next().unwrap_or(key).to_ascii_lowercase();
    let text = match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    // A number or a switch is no secret (`display.nonsense.key 5` shows 5).
    if SECRET_NAMES.contains(&last.as_str()) && value.is_string() {
        hermes_llm::redact::mask_token(&text)
    } else {
        text
    }
}

/// Writes `key = raw`; returns the file written and, for config.yaml, how
/// the value is shown (`.env` values are never echoed).
fn set(home: &HermesHome, key: &str, raw: &str) -> Result<(std::path::PathBuf, Option<String>)> {
    if is_env_key(key) {
        let path = home.env_file();
        hermes_state::env_file::set_var(&path, &key.to_ascii_uppercase(), Some(raw))
            .with_context(|| format!("cannot write {}", path.display()))?;
        return Ok((path, None));
    }
    // `model` alone names the default model, as the reference's shorthand does.
    let key = if key == "model" { "model.default" } else { key };
    let value = typed_value(key, raw);
    write_key(home, key, Some(value.clone()))?;
    Ok((home.config_file(), Some(display_of(key, &value))))
}

fn unset(home: &HermesHome, key: &str) -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    if is_env_key(key) {
        let path = home.env_file();
        let name = key.to_ascii_uppercase();
        if hermes_state::env_file::set_var(&path, &name, None)? {
            writeln!(out, "✓ Unset {name} from {}", path.display())?;
            return Ok(ExitCode::SUCCESS);
        }
    } else if user_tree(home)?.pointer(&pointer(key)).is_some() {
        write_key(home, key, None)?;
        writeln!(out, "✓ Unset {key} from {}", home.config_file().display())?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut err = std::io::stderr().lock();
    writeln!(err, "Config key not set: {key}")?;
    Ok(ExitCode::FAILURE)
}

fn pointer(dotted: &str) -> String {
    dotted.split('.').fold(String::new(), |mut p, seg| {
        p.push('/');
        p.push_str(&seg.replace('~', "~0").replace('/', "~1"));
        p
    })
}

/// config.yaml as the user wrote it (no defaults, no environment).
fn user_tree(home: &HermesHome) -> Result<Value> {
    let path = home.config_file();
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(hermes_state::config_edit::parse_user_yaml(&text, &path)?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Value::Null),
        Err(e) => Err(anyhow::anyhow!("cannot read {}: {e}", path.display())),
    }
}

/// Sets (or removes) a dotted key in config.yaml, editing only its lines.
pub(crate) fn write_key(home: &HermesHome, key: &str, value: Option<Value>) -> Result<()> {
    let path = home.config_file();
    let segments: Vec<&str> = key.split('.').collect();
    match segments.as_slice() {
        [] | [""] => anyhow::bail!("empty config key"),
        [top] => update_top_level(&path, top, value.as_ref().map(Entry::Tree))?,
        [section, name] => {
            update_config_entries(&path, section, &[(name, value.as_ref().map(Entry::Tree))])?;
            if value.is_none() {
                prune_if_empty(home, section)?;
            }
        }
        [section, name, rest @ ..] => {
            // Deeper keys: the second-level subtree is rewritten with the change.
            let tree = user_tree(home)?;
            let mut sub = tree
                .get(section)
                .and_then(|s| s.get(name))
                .cloned()
                .filter(Value::is_object)
                .unwrap_or_else(|| Value::Object(Default::default()));
            set_nested(&mut sub, rest, value);
            let empty = sub.as_object().is_some_and(|m| m.is_empty());
            let entry = (!empty).then_some(Entry::Tree(&sub));
            update_config_entries(&path, section, &[(name, entry)])?;
            if entry.is_none() {
                prune_if_empty(home, section)?;
            }
        }
    }
    Ok(())
}

/// Removes a top-level section left with nothing in it, so defaults apply again.
fn prune_if_empty(home: &HermesHome, section: &str) -> Result<()> {
    let left = user_tree(home)?.get(section).cloned();
    let empty = match &left {
        None => false,
        Some(Value::Null) => true,
        Some(Value::Object(map)) => map.is_empty(),
        Some(_) => false,
    };
    if empty {
        update_top_level(&home.config_file(), section, None)?;
    }
    Ok(())
}

fn set_nested(tree: &mut Value, path: &[&str], value: Option<Value>) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut node = tree;
    for seg in parents {
        if !node.get(*seg).is_some_and(Value::is_object) {
            if value.is_none() {
                return;
            }
            node[*seg] = Value::Object(Default::default());
        }
        node = &mut node[*seg];
    }
    let Some(map) = node.as_object_mut() else {
        return;
    };
    match value {
        Some(v) => {
            map.insert((*last).to_owned(), v);
        }
        None => {
            map.remove(*last);
        }
    }
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
    fn keys_route_to_env_or_config_as_the_reference_does() {
        for k in [
            "OPENROUTER_API_KEY",
            "openai_api_key",
            "MY_TOKEN",
            "TERMINAL_SSH_HOST",
            "FAL_KEY",
            "API_SERVER_KEY",
            "WEBHOOK_SECRET",
            "SMTP_PASSWORD",
        ] {
            assert!(is_env_key(k), "{k}");
        }
        for k in ["model", "agent.max_turns", "model.api_key", "timezone"] {
            assert!(!is_env_key(k), "{k}");
        }
    }

    #[test]
    fn values_are_typed_except_for_text_keys() {
        assert_eq!(typed_value("agent.max_turns", "50"), Value::from(50));
        assert_eq!(typed_value("display.bell", "off"), Value::Bool(false));
        assert_eq!(typed_value("x.ratio", "0.5"), Value::from(0.5));
        assert_eq!(typed_value("x.n", "-5"), Value::from("-5"));
        assert_eq!(typed_value("approvals.mode", "off"), Value::from("off"));
        assert_eq!(typed_value("model.default", "4"), Value::from("4"));
    }

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
