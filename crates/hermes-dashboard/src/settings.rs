//! The config page: config.yaml's values (and where the model in use comes
//! from), set and unset with `hermes config set`'s rules, and `.env`'s
//! variables — named, never shown: a secret's value never reaches the browser.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State as Extract};
use hermes_state::config_set::{self, KeyCheck, SetError, Written};
use serde_json::{Value, json};

use crate::State;
use crate::api::{ApiError, ApiResult, blocking, required};

/// Dotted keys and values of a tree, leaves only (lists are leaves).
fn flatten(prefix: &str, value: &Value, out: &mut Vec<(String, Value)>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, out);
            }
        }
        _ if !prefix.is_empty() => out.push((prefix.to_owned(), value.clone())),
        _ => {}
    }
}

/// A value as the page may see it: secrets under secret-looking names hidden.
fn shown(key: &str, value: Value) -> Value {
    match value {
        Value::String(s) if config_set::is_secret_name(key) && !s.is_empty() => {
            Value::String(format!("set ({} characters, hidden)", s.chars().count()))
        }
        other => other,
    }
}

/// `GET /api/config`.
pub(crate) async fn show(Extract(state): Extract<Arc<State>>) -> ApiResult {
    let setup = state.manager.services().setup().clone();
    blocking(move || {
        let tree = config_set::user_tree(&setup.home).map_err(ApiError::internal)?;
        let mut flat = Vec::new();
        flatten("", &tree, &mut flat);
        let mut entries: Vec<Value> = flat
            .into_iter()
            .map(|(key, value)| {
                let value = shown(&key, value);
                json!({"key": key, "value": value, "source": "config.yaml"})
            })
            .collect();
        // What this process runs on, whatever set it (flags aside).
        if let Ok(ep) = setup.endpoint(None, None) {
            for (key, value) in [
                ("model.provider (in use)", Value::from(ep.provider.clone())),
                ("model.default (in use)", json!(ep.model)),
                ("model.base_url (in use)", Value::from(ep.base_url.clone())),
            ] {
                entries.push(json!({"key": key, "value": value, "source": "resolved"}));
            }
        }
        let env_path = setup.home.env_file();
        // Read fresh (the page edits it), names in file order, values never sent.
        let mut fresh = hermes_state::Env::from_pairs(std::iter::empty::<(String, String)>());
        let mut names = fresh.load_dotenv(&env_path).unwrap_or_default();
        names.dedup();
        let env: Vec<Value> = names
            .into_iter()
            .map(|name| {
                let len = fresh.get(&name).map_or(0, |v| v.chars().count());
                json!({"name": name, "set": len > 0,
                       "masked": if len > 0 { format!("•••• ({len} characters)") } else { String::new() }})
            })
            .collect();
        Ok(Json(json!({"entries": entries, "env": env})))
    })
    .await
}

/// What a saved value will not do (a key Hermes never reads, a backend that
/// cannot run yet), as `hermes config set` warns.
fn warnings(setup: &hermes_session::Setup, key: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let KeyCheck::Unknown(suggestion) = config_set::check_key(key) {
        out.push(match suggestion {
            Some(near) => format!(
                "'{key}' is not a recognized config key — saved anyway, but Hermes will not read it. Did you mean: {near}?"
            ),
            None => format!(
                "'{key}' is not a recognized config key — saved anyway, but Hermes will not read it."
            ),
        });
    }
    if key.starts_with("terminal.")
        && let Ok(fresh) = hermes_session::Setup::load(setup.env.clone(), false)
    {
        out.extend(hermes_session::environment::problems(&fresh));
    }
    out
}

fn set_error(e: SetError) -> ApiError {
    match e {
        SetError::Refused(why) => ApiError::bad_request(format!("{why} Nothing was changed.")),
        SetError::EmptyKey => ApiError::bad_request(e.to_string()),
        other => ApiError::internal(other),
    }
}

