//! The v18 one-time backfill of gateway metadata from `sessions/sessions.json`, which lives in
//! the same Hermes home directory as `state.db`.

use std::path::Path;

use rusqlite::Connection;
use serde_json::Value;

/// Copies session_key / chat / display metadata from `<db dir>/sessions/sessions.json` into
/// NULL columns. A missing or unreadable file is not an error.
pub(crate) fn backfill_gateway_metadata(
    conn: &Connection,
    db_path: &Path,
) -> Result<(), rusqlite::Error> {
    let Some(dir) = db_path.parent() else {
        return Ok(());
    };
    let Ok(text) = std::fs::read_to_string(dir.join("sessions").join("sessions.json")) else {
        return Ok(());
    };
    let Ok(Value::Object(entries)) = serde_json::from_str::<Value>(&text) else {
        return Ok(());
    };
    let mut stmt = conn.prepare(
        "UPDATE sessions SET session_key = COALESCE(session_key, ?1), \
         chat_id = COALESCE(chat_id, ?2), chat_type = COALESCE(chat_type, ?3), \
         thread_id = COALESCE(thread_id, ?4), display_name = COALESCE(display_name, ?5), \
         origin_json = COALESCE(origin_json, ?6), expiry_finalized = CASE \
         WHEN COALESCE(expiry_finalized, 0) = 0 AND ?7 = 1 THEN 1 ELSE expiry_finalized END \
         WHERE id = ?8",
    )?;
    for (key, entry) in &entries {
        if key.starts_with('_') {
            continue;
        }
        let Value::Object(entry) = entry else {
            continue;
        };
        let session_id = match entry.get("session_id") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => continue,
        };
        let text = |v: Option<&Value>| match v {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        let truthy = |v: Option<&Value>| match v {
            Some(Value::Bool(b)) => *b,
            Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
            Some(Value::String(s)) => !s.is_empty(),
            Some(Value::Array(a)) => !a.is_empty(),
            Some(Value::Object(o)) => !o.is_empty(),
            _ => false,
        };
        let origin = entry.get("origin").and_then(Value::as_object);
        let session_key = text(entry.get("session_key"))
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| key.clone());
        let origin_json = match origin {
            Some(o) => super::pyjson::dumps(o, "origin").ok(),
            None => None,
        };
        let finalized =
            truthy(entry.get("expiry_finalized")) || truthy(entry.get("memory_flushed"));
        stmt.execute(rusqlite::params![
            session_key,
            origin.and_then(|o| text(o.get("chat_id"))),
            text(entry.get("chat_type")),
            origin.and_then(|o| text(o.get("thread_id"))),
            text(entry.get("display_name")),
            origin_json,
            i64::from(finalized),
            session_id,
        ])?;
    }
    Ok(())
}
