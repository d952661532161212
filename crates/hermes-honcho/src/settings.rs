//! Honcho's settings, read as the reference reads them: the first of
//! `$HERMES_HOME/honcho.json`, `~/.hermes/honcho.json` and
//! `~/.honcho/config.json` that exists, its `hosts.<host>` block winning
//! over its root keys, then the `HONCHO_*` variables, then config.yaml's
//! `honcho:` section.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

/// The SDK's production endpoint.
pub const PRODUCTION_URL: &str = "https://api.honcho.dev";
/// `environment: local`.
const LOCAL_URL: &str = "http://localhost:8000";
/// How long one request may take when nothing says otherwise.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// When recall reaches the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecallMode {
    /// Recall on every turn and the tools.
    Hybrid,
    /// Recall on every turn, no tools.
    Context,
    /// The tools only.
    Tools,
}

/// Which Honcho session a Hermes session writes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionStrategy {
    /// One per working directory (the default).
    PerDirectory,
    /// One per Hermes session.
    PerSession,
    /// One per git repository.
    PerRepo,
    /// One for everything (named after the workspace).
    Global,
}

/// Who observes whom (Honcho's per-peer session configuration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Observation {
    /// The user's own messages shape the user's representation.
    pub user_observe_me: bool,
    /// The user peer models the other peers.
    pub user_observe_others: bool,
    /// The assistant's own messages shape its representation.
    pub ai_observe_me: bool,
    /// The assistant peer models the user (its view answers recall).
    pub ai_observe_others: bool,
}

/// Everything the provider needs, resolved.
#[derive(Clone)]
pub struct HonchoSettings {
    /// `hermes` unless `HERMES_HONCHO_HOST` or `defaultHost` says otherwise.
    pub host: String,
    /// The workspace every call is under.
    pub workspace: String,
    /// Bearer token (`local` for a self-hosted server without one).
    pub api_key: Option<String>,
    /// Where the API lives (no trailing `/vN`).
    pub base_url: String,
    /// Per-request limit.
    pub timeout: Duration,
    /// The user's peer id, when configured.
    pub peer_name: Option<String>,
    /// The assistant's peer id.
    pub ai_peer: String,
    /// `recallMode`.
    pub recall_mode: RecallMode,
    /// `sessionStrategy`.
    pub session_strategy: SessionStrategy,
    /// `sessionPeerPrefix`: session names start with the peer name.
    pub session_peer_prefix: bool,
    /// `sessions`: working directory → session name.
    pub sessions: BTreeMap<String, String>,
    /// `contextTokens`: recall is cut to about four characters a token.
    pub context_tokens: Option<usize>,
    /// `dialecticReasoningLevel`.
    pub reasoning_level: String,
    /// `dialecticDynamic`: the model may pick the level per call.
    pub dialectic_dynamic: bool,
    /// `dialecticMaxChars`: the cap on an injected dialectic answer.
    pub dialectic_max_chars: usize,
    /// `dialecticMaxInputChars`: the cap on a dialectic question.
    pub dialectic_max_input_chars: usize,
    /// `messageMaxChars`: longer messages are sent in pieces.
    pub message_max_chars: usize,
    /// `injectionFrequency: first-turn`: the base context only on turn 1.
    pub first_turn_only: bool,
    /// `saveMessages`: the exchanges are kept in Honcho.
    pub save_messages: bool,
    /// Who observes whom.
    pub observation: Observation,
}

impl std::fmt::Debug for HonchoSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HonchoSettings")
            .field("host", &self.host)
            .field("workspace", &self.workspace)
            .field("api_key", &self.api_key.as_ref().map(|_| "***"))
            .field("base_url", &self.base_url)
            .field("recall_mode", &self.recall_mode)
            .finish_non_exhaustive()
    }
}

/// Where the settings come from.
pub struct Sources<'a> {
    /// `HERMES_HOME`.
    pub hermes_home: &'a Path,
    /// The user's home directory (for `~/.hermes` and `~/.honcho`).
    pub user_home: Option<&'a Path>,
    /// Environment lookup (`.env` included).
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// config.yaml's `honcho:` section (or null).
    pub yaml: &'a Value,
}

/// The config file in use, if any.
fn config_path(sources: &Sources<'_>) -> Option<PathBuf> {
    let mut candidates = vec![sources.hermes_home.join("honcho.json")];
    if let Some(home) = sources.user_home {
        candidates.push(home.join(".hermes").join("honcho.json"));
        candidates.push(home.join(".honcho").join("config.json"));
    }
    candidates.into_iter().find(|p| p.is_file())
}

