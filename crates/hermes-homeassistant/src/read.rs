//! The read-only tools: entities, one entity's state, the services.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use hermes_protocol::ToolSchema;
use hermes_tools::{Tool, ToolContext, ToolError, ToolResult};
use serde_json::{Map, Value, json};

use crate::{Client, is_entity_id, result};

const LIST_TIMEOUT: Duration = Duration::from_secs(15);
const STATE_TIMEOUT: Duration = Duration::from_secs(10);

/// `ha_list_entities`.
#[derive(Debug)]
pub struct ListEntitiesTool(pub(crate) Arc<Client>);

/// `ha_get_state`.
#[derive(Debug)]
pub struct GetStateTool(pub(crate) Arc<Client>);

/// `ha_list_services`.
#[derive(Debug)]
pub struct ListServicesTool(pub(crate) Arc<Client>);

fn text_arg<'a>(args: &'a Value, key: &str) -> &'a str {
    args[key].as_str().map_or("", str::trim)
}

/// Entities kept by the domain and area filters, trimmed to id, state and name.
fn filter_entities(states: &Value, domain: &str, area: &str) -> Value {
    let prefix = format!("{domain}.");
    let area = area.to_lowercase();
    let entities: Vec<Value> = states
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| {
            let id = s["entity_id"].as_str().unwrap_or_default();
            domain.is_empty() || id.starts_with(&prefix)
        })
        .filter(|s| {
            let attrs = &s["attributes"];
            area.is_empty()
                || ["friendly_name", "area"].iter().any(|k| {
                    attrs[*k]
                        .as_str()
                        .is_some_and(|v| v.to_lowercase().contains(&area))
                })
        })
        .map(|s| {
            json!({
                "entity_id": s["entity_id"],
                "state": s["state"],
                "friendly_name": s["attributes"]["friendly_name"].as_str().unwrap_or(""),
            })
        })
        .collect();
    json!({"count": entities.len(), "entities": entities})
}

/// Services by domain with each service's description and fields' descriptions.
fn shape_services(all: &Value, domain: &str) -> Value {
    let domains: Vec<Value> = all
        .as_array()
        .into_iter()
        .flatten()
        .filter(|d| domain.is_empty() || d["domain"].as_str() == Some(domain))
        .map(|d| {
            let mut services = Map::new();
            for (name, svc) in d["services"].as_object().into_iter().flatten() {
                let mut entry = Map::new();
                entry.insert(
                    "description".into(),
                    json!(svc["description"].as_str().unwrap_or("")),
                );
                let fields: Map<String, Value> = svc["fields"]
                    .as_object()
                    .into_iter()
                    .flatten()
                    .filter(|(_, f)| f.is_object())
                    .map(|(k, f)| (k.clone(), json!(f["description"].as_str().unwrap_or(""))))
                    .collect();
                if !fields.is_empty() {
                    entry.insert("fields".into(), Value::Object(fields));
                }
                services.insert(name.clone(), Value::Object(entry));
            }
            json!({"domain": d["domain"], "services": services})
        })
        .collect();
    json!({"count": domains.len(), "domains": domains})
}

impl Tool for ListEntitiesTool {
    ha_tool_basics!("ha_list_entities", hermes_tools::ParallelClass::ReadOnly);
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "ha_list_entities".into(),
            description: "List Home Assistant entities. Optionally filter by domain (light, switch, climate, sensor, binary_sensor, cover, fan, etc.) or by area name (living room, kitchen, bedroom, etc.).".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "domain": {"type": "string", "description": "Entity domain to filter by (e.g. 'light', 'switch', 'climate', 'sensor', 'binary_sensor', 'cover', 'fan', 'media_player'). Omit to list all entities."},
                    "area": {"type": "string", "description": "Area/room name to filter by (e.g. 'living room', 'kitchen'). Matches against entity friendly names. Omit to list all."}
                }
            }),
        }
    }
    fn call<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let states = self
                .0
                .request("/api/states", None, LIST_TIMEOUT)
                .await
                .map_err(|e| ToolError::model(format!("Failed to list entities: {e}")))?;
            Ok(result(filter_entities(
                &states,
                text_arg(&args, "domain"),
                text_arg(&args, "area"),
            )))
        })
    }
}

