//! Field deserializers that never fail: YAML users quote numbers (`"300"`),
//! spell booleans as words (`off`, `yes`) and leave keys empty. A value of the
//! wrong kind reads as absent, so its default applies, as in the reference.

use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// A number, or a string holding one.
pub fn number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Ok(number_of(&Value::deserialize(d)?))
}

/// A boolean, a number (non-zero is true) or a word (`yes`/`no`, `on`/`off`,
/// `enabled`/`disabled`, `1`/`0`).
pub fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    Ok(flag_of(&Value::deserialize(d)?))
}

/// A non-empty trimmed string.
pub fn text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) => Some(s.trim().to_owned()).filter(|s| !s.is_empty()),
        _ => None,
    })
}

/// A list of strings (other items skipped); a single string is a list of one.
pub fn strings<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Array(items) => items
            .into_iter()
            .filter_map(|i| match i {
                Value::String(s) => Some(s),
                _ => None,
            })
            .collect(),
        Value::String(s) if !s.trim().is_empty() => vec![s],
        _ => Vec::new(),
    })
}

/// See [`number`].
pub fn number_of(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok().filter(|f: &f64| f.is_finite()),
        _ => None,
    }
}

/// See [`flag`].
pub fn flag_of(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => n.as_f64().map(|f| f != 0.0),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" | "enabled" => Some(true),
            "0" | "false" | "no" | "off" | "disabled" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// A non-negative whole number from a lenient number (fractions rounded down,
/// negatives to zero).
pub fn count(n: Option<f64>) -> Option<u64> {
    n.map(|f| if f <= 0.0 { 0 } else { f as u64 })
}
