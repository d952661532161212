//! `ha_call_service`: a service call that changes something in the house.
//! Domains that run code on the Home Assistant host are refused; those that
//! open the house (locks, alarms, covers) need the user's approval.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use hermes_protocol::ToolSchema;
use hermes_tools::{Tool, ToolContext, ToolError, ToolResult};
use serde_json::{Map, Value, json};

use crate::{Client, is_entity_id, is_name, result};

const CALL_TIMEOUT: Duration = Duration::from_secs(15);

/// Domains whose services run commands or scripts on the Home Assistant host.
const BLOCKED_DOMAINS: [&str; 6] = [
    "command_line",
    "hassio",
    "pyscript",
    "python_script",
    "rest_command",
    "shell_command",
];

/// Domains whose services unlock doors, disarm alarms or open covers.
const GUARDED_DOMAINS: [&str; 3] = ["lock", "alarm_control_panel", "cover"];

/// `ha_call_service`.
#[derive(Debug)]
pub struct CallServiceTool(pub(crate) Arc<Client>);

/// Python's `repr` of a string, as the reference quotes bad names.
fn quoted(text: &str) -> String {
    if text.contains('\'') && !text.contains('"') {
        format!("\"{text}\"")
    } else {
        format!("'{}'", text.replace('\'', "\\'"))
    }
}

/// The request body: `data` (an object, or JSON text) with `entity_id` over it.
fn body(args: &Value, entity: &str) -> Result<Map<String, Value>, ToolError> {
    let mut data = match &args["data"] {
        Value::Object(map) => map.clone(),
        Value::String(text) if text.trim().is_empty() => Map::new(),
        Value::String(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => {
                return Err(ToolError::model(
                    "Invalid JSON string in 'data' parameter: expected an object",
                ));
            }
            Err(e) => {
                return Err(ToolError::model(format!(
                    "Invalid JSON string in 'data' parameter: {e}"
                )));
            }
        },
        _ => Map::new(),
    };
    if !entity.is_empty() {
        data.insert("entity_id".into(), json!(entity));
    }
    Ok(data)
}

impl Tool for CallServiceTool {
    ha_tool_basics!("ha_call_service", hermes_tools::ParallelClass::Exclusive);
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "ha_call_service".into(),
            description: "Call a Home Assistant service to control a device. Use ha_list_services to discover available services and their parameters for each domain.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "domain": {"type": "string", "description": "Service domain (e.g. 'light', 'switch', 'climate', 'cover', 'media_player', 'fan', 'scene', 'script')."},
                    "service": {"type": "string", "description": "Service name (e.g. 'turn_on', 'turn_off', 'toggle', 'set_temperature', 'set_hvac_mode', 'open_cover', 'close_cover', 'set_volume_level')."},
                    "entity_id": {"type": "string", "description": "Target entity ID (e.g. 'light.living_room'). Some services (like scene.turn_on) may not need this."},
                    "data": {"type": "string", "description": "Additional service data as a JSON string. Examples: {\"brightness\": 255, \"color_name\": \"blue\"} for lights, {\"temperature\": 22, \"hvac_mode\": \"heat\"} for climate, {\"volume_level\": 0.5} for media players."}
                },
                "required": ["domain", "service"]
            }),
        }
    }
    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let text = |k: &str| args[k].as_str().map_or("", str::trim).to_owned();
            let (domain, service, entity) = (text("domain"), text("service"), text("entity_id"));
            if domain.is_empty() || service.is_empty() {
                return Err(ToolError::model(
                    "Missing required parameters: domain and service",
                ));
            }
            if !is_name(&domain) {
                return Err(ToolError::model(format!(
                    "Invalid domain format: {}",
                    quoted(&domain)
                )));
            }
            if !is_name(&service) {
                return Err(ToolError::model(format!(
                    "Invalid service format: {}",
                    quoted(&service)
                )));
            }
            if BLOCKED_DOMAINS.contains(&domain.as_str()) {
                return Ok(json!({"error": format!(
                    "Service domain '{domain}' is blocked for security. Blocked domains: {}",
                    BLOCKED_DOMAINS.join(", ")
                )})
                .to_string());
            }
            if !entity.is_empty() && !is_entity_id(&entity) {
                return Err(ToolError::model(format!(
                    "Invalid entity_id format: {entity}"
                )));
            }
            let data = body(&args, &entity)?;
            if GUARDED_DOMAINS.contains(&domain.as_str()) {
                let target = if entity.is_empty() {
                    "(no entity)"
                } else {
                    &entity
                };
                let subject = format!("ha_call_service {domain}.{service} {target}");
                if let Err(refused) = ctx
                    .approve_action(&subject, "changes a lock, alarm or cover in Home Assistant")
                    .await
                {
                    return Ok(refused);
                }
            }
            let answer = self
                .0
                .request(
                    &format!("/api/services/{domain}/{service}"),
                    Some(&Value::Object(data)),
                    CALL_TIMEOUT,
                )
                .await
                .map_err(|e| ToolError::model(format!("Failed to call {domain}.{service}: {e}")))?;
            let affected: Vec<Value> = answer
                .as_array()
                .into_iter()
                .flatten()
                .map(|s| {
                    json!({
                        "entity_id": s["entity_id"].as_str().unwrap_or(""),
                        "state": s["state"].as_str().unwrap_or(""),
                    })
                })
                .collect();
            Ok(result(json!({
                "success": true,
                "service": format!("{domain}.{service}"),
                "affected_entities": affected,
            })))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_is_an_object_or_json_text_and_the_entity_wins() {
        let args = json!({"data": "{\"brightness\": 255, \"entity_id\": \"light.x\"}"});
        let b = body(&args, "light.y").unwrap();
        assert_eq!(
            Value::Object(b),
            json!({"brightness": 255, "entity_id": "light.y"})
        );
        assert!(body(&json!({"data": "{nope"}), "").is_err());
        assert!(body(&json!({"data": "  "}), "").unwrap().is_empty());
        assert_eq!(quoted("a'b"), "\"a'b\"");
    }
}
