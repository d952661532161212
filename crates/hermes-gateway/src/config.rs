//! `platforms.api_server` (and its environment variables), read as the
//! reference reads them.

use serde_json::Value;

/// Listen here unless configured otherwise (loopback only).
pub const DEFAULT_HOST: &str = "127.0.0.1";
/// The reference's port.
pub const DEFAULT_PORT: u16 = 8642;
/// Concurrent agent runs before new ones get 429 (`0` disables the cap).
pub const DEFAULT_MAX_CONCURRENT_RUNS: usize = 10;
/// Request bodies larger than this get 413.
pub const MAX_REQUEST_BYTES: usize = 10_000_000;

/// Values that are never an API key.
const PLACEHOLDERS: &[&str] = &[
    "*",
    "**",
    "***",
    "changeme",
    "your_api_key",
    "your_api_key_here",
    "your-api-key",
    "placeholder",
    "example",
    "dummy",
    "null",
    "none",
];

/// The API server's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiServerConfig {
    /// The bearer key every route but `/health` requires.
    pub key: String,
    /// Bind address.
    pub host: String,
    /// Bind port.
    pub port: u16,
    /// Browser origins allowed by CORS (`*` for any).
    pub cors_origins: Vec<String>,
    /// The model name `/v1/models` advertises.
    pub model_name: String,
    /// `gateway.api_server.max_concurrent_runs`.
    pub max_concurrent_runs: usize,
}

/// Reads the API server's settings; `Ok(None)` when it is not enabled, `Err`
/// when it is enabled but cannot start (the message says how to fix it).
pub fn from_tree(
    tree: &Value,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<ApiServerConfig>, String> {
    let section = tree.pointer("/platforms/api_server");
    let extra = section.and_then(|s| s.get("extra"));
    let text = |v: Option<&Value>| -> Option<String> {
        match v? {
            Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    };
    let env_text = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let truthy = |v: &str| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )
    };
    let enabled_by_config = section
        .and_then(|s| s.get("enabled"))
        .is_some_and(|v| match v {
            Value::Bool(b) => *b,
            Value::String(s) => truthy(s),
            Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
            _ => false,
        });
    let enabled_by_env = env_text("API_SERVER_ENABLED").is_some_and(|v| truthy(&v))
        || env_text("API_SERVER_KEY").is_some();
    if !(enabled_by_config || enabled_by_env) {
        return Ok(None);
    }
    // The environment, when it enables the server, overrides config.yaml
    // (the reference copies it into `extra`); otherwise it only fills gaps.
    let pick = |key: &str, var: &str| -> Option<String> {
        let from_config = text(extra.and_then(|e| e.get(key)));
        if enabled_by_env {
            env_text(var).or(from_config)
        } else {
            from_config.or_else(|| env_text(var))
        }
    };
    // Surrounding whitespace in the setting is a quoting slip, not part of the
    // key (clients cannot send it: HTTP drops it from header values).
    let key = pick("key", "API_SERVER_KEY")
        .map(|k| k.trim().to_owned())
        .unwrap_or_default();
    check_key(&key)?;
    let host = pick("host", "API_SERVER_HOST").unwrap_or_else(|| DEFAULT_HOST.to_owned());
    // An unreadable port falls back to the default, as the reference does.
    let port = pick("port", "API_SERVER_PORT")
        .and_then(|p| p.trim().parse::<u16>().ok())
        .unwrap_or(DEFAULT_PORT);
    let env_cors = env_text("API_SERVER_CORS_ORIGINS").filter(|_| enabled_by_env);
    let cors_origins = match extra.and_then(|e| e.get("cors_origins")) {
        _ if env_cors.is_some() => env_cors.as_deref().map(split_list).unwrap_or_default(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect(),
        Some(Value::String(s)) => split_list(s),
        _ => env_text("API_SERVER_CORS_ORIGINS")
            .map(|s| split_list(&s))
            .unwrap_or_default(),
    };
    let model_name =
        pick("model_name", "API_SERVER_MODEL_NAME").unwrap_or_else(|| "hermes-agent".to_owned());
    let max_concurrent_runs = tree
        .pointer("/gateway/api_server/max_concurrent_runs")
        .and_then(|v| match v {
            Value::Number(n) => n.as_i64(),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        })
        .map_or(DEFAULT_MAX_CONCURRENT_RUNS, |n| n.max(0) as usize);
    Ok(Some(ApiServerConfig {
        key,
        host,
        port,
        cors_origins,
        model_name,
        max_concurrent_runs,
    }))
}

fn split_list(s: &str) -> Vec<String> {
    s.split(',')
        .map(|p| p.trim().to_owned())
        .filter(|p| !p.is_empty())
        .collect()
}

/// Refuses a missing, short or placeholder key, saying how to make one.
pub fn check_key(key: &str) -> Result<(), String> {
    let cleaned = key.trim();
    if cleaned.is_empty() {
        return Err(
            "Refusing to start the API server: API_SERVER_KEY is required (even on \
                    loopback). Generate one with `openssl rand -hex 32` and set API_SERVER_KEY \
                    in HERMES_HOME/.env (or platforms.api_server.extra.key in config.yaml)."
                .into(),
        );
    }
    if cleaned.chars().count() < 16 || PLACEHOLDERS.contains(&cleaned.to_ascii_lowercase().as_str())
    {
        return Err(
            "Refusing to start the API server: API_SERVER_KEY is a placeholder or too \
                    short (<16 chars). This endpoint dispatches terminal-capable agent work — a \
                    guessable key is remote code execution. Generate a strong secret (e.g. \
                    `openssl rand -hex 32`) and set API_SERVER_KEY."
                .into(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;
    use serde_json::json;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn disabled_unless_asked() {
        assert_eq!(from_tree(&json!({}), &no_env), Ok(None));
    }

    #[test]
    fn config_keys_and_defaults() {
        let tree = json!({
            "platforms": {"api_server": {"enabled": true, "extra": {
                "key": "0123456789abcdef0123", "port": 9000, "cors_origins": ["http://a"], "model_name": "mine"}}},
            "gateway": {"api_server": {"max_concurrent_runs": 0}}
        });
        let c = from_tree(&tree, &no_env).unwrap().unwrap();
        assert_eq!(c.host, "127.0.0.1");
        assert_eq!(c.port, 9000);
        assert_eq!(c.cors_origins, ["http://a"]);
        assert_eq!(c.model_name, "mine");
        assert_eq!(c.max_concurrent_runs, 0);
    }

    #[test]
    fn the_env_key_enables_it_and_weak_keys_are_refused() {
        let env = |k: &str| (k == "API_SERVER_KEY").then(|| "s3cret-s3cret-s3cret".to_owned());
        let c = from_tree(&json!({}), &env).unwrap().unwrap();
        assert_eq!(
            (c.port, c.max_concurrent_runs, c.model_name.as_str()),
            (8642, 10, "hermes-agent")
        );
        let padded =
            |k: &str| (k == "API_SERVER_KEY").then(|| " s3cret-s3cret-s3cret \t".to_owned());
        assert_eq!(
            from_tree(&json!({}), &padded).unwrap().unwrap().key,
            "s3cret-s3cret-s3cret"
        );
        let weak = |k: &str| (k == "API_SERVER_KEY").then(|| "changeme".to_owned());
        assert!(
            from_tree(&json!({}), &weak)
                .unwrap_err()
                .contains("openssl rand -hex 32")
        );
        let on = |k: &str| (k == "API_SERVER_ENABLED").then(|| "true".to_owned());
        assert!(from_tree(&json!({}), &on).unwrap_err().contains("required"));
    }
}
