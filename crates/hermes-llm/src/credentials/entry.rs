//! One pooled credential as stored under `credential_pool.<provider>[]` in
//! `auth.json`, plus the JSON patches the pool applies to stored entries.

use std::fmt;
use std::time::{Duration, SystemTime};

use serde_json::{Map, Value};

use super::timefmt::{from_epoch, parse_timestamp, to_epoch};

/// Cooldown after a 401 before the credential is tried again.
pub const EXHAUSTED_TTL_401: Duration = Duration::from_secs(5 * 60);
/// Cooldown after a 429.
pub const EXHAUSTED_TTL_429: Duration = Duration::from_secs(60 * 60);
/// Cooldown after any other failure (402 billing included).
pub const EXHAUSTED_TTL_DEFAULT: Duration = Duration::from_secs(60 * 60);

/// `auth_type` of a plain API key.
pub const AUTH_TYPE_API_KEY: &str = "api_key";
/// `auth_type` of an OAuth token.
pub const AUTH_TYPE_OAUTH: &str = "oauth";
/// `source` of a credential added by the user.
pub const SOURCE_MANUAL: &str = "manual";

/// The cooldown for an exhaustion caused by HTTP `status`.
pub fn exhausted_ttl(status: Option<u16>) -> Duration {
    match status {
        Some(401) => EXHAUSTED_TTL_401,
        Some(429) => EXHAUSTED_TTL_429,
        _ => EXHAUSTED_TTL_DEFAULT,
    }
}

/// `last_status` of a stored credential.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// `"ok"`.
    Ok,
    /// `"exhausted"`: cooling down until a TTL or provider reset passes.
    Exhausted,
    /// `"dead"`: never selected again until re-added.
    Dead,
    /// Any other stored value, kept verbatim.
    Other(String),
}

impl Status {
    fn parse(raw: &str) -> Self {
        match raw {
            "ok" => Self::Ok,
            "exhausted" => Self::Exhausted,
            "dead" => Self::Dead,
            other => Self::Other(other.to_owned()),
        }
    }

    /// The stored spelling.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Ok => "ok",
            Self::Exhausted => "exhausted",
            Self::Dead => "dead",
            Self::Other(s) => s,
        }
    }
}

/// A pooled credential. The key itself is only reachable through
/// [`Credential::api_key`]; `Debug` and `Display` show a masked form.
#[derive(Clone, PartialEq)]
pub struct Credential {
    /// Pool key (`openrouter`, `custom:<name>`, ...).
    pub provider: String,
    /// Short stable id (six hex digits for entries Hermes creates).
    pub id: String,
    /// Human label.
    pub label: String,
    /// `api_key` or `oauth`.
    pub auth_type: String,
    /// Lower sorts first.
    pub priority: i64,
    /// Where it came from (`manual`, `env:OPENROUTER_API_KEY`, ...).
    pub source: String,
    access_token: String,
    /// Last recorded status, if any.
    pub last_status: Option<Status>,
    /// When `last_status` was recorded.
    pub last_status_at: Option<SystemTime>,
    /// HTTP status of the last failure.
    pub last_error_code: Option<u16>,
    /// Provider's machine-readable reason for the last failure.
    pub last_error_reason: Option<String>,
    /// Provider's message for the last failure.
    pub last_error_message: Option<String>,
    /// Provider-supplied time the limit resets; overrides the TTL.
    pub last_error_reset_at: Option<SystemTime>,
    /// Base URL stored with the entry.
    pub base_url: Option<String>,
    /// Uses recorded for `least_used`.
    pub request_count: u64,
}

impl Credential {
    /// Build from one stored JSON entry; `None` when it is not an object.
    /// Missing fields get the reference's defaults.
    pub(crate) fn from_json(provider: &str, value: &Value) -> Option<Self> {
        value.as_object().map(|obj| Self::from_map(provider, obj))
    }

