//! What the classifier reads out of an error response body.

use serde_json::{Map, Value};

/// The parts of a JSON error body the classifier uses.
#[derive(Debug, Default)]
pub(crate) struct ParsedBody {
    /// `error.message` as text (empty when absent or falsy).
    pub error_message: String,
    /// `message` at the top level (flat bodies such as the Responses API).
    pub flat_message: String,
    /// `error.message` of the JSON an aggregator wrapped in `error.metadata.raw`.
    pub metadata_message: String,
    /// The structured error code (see [`error_code`]).
    pub code: String,
    /// OpenRouter's "Provider returned error" wrapper: an upstream failed.
    pub openrouter_upstream: bool,
    /// `error.metadata.provider_name`, the upstream that failed.
    pub upstream_provider: Option<String>,
    /// A `retry_after` (seconds) in the body.
    pub retry_after_secs: Option<f64>,
    /// The body's own message when it is text: `error.message`, else `message`.
    pub summary: Option<String>,
}

impl ParsedBody {
    /// Parses `body`; anything but a JSON object yields the empty default.
    pub(crate) fn parse(body: &str, provider_lower: &str) -> Self {
        let trimmed = body.trim();
        if !trimmed.starts_with('{') {
            return Self::default();
        }
        let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(trimmed) else {
            return Self::default();
        };
        let err = obj.get("error").and_then(Value::as_object);
        let metadata = err
            .and_then(|e| e.get("metadata"))
            .and_then(Value::as_object);
        let error_message = err.map(|e| text_of(e.get("message"))).unwrap_or_default();
        Self {
            flat_message: text_of(obj.get("message")),
            metadata_message: metadata.map(wrapped_message).unwrap_or_default(),
            code: error_code(&obj),
            openrouter_upstream: is_openrouter_upstream(&error_message, metadata, provider_lower),
            upstream_provider: metadata
                .and_then(|m| m.get("provider_name"))
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
            retry_after_secs: err
                .and_then(|e| seconds(e.get("retry_after")))
                .or_else(|| seconds(obj.get("retry_after"))),
            summary: [err.and_then(|e| e.get("message")), obj.get("message")]
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::trim)
                .find(|s| !s.is_empty())
                .map(str::to_owned),
            error_message,
        }
    }

    /// The body's own message: `error.message`, else the flat `message`.
    pub(crate) fn message(&self) -> &str {
        if self.error_message.is_empty() {
            &self.flat_message
        } else {
            &self.error_message
        }
    }
}

/// A JSON value as text the way a loose `str(value or "")` reads it: falsy
/// values are empty, strings are themselves, anything else is its JSON form.
fn text_of(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null | Value::Bool(false)) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) if n.as_f64() == Some(0.0) => String::new(),
        Some(Value::Array(a)) if a.is_empty() => String::new(),
        Some(Value::Object(o)) if o.is_empty() => String::new(),
        Some(other) => other.to_string(),
    }
}

/// `error.message` of the JSON document in `metadata.raw`, if any.
fn wrapped_message(metadata: &Map<String, Value>) -> String {
    let Some(raw) = metadata.get("raw").and_then(Value::as_str) else {
        return String::new();
    };
    if raw.trim().is_empty() {
        return String::new();
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(inner)) => inner
            .get("error")
            .and_then(Value::as_object)
            .map(|e| text_of(e.get("message")))
            .unwrap_or_default(),
        _ => String::new(),
    }
}

/// A code-like string: trimmed, non-empty and not the useless `"400"`.
fn usable(code: &str) -> Option<String> {
    let code = code.trim();
    (!code.is_empty() && code != "400").then(|| code.to_owned())
}

/// `error.code` (else `error.type`) of one payload, when it is usable text.
/// A truthy non-text `error.code` (say `429`) hides `error.type`.
fn nested_code(err: &Map<String, Value>) -> Option<String> {
    let code = err.get("code").filter(|v| !text_of(Some(v)).is_empty());
    match code.or_else(|| err.get("type")) {
        Some(Value::String(s)) => usable(s),
        _ => None,
    }
}

/// `code` or `error_code` at the top level of a payload (text or integer).
fn top_level_code(obj: &Map<String, Value>) -> Option<String> {
    let code = obj
        .get("code")
        .filter(|v| !text_of(Some(v)).is_empty())
        .or_else(|| obj.get("error_code"));
    match code {
        Some(Value::String(s)) => usable(s),
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => usable(&n.to_string()),
        _ => None,
    }
}

/// The structured error code of a body: `error.code`/`error.type`, then the
/// code of a JSON document wrapped as a string in `error.message`, then the
/// top-level `code`/`error_code`.
fn error_code(obj: &Map<String, Value>) -> String {
    if let Some(err) = obj.get("error").and_then(Value::as_object) {
        if let Some(code) = nested_code(err) {
            return code;
        }
        let wrapped = err.get("message").and_then(Value::as_str).map(str::trim);
        if let Some(text) = wrapped.filter(|t| t.starts_with('{'))
            && let Ok(Value::Object(inner)) = serde_json::from_str::<Value>(text)
        {
            let from_inner = inner
                .get("error")
                .and_then(Value::as_object)
                .and_then(nested_code)
                .or_else(|| top_level_code(&inner));
            if let Some(code) = from_inner {
                return code;
            }
        }
    }
    top_level_code(obj).unwrap_or_default()
}

/// OpenRouter wraps an upstream provider's failure as "Provider returned
/// error"; the user's key is fine. Trusted when the provider is OpenRouter or
/// the metadata has the shape only OpenRouter produces.
fn is_openrouter_upstream(
    error_message: &str,
    metadata: Option<&Map<String, Value>>,
    provider_lower: &str,
) -> bool {
    if !error_message
        .trim()
        .eq_ignore_ascii_case("provider returned error")
    {
        return false;
    }
    provider_lower == "openrouter"
        || metadata.is_some_and(|m| m.contains_key("raw") || m.contains_key("provider_name"))
}

/// A non-negative number of seconds, given as a number or numeric text.
fn seconds(value: Option<&Value>) -> Option<f64> {
    let secs = match value? {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => s.trim().parse::<f64>().ok()?,
        _ => return None,
    };
    (secs.is_finite() && secs > 0.0).then_some(secs)
}
