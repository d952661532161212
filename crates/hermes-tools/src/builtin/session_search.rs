//! `session_search`: recall past conversations from `state.db`.
//!
//! Four shapes, as in the reference: browse (no arguments), read (`session_id`),
//! scroll (`session_id` + `around_message_id`) and discover (`query`).

use std::path::PathBuf;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use hermes_protocol::ToolSchema;
use hermes_state::session_db::{SearchQuery, SearchSort, SessionDb, StoredMessage};
use hermes_state::store::HistoryReader;
use hermes_state::time::UtcTime;
use serde_json::{Map, Value, json};

use crate::{ParallelClass, Tool, ToolContext, ToolError, ToolResult, arg_i64, arg_str};

/// Searches the session store, skipping the session it runs in.
#[derive(Clone)]
pub struct SessionSearchTool {
    source: Source,
}

/// Where the history is read.
#[derive(Clone)]
enum Source {
    /// `state.db`, opened read-only for each call.
    File(PathBuf),
    /// The database replicas share.
    Shared(Arc<dyn HistoryReader + Send + Sync>),
}

impl std::fmt::Debug for SessionSearchTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.source {
            Source::File(p) => f.debug_tuple("SessionSearchTool").field(p).finish(),
            Source::Shared(_) => f.write_str("SessionSearchTool(shared)"),
        }
    }
}

impl SessionSearchTool {
    /// A tool reading `state.db` at `db_path`.
    pub fn new(db_path: impl Into<PathBuf>) -> Self {
        Self {
            source: Source::File(db_path.into()),
        }
    }

    /// A tool reading the shared database through `reader`.
    pub fn shared(reader: Arc<dyn HistoryReader + Send + Sync>) -> Self {
        Self {
            source: Source::Shared(reader),
        }
    }
}

impl Tool for SessionSearchTool {
    fn name(&self) -> &str {
        "session_search"
    }

    fn toolset(&self) -> &str {
        "session_search"
    }

    fn emoji(&self) -> &str {
        "🔍"
    }

    fn parallel_class(&self) -> ParallelClass {
        ParallelClass::ReadOnly
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "session_search".into(),
            description: include_str!("session_search_description.txt").trim().into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "Discovery: keywords, \"phrases\", prefix* or boolean (OR, NOT) to find in past sessions. Omit to browse recent sessions; ignored when session_id and around_message_id are given."},
                    "limit": {"type": "integer", "description": "Discovery: most sessions to return (default 3, max 10).", "default": 3},
                    "sort": {"type": "string", "enum": ["newest", "oldest"], "description": "Discovery: bias by time on top of relevance. Omit for relevance only; 'newest' for where things were left, 'oldest' for how they started."},
                    "session_id": {"type": "string", "description": "Read a whole session, or with around_message_id scroll inside it."},
                    "around_message_id": {"type": "integer", "description": "Scroll: message id to centre the window on (a match_message_id, or the first/last id of a previous window)."},
                    "window": {"type": "integer", "description": "Scroll: messages on each side of the anchor, 1 to 20 (default 5).", "default": 5},
                    "role_filter": {"type": "string", "description": "Comma-separated roles to search. Default 'user,assistant'; add 'tool' to search tool output."},
                    "profile": {"type": "string", "description": "Read another Hermes profile's history (read-only). Omit for the current profile."}
                },
                "required": []
            }),
        }
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            if arg_str(&args, "profile")
                .is_some_and(|p| !p.trim().is_empty() && p.trim() != "default")
            {
                return Err(ToolError::model(
                    "session_search: other profiles are not supported by this build; omit 'profile' to search this profile's history.",
                ));
            }
            let source = self.source.clone();
            let current = ctx.session_id.clone();
            tokio::task::spawn_blocking(move || match source {
                Source::File(path) => {
                    let db = SessionDb::open_read_only(&path).map_err(|e| {
                        ToolError::model(format!(
                            "session_search: the session store is unavailable: {e}"
                        ))
                    })?;
                    dispatch(&db, &args, &current)
                }
                Source::Shared(reader) => dispatch(reader.as_ref(), &args, &current),
            })
            .await
            .map_err(|e| ToolError::Fatal(format!("session_search task failed: {e}")))?
        })
    }
}