    /// Build from one stored JSON object.
    pub(crate) fn from_map(provider: &str, obj: &Map<String, Value>) -> Self {
        let text = |key: &str| obj.get(key).and_then(Value::as_str).map(str::to_owned);
        let source = text("source").unwrap_or_else(|| SOURCE_MANUAL.to_owned());
        let status_at = obj
            .get("last_status_at")
            .and_then(parse_timestamp)
            .and_then(from_epoch);
        Self {
            provider: provider.to_owned(),
            id: text("id").unwrap_or_default(),
            label: text("label").unwrap_or_else(|| source.clone()),
            auth_type: text("auth_type").unwrap_or_else(|| AUTH_TYPE_API_KEY.to_owned()),
            priority: obj.get("priority").and_then(as_i64).unwrap_or(0),
            source,
            access_token: text("access_token").unwrap_or_default(),
            last_status: obj
                .get("last_status")
                .and_then(Value::as_str)
                .map(Status::parse),
            last_status_at: status_at,
            last_error_code: obj
                .get("last_error_code")
                .and_then(as_i64)
                .and_then(|c| u16::try_from(c).ok()),
            last_error_reason: text("last_error_reason"),
            last_error_message: text("last_error_message"),
            last_error_reset_at: obj
                .get("last_error_reset_at")
                .and_then(parse_timestamp)
                .and_then(from_epoch),
            base_url: text("base_url"),
            request_count: obj
                .get("request_count")
                .and_then(as_i64)
                .and_then(|n| u64::try_from(n).ok())
                .unwrap_or(0),
        }
    }

    /// The secret to send to the provider.
    pub fn api_key(&self) -> &str {
        &self.access_token
    }

    /// The key masked for display: first 4 and last 4 characters.
    pub fn redacted_key(&self) -> String {
        mask_secret(&self.access_token)
    }

    /// When an exhausted credential becomes usable again: the provider's
    /// reset time if one was given, else the status time plus the TTL for
    /// the recorded HTTP status. `None` when not exhausted (or no time known).
    pub fn exhausted_until(&self) -> Option<SystemTime> {
        if self.last_status != Some(Status::Exhausted) {
            return None;
        }
        if let Some(reset) = self.last_error_reset_at {
            return Some(reset);
        }
        self.last_status_at
            .map(|at| at + exhausted_ttl(self.last_error_code))
    }

    /// Whether the entry can be selected at `now`: it has a key, is not
    /// dead, and is not inside an exhaustion cooldown.
    pub fn is_available_at(&self, now: SystemTime) -> bool {
        if self.access_token.is_empty() {
            return false;
        }
        match self.last_status {
            Some(Status::Dead) => false,
            Some(Status::Exhausted) => self.exhausted_until().is_none_or(|until| now >= until),
            _ => true,
        }
    }

    /// Exhausted, but the cooldown is over: selection resets it to `ok`.
    pub(crate) fn cooldown_elapsed(&self, now: SystemTime) -> bool {
        self.last_status == Some(Status::Exhausted)
            && self.exhausted_until().is_none_or(|until| now >= until)
    }
}

fn as_i64(v: &Value) -> Option<i64> {
    v.as_i64().or_else(|| v.as_f64().map(|f| f as i64))
}

/// `abcd...wxyz`; values shorter than 12 characters become `***`.
pub fn mask_secret(value: &str) -> String {
    let chars: Vec<char> = value.chars().collect();
    if chars.is_empty() {
        return String::new();
    }
    if chars.len() < 12 {
        return "***".to_owned();
    }
    let head: String = chars[..4].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}...{tail}")
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credential")
            .field("provider", &self.provider)
            .field("id", &self.id)
            .field("label", &self.label)
            .field("auth_type", &self.auth_type)
            .field("priority", &self.priority)
            .field("source", &self.source)
            .field("access_token", &self.redacted_key())
            .field("last_status", &self.last_status)
            .field("last_status_at", &self.last_status_at)
            .field("last_error_code", &self.last_error_code)
            .field("last_error_reason", &self.last_error_reason)
            .field("last_error_message", &self.last_error_message)
            .field("last_error_reset_at", &self.last_error_reset_at)
            .field("base_url", &self.base_url)
            .field("request_count", &self.request_count)
            .finish()
    }
}

impl fmt::Display for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} [{}] {}", self.label, self.id, self.redacted_key())
    }
}

