//! The smaller pages: the header's overview, skills, MCP servers and the
//! log tail.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State as Extract};
use hermes_state::skills::SkillStore;
use hermes_tools::Tool;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::State;
use crate::api::{ApiError, ApiResult, blocking};

/// `GET /api/overview`: version, home, store, model in use, gateway.
pub(crate) async fn overview(Extract(state): Extract<Arc<State>>) -> ApiResult {
    let setup = state.manager.services().setup();
    let (provider, model) = setup
        .endpoint(None, None)
        .map_or((None, None), |ep| (Some(ep.provider), ep.model));
    let store = if state.manager.services().shared().is_some() {
        "postgresql"
    } else {
        "sqlite"
    };
    Ok(Json(json!({
        "version": state.config.version,
        "home": setup.home.root().display().to_string(),
        "store": store,
        "provider": provider,
        "model": model,
        "gateway_running": hermes_gateway::lock::running_pid(setup.home.root()).is_some(),
    })))
}

/// `GET /api/skills`.
pub(crate) async fn skills(Extract(state): Extract<Arc<State>>) -> ApiResult {
    let root = state.manager.services().setup().home.root().to_path_buf();
    blocking(move || {
        let mut found = SkillStore::for_home(&root).discover_all();
        found.sort_by(|a, b| (&a.category, &a.name).cmp(&(&b.category, &b.name)));
        let skills: Vec<Value> = found
            .into_iter()
            .map(|s| json!({"name": s.name, "description": s.description, "category": s.category}))
            .collect();
        Ok(Json(json!({"skills": skills})))
    })
    .await
}

/// `GET /api/skills/{name}`: its SKILL.md.
pub(crate) async fn skill(
    Extract(state): Extract<Arc<State>>,
    Path(name): Path<String>,
) -> ApiResult {
    let root = state.manager.services().setup().home.root().to_path_buf();
    blocking(move || {
        let content = SkillStore::for_home(&root)
            .read(&name, None)
            .map_err(|e| ApiError::not_found(e.to_string()))?;
        Ok(Json(json!({"name": name, "content": content})))
    })
    .await
}

/// `GET /api/mcp`: each configured server, its state and tools.
pub(crate) async fn mcp(Extract(state): Extract<Arc<State>>) -> ApiResult {
    let services = state.manager.services().clone();
    blocking(move || {
        let configured = hermes_session::mcp::config_of(services.setup());
        let hub = services.mcp();
        let statuses = hub.as_ref().map(|h| h.statuses()).unwrap_or_default();
        let tools = hub.as_ref().map(|h| h.tools()).unwrap_or_default();
        let servers: Vec<Value> = configured
            .servers
            .iter()
            .map(|server| {
                let status = statuses.iter().find(|s| s.name == server.name);
                let listed: Vec<Value> = tools
                    .iter()
                    .filter(|t| t.server_name() == server.name)
                    .map(|t| json!({"name": t.name(), "description": t.schema().description}))
                    .collect();
                json!({
                    "name": server.name,
                    "enabled": server.enabled,
                    "transport": status.map(|s| s.transport),
                    "status": status.map_or_else(
                        || if server.enabled { "not started".to_owned() } else { "disabled".to_owned() },
                        |s| s.state.clone(),
                    ),
                    "tools": listed,
                })
            })
            .collect();
        Ok(Json(json!({"servers": servers})))
    })
    .await
}

/// `?lines=&level=`.
#[derive(Deserialize)]
pub(crate) struct Tail {
    lines: Option<usize>,
    level: Option<String>,
}

const LEVELS: &[&str] = &["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"];

/// `GET /api/logs/{agent|errors|gateway}`: the file's last lines at or above
/// a level (a record's continuation lines go with it).
pub(crate) async fn logs(
    Extract(state): Extract<Arc<State>>,
    Path(file): Path<String>,
    Query(tail): Query<Tail>,
) -> ApiResult {
    if !matches!(file.as_str(), "agent" | "errors" | "gateway") {
        return Err(ApiError::not_found(format!(
            "no log '{file}' (agent, errors, gateway)"
        )));
    }
    let path = state
        .manager
        .services()
        .setup()
        .home
        .logs_dir()
        .join(format!("{file}.log"));
    let min = match tail
        .level
        .as_deref()
        .filter(|l| !l.is_empty() && *l != "all")
    {
        Some(level) => LEVELS
            .iter()
            .position(|l| l.eq_ignore_ascii_case(level))
            .ok_or_else(|| {
                ApiError::bad_request(format!(
                    "level '{level}' is not one of {}",
                    LEVELS.join(", ")
                ))
            })?,
        None => 0,
    };
    let wanted = tail.lines.unwrap_or(200).clamp(1, 2000);
    blocking(move || {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let mut kept = Vec::new();
        let mut keeping = true;
        for line in text.lines() {
            let level = line.split_whitespace().nth(2).unwrap_or("");
            if let Some(at) = LEVELS.iter().position(|l| *l == level) {
                keeping = at >= min;
            }
            if keeping {
                kept.push(line);
            }
        }
        let start = kept.len().saturating_sub(wanted);
        Ok(Json(json!({"lines": &kept[start..]})))
    })
    .await
}
