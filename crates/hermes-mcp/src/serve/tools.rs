//! The ten tools of `hermes mcp serve`, with the reference's names,
//! parameters and JSON answers (pretty-printed as the reference prints them).

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::ErrorData;
use serde_json::{Value, json};

use super::HermesServer;
use super::index::{attachments, message_text};

fn int(args: &Value, key: &str, default: i64, min: i64, max: i64) -> i64 {
    let raw = match args.get(key) {
        Some(Value::Number(n)) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Some(Value::String(s)) => s.trim().parse().ok(),
        _ => None,
    };
    raw.unwrap_or(default).clamp(min, max)
}

fn text<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

fn schema(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required})
}

fn optional_string(title: &str) -> Value {
    json!({"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "title": title})
}

/// The tool list as `tools/list` returns it.
pub fn definitions() -> Value {
    let tool = |name: &str, description: &str, input: Value| json!({"name": name, "description": description, "inputSchema": input});
    json!([
        tool(
            "conversations_list",
            "List active messaging conversations across connected platforms.\n\nReturns conversations with their session keys (needed for messages_read), platform, chat type, display name, and last activity time.",
            schema(
                json!({
                    "platform": optional_string("Platform"),
                    "limit": {"type": "integer", "default": 50, "title": "Limit"},
                    "search": optional_string("Search"),
                }),
                &[]
            )
        ),
        tool(
            "conversation_get",
            "Get detailed info about one conversation by its session key.",
            schema(
                json!({"session_key": {"type": "string", "title": "Session Key"}}),
                &["session_key"]
            )
        ),
        tool(
            "messages_read",
            "Read recent messages from a conversation.\n\nReturns the message history in chronological order with role, content, and timestamp for each message.",
            schema(
                json!({
                    "session_key": {"type": "string", "title": "Session Key"},
                    "limit": {"type": "integer", "default": 50, "title": "Limit"},
                }),
                &["session_key"]
            )
        ),
        tool(
            "attachments_fetch",
            "List non-text attachments for a message in a conversation.\n\nExtracts images, media files, and other non-text content blocks from the specified message.",
            schema(
                json!({
                    "session_key": {"type": "string", "title": "Session Key"},
                    "message_id": {"type": "string", "title": "Message Id"},
                }),
                &["session_key", "message_id"]
            )
        ),
        tool(
            "events_poll",
            "Poll for new conversation events since a cursor position.\n\nReturns events that have occurred since the given cursor. Use the returned next_cursor value for subsequent polls.\n\nEvent types: message, approval_requested, approval_resolved",
            schema(
                json!({
                    "after_cursor": {"type": "integer", "default": 0, "title": "After Cursor"},
                    "session_key": optional_string("Session Key"),
                    "limit": {"type": "integer", "default": 20, "title": "Limit"},
                }),
                &[]
            )
        ),
        tool(
            "events_wait",
            "Wait for the next conversation event (long-poll).\n\nBlocks until a matching event arrives or the timeout expires. Use this for near-real-time event delivery without polling.",
            schema(
                json!({
                    "after_cursor": {"type": "integer", "default": 0, "title": "After Cursor"},
                    "session_key": optional_string("Session Key"),
                    "timeout_ms": {"type": "integer", "default": 30000, "title": "Timeout Ms"},
                }),
                &[]
            )
        ),
        tool(
            "messages_send",
            "Send a message to a platform conversation.\n\nThe target format is \"platform:chat_id\" — same format used by the channels_list tool. You can also use human-friendly channel names that will be resolved automatically.",
            schema(
                json!({
                    "target": {"type": "string", "title": "Target"},
                    "message": {"type": "string", "title": "Message"},
                }),
                &["target", "message"]
            )
        ),
        tool(
            "channels_list",
            "List available messaging channels and targets across platforms.\n\nReturns channels that you can send messages to. The target strings returned here can be used directly with the messages_send tool.",
            schema(json!({"platform": optional_string("Platform")}), &[])
        ),
        tool(
            "permissions_list_open",
            "List pending approval requests observed during this bridge session.\n\nReturns exec and plugin approval requests that the bridge has seen since it started. Approvals are live-session only — older approvals from before the bridge connected are not included.",
            schema(json!({}), &[])
        ),
        tool(
            "permissions_respond",
            "Respond to a pending approval request.",
            schema(
                json!({
                    "id": {"type": "string", "title": "Id"},
                    "decision": {"type": "string", "title": "Decision"},
                }),
                &["id", "decision"]
            )
        ),
    ])
}

/// Runs one tool; an unknown name is a protocol error, everything else an answer.
pub async fn call(
    server: &Arc<HermesServer>,
    name: &str,
    args: &Value,
) -> Result<String, ErrorData> {
    let blocking = |f: Box<dyn FnOnce(&HermesServer) -> Value + Send>| {
        let server = server.clone();
        async move {
            tokio::task::spawn_blocking(move || f(&server))
                .await
                .unwrap_or_else(|e| json!({"error": e.to_string()}))
        }
    };
    let args = args.clone();
    let value = match name {
        "conversations_list" => blocking(Box::new(move |s| conversations_list(s, &args))).await,
        "conversation_get" => blocking(Box::new(move |s| conversation_get(s, &args))).await,
        "messages_read" => blocking(Box::new(move |s| messages_read(s, &args))).await,
        "attachments_fetch" => blocking(Box::new(move |s| attachments_fetch(s, &args))).await,
        "channels_list" => blocking(Box::new(move |s| channels_list(s, &args))).await,
        "events_poll" => {
            let after = int(&args, "after_cursor", 0, 0, i64::MAX) as u64;
            let limit = int(&args, "limit", 20, 1, 200) as usize;
            let (events, next) = server.bridge.poll(after, text(&args, "session_key"), limit);
            let events: Vec<Value> = events.iter().map(|e| e.to_json()).collect();
            json!({"events": events, "next_cursor": next})
        }
        "events_wait" => {
            let after = int(&args, "after_cursor", 0, 0, i64::MAX) as u64;
            let timeout = int(&args, "timeout_ms", 30_000, 0, 300_000) as u64;
            match server
                .bridge
                .wait(
                    after,
                    text(&args, "session_key"),
                    Duration::from_millis(timeout),
                )
                .await
            {
                Some(event) => json!({"event": event.to_json()}),
                None => json!({"event": null, "reason": "timeout"}),
            }
        }
        "messages_send" => {
            if text(&args, "target").is_none() || text(&args, "message").is_none() {
                return Ok(json!({"error": "Both target and message are required"}).to_string());
            }
            // Sending needs a connected messaging platform, which lives in the
            // gateway; this build has none yet.
            return Ok(json!({"error": "Send message tool not available: no messaging platform is connected (the messaging gateway is not part of this build yet)"}).to_string());
        }
        "permissions_list_open" => {
            let approvals = server.bridge.open_approvals();
            json!({"count": approvals.len(), "approvals": approvals})
        }
        "permissions_respond" => {
            let decision = text(&args, "decision").unwrap_or("");
            if !matches!(decision, "allow-once" | "allow-always" | "deny") {
                return Ok(json!({"error": format!(
                    "Invalid decision: {decision}. Must be allow-once, allow-always, or deny"
                )})
                .to_string());
            }
            server
                .bridge
                .respond(text(&args, "id").unwrap_or(""), decision)
        }
        other => {
            return Err(ErrorData::invalid_params(
                format!("Unknown tool: {other}"),
                None,
            ));
        }
    };
    Ok(pretty(&value))
}

fn not_found(key: &str) -> Value {
    json!({"error": format!("Conversation not found: {key}")})
}

fn conversations_list(server: &HermesServer, args: &Value) -> Value {
    let limit = int(args, "limit", 50, 1, 200) as usize;
    let platform = text(args, "platform").map(str::to_lowercase);
    let search = text(args, "search").map(str::to_lowercase);
    let mut conversations: Vec<Value> = server
        .index
        .entries()
        .into_iter()
        .filter(|e| {
            let p = if e.platform.is_empty() { e.origin_text("platform") } else { e.platform.clone() };
            platform.as_ref().is_none_or(|want| p.to_lowercase() == *want)
        })
        .filter(|e| {
            search.as_ref().is_none_or(|q| {
                e.display_name.to_lowercase().contains(q)
                    || e.origin_text("chat_name").to_lowercase().contains(q)
                    || e.session_key.to_lowercase().contains(q)
            })
        })
        .map(|e| {
            json!({
                "session_key": e.session_key,
                "session_id": e.session_id,
                "platform": if e.platform.is_empty() { e.origin_text("platform") } else { e.platform.clone() },
                "chat_type": e.chat_type,
                "display_name": e.display_name,
                "chat_name": e.origin_text("chat_name"),
                "user_name": e.origin_text("user_name"),
                "updated_at": e.updated_at,
            })
        })
        .collect();
    conversations.sort_by(|a, b| b["updated_at"].as_str().cmp(&a["updated_at"].as_str()));
    conversations.truncate(limit);
    json!({"count": conversations.len(), "conversations": conversations})
}

fn conversation_get(server: &HermesServer, args: &Value) -> Value {
    let key = text(args, "session_key").unwrap_or("");
    let Some(e) = server.index.entry(key) else {
        return not_found(key);
    };
    json!({
        "session_key": key,
        "session_id": e.session_id,
        "platform": if e.platform.is_empty() { e.origin_text("platform") } else { e.platform.clone() },
        "chat_type": e.chat_type,
        "display_name": e.display_name,
        "user_name": e.origin_text("user_name"),
        "chat_name": e.origin_text("chat_name"),
        "chat_id": e.origin_text("chat_id"),
        "thread_id": e.origin.get("thread_id").cloned().unwrap_or(Value::Null),
        "updated_at": e.updated_at,
        "created_at": e.created_at,
        "input_tokens": e.input_tokens,
        "output_tokens": e.output_tokens,
        "total_tokens": e.input_tokens + e.output_tokens,
    })
}

fn messages_read(server: &HermesServer, args: &Value) -> Value {
    let key = text(args, "session_key").unwrap_or("");
    let limit = int(args, "limit", 50, 1, 200) as usize;
    let Some(e) = server.index.entry(key) else {
        return not_found(key);
    };
    let messages = match server.index.messages(&e.session_id) {
        Ok(m) => m,
        Err(err) => return json!({"error": err}),
    };
    let filtered: Vec<Value> = messages
        .iter()
        .filter(|m| m.role == "user" || m.role == "assistant")
        .filter_map(|m| {
            let content = message_text(m);
            (!content.is_empty()).then(|| {
                json!({
                    "id": m.id.to_string(),
                    "role": m.role,
                    "content": content.chars().take(2000).collect::<String>(),
                    "timestamp": m.timestamp,
                })
            })
        })
        .collect();
    let total = filtered.len();
    let recent = filtered[total.saturating_sub(limit)..].to_vec();
    json!({"session_key": key, "count": recent.len(), "total_in_session": total, "messages": recent})
}

fn attachments_fetch(server: &HermesServer, args: &Value) -> Value {
    let key = text(args, "session_key").unwrap_or("");
    let id = text(args, "message_id").unwrap_or("");
    let Some(e) = server.index.entry(key) else {
        return not_found(key);
    };
    let messages = match server.index.messages(&e.session_id) {
        Ok(m) => m,
        Err(err) => return json!({"error": err}),
    };
    let Some(msg) = messages.iter().find(|m| m.id.to_string() == id) else {
        return json!({"error": format!("Message not found: {id}")});
    };
    let found = attachments(msg);
    json!({"message_id": id, "count": found.len(), "attachments": found})
}

fn channels_list(server: &HermesServer, args: &Value) -> Value {
    let platform = text(args, "platform").map(str::to_lowercase);
    let directory = std::fs::read_to_string(server.hermes_home.join("channel_directory.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .filter(|d| d.as_object().is_some_and(|m| !m.is_empty()));
    let mut channels = Vec::new();
    match directory {
        None => {
            let mut seen = std::collections::HashSet::new();
            for e in server.index.entries() {
                let p = if e.platform.is_empty() {
                    e.origin_text("platform")
                } else {
                    e.platform.clone()
                };
                let chat_id = e.origin_text("chat_id");
                if p.is_empty() || chat_id.is_empty() {
                    continue;
                }
                if platform
                    .as_ref()
                    .is_some_and(|want| p.to_lowercase() != *want)
                {
                    continue;
                }
                let target = format!("{p}:{chat_id}");
                if !seen.insert(target.clone()) {
                    continue;
                }
                let name = if e.display_name.is_empty() {
                    e.origin_text("chat_name")
                } else {
                    e.display_name.clone()
                };
                channels.push(json!({"target": target, "platform": p, "name": name, "chat_type": e.chat_type}));
            }
        }
        Some(directory) => {
            if let Some(platforms) = directory.get("platforms").and_then(Value::as_object) {
                for (plat, list) in platforms {
                    if platform
                        .as_ref()
                        .is_some_and(|want| plat.to_lowercase() != *want)
                    {
                        continue;
                    }
                    for ch in list.as_array().into_iter().flatten() {
                        let id = ch.get("id").or_else(|| ch.get("chat_id"));
                        let id = match id {
                            Some(Value::String(s)) => s.clone(),
                            Some(Value::Null) | None => String::new(),
                            Some(other) => other.to_string(),
                        };
                        let target = if id.is_empty() {
                            plat.clone()
                        } else {
                            format!("{plat}:{id}")
                        };
                        let name = ch
                            .get("name")
                            .or_else(|| ch.get("display_name"))
                            .cloned()
                            .unwrap_or(json!(""));
                        let kind = ch.get("type").cloned().unwrap_or(json!(""));
                        channels.push(json!({"target": target, "platform": plat, "name": name, "chat_type": kind}));
                    }
                }
            }
        }
    }
    json!({"count": channels.len(), "channels": channels})
}