/// The reference's status fields, always written together.
const STATUS_KEYS: [&str; 6] = [
    "last_status",
    "last_status_at",
    "last_error_code",
    "last_error_reason",
    "last_error_message",
    "last_error_reset_at",
];

/// OAuth-style 401 reasons after which a credential never recovers on its
/// own: such an entry is marked `dead` instead of `exhausted`.
pub const TERMINAL_AUTH_REASONS: [&str; 6] = [
    "token_invalidated",
    "token_revoked",
    "invalid_token",
    "invalid_grant",
    "unauthorized_client",
    "refresh_token_reused",
];

/// What the provider said about a failure, beyond the HTTP status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FailureDetail<'a> {
    /// When the provider says the limit resets; overrides the TTL.
    pub reset_at: Option<SystemTime>,
    /// Machine-readable reason (`rate_limit`, `token_revoked`, ...).
    pub reason: Option<&'a str>,
    /// Human-readable message.
    pub message: Option<&'a str>,
}

impl FailureDetail<'_> {
    /// `dead` for a 401 with a terminal reason, else `exhausted`.
    pub(crate) fn status_for(&self, code: u16) -> Status {
        let terminal = self.reason.is_some_and(|r| {
            let r = r.trim().to_lowercase();
            TERMINAL_AUTH_REASONS.contains(&r.as_str())
        });
        if code == 401 && terminal {
            Status::Dead
        } else {
            Status::Exhausted
        }
    }
}

/// Record an exhaustion on a stored entry.
pub(crate) fn patch_exhausted(
    obj: &mut Map<String, Value>,
    status: Status,
    now: SystemTime,
    code: u16,
    detail: &FailureDetail<'_>,
) {
    let text = |s: Option<&str>| {
        s.map(str::trim)
            .filter(|s| !s.is_empty())
            .map_or(Value::Null, Value::from)
    };
    let reset_at = detail.reset_at;
    let values = [
        Value::from(status.as_str()),
        Value::from(to_epoch(now)),
        Value::from(code),
        text(detail.reason),
        text(detail.message),
        reset_at.map_or(Value::Null, |t| Value::from(to_epoch(t))),
    ];
    for (key, value) in STATUS_KEYS.into_iter().zip(values) {
        obj.insert(key.to_owned(), value);
    }
}

/// Clear status after a cooldown (`ok`) or on reset (`null`).
pub(crate) fn patch_cleared(obj: &mut Map<String, Value>, status: Option<Status>) {
    for key in STATUS_KEYS {
        obj.insert(key.to_owned(), Value::Null);
    }
    if let Some(status) = status {
        obj.insert("last_status".to_owned(), Value::from(status.as_str()));
    }
}

/// Add one to the stored `request_count`.
pub(crate) fn patch_request_count(obj: &mut Map<String, Value>) {
    let current = obj
        .get("request_count")
        .and_then(as_i64)
        .unwrap_or(0)
        .max(0);
    obj.insert("request_count".to_owned(), Value::from(current + 1));
}

/// A new manual API-key entry in the reference's field order.
pub(crate) fn new_entry_json(
    provider: &str,
    id: &str,
    label: &str,
    priority: i64,
    key: &str,
) -> Value {
    let auth_type = if provider == "anthropic" && key.starts_with("sk-ant-oat") {
        AUTH_TYPE_OAUTH
    } else {
        AUTH_TYPE_API_KEY
    };
    let mut obj = Map::new();
    obj.insert("id".to_owned(), Value::from(id));
    obj.insert("label".to_owned(), Value::from(label));
    obj.insert("auth_type".to_owned(), Value::from(auth_type));
    obj.insert("priority".to_owned(), Value::from(priority));
    obj.insert("source".to_owned(), Value::from(SOURCE_MANUAL));
    obj.insert("access_token".to_owned(), Value::from(key));
    patch_cleared(&mut obj, None);
    obj.insert("request_count".to_owned(), Value::from(0));
    Value::Object(obj)
}

#[cfg(test)]
#[path = "entry_tests.rs"]
mod tests;
