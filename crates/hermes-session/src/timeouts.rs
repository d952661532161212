//! How long a model request may take, from the same settings the reference
//! reads: `providers.<id>.models.<model>.timeout_seconds`, then
//! `providers.<id>.request_timeout_seconds`, then `HERMES_API_TIMEOUT` (whole
//! request, default 1800 s) and `HERMES_STREAM_READ_TIMEOUT` (silence before a
//! response or between chunks, default 120 s; raised to the request limit for
//! servers on this machine or the local network, which can take minutes to
//! prefill a long context).

use std::net::IpAddr;
use std::time::Duration;

use hermes_llm::{DEFAULT_READ_TIMEOUT, DEFAULT_REQUEST_TIMEOUT};
use hermes_state::{Config, Env};
use serde_json::Value;

use crate::endpoint::Endpoint;

/// The limits for one endpoint's requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Silence tolerated before the response starts or between chunks.
    pub read: Duration,
    /// The whole request, body included.
    pub request: Duration,
}

/// The limits for `ep` under `config` and `env`.
pub fn resolve(ep: &Endpoint, config: &Config, env: &Env) -> Timeouts {
    if let Some(limit) = configured(config, &ep.provider, ep.model.as_deref()) {
        return Timeouts {
            read: limit,
            request: limit,
        };
    }
    let request = seconds(env.get("HERMES_API_TIMEOUT")).unwrap_or(DEFAULT_REQUEST_TIMEOUT);
    let read = match seconds(env.get("HERMES_STREAM_READ_TIMEOUT")) {
        Some(read) => read,
        None if is_local_endpoint(&ep.base_url) => request,
        None => DEFAULT_READ_TIMEOUT,
    };
    Timeouts { read, request }
}

/// The per-model, then per-provider, limit in config.yaml.
fn configured(config: &Config, provider: &str, model: Option<&str>) -> Option<Duration> {
    let entry = config.get("providers")?.get(provider)?;
    let per_model = model
        .and_then(|m| entry.get("models")?.get(m)?.get("timeout_seconds"))
        .and_then(positive);
    per_model.or_else(|| entry.get("request_timeout_seconds").and_then(positive))
}

fn positive(v: &Value) -> Option<Duration> {
    let secs = match v {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => s.trim().parse().ok()?,
        _ => return None,
    };
    duration(secs)
}

fn seconds(raw: Option<&str>) -> Option<Duration> {
    duration(raw?.trim().parse().ok()?)
}

fn duration(secs: f64) -> Option<Duration> {
    (secs.is_finite() && secs > 0.0).then(|| Duration::from_secs_f64(secs.min(1e9)))
}

/// Whether `base_url` points at this machine, a container host, a bare
/// hostname or a private / link-local / CGNAT address.
pub fn is_local_endpoint(base_url: &str) -> bool {
    let Some(host) = host_of(base_url) else {
        return false;
    };
    if host.eq_ignore_ascii_case("localhost")
        || [
            ".docker.internal",
            ".containers.internal",
            ".lima.internal",
            ".local",
        ]
        .iter()
        .any(|suffix| host.to_ascii_lowercase().ends_with(suffix))
    {
        return true;
    }
    match host.parse::<IpAddr>() {
        Ok(IpAddr::V4(v4)) => {
            let [a, b, ..] = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || (a == 100 && (64..128).contains(&b))
        }
        Ok(IpAddr::V6(v6)) => {
            let first = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
        }
        Err(_) => !host.contains('.'),
    }
}

/// The host part of an `scheme://[user@]host[:port]/…` URL.
fn host_of(url: &str) -> Option<&str> {
    let (_, rest) = url.trim().split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = match hostport.strip_prefix('[') {
        Some(v6) => v6.split_once(']')?.0,
        None => hostport.split(':').next()?,
    };
    (!host.is_empty()).then_some(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep(provider: &str, base_url: &str, model: Option<&str>) -> Endpoint {
        Endpoint {
            provider: provider.into(),
            base_url: base_url.into(),
            api_key: None,
            model: model.map(str::to_owned),
            api_mode: hermes_llm::api_mode::ApiMode::ChatCompletions,
        }
    }

    fn config(yaml: &str) -> Config {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        std::fs::write(&path, yaml).unwrap();
        Config::load(&path, &Env::default()).unwrap()
    }

    #[test]
    fn defaults_for_a_cloud_endpoint() {
        let t = resolve(
            &ep("openrouter", "https://openrouter.ai/api/v1", None),
            &Config::default(),
            &Env::default(),
        );
        assert_eq!(t.read, Duration::from_secs(120));
        assert_eq!(t.request, Duration::from_secs(1800));
    }

    #[test]
    fn environment_overrides_and_local_servers_wait_longer() {
        let env = Env::from_pairs([
            ("HERMES_API_TIMEOUT", "300"),
            ("HERMES_STREAM_READ_TIMEOUT", "2.5"),
        ]);
        let t = resolve(
            &ep("custom", "https://x.example/v1", None),
            &Config::default(),
            &env,
        );
        assert_eq!(t.read, Duration::from_millis(2500));
        assert_eq!(t.request, Duration::from_secs(300));
        let env = Env::from_pairs([("HERMES_API_TIMEOUT", "300")]);
        let t = resolve(
            &ep("custom", "http://127.0.0.1:8080/v1", None),
            &Config::default(),
            &env,
        );
        assert_eq!(
            t.read,
            Duration::from_secs(300),
            "local prefill may be slow"
        );
        let bad = Env::from_pairs([
            ("HERMES_API_TIMEOUT", "soon"),
            ("HERMES_STREAM_READ_TIMEOUT", "-1"),
        ]);
        let t = resolve(
            &ep("custom", "https://x.example/v1", None),
            &Config::default(),
            &bad,
        );
        assert_eq!(
            t,
            resolve(
                &ep("custom", "https://x.example/v1", None),
                &Config::default(),
                &Env::default()
            )
        );
    }

    #[test]
    fn config_wins_per_model_then_per_provider() {
        let cfg = config(
            "providers:\n  openrouter:\n    request_timeout_seconds: 45\n    models:\n      slow/model:\n        timeout_seconds: 900\n",
        );
        let env = Env::from_pairs([("HERMES_API_TIMEOUT", "10")]);
        let url = "https://openrouter.ai/api/v1";
        let t = resolve(&ep("openrouter", url, Some("slow/model")), &cfg, &env);
        assert_eq!(
            (t.read, t.request),
            (Duration::from_secs(900), Duration::from_secs(900))
        );
        let t = resolve(&ep("openrouter", url, Some("other")), &cfg, &env);
        assert_eq!(
            (t.read, t.request),
            (Duration::from_secs(45), Duration::from_secs(45))
        );
    }

    #[test]
    fn local_endpoints() {
        for url in [
            "http://localhost:11434/v1",
            "http://127.0.0.1:8080",
            "http://[::1]:8080/v1",
            "http://192.168.1.20:8000/v1",
            "http://10.0.0.5/v1",
            "http://100.100.1.1/v1",
            "http://host.docker.internal:1234/v1",
            "http://ollama:11434/v1",
        ] {
            assert!(is_local_endpoint(url), "{url}");
        }
        for url in [
            "https://api.openai.com/v1",
            "http://8.8.8.8/v1",
            "not a url",
        ] {
            assert!(!is_local_endpoint(url), "{url}");
        }
    }
}
