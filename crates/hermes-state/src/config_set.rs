//! `hermes config set` / `unset`'s rules, shared by every front-end that
//! changes settings (the CLI, the dashboard): which names go to `.env`, how a
//! typed value is read, what is refused, which keys Hermes reads, and the
//! in-place edit of config.yaml (comments and order kept).

use std::path::PathBuf;

use serde_json::Value;

use crate::HermesHome;
use crate::config_edit::{ConfigEditError, Entry, update_config_entries, update_top_level};

pub use crate::config_keys::{KeyCheck, check as check_key};

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
pub fn is_env_key(key: &str) -> bool {
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

/// `raw` as config.yaml should hold it: `true`/`false`, numbers, else text.
pub fn typed_value(key: &str, raw: &str) -> Value {
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

/// The terminal backends this binary runs commands through.
pub const BACKENDS: &[&str] = &["local", "sandbox", "ssh", "docker"];

/// Why `key = value` is refused outright: a value Hermes could never honour.
pub fn refusal(key: &str, value: &str) -> Option<String> {
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

/// Sections the reference reads that this build does not act on yet.
const NOT_HONOURED: &[&str] = &[
    "tts",
    "stt",
    "voice",
    "honcho",
    "kanban",
    "curator",
    "x_search",
    "computer_use",
    "moa",
    "lsp",
    "pets",
    "desktop",
    "whatsapp",
    "signal",
    "mattermost",
    "matrix",
    "email",
    "sms",
    "dingtalk",
    "feishu",
    "wecom",
    "weixin",
    "qqbot",
    "yuanbao",
    "bluebubbles",
    "vertex",
    "onboarding",
    "updates",
];

/// What `hermes config check` says of one key of config.yaml.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyStatus {
    /// Read and acted on.
    Honoured,
    /// The reference reads it; this build does not yet.
    NotHonoured,
    /// Nobody reads it (maybe a typo of the suggestion).
    Unknown(Option<String>),
}

/// How a dotted key of config.yaml is taken.
pub fn status(key: &str) -> KeyStatus {
    match check_key(key) {
        KeyCheck::Unknown(near) => KeyStatus::Unknown(near),
        KeyCheck::Known => {
            let top = key.split('.').next().unwrap_or(key);
            if NOT_HONOURED.contains(&top) {
                KeyStatus::NotHonoured
            } else {
                KeyStatus::Honoured
            }
        }
    }
}

/// Whether a value under `key` is shown masked (its name says it is a secret).
pub fn is_secret_name(key: &str) -> bool {
    let last = key.rsplit('.').next().unwrap_or(key).to_ascii_lowercase();
    SECRET_NAMES.contains(&last.as_str())
}

/// Where a set value went.
#[derive(Debug, Clone, PartialEq)]
pub enum Written {
    /// `.env`, under this variable name.
    Env(PathBuf, String),
    /// config.yaml, under this (normalised) key, as this value.
    Config(PathBuf, String, Value),
}

/// What stops a set or unset.
#[derive(Debug, thiserror::Error)]
pub enum SetError {
    /// A value Hermes could never honour.
    #[error("{0}")]
    Refused(String),
    /// The key is empty.
    #[error("give a config key (e.g. agent.max_turns)")]
    EmptyKey,
    /// config.yaml could not be read or written.
    #[error(transparent)]
    Edit(#[from] ConfigEditError),
    /// `.env` could not be written.
    #[error("cannot write {path}: {source}")]
    Env {
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
}

/// Sets `key` to `raw` as `hermes config set` does: a variable to `.env`, a
/// dotted key (typed) to config.yaml; a value that can never work is refused.
pub fn set(home: &HermesHome, key: &str, raw: &str) -> Result<Written, SetError> {
    if key.trim().is_empty() {
        return Err(SetError::EmptyKey);
    }
    if let Some(why) = refusal(key, raw) {
        return Err(SetError::Refused(why));
    }
    if is_env_key(key) {
        let path = home.env_file();
        let name = key.to_ascii_uppercase();
        crate::env_file::set_var(&path, &name, Some(raw)).map_err(|source| SetError::Env {
            path: path.display().to_string(),
            source,
        })?;
        return Ok(Written::Env(path, name));
    }
    // `model` alone names the default model, as the reference's shorthand does.
    let key = if key == "model" { "model.default" } else { key };
    let value = typed_value(key, raw);
    write_key(home, key, Some(value.clone()))?;
    Ok(Written::Config(home.config_file(), key.to_owned(), value))
}

/// Removes `key` from `.env` or config.yaml; `Ok(None)` when it was not set.
pub fn unset(home: &HermesHome, key: &str) -> Result<Option<PathBuf>, SetError> {
    if is_env_key(key) {
        let path = home.env_file();
        let name = key.to_ascii_uppercase();
        let removed =
            crate::env_file::set_var(&path, &name, None).map_err(|source| SetError::Env {
                path: path.display().to_string(),
                source,
            })?;
        return Ok(removed.then_some(path));
    }
    if user_tree(home)?.pointer(&pointer(key)).is_none() {
        return Ok(None);
    }
    write_key(home, key, None)?;
    Ok(Some(home.config_file()))
}

fn pointer(dotted: &str) -> String {
    dotted.split('.').fold(String::new(), |mut p, seg| {
        p.push('/');
        p.push_str(&seg.replace('~', "~0").replace('/', "~1"));
        p
    })
}

/// config.yaml as the user wrote it (no defaults, no environment).
pub fn user_tree(home: &HermesHome) -> Result<Value, ConfigEditError> {
    let path = home.config_file();
    match std::fs::read_to_string(&path) {
        Ok(text) => crate::config_edit::parse_user_yaml(&text, &path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Value::Null),
        Err(source) => Err(ConfigEditError::Io {
            path: path.display().to_string(),
            source,
        }),
    }
}

/// Sets (or removes) a dotted key in config.yaml, editing only its lines.
pub fn write_key(
    home: &HermesHome,
    key: &str,
    value: Option<Value>,
) -> Result<(), ConfigEditError> {
    let path = home.config_file();
    let segments: Vec<&str> = key.split('.').collect();
    match segments.as_slice() {
        [] | [""] => {
            return Err(ConfigEditError::Invalid {
                path: path.display().to_string(),
                message: "an empty key".to_owned(),
            });
        }
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
fn prune_if_empty(home: &HermesHome, section: &str) -> Result<(), ConfigEditError> {
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
}