impl Tool for GetStateTool {
    ha_tool_basics!("ha_get_state", hermes_tools::ParallelClass::ReadOnly);
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "ha_get_state".into(),
            description: "Get the detailed state of a single Home Assistant entity, including all attributes (brightness, color, temperature setpoint, sensor readings, etc.).".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "entity_id": {"type": "string", "description": "The entity ID to query (e.g. 'light.living_room', 'climate.thermostat', 'sensor.temperature')."}
                },
                "required": ["entity_id"]
            }),
        }
    }
    fn call<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let id = text_arg(&args, "entity_id");
            if id.is_empty() {
                return Err(ToolError::model("Missing required parameter: entity_id"));
            }
            if !is_entity_id(id) {
                return Err(ToolError::model(format!("Invalid entity_id format: {id}")));
            }
            let s = self
                .0
                .request(&format!("/api/states/{id}"), None, STATE_TIMEOUT)
                .await
                .map_err(|e| ToolError::model(format!("Failed to get state for {id}: {e}")))?;
            Ok(result(json!({
                "entity_id": s["entity_id"],
                "state": s["state"],
                "attributes": if s["attributes"].is_object() { s["attributes"].clone() } else { json!({}) },
                "last_changed": s["last_changed"],
                "last_updated": s["last_updated"],
            })))
        })
    }
}

impl Tool for ListServicesTool {
    ha_tool_basics!("ha_list_services", hermes_tools::ParallelClass::ReadOnly);
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "ha_list_services".into(),
            description: "List available Home Assistant services (actions) for device control. Shows what actions can be performed on each device type and what parameters they accept. Use this to discover how to control devices found via ha_list_entities.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "domain": {"type": "string", "description": "Filter by domain (e.g. 'light', 'climate', 'switch'). Omit to list services for all domains."}
                }
            }),
        }
    }
    fn call<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let all = self
                .0
                .request("/api/services", None, LIST_TIMEOUT)
                .await
                .map_err(|e| ToolError::model(format!("Failed to list services: {e}")))?;
            Ok(result(shape_services(&all, text_arg(&args, "domain"))))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entities_filter_by_domain_and_area() {
        let states = json!([
            {"entity_id": "light.kitchen", "state": "on", "attributes": {"friendly_name": "Kitchen Light"}},
            {"entity_id": "light.bed", "state": "off", "attributes": {"friendly_name": "Bed", "area": "Bedroom"}},
            {"entity_id": "switch.kitchen_fan", "state": "off", "attributes": {}}
        ]);
        let lights = filter_entities(&states, "light", "");
        assert_eq!(lights["count"], 2);
        let bedroom = filter_entities(&states, "", "bedroom");
        assert_eq!(bedroom["entities"][0]["entity_id"], "light.bed");
        assert_eq!(
            filter_entities(&states, "switch", "")["entities"][0]["friendly_name"],
            ""
        );
    }

    #[test]
    fn services_keep_descriptions_only() {
        let all = json!([{"domain": "light", "services": {"turn_on": {"name": "Turn on",
            "description": "Turns it on", "fields": {"brightness": {"description": "0-255", "selector": {}}, "x": 1}}}},
            {"domain": "switch", "services": {"toggle": {"description": "Toggles"}}}]);
        let shaped = shape_services(&all, "light");
        assert_eq!(
            shaped,
            json!({"count": 1, "domains": [{"domain": "light", "services": {"turn_on":
                {"description": "Turns it on", "fields": {"brightness": "0-255"}}}}]})
        );
        assert!(
            shape_services(&all, "")["domains"][1]["services"]["toggle"]
                .get("fields")
                .is_none()
        );
    }
}