fn dispatch(db: &dyn HistoryReader, args: &Value, current: &str) -> ToolResult {
    let session_id = arg_str(args, "session_id")
        .map(str::trim)
        .filter(|s| !s.is_empty());
    let query = arg_str(args, "query")
        .map(str::trim)
        .filter(|s| !s.is_empty());
    match (session_id, arg_i64(args, "around_message_id"), query) {
        (Some(sid), Some(anchor), _) => {
            scroll(db, sid, anchor, arg_i64(args, "window").unwrap_or(5))
        }
        (Some(sid), None, None) => read(db, sid),
        (_, _, Some(q)) => discover(db, q, args, current),
        (None, _, None) => browse(db, arg_i64(args, "limit").unwrap_or(3), current),
    }
}

fn db_err(e: impl std::fmt::Display) -> ToolError {
    ToolError::model(format!("session_search failed: {e}"))
}

fn when(ts: f64) -> String {
    UtcTime::from_unix(ts as i64).long()
}

fn shape(m: &StoredMessage, anchor: Option<i64>) -> Value {
    let mut entry = Map::new();
    entry.insert("id".into(), json!(m.id));
    entry.insert("role".into(), json!(m.role));
    entry.insert("content".into(), json!(m.content));
    entry.insert("timestamp".into(), json!(m.timestamp));
    if let Some(t) = &m.tool_name {
        entry.insert("tool_name".into(), json!(t));
    }
    if let Some(t) = &m.tool_calls {
        entry.insert("tool_calls".into(), json!(t));
    }
    if let Some(t) = &m.tool_call_id {
        entry.insert("tool_call_id".into(), json!(t));
    }
    if anchor == Some(m.id) {
        entry.insert("anchor".into(), json!(true));
    }
    Value::Object(entry)
}

fn meta(db: &dyn HistoryReader, sid: &str) -> Result<Value, ToolError> {
    let row = db
        .session_row(sid)
        .map_err(db_err)?
        .ok_or_else(|| ToolError::model(format!("session_id not found: {sid}")))?;
    Ok(
        json!({"when": when(row.started_at), "source": row.source, "model": row.model, "title": row.title}),
    )
}

fn read(db: &dyn HistoryReader, sid: &str) -> ToolResult {
    const HEAD: usize = 20;
    const TAIL: usize = 10;
    let session_meta = meta(db, sid)?;
    let rows = db.messages(sid).map_err(db_err)?;
    let total = rows.len();
    let truncated = total > HEAD + TAIL;
    let shown: Vec<Value> = if truncated {
        rows[..HEAD]
            .iter()
            .chain(&rows[total - TAIL..])
            .map(|m| shape(m, None))
            .collect()
    } else {
        rows.iter().map(|m| shape(m, None)).collect()
    };
    let mut out = json!({"success": true, "mode": "read", "session_id": sid, "session_meta": session_meta,
        "message_count": total, "truncated": truncated, "messages": shown});
    if truncated {
        out["message"] = json!(format!(
            "Session has {total} messages; showing first {HEAD} + last {TAIL}. Pass around_message_id (any id above) to scroll the middle."
        ));
    }
    Ok(out.to_string())
}

fn scroll(db: &dyn HistoryReader, sid: &str, anchor: i64, window: i64) -> ToolResult {
    let window = window.clamp(1, 20) as usize;
    let session_meta = meta(db, sid)?;
    let rows = db.messages_around(sid, anchor, window).map_err(db_err)?;
    let Some(pos) = rows.iter().position(|m| m.id == anchor) else {
        return Err(ToolError::model(format!(
            "around_message_id {anchor} not in session_id {sid}"
        )));
    };
    Ok(
        json!({"success": true, "mode": "scroll", "session_id": sid, "around_message_id": anchor,
        "session_meta": session_meta, "window": window,
        "messages": rows.iter().map(|m| shape(m, Some(anchor))).collect::<Vec<_>>(),
        "messages_before": pos, "messages_after": rows.len() - pos - 1})
        .to_string(),
    )
}

