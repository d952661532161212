//! Webhook routes: the static ones of config.yaml
//! (`platforms.webhook.extra.routes`) and the dynamic ones `hermes webhook
//! subscribe` writes to `webhook_subscriptions.json`, in the reference's
//! layout so either binary reads the other's file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::messaging::config::{boolean, platform_key, text};

/// The file of dynamic subscriptions under `HERMES_HOME`.
pub const SUBSCRIPTIONS_FILE: &str = "webhook_subscriptions.json";

/// The reference's default port.
pub const DEFAULT_PORT: u16 = 8644;

/// A secret that turns signature checks off (loopback only).
pub const INSECURE_NO_AUTH: &str = "INSECURE_NO_AUTH";

/// Where a route's answer goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Deliver {
    /// Into the gateway log only (the reference's default).
    Log,
    /// Back in the HTTP reply, which waits for the answer (ours).
    Http,
    /// A messaging platform's chat (`deliver_extra.chat_id`, else its home channel).
    Platform(String),
}

impl Deliver {
    /// Reads `deliver`; `None` for a target this build cannot send to.
    pub fn parse(value: &str) -> Result<Self, String> {
        match value.trim().to_ascii_lowercase().as_str() {
            "" | "log" => Ok(Self::Log),
            "http" => Ok(Self::Http),
            "github_comment" => Err(
                "deliver 'github_comment' is not in hermes-rs yet: deliver to a chat platform, 'log' or 'http'"
                    .to_owned(),
            ),
            name if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
                Ok(Self::Platform(name.to_owned()))
            }
            other => Err(format!(
                "deliver '{other}' is not a target: use log, http or a platform name (telegram, discord, slack …)"
            )),
        }
    }

    /// Its name as config and the CLI write it.
    pub fn name(&self) -> &str {
        match self {
            Self::Log => "log",
            Self::Http => "http",
            Self::Platform(p) => p,
        }
    }
}

/// One route: what a POST to `/webhooks/<name>` does.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Route {
    /// The name in the URL.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// Event types it takes (empty: all).
    pub events: Vec<String>,
    /// The HMAC secret (the global one when the route has none).
    pub secret: String,
    /// The prompt template (`{dot.path}` into the JSON body).
    pub prompt: String,
    /// Skills loaded for the run.
    pub skills: Vec<String>,
    /// Where the answer goes.
    pub deliver: String,
    /// Extra delivery settings (`chat_id`, `thread_id`), templated.
    pub deliver_extra: Map<String, Value>,
    /// Send the rendered prompt itself, without running the agent.
    pub deliver_only: bool,
    /// Off routes answer 403.
    pub enabled: bool,
    /// A reference option this build does not carry out (`filters`, `script`).
    pub unsupported: Option<&'static str>,
    /// When `hermes webhook subscribe` made it.
    pub created_at: Option<String>,
    /// From `webhook_subscriptions.json` (not config.yaml).
    pub dynamic: bool,
}

fn strings(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|i| text(Some(i)))
            .map(|s| s.trim().to_owned())
            .collect(),
        Some(Value::String(s)) => s
            .split(',')
            .map(|p| p.trim().to_owned())
            .filter(|p| !p.is_empty())
            .collect(),
        _ => Vec::new(),
    }
}

impl Route {
    /// Reads one route's JSON (a config.yaml block or a file entry).
    pub fn from_json(name: &str, v: &Value, dynamic: bool) -> Self {
        let unsupported = if v.get("filters").is_some_and(|f| !f.is_null()) {
            Some("filters")
        } else if v
            .get("script")
            .and_then(Value::as_str)
            .is_some_and(|s| !s.trim().is_empty())
        {
            Some("script")
        } else {
            None
        };
        Self {
            name: name.to_owned(),
            description: v["description"].as_str().unwrap_or_default().to_owned(),
            events: strings(v.get("events"))
                .into_iter()
                .filter(|e| !e.is_empty())
                .collect(),
            secret: text(v.get("secret")).unwrap_or_default(),
            prompt: v["prompt"].as_str().unwrap_or_default().to_owned(),
            skills: strings(v.get("skills"))
                .into_iter()
                .filter(|s| !s.is_empty())
                .collect(),
            deliver: text(v.get("deliver")).unwrap_or_else(|| "log".to_owned()),
            deliver_extra: v["deliver_extra"].as_object().cloned().unwrap_or_default(),
            deliver_only: v["deliver_only"].as_bool().unwrap_or(false),
            enabled: v["enabled"].as_bool().unwrap_or(true),
            unsupported,
            created_at: v["created_at"].as_str().map(str::to_owned),
            dynamic,
        }
    }

