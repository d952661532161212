//! The `hooks:` block of config.yaml: event → list of `{command, matcher, timeout}`.
//! Mistakes are warned about and skipped, never fatal.

use serde_json::Value;

use super::HookEvent;

/// Seconds a hook may run when its entry names none.
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;
/// The most seconds a hook may be given.
pub const MAX_TIMEOUT_SECS: u64 = 300;

/// One configured shell hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookSpec {
    /// When it runs.
    pub event: HookEvent,
    /// The command line (split like a shell would, run without one).
    pub command: String,
    /// A regex the whole tool name must match (tool events only).
    pub matcher: Option<String>,
    /// Seconds before it is killed.
    pub timeout_secs: u64,
}

/// Reads the `hooks:` mapping; returns the hooks and a warning per entry skipped or fixed.
pub fn parse_hook_specs(hooks: Option<&Value>) -> (Vec<HookSpec>, Vec<String>) {
    let mut specs = Vec::new();
    let mut warnings = Vec::new();
    let Some(Value::Object(map)) = hooks else {
        return (specs, warnings);
    };
    for (name, entries) in map {
        if name == "output_spill" {
            continue;
        }
        let Some(event) = HookEvent::parse(name) else {
            warnings.push(unknown_event(name));
            continue;
        };
        let list = match entries {
            Value::Null => continue,
            Value::Array(list) => list,
            other => {
                warnings.push(format!(
                    "hooks.{name} must be a list of hook definitions; got {}",
                    kind(other)
                ));
                continue;
            }
        };
        for (i, entry) in list.iter().enumerate() {
            match parse_entry(event, entry, &mut warnings) {
                Some(spec) => specs.push(spec),
                None => warnings.push(format!("hooks.{name}[{i}] skipped")),
            }
        }
    }
    (specs, warnings)
}

fn parse_entry(event: HookEvent, entry: &Value, warnings: &mut Vec<String>) -> Option<HookSpec> {
    let Value::Object(fields) = entry else {
        warnings.push(format!(
            "hooks.{event} entries must be mappings with a 'command'; got {}",
            kind(entry)
        ));
        return None;
    };
    let command = fields
        .get("command")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|c| !c.is_empty());
    let Some(command) = command else {
        warnings.push(format!("hooks.{event} entry has no 'command'"));
        return None;
    };
    let matcher = match fields.get("matcher") {
        None | Some(Value::Null) => None,
        Some(Value::String(m)) => Some(m.trim().to_owned()).filter(|m| !m.is_empty()),
        Some(other) => {
            warnings.push(format!(
                "hooks.{event} matcher must be a string; got {} (ignored)",
                kind(other)
            ));
            None
        }
    };
    let matcher = match matcher {
        Some(m) if !event.is_tool_event() => {
            warnings.push(format!(
                "hooks.{event} has matcher {m:?}; matchers apply only to pre_tool_call and post_tool_call and will be ignored"
            ));
            None
        }
        m => m,
    };
    if let Some(m) = &matcher
        && regex::Regex::new(m).is_err()
    {
        warnings.push(format!(
            "hooks.{event} matcher {m:?} is not a valid regex; it will match the tool name literally"
        ));
    }
    Some(HookSpec {
        event,
        command: command.to_owned(),
        matcher,
        timeout_secs: timeout(event, fields.get("timeout"), warnings),
    })
}

fn timeout(event: HookEvent, value: Option<&Value>, warnings: &mut Vec<String>) -> u64 {
    let n = match value {
        None | Some(Value::Null) => return DEFAULT_TIMEOUT_SECS,
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::String(s)) => s.trim().parse::<f64>().ok(),
        Some(_) => None,
    };
    match n.map(f64::trunc) {
        None => {
            warnings.push(format!(
                "hooks.{event} timeout must be a number of seconds; using {DEFAULT_TIMEOUT_SECS}"
            ));
            DEFAULT_TIMEOUT_SECS
        }
        Some(n) if n < 1.0 => {
            warnings.push(format!(
                "hooks.{event} timeout must be at least 1 second; using {DEFAULT_TIMEOUT_SECS}"
            ));
            DEFAULT_TIMEOUT_SECS
        }
        Some(n) if n > MAX_TIMEOUT_SECS as f64 => {
            warnings.push(format!(
                "hooks.{event} timeout {n} is over the {MAX_TIMEOUT_SECS}s maximum; using {MAX_TIMEOUT_SECS}"
            ));
            MAX_TIMEOUT_SECS
        }
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        Some(n) => n as u64,
    }
}

fn unknown_event(name: &str) -> String {
    let close = HookEvent::ALL
        .into_iter()
        .map(|e| (strsim::normalized_levenshtein(name, e.as_str()), e))
        .filter(|(score, _)| *score >= 0.6)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match close {
        Some((_, e)) => format!(
            "unknown hook event {name:?} in hooks: config — did you mean {:?}?",
            e.as_str()
        ),
        None => format!(
            "unknown hook event {name:?} in hooks: config (valid: {})",
            HookEvent::names()
        ),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "mapping",
    }
}
