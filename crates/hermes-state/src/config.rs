//! Layered configuration: built-in defaults → `config.yaml` → environment,
//! with `${VAR}` expansion in string values. Unknown keys are kept in the raw
//! tree and otherwise ignored, so a reference `config.yaml` loads unchanged.

use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::Env;
use crate::settings::Sections;

/// `model:` section.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ModelConfig {
    /// Provider id (`openrouter`, `openai`, `custom`, `local`, `auto` …).
    pub provider: Option<String>,
    /// Model name sent to the provider.
    pub default: Option<String>,
    /// Endpoint for OpenAI-compatible providers.
    pub base_url: Option<String>,
    /// API key for the endpoint (prefer `.env`).
    pub api_key: Option<String>,
    /// Context window override, in tokens.
    pub context_length: Option<u64>,
    /// Wire format override (`chat_completions`, `anthropic_messages` …).
    pub api_mode: Option<String>,
}

/// `agent:` section.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default)]
pub struct AgentConfig {
    /// Iteration budget per turn.
    pub max_turns: u32,
    /// Attempts of a failed model call (the first included, as the reference
    /// counts them) before falling back or giving up.
    pub api_max_retries: u32,
    /// Longest total wait between those attempts, in seconds; a longer wait
    /// (a large `Retry-After`) gives the route up at once.
    pub api_retry_max_wait_seconds: u64,
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            max_turns: 90,
            api_max_retries: 3,
            api_retry_max_wait_seconds: 120,
        }
    }
}

/// The typed view of the keys this build implements.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// `model:`.
    pub model: ModelConfig,
    /// `agent:`.
    pub agent: AgentConfig,
    /// `toolsets:`.
    pub toolsets: Vec<String>,
    /// The other sections the runtime reads, typed.
    pub sections: Sections,
    /// The whole merged tree, for keys read by later features.
    pub raw: Value,
}

impl Default for Config {
    fn default() -> Self {
        Self::from_tree(defaults()).unwrap_or_else(|_| Self {
            model: ModelConfig::default(),
            agent: AgentConfig::default(),
            toolsets: vec!["hermes-cli".into()],
            sections: Sections::default(),
            raw: defaults(),
        })
    }
}

/// Why the configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The YAML is malformed; the message carries line and column.
    #[error("{path} is not valid YAML: {message}\nFix the file (or move it aside) and try again.")]
    Syntax {
        /// The file.
        path: String,
        /// Parser message with position.
        message: String,
    },
    /// A known key has a value of the wrong type.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
}

fn defaults() -> Value {
    json!({
        "model": {},
        "providers": {},
        "fallback_providers": [],
        "toolsets": ["hermes-cli"],
        "agent": {"max_turns": 90},
    })
}

impl Config {
    /// Loads `config.yaml` (missing is fine) over the defaults, then applies the environment.
    pub fn load(path: &Path, env: &Env) -> Result<Self, ConfigError> {
        let display = path.display().to_string();
        let user = match std::fs::read_to_string(path) {
            Ok(text) => parse_yaml(&text, &display)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Value::Null,
            Err(source) => {
                return Err(ConfigError::Read {
                    path: display,
                    source,
                });
            }
        };
        Self::layered(user, env).map_err(|message| ConfigError::Invalid {
            path: display,
            message,
        })
    }

    /// Defaults and environment only (`--ignore-user-config`).
    pub fn without_user_file(env: &Env) -> Self {
        Self::layered(Value::Null, env).unwrap_or_default()
    }

    fn layered(user: Value, env: &Env) -> Result<Self, String> {
        let mut tree = defaults();
        let user = normalize(expand_vars(user, env));
        merge(&mut tree, user);
        apply_env(&mut tree, env);
        Self::from_tree(tree)
    }

    fn from_tree(tree: Value) -> Result<Self, String> {
        let model = typed::<ModelConfig>(&tree, "model")?;
        let agent = typed::<AgentConfig>(&tree, "agent")?;
        let toolsets = match tree.get("toolsets") {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            Some(Value::String(s)) => s
                .split(',')
                .map(|t| t.trim().to_owned())
                .filter(|t| !t.is_empty())
                .collect(),
            _ => vec!["hermes-cli".to_owned()],
        };
        Ok(Self {
            model,
            agent,
            toolsets,
            sections: Sections::from_tree(&tree),
            raw: tree,
        })
    }

    /// A value by dotted path (`"auxiliary.compression.model"`), for keys without a typed field.
    pub fn get(&self, dotted: &str) -> Option<&Value> {
        dotted.split('.').try_fold(&self.raw, |v, k| v.get(k))
    }

    /// The toolsets sessions on `platform` (`cli`, `api_server`, `cron`, a
    /// messaging platform) get: `platform_toolsets.<platform>` as the
    /// reference's `hermes tools` writes it, else `toolsets:`.
    pub fn toolsets_for(&self, platform: &str) -> Vec<String> {
        match self.get("platform_toolsets").and_then(|p| p.get(platform)) {
            Some(Value::Array(items)) => names(items),
            _ => self.toolsets.clone(),
        }
    }