    /// The entry `hermes webhook subscribe` writes (the reference's fields, in its order).
    pub fn to_json(&self) -> Value {
        let mut entry = json!({
            "description": self.description,
            "events": self.events,
            "secret": self.secret,
            "prompt": self.prompt,
            "skills": self.skills,
            "deliver": self.deliver,
            "created_at": self.created_at,
        });
        if self.deliver_only {
            entry["deliver_only"] = Value::Bool(true);
        }
        if !self.deliver_extra.is_empty() {
            entry["deliver_extra"] = Value::Object(self.deliver_extra.clone());
        }
        entry
    }
}

/// Normalises a route name as `subscribe` does: trimmed, lower case,
/// spaces to hyphens; `None` when it cannot be a URL segment.
pub fn route_name(raw: &str) -> Option<String> {
    let name = raw.trim().to_lowercase().replace(' ', "-");
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    let rest_ok =
        chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    (first_ok && rest_ok).then_some(name)
}

/// A new route secret: 32 random bytes, URL-safe base64 without padding
/// (43 characters, as the reference's `token_urlsafe(32)`).
pub fn new_secret() -> String {
    use base64::Engine;
    let mut bytes = [0u8; 32];
    bytes[..16].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    bytes[16..].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// The dynamic subscriptions file of one home.
#[derive(Debug, Clone)]
pub struct Subscriptions {
    path: PathBuf,
}

impl Subscriptions {
    /// `HERMES_HOME/webhook_subscriptions.json`.
    pub fn in_home(home: &Path) -> Self {
        Self {
            path: home.join(SUBSCRIPTIONS_FILE),
        }
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's routes by name (a missing or unreadable file has none, as
    /// in the reference).
    pub fn load(&self) -> BTreeMap<String, Route> {
        let Ok(text) = std::fs::read_to_string(&self.path) else {
            return BTreeMap::new();
        };
        let Ok(Value::Object(entries)) = serde_json::from_str::<Value>(&text) else {
            return BTreeMap::new();
        };
        entries
            .iter()
            .map(|(name, v)| (name.clone(), Route::from_json(name, v, true)))
            .collect()
    }

    /// The file's raw entries, in file order (to change one and keep the rest as written).
    pub fn entries(&self) -> Map<String, Value> {
        std::fs::read_to_string(&self.path)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .and_then(|v| v.as_object().cloned())
            .unwrap_or_default()
    }

    /// Writes `entries` (atomically, owner-only: it holds secrets).
    pub fn save(&self, entries: &Map<String, Value>) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(entries).map_err(std::io::Error::other)?;
        hermes_fs::write_atomic(&self.path, text.as_bytes(), hermes_fs::Access::Private)
    }

    /// The file's modification time (routes are reloaded when it changes).
    pub fn modified(&self) -> Option<std::time::SystemTime> {
        std::fs::metadata(&self.path)
            .and_then(|m| m.modified())
            .ok()
    }
}

/// `platforms.webhook` as the reference reads it, with `WEBHOOK_*` from the
/// environment winning when `WEBHOOK_ENABLED` is set.
#[derive(Debug, Clone, PartialEq)]
pub struct WebhookConfig {
    /// Address to listen on.
    pub host: String,
    /// Port (8644).
    pub port: u16,
    /// The secret of routes that have none.
    pub secret: String,
    /// Routes from config.yaml.
    pub routes: BTreeMap<String, Route>,
    /// Requests per route per minute.
    pub rate_limit: usize,
    /// Largest body taken.
    pub max_body_bytes: usize,
}

impl WebhookConfig {
    /// The settings, or `None` when the webhook platform is not enabled.
    pub fn read(tree: &Value, env: &dyn Fn(&str) -> Option<String>) -> Option<Self> {
        let key = |k: &str| platform_key(tree, "webhook", k);
        let by_env = boolean(env("WEBHOOK_ENABLED").as_deref()) == Some(true);
        let enabled = by_env || boolean(key("enabled").as_deref()) == Some(true);
        if !enabled {
            return None;
        }
        let env_if = |k: &str| env(k).filter(|_| by_env).filter(|v| !v.trim().is_empty());
        let extra = |k: &str| {
            [
                format!("/platforms/webhook/extra/{k}"),
                format!("/gateway/platforms/webhook/extra/{k}"),
            ]
            .iter()
            .find_map(|p| tree.pointer(p).cloned())
        };
        let number = |k: &str, default: usize| {
            text(extra(k).as_ref())
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(default)
        };
        let routes = match extra("routes") {
            Some(Value::Object(routes)) => routes
                .iter()
                .map(|(name, v)| (name.clone(), Route::from_json(name, v, false)))
                .collect(),
            _ => BTreeMap::new(),
        };
        Some(Self {
            host: text(extra("host").as_ref()).unwrap_or_else(|| "0.0.0.0".to_owned()),
            port: env_if("WEBHOOK_PORT")
                .or_else(|| text(extra("port").as_ref()))
                .and_then(|p| p.trim().parse().ok())
                .unwrap_or(DEFAULT_PORT),
            secret: env_if("WEBHOOK_SECRET")
                .or_else(|| text(extra("secret").as_ref()))
                .unwrap_or_default(),
            routes,
            rate_limit: number("rate_limit", 30),
            max_body_bytes: number("max_body_bytes", 1_048_576),
        })
    }

    /// The base URL `subscribe` prints: a wildcard host shown as `localhost`.
    pub fn base_url(tree: &Value) -> String {
        let extra = |k: &str| {
            text(tree.pointer(&format!("/platforms/webhook/extra/{k}")))
                .or_else(|| text(tree.pointer(&format!("/gateway/platforms/webhook/extra/{k}"))))
        };
        let host = match extra("host").as_deref() {
            None | Some("0.0.0.0" | "::") => "localhost".to_owned(),
            Some(h) if h.contains(':') => format!("[{h}]"),
            Some(h) => h.to_owned(),
        };
        let port = extra("port")
            .and_then(|p| p.parse::<u16>().ok())
            .unwrap_or(DEFAULT_PORT);
        format!("http://{host}:{port}")
    }

    /// Problems that stop the listener from starting (a static route
    /// without any secret, or a deliver-only route that delivers to the log).
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for route in self.routes.values() {
            let secret = self.secret_of(route);
            if secret.is_empty() {
                out.push(format!(
                    "webhook route '{}' has no secret: set platforms.webhook.extra.routes.{}.secret (or extra.secret)",
                    route.name, route.name
                ));
            } else if secret == INSECURE_NO_AUTH && !crate::is_loopback_host(&self.host) {
                out.push(format!(
                    "webhook route '{}' uses INSECURE_NO_AUTH on {}: that is allowed on loopback only",
                    route.name, self.host
                ));
            }
            if route.deliver_only && Deliver::parse(&route.deliver) == Ok(Deliver::Log) {
                out.push(format!(
                    "webhook route '{}' is deliver_only but delivers to 'log': give it a real target",
                    route.name
                ));
            }
        }
        out
    }

    /// The secret that signs `route`'s requests.
    pub fn secret_of<'a>(&'a self, route: &'a Route) -> &'a str {
        if route.secret.is_empty() {
            &self.secret
        } else {
            &route.secret
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn names_are_normalised_or_refused() {
        assert_eq!(route_name(" GitHub Push ").as_deref(), Some("github-push"));
        assert_eq!(route_name("a_b-1").as_deref(), Some("a_b-1"));
        assert_eq!(route_name("-x"), None);
        assert_eq!(route_name("x/y"), None);
        assert_eq!(route_name(""), None);
    }

    #[test]
    fn secrets_are_43_url_safe_characters() {
        let s = new_secret();
        assert_eq!(s.len(), 43);
        assert!(
            s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        );
        assert_ne!(s, new_secret());
    }

    #[test]
    fn config_reads_routes_and_the_environment_wins_when_it_enables() {
        let tree = json!({"platforms": {"webhook": {"enabled": true, "extra": {
            "port": 9000, "secret": "global", "rate_limit": 5,
            "routes": {"ci": {"events": ["push"], "prompt": "x {a.b}", "deliver": "telegram",
                              "deliver_extra": {"chat_id": "42"}},
                       "f": {"filters": {"equals": 1}, "secret": "s"}}}}}});
        let none = |_: &str| None;
        let cfg = WebhookConfig::read(&tree, &none).unwrap();
        assert_eq!(cfg.port, 9000);
        assert_eq!(cfg.rate_limit, 5);
        assert_eq!(cfg.routes["ci"].events, vec!["push"]);
        assert_eq!(cfg.secret_of(&cfg.routes["ci"]), "global");
        assert_eq!(cfg.routes["f"].unsupported, Some("filters"));
        let env = |k: &str| match k {
            "WEBHOOK_ENABLED" => Some("true".to_owned()),
            "WEBHOOK_PORT" => Some("9100".to_owned()),
            _ => None,
        };
        assert_eq!(WebhookConfig::read(&json!({}), &env).unwrap().port, 9100);
        assert!(WebhookConfig::read(&json!({}), &none).is_none());
        assert_eq!(WebhookConfig::base_url(&tree), "http://localhost:9000");
    }

    #[test]
    fn deliver_targets() {
        assert_eq!(Deliver::parse("LOG"), Ok(Deliver::Log));
        assert_eq!(Deliver::parse("http"), Ok(Deliver::Http));
        assert_eq!(
            Deliver::parse("telegram"),
            Ok(Deliver::Platform("telegram".into()))
        );
        assert!(Deliver::parse("github_comment").is_err());
        assert!(Deliver::parse("a b").is_err());
    }
}