fn browse(db: &dyn HistoryReader, limit: i64, current: &str) -> ToolResult {
    let limit = limit.clamp(1, 50) as usize;
    let rows = db.recent_sessions(limit + 1).map_err(db_err)?;
    let results: Vec<Value> = rows
        .into_iter()
        .filter(|s| s.id != current && s.parent_session_id.is_none())
        .take(limit)
        .map(|s| json!({"session_id": s.id, "title": s.title, "source": s.source, "started_at": s.started_at,
            "last_active": s.last_active, "message_count": s.message_count, "preview": s.preview}))
        .collect();
    let count = results.len();
    Ok(json!({"success": true, "mode": "browse", "results": results, "count": count,
        "message": format!("Showing {count} most recent sessions. Pass query= to search, or session_id + around_message_id to scroll.")})
    .to_string())
}

/// The lineage root of a session (its first ancestor), so children dedupe with parents.
fn root_of(db: &dyn HistoryReader, sid: &str) -> String {
    let mut id = sid.to_owned();
    for _ in 0..32 {
        match db
            .session_row(&id)
            .ok()
            .flatten()
            .and_then(|r| r.parent_session_id)
        {
            Some(parent) => id = parent,
            None => break,
        }
    }
    id
}

fn discover(db: &dyn HistoryReader, query: &str, args: &Value, current: &str) -> ToolResult {
    let limit = arg_i64(args, "limit").unwrap_or(3).clamp(1, 10) as usize;
    let roles: Vec<String> = arg_str(args, "role_filter")
        .unwrap_or("user,assistant")
        .split(',')
        .map(|r| r.trim().to_owned())
        .filter(|r| !r.is_empty())
        .collect();
    let sort = match arg_str(args, "sort") {
        Some("newest") => SearchSort::Newest,
        Some("oldest") => SearchSort::Oldest,
        _ => SearchSort::Relevance,
    };
    let hits = db
        .search(&SearchQuery {
            limit: 100,
            sort,
            role_filter: roles,
            ..SearchQuery::new(query)
        })
        .map_err(db_err)?;
    let current_root = root_of(db, current);
    let mut seen: Vec<String> = Vec::new();
    let mut results = Vec::new();
    for hit in hits {
        if results.len() >= limit {
            break;
        }
        let root = root_of(db, &hit.session_id);
        if hit.session_id == current || root == current_root || seen.contains(&root) {
            continue;
        }
        seen.push(root);
        let all = db.messages(&hit.session_id).map_err(db_err)?;
        let talk: Vec<&StoredMessage> = all
            .iter()
            .filter(|m| m.role == "user" || m.role == "assistant")
            .collect();
        let around = db
            .messages_around(&hit.session_id, hit.message_id, 5)
            .map_err(db_err)?;
        let pos = around
            .iter()
            .position(|m| m.id == hit.message_id)
            .unwrap_or(0);
        results.push(json!({
            "session_id": hit.session_id,
            "when": when(all.first().map_or(hit.timestamp, |m| m.timestamp)),
            "source": hit.session_source,
            "model": hit.model.unwrap_or_else(|| "unknown".into()),
            "title": hit.session_title,
            "matched_role": hit.role,
            "match_message_id": hit.message_id,
            "snippet": hit.snippet,
            "bookend_start": talk.iter().take(3).map(|m| shape(m, None)).collect::<Vec<_>>(),
            "messages": around.iter().map(|m| shape(m, Some(hit.message_id))).collect::<Vec<_>>(),
            "bookend_end": talk.iter().rev().take(3).rev().map(|m| shape(m, None)).collect::<Vec<_>>(),
            "messages_before": pos,
            "messages_after": around.len().saturating_sub(pos + 1),
        }));
    }
    let count = results.len();
    let mut out = json!({"success": true, "mode": "discover", "query": query, "results": results, "count": count});
    if count == 0 {
        out["message"] = json!("No matching sessions found.");
    }
    Ok(out.to_string())
}

#[cfg(test)]
#[path = "session_search_tests.rs"]
mod tests;