    /// `agent.disabled_toolsets`: taken away from every session's selection.
    pub fn disabled_toolsets(&self) -> Vec<String> {
        match self.get("agent.disabled_toolsets") {
            Some(Value::Array(items)) => names(items),
            _ => Vec::new(),
        }
    }
}

fn names(items: &[Value]) -> Vec<String> {
    items
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

fn typed<T: for<'de> Deserialize<'de> + Default>(tree: &Value, key: &str) -> Result<T, String> {
    match tree.get(key) {
        None | Some(Value::Null) => Ok(T::default()),
        Some(v) => {
            serde_json::from_value(lenient_numbers(v.clone())).map_err(|e| format!("'{key}': {e}"))
        }
    }
}

/// YAML users write `max_turns: "90"` or `context_length: 128000.0`; accept both.
fn lenient_numbers(v: Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| {
                    let v = match v {
                        Value::String(s)
                            if matches!(
                                k.as_str(),
                                "max_turns"
                                    | "context_length"
                                    | "api_max_retries"
                                    | "api_retry_max_wait_seconds"
                            ) =>
                        {
                            s.trim()
                                .parse::<u64>()
                                .map(Value::from)
                                .unwrap_or(Value::String(s))
                        }
                        Value::Number(n) if n.is_f64() => n
                            .as_f64()
                            .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                            .map(|f| Value::from(f as u64))
                            .unwrap_or(Value::Number(n)),
                        other => other,
                    };
                    (k, v)
                })
                .collect(),
        ),
        other => other,
    }
}

pub(crate) fn parse_yaml(text: &str, path: &str) -> Result<Value, ConfigError> {
    if text.trim().is_empty() {
        return Ok(Value::Null);
    }
    let value: Value = serde_saphyr::from_str(text).map_err(|e| ConfigError::Syntax {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    match value {
        Value::Object(_) | Value::Null => Ok(value),
        other => Err(ConfigError::Syntax {
            path: path.to_owned(),
            message: format!(
                "the top level must be a mapping of keys, found {}",
                kind(&other)
            ),
        }),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Array(_) => "a list",
        Value::String(_) => "a string",
        Value::Number(_) => "a number",
        Value::Bool(_) => "a boolean",
        _ => "something else",
    }
}

/// Legacy shapes the reference still accepts: `model: "name"` and a root `max_turns`.
fn normalize(mut user: Value) -> Value {
    if let Some(map) = user.as_object_mut() {
        if let Some(Value::String(name)) = map.get("model").cloned() {
            let name = name.trim().to_owned();
            map.insert(
                "model".into(),
                if name.is_empty() {
                    json!({})
                } else {
                    json!({"default": name})
                },
            );
        }
        if let Some(turns) = map.remove("max_turns") {
            let agent = map.entry("agent").or_insert_with(|| json!({}));
            if let Some(agent) = agent.as_object_mut() {
                agent.entry("max_turns").or_insert(turns);
            }
        }
    }
    user
}

/// `${VAR}` in string values, from the environment snapshot; unknown names stay verbatim.
fn expand_vars(v: Value, env: &Env) -> Value {
    match v {
        Value::String(s) => Value::String(expand_str(&s, env)),
        Value::Array(items) => {
            Value::Array(items.into_iter().map(|i| expand_vars(i, env)).collect())
        }
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, expand_vars(v, env)))
                .collect(),
        ),
        other => other,
    }
}

fn expand_str(s: &str, env: &Env) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find('}') {
            Some(end) if end > 0 => {
                let name = &after[..end];
                match env.get(name) {
                    Some(val) => out.push_str(val),
                    None => out.push_str(&rest[start..start + 3 + end]),
                }
                rest = &after[end + 1..];
            }
            _ => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

fn merge(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(existing) if existing.is_object() && v.is_object() => merge(existing, v),
                    _ => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (_, Value::Null) => {}
        (b, o) => *b = o,
    }
}

fn apply_env(tree: &mut Value, env: &Env) {
    let Some(root) = tree.as_object_mut() else {
        return;
    };
    if let Some(p) = env.get("HERMES_INFERENCE_PROVIDER") {
        set_in(root, "model", "provider", json!(p.trim()));
    }
    if let Some(n) = env
        .get("HERMES_MAX_ITERATIONS")
        .and_then(|v| v.trim().parse::<u32>().ok())
    {
        set_in(root, "agent", "max_turns", json!(n));
    }
}

fn set_in(root: &mut Map<String, Value>, section: &str, key: &str, value: Value) {
    let entry = root.entry(section).or_insert_with(|| json!({}));
    match entry {
        Value::Object(m) => {
            m.insert(key.to_owned(), value);
        }
        other => *other = json!({ key: value }),
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
