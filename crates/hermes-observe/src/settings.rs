//! The `observability:` section, with the OpenTelemetry environment
//! variables (`OTEL_EXPORTER_OTLP_*`, `OTEL_SERVICE_NAME`) filling what it
//! leaves out, as every OpenTelemetry SDK reads them.

use std::time::Duration;

use serde_json::Value;

/// What to observe and where traces go.
#[derive(Clone, PartialEq, Eq)]
pub struct ObserveSettings {
    /// Count turns, calls and tokens for `/metrics` (default on).
    pub metrics: bool,
    /// Put message and tool content (secrets masked) on spans (default off).
    pub include_content: bool,
    /// Where spans are sent; `None`: no tracing.
    pub otlp: Option<OtlpSettings>,
    /// `service.name` of the spans' resource.
    pub service_name: String,
}

/// An OTLP/HTTP (protobuf) traces endpoint.
#[derive(Clone, PartialEq, Eq)]
pub struct OtlpSettings {
    /// The full URL spans are POSTed to (`…/v1/traces`).
    pub traces_url: String,
    /// Extra request headers (a collector's API key); never logged.
    pub headers: Vec<(String, String)>,
    /// How long one export may take.
    pub timeout: Duration,
}

impl std::fmt::Debug for ObserveSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObserveSettings")
            .field("metrics", &self.metrics)
            .field("include_content", &self.include_content)
            .field("otlp", &self.otlp)
            .field("service_name", &self.service_name)
            .finish()
    }
}

impl std::fmt::Debug for OtlpSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("OtlpSettings")
            .field("traces_url", &self.traces_url)
            .field("headers", &names)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl ObserveSettings {
    /// Nothing observed: what a process without the section gets for traces.
    pub fn off() -> Self {
        Self {
            metrics: false,
            include_content: false,
            otlp: None,
            service_name: "hermes-agent".into(),
        }
    }

    /// Reads `observability:` from the whole configuration `raw`; `env`
    /// looks up an environment variable.
    pub fn from_config(raw: &Value, env: &dyn Fn(&str) -> Option<String>) -> Self {
        let section = raw.get("observability").unwrap_or(&Value::Null);
        let flag = |key: &str, default: bool| match section.get(key) {
            Some(Value::Bool(b)) => *b,
            Some(Value::String(s)) => matches!(s.trim(), "true" | "yes" | "on" | "1"),
            _ => default,
        };
        let env = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let service_name = text(section, "service_name")
            .or_else(|| env("OTEL_SERVICE_NAME"))
            .unwrap_or_else(|| "hermes-agent".into());
        let disabled = env("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"));
        Self {
            metrics: flag("metrics", true),
            include_content: flag("include_content", false),
            otlp: (!disabled)
                .then(|| otlp(section.get("otlp").unwrap_or(&Value::Null), &env))
                .flatten(),
            service_name,
        }
    }
}

fn text(section: &Value, key: &str) -> Option<String> {
    section
        .get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

fn otlp(section: &Value, env: &dyn Fn(&str) -> Option<String>) -> Option<OtlpSettings> {
    let traces_url = text(section, "traces_endpoint")
        .or_else(|| text(section, "endpoint").map(|base| traces_path(&base)))
        .or_else(|| env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
        .or_else(|| env("OTEL_EXPORTER_OTLP_ENDPOINT").map(|base| traces_path(&base)))?;
    let mut headers: Vec<(String, String)> = match section.get("headers") {
        Some(Value::Object(map)) => map
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
            .collect(),
        _ => Vec::new(),
    };
    for name in [
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    ] {
        if let Some(list) = env(name) {
            headers.extend(parse_header_list(&list));
        }
    }
    let timeout = section
        .get("timeout")
        .and_then(Value::as_f64)
        .filter(|s| s.is_finite() && *s > 0.0)
        .map_or(Duration::from_secs(10), Duration::from_secs_f64);
    Some(OtlpSettings {
        traces_url,
        headers,
        timeout,
    })
}

/// `http://collector:4318` → `http://collector:4318/v1/traces`.
fn traces_path(base: &str) -> String {
    format!("{}/v1/traces", base.trim_end_matches('/'))
}

/// `key1=value1,key2=value2`, values percent-decoded (the OTel spec's form).
fn parse_header_list(list: &str) -> Vec<(String, String)> {
    list.split(',')
        .filter_map(|pair| {
            let (k, v) = pair.split_once('=')?;
            let k = k.trim();
            (!k.is_empty()).then(|| {
                let value = percent_encoding::percent_decode_str(v.trim()).decode_utf8_lossy();
                (k.to_owned(), value.into_owned())
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn defaults_count_metrics_and_trace_nothing() {
        let s = ObserveSettings::from_config(&json!({}), &no_env);
        assert!(s.metrics && !s.include_content && s.otlp.is_none());
        assert_eq!(s.service_name, "hermes-agent");
    }

    #[test]
    fn config_wins_and_env_fills_in() {
        let raw = json!({"observability": {"include_content": true,
            "otlp": {"endpoint": "http://127.0.0.1:4318/", "headers": {"x-key": "k"}}}});
        let env = |name: &str| match name {
            "OTEL_EXPORTER_OTLP_ENDPOINT" => Some("http://elsewhere:4318".into()),
            "OTEL_EXPORTER_OTLP_HEADERS" => Some("api-key=a%20b, team = x".into()),
            "OTEL_SERVICE_NAME" => Some("svc".into()),
            _ => None,
        };
        let s = ObserveSettings::from_config(&raw, &env);
        let otlp = s.otlp.unwrap();
        assert_eq!(otlp.traces_url, "http://127.0.0.1:4318/v1/traces");
        assert_eq!(
            otlp.headers,
            vec![
                ("x-key".into(), "k".into()),
                ("api-key".into(), "a b".into()),
                ("team".into(), "x".into())
            ]
        );
        assert!(s.include_content);
        assert_eq!(s.service_name, "svc");
        let only_env = ObserveSettings::from_config(&json!({}), &env);
        assert_eq!(
            only_env.otlp.unwrap().traces_url,
            "http://elsewhere:4318/v1/traces"
        );
    }

    #[test]
    fn the_sdk_switch_turns_tracing_off_and_headers_stay_out_of_debug() {
        let env = |name: &str| match name {
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" => Some("http://c/v1/traces".into()),
            "OTEL_EXPORTER_OTLP_HEADERS" => Some("authorization=Bearer%20s3cret".into()),
            _ => None,
        };
        let s = ObserveSettings::from_config(&json!({}), &env);
        assert!(!format!("{s:?}").contains("s3cret"));
        let off = |name: &str| {
            (name == "OTEL_SDK_DISABLED")
                .then(|| "true".into())
                .or(env(name))
        };
        assert!(
            ObserveSettings::from_config(&json!({}), &off)
                .otlp
                .is_none()
        );
    }
}