/// A string setting: the host block's, else the root's.
fn text(host: &Value, root: &Value, key: &str) -> Option<String> {
    [host, root]
        .into_iter()
        .filter_map(|v| v.get(key).and_then(Value::as_str))
        .map(str::trim)
        .find(|s| !s.is_empty())
        .map(str::to_owned)
}

/// A yes/no setting, `None`-aware (false is a value).
fn flag(host: &Value, root: &Value, keys: &[&str]) -> Option<bool> {
    [host, root]
        .into_iter()
        .flat_map(|v| keys.iter().filter_map(move |k| v.get(*k)))
        .find_map(Value::as_bool)
}

/// A number setting (a JSON number or a numeric string).
fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A count setting, host first.
fn count(host: &Value, root: &Value, key: &str) -> Option<usize> {
    [host, root]
        .into_iter()
        .filter_map(|v| v.get(key))
        .find_map(number)
        .filter(|n| *n >= 0.0)
        .map(|n| n as usize)
}

/// The first positive number of seconds among `values`.
fn seconds<'v>(values: impl IntoIterator<Item = Option<&'v Value>>) -> Option<Duration> {
    values
        .into_iter()
        .flatten()
        .filter_map(number)
        .find(|s| *s > 0.0 && s.is_finite())
        .map(Duration::from_secs_f64)
}

/// Whether a base URL points at this machine or a private network, where a
/// self-hosted Honcho runs without a key.
fn is_local(base_url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(base_url) else {
        return false;
    };
    let host = url
        .host_str()
        .unwrap_or("")
        .trim_matches(|c| c == '[' || c == ']');
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => {
            ip.is_loopback()
                || ip.is_private()
                || ip.is_link_local()
                || (ip.octets()[0] == 100 && (64..128).contains(&ip.octets()[1]))
        }
        Ok(std::net::IpAddr::V6(ip)) => {
            ip.is_loopback() || (ip.segments()[0] & 0xfe00) == 0xfc00 || ip.is_unicast_link_local()
        }
        Err(_) => false,
    }
}

/// Drops a trailing `/vN` (the client adds `/v3` itself) and slash.
fn strip_version(url: &str) -> String {
    let trimmed = url.trim().trim_end_matches('/');
    match trimmed.rsplit_once('/') {
        Some((head, tail))
            if tail.len() > 1
                && tail.starts_with('v')
                && tail[1..].bytes().all(|b| b.is_ascii_digit()) =>
        {
            head.to_owned()
        }
        _ => trimmed.to_owned(),
    }
}