/// `POST /api/config {key, value}`: as `hermes config set KEY VALUE`.
pub(crate) async fn set(Extract(state): Extract<Arc<State>>, Json(body): Json<Value>) -> ApiResult {
    let setup = state.manager.services().setup().clone();
    let key = required(&body, "key")?.to_owned();
    let raw = match body.get("value") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => return Err(ApiError::bad_request("'value' is required")),
        Some(other) => other.to_string(),
    };
    blocking(
        move || match config_set::set(&setup.home, &key, &raw).map_err(set_error)? {
            Written::Env(path, name) => Ok(Json(json!({
                "file": path.display().to_string(), "key": name, "warnings": [],
            }))),
            Written::Config(path, key, value) => Ok(Json(json!({
                "file": path.display().to_string(), "key": key,
                "value": shown(&key, value), "warnings": warnings(&setup, &key),
            }))),
        },
    )
    .await
}

/// `DELETE /api/config/{key}`.
pub(crate) async fn unset(
    Extract(state): Extract<Arc<State>>,
    Path(key): Path<String>,
) -> ApiResult {
    let home = state.manager.services().setup().home.clone();
    blocking(
        move || match config_set::unset(&home, &key).map_err(set_error)? {
            Some(path) => Ok(Json(
                json!({"file": path.display().to_string(), "key": key}),
            )),
            None => Err(ApiError::not_found(format!("{key} is not set"))),
        },
    )
    .await
}

/// A variable name `.env` may hold.
fn variable(name: &str) -> Result<String, ApiError> {
    let upper = name.trim().to_ascii_uppercase();
    let valid = !upper.is_empty()
        && !upper.starts_with(|c: char| c.is_ascii_digit())
        && upper
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    if valid {
        Ok(upper)
    } else {
        Err(ApiError::bad_request(format!(
            "'{name}' is not a variable name (letters, digits and _)"
        )))
    }
}

/// `POST /api/env {name, value}`: the value is written, never echoed.
pub(crate) async fn set_env(
    Extract(state): Extract<Arc<State>>,
    Json(body): Json<Value>,
) -> ApiResult {
    let path = state.manager.services().setup().home.env_file();
    let name = variable(required(&body, "name")?)?;
    let value = body
        .get("value")
        .and_then(Value::as_str)
        .filter(|v| !v.is_empty())
        .ok_or_else(|| ApiError::bad_request("'value' is required (unset removes a variable)"))?
        .to_owned();
    if value.contains(['\n', '\r']) {
        return Err(ApiError::bad_request("a value is one line"));
    }
    blocking(move || {
        hermes_state::env_file::set_var(&path, &name, Some(&value)).map_err(ApiError::internal)?;
        Ok(Json(
            json!({"file": path.display().to_string(), "name": name}),
        ))
    })
    .await
}

/// `DELETE /api/env/{name}`.
pub(crate) async fn unset_env(
    Extract(state): Extract<Arc<State>>,
    Path(name): Path<String>,
) -> ApiResult {
    let path = state.manager.services().setup().home.env_file();
    let name = variable(&name)?;
    blocking(move || {
        if hermes_state::env_file::set_var(&path, &name, None).map_err(ApiError::internal)? {
            Ok(Json(
                json!({"file": path.display().to_string(), "name": name}),
            ))
        } else {
            Err(ApiError::not_found(format!("{name} is not in .env")))
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trees_flatten_to_dotted_leaves_and_secrets_are_hidden() {
        let mut out = Vec::new();
        flatten(
            "",
            &json!({"agent": {"max_turns": 5}, "model": {"api_key": "sk-secret-value"}, "toolsets": ["a"]}),
            &mut out,
        );
        let keys: Vec<&str> = out.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["agent.max_turns", "model.api_key", "toolsets"]);
        let hidden = shown("model.api_key", out[1].1.clone());
        assert!(!hidden.to_string().contains("secret"), "{hidden}");
    }
}
