//! The gateway page: whether a gateway runs for this home and what it
//! serves, and the pairing requests to approve and the users to revoke.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State as Extract};
use hermes_gateway::messaging::config::MessagingConfig;
use hermes_gateway::messaging::pairing::{Approval, Approver, PairingStore};
use serde_json::{Value, json};

use crate::State;
use crate::api::{ApiError, ApiResult, blocking, required};

fn pairing_store(state: &State) -> Result<PairingStore, ApiError> {
    let docs = state
        .manager
        .services()
        .documents()
        .map_err(ApiError::unavailable)?;
    Ok(PairingStore::with_documents(docs))
}

/// `GET /api/gateway`.
pub(crate) async fn status(Extract(state): Extract<Arc<State>>) -> ApiResult {
    let setup = state.manager.services().setup().clone();
    let store = pairing_store(&state)?;
    blocking(move || {
        let env = |name: &str| setup.env.get(name).map(str::to_owned);
        let pid = hermes_gateway::lock::running_pid(setup.home.root());
        let messaging = MessagingConfig::read(&setup.config.raw, &env);
        // What the running gateway last wrote about each platform.
        let live = hermes_gateway::status::read(setup.home.root())
            .filter(|_| pid.is_some())
            .unwrap_or(Value::Null);
        // Those configured here and those the gateway runs (its tokens may
        // come from its own environment rather than .env).
        let mut names: Vec<String> = messaging
            .platforms
            .iter()
            .map(|p| p.name.to_owned())
            .collect();
        for name in live["platforms"]
            .as_object()
            .into_iter()
            .flat_map(|m| m.keys())
        {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
        let platforms: Vec<Value> = names
            .iter()
            .map(|name| {
                let state = &live["platforms"][name.as_str()];
                // Who may talk to it without pairing (`<PLATFORM>_ALLOWED_USERS`).
                let allowed = messaging
                    .platforms
                    .iter()
                    .find(|p| p.name == name)
                    .map(|p| {
                        let a = &p.access;
                        json!({"everyone": a.allow_all_platform || a.allow_all_gateway,
                               "users": a.users.iter().chain(&a.gateway_users).collect::<Vec<_>>()})
                    });
                json!({"name": name, "configured": true, "state": state["state"],
                       "error": state["error_message"], "updated_at": state["updated_at"],
                       "last_message_at": state["last_message_at"], "allowed": allowed})
            })
            .collect();
        let api = match hermes_gateway::config::from_tree(&setup.config.raw, &env) {
            Ok(Some(api)) => json!({"enabled": true,
                                     "address": format!("http://{}:{}/v1", api.host, api.port)}),
            Ok(None) => json!({"enabled": false, "address": null}),
            Err(problem) => json!({"enabled": false, "address": null, "problem": problem}),
        };
        let pending: Vec<Value> = store
            .pending()
            .into_iter()
            .map(|p| {
                json!({"platform": p.platform, "code_hint": p.code_hint, "user_id": p.user_id,
                       "user_name": p.user_name, "age_secs": p.age_minutes * 60})
            })
            .collect();
        let approved: Vec<Value> = store
            .approved()
            .into_iter()
            .map(
                |u| json!({"platform": u.platform, "user_id": u.user_id, "user_name": u.user_name}),
            )
            .collect();
        Ok(Json(json!({
            "running": pid.is_some(), "pid": pid, "platforms": platforms, "api_server": api,
            "pairing": {"pending": pending, "approved": approved},
        })))
    })
    .await
}

/// Approves a code or revokes a user.
fn pairing_action(store: &PairingStore, action: &str, body: &Value) -> Result<Value, ApiError> {
    let platform = required(body, "platform")?.to_ascii_lowercase();
    match action {
        "approve" => {
            let code = required(body, "code")?.to_ascii_uppercase();
            match store
                .approve(&platform, &code, Approver::Owner)
                .map_err(ApiError::internal)?
            {
                Approval::Approved { user_id, user_name } => Ok(
                    json!({"approved": {"platform": platform, "user_id": user_id,
                                            "user_name": user_name}}),
                ),
                Approval::NotFound => Err(ApiError::not_found(format!(
                    "no pending code {code} on {platform} (codes expire after an hour)"
                ))),
                Approval::LockedOut(secs) => Err(ApiError::bad_request(format!(
                    "too many wrong codes: try again in {} s",
                    secs.ceil()
                ))),
            }
        }
        "revoke" => {
            let user_id = required(body, "user_id")?;
            if store
                .revoke(&platform, user_id)
                .map_err(ApiError::internal)?
            {
                Ok(json!({"revoked": {"platform": platform, "user_id": user_id}}))
            } else {
                Err(ApiError::not_found(format!(
                    "{user_id} is not approved on {platform}"
                )))
            }
        }
        other => Err(ApiError::not_found(format!("no pairing action '{other}'"))),
    }
}

/// `POST /api/gateway/pairing/{action}`.
pub(crate) async fn pairing(
    Extract(state): Extract<Arc<State>>,
    Path(action): Path<String>,
    Json(body): Json<Value>,
) -> ApiResult {
    let store = pairing_store(&state)?;
    blocking(move || pairing_action(&store, &action, &body).map(Json)).await
}