impl HonchoSettings {
    /// The settings, or `Ok(None)` when Honcho is not set up (no key and no
    /// URL anywhere, or `enabled: false`); `Err` for a file that cannot be read.
    pub fn resolve(sources: &Sources<'_>) -> Result<Option<Self>, String> {
        let env = |k: &str| (sources.env)(k).filter(|v| !v.trim().is_empty());
        let root = match config_path(sources) {
            Some(path) => {
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                serde_json::from_str::<Value>(&text)
                    .map_err(|e| format!("{} is not valid JSON: {e}", path.display()))?
            }
            None => Value::Null,
        };
        let host_name = env("HERMES_HONCHO_HOST")
            .map(|h| h.trim().to_owned())
            .or_else(|| text(&Value::Null, &root, "defaultHost"))
            .unwrap_or_else(|| "hermes".to_owned());
        let host = root
            .pointer(&format!("/hosts/{host_name}"))
            .cloned()
            .unwrap_or(Value::Null);
        let yaml = sources.yaml;

        let api_key = text(&host, &root, "apiKey").or_else(|| env("HONCHO_API_KEY"));
        let configured_url = [root.get("baseUrl"), root.get("base_url")]
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::trim)
            .find(|s| !s.is_empty())
            .map(str::to_owned)
            .or_else(|| env("HONCHO_BASE_URL"))
            .or_else(|| text(&Value::Null, yaml, "base_url"));
        let enabled = flag(&host, &root, &["enabled"])
            .unwrap_or(api_key.is_some() || configured_url.is_some());
        if !enabled || (api_key.is_none() && configured_url.is_none()) {
            return Ok(None);
        }
        let environment = text(&host, &root, "environment")
            .or_else(|| env("HONCHO_ENVIRONMENT"))
            .unwrap_or_else(|| "production".to_owned());
        let base_url = strip_version(&configured_url.clone().unwrap_or_else(|| {
            if environment == "local" {
                LOCAL_URL.to_owned()
            } else {
                PRODUCTION_URL.to_owned()
            }
        }));
        // A local server takes the placeholder unless the host block names a key.
        let api_key = match (&configured_url, host.get("apiKey").and_then(Value::as_str)) {
            (Some(url), None) if is_local(url) => Some("local".to_owned()),
            _ => api_key,
        };
        let env_timeout = env("HONCHO_TIMEOUT").map(Value::String);
        let timeout = seconds([
            host.get("timeout"),
            host.get("requestTimeout"),
            root.get("timeout"),
            root.get("requestTimeout"),
            env_timeout.as_ref(),
            yaml.get("timeout"),
            yaml.get("request_timeout"),
        ])
        .unwrap_or(DEFAULT_TIMEOUT);
        Ok(Some(Self {
            workspace: text(&host, &root, "workspace").unwrap_or_else(|| host_name.clone()),
            ai_peer: text(&host, &root, "aiPeer").unwrap_or_else(|| host_name.clone()),
            host: host_name,
            api_key,
            base_url,
            timeout,
            peer_name: text(&host, &root, "peerName"),
            recall_mode: recall_mode(text(&host, &root, "recallMode").as_deref()),
            session_strategy: strategy(text(&host, &root, "sessionStrategy").as_deref()),
            session_peer_prefix: flag(&host, &root, &["sessionPeerPrefix"]).unwrap_or(false),
            sessions: root
                .get("sessions")
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                        .collect()
                })
                .unwrap_or_default(),
            context_tokens: count(&host, &root, "contextTokens").filter(|n| *n > 0),
            reasoning_level: text(&host, &root, "dialecticReasoningLevel")
                .filter(|l| LEVELS.contains(&l.as_str()))
                .unwrap_or_else(|| "low".to_owned()),
            dialectic_dynamic: flag(&host, &root, &["dialecticDynamic"]).unwrap_or(true),
            dialectic_max_chars: count(&host, &root, "dialecticMaxChars").unwrap_or(600),
            dialectic_max_input_chars: count(&host, &root, "dialecticMaxInputChars")
                .unwrap_or(10_000),
            message_max_chars: count(&host, &root, "messageMaxChars")
                .filter(|n| *n >= 100)
                .unwrap_or(25_000),
            first_turn_only: text(&host, &root, "injectionFrequency").as_deref()
                == Some("first-turn"),
            save_messages: flag(&host, &root, &["saveMessages"]).unwrap_or(true),
            observation: observation(&host, &root),
        }))
    }
}

/// The reasoning levels Honcho knows, cheapest first.
pub const LEVELS: [&str; 5] = ["minimal", "low", "medium", "high", "max"];

/// `recallMode` (`auto` is `hybrid`; anything else unknown is `hybrid`).
fn recall_mode(value: Option<&str>) -> RecallMode {
    match value {
        Some("context") => RecallMode::Context,
        Some("tools") => RecallMode::Tools,
        _ => RecallMode::Hybrid,
    }
}

/// `sessionStrategy`.
fn strategy(value: Option<&str>) -> SessionStrategy {
    match value {
        Some("per-session") => SessionStrategy::PerSession,
        Some("per-repo") => SessionStrategy::PerRepo,
        Some("global") => SessionStrategy::Global,
        _ => SessionStrategy::PerDirectory,
    }
}

/// `observationMode` presets, refined by the `observation` object.
fn observation(host: &Value, root: &Value) -> Observation {
    let mode = text(host, root, "observationMode");
    let unified = matches!(mode.as_deref(), Some("unified" | "shared"));
    let preset = Observation {
        user_observe_me: true,
        user_observe_others: !unified,
        ai_observe_me: !unified,
        ai_observe_others: true,
    };
    let Some(object) = [host, root]
        .into_iter()
        .find_map(|v| v.get("observation").filter(|o| o.is_object()))
    else {
        return preset;
    };
    let pick = |peer: &str, key: &str, default: bool| {
        object
            .pointer(&format!("/{peer}/{key}"))
            .and_then(Value::as_bool)
            .unwrap_or(default)
    };
    Observation {
        user_observe_me: pick("user", "observeMe", preset.user_observe_me),
        user_observe_others: pick("user", "observeOthers", preset.user_observe_others),
        ai_observe_me: pick("ai", "observeMe", preset.ai_observe_me),
        ai_observe_others: pick("ai", "observeOthers", preset.ai_observe_others),
    }
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
