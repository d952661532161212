//! Home Assistant tools: `ha_list_entities`, `ha_get_state`,
//! `ha_list_services` and `ha_call_service` over its REST API, with the
//! reference's schemas, checks and result shapes. Offered when `HASS_TOKEN`
//! is set; service calls that open locks, alarms or covers ask for approval
//! like a dangerous command (ours: the reference runs them unasked).

/// The methods every `ha_*` tool answers alike: its name, the toolset,
/// the 🏠, the token check and how it may share a batch.
macro_rules! ha_tool_basics {
    ($name:literal, $parallel:expr) => {
        fn name(&self) -> &str {
            $name
        }
        fn toolset(&self) -> &str {
            crate::TOOLSET
        }
        fn emoji(&self) -> &str {
            "🏠"
        }
        fn check(&self) -> Result<(), String> {
            self.0.settings.check()
        }
        fn parallel_class(&self) -> hermes_tools::ParallelClass {
            $parallel
        }
    };
}

mod call;
mod read;

use std::sync::Arc;
use std::time::Duration;

use hermes_tools::Tool;
use serde_json::Value;

pub use call::CallServiceTool;
pub use read::{GetStateTool, ListEntitiesTool, ListServicesTool};

/// The reference's default address.
pub const DEFAULT_URL: &str = "http://homeassistant.local:8123";

/// Where Home Assistant is and the token that opens it.
#[derive(Clone, PartialEq, Eq)]
pub struct HaSettings {
    /// The base URL, without a trailing `/`.
    pub url: String,
    /// A long-lived access token (`HASS_TOKEN`); empty when unset.
    pub token: String,
}

impl std::fmt::Debug for HaSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HaSettings")
            .field("url", &self.url)
            .field("token", &if self.token.is_empty() { "" } else { "***" })
            .finish()
    }
}

impl HaSettings {
    /// From `HASS_URL` and `HASS_TOKEN` as `env` reads them.
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Self {
        let url = env("HASS_URL")
            .map(|u| u.trim().to_owned())
            .filter(|u| !u.is_empty())
            .unwrap_or_else(|| DEFAULT_URL.to_owned());
        Self {
            url: url.trim_end_matches('/').to_owned(),
            token: env("HASS_TOKEN")
                .map(|t| t.trim().to_owned())
                .unwrap_or_default(),
        }
    }

    /// Whether the tools can run (a token is set).
    pub fn check(&self) -> Result<(), String> {
        if self.token.is_empty() {
            Err("HASS_TOKEN is not set (and HASS_URL, unless Home Assistant is at homeassistant.local:8123)".to_owned())
        } else {
            Ok(())
        }
    }
}

/// The four tools, sharing `http`.
pub fn tools(settings: HaSettings, http: reqwest::Client) -> Vec<Arc<dyn Tool>> {
    let ha = Arc::new(Client { settings, http });
    vec![
        Arc::new(ListEntitiesTool(ha.clone())),
        Arc::new(GetStateTool(ha.clone())),
        Arc::new(ListServicesTool(ha.clone())),
        Arc::new(CallServiceTool(ha)),
    ]
}

/// The toolset of every `ha_*` tool.
pub const TOOLSET: &str = "homeassistant";

/// Requests to one Home Assistant.
#[derive(Debug)]
pub(crate) struct Client {
    settings: HaSettings,
    http: reqwest::Client,
}

impl Client {
    /// `GET path` (or `POST` with `body`) → the JSON answer; `Err` is the
    /// failure as one line.
    pub(crate) async fn request(
        &self,
        path: &str,
        body: Option<&Value>,
        timeout: Duration,
    ) -> Result<Value, String> {
        let url = format!("{}{path}", self.settings.url);
        let builder = match body {
            Some(b) => self.http.post(&url).json(b),
            None => self.http.get(&url),
        };
        let resp = builder
            .bearer_auth(&self.settings.token)
            .timeout(timeout)
            .send()
            .await
            .map_err(|e| {
                if e.is_timeout() {
                    format!("no answer from {url} within {}s", timeout.as_secs())
                } else if e.is_connect() {
                    format!(
                        "cannot connect to {} (is HASS_URL right?)",
                        self.settings.url
                    )
                } else {
                    e.without_url().to_string()
                }
            })?;
        let status = resp.status();
        if !status.is_success() {
            let hint = match status.as_u16() {
                401 | 403 => " (check HASS_TOKEN)",
                _ => "",
            };
            return Err(format!(
                "{}, message='{}', url='{url}'{hint}",
                status.as_u16(),
                status.canonical_reason().unwrap_or("")
            ));
        }
        let text = resp.text().await.map_err(|e| e.to_string())?;
        Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
    }
}

/// `{"result": …}` as the tools answer.
pub(crate) fn result(value: Value) -> String {
    serde_json::json!({ "result": value }).to_string()
}

/// An entity id as Home Assistant writes them (`light.kitchen`).
pub(crate) fn is_entity_id(text: &str) -> bool {
    let Some((domain, object)) = text.split_once('.') else {
        return false;
    };
    let mut d = domain.chars();
    d.next().is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && d.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !object.is_empty()
        && object
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// A domain or service name (`light`, `turn_on`): also keeps paths out of URLs.
pub(crate) fn is_name(text: &str) -> bool {
    let mut c = text.chars();
    c.next().is_some_and(|c| c.is_ascii_lowercase())
        && c.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_names() {
        assert!(is_entity_id("light.living_room"));
        assert!(is_entity_id("_x.y1"));
        assert!(!is_entity_id("light"));
        assert!(!is_entity_id("light./etc"));
        assert!(!is_entity_id("Light.x"));
        assert!(is_name("turn_on"));
        assert!(!is_name("../x"));
        assert!(!is_name("1abc"));
    }

    #[test]
    fn settings_from_the_environment() {
        let env = |k: &str| match k {
            "HASS_URL" => Some("http://ha.lan:8123/".to_owned()),
            "HASS_TOKEN" => Some("tok".to_owned()),
            _ => None,
        };
        let s = HaSettings::from_env(&env);
        assert_eq!(s.url, "http://ha.lan:8123");
        assert!(s.check().is_ok());
        assert!(!format!("{s:?}").contains("tok\""));
        let none = HaSettings::from_env(&|_: &str| None);
        assert_eq!(none.url, DEFAULT_URL);
        assert!(none.check().is_err());
    }
}
