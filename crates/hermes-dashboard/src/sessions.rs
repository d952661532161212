//! The sessions page: the list (a page at a time, so ten thousand sessions
//! cost no more than fifty), full-text search with the hits marked, a
//! transcript, rename, export (Markdown or JSONL) and delete — on whichever
//! store the home uses.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State as Extract};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use hermes_state::{ListFilter, SearchQuery, SessionRow, StoredMessage};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::State;
use crate::api::{ApiError, ApiResult, admin, blocking, required};

/// `?limit=&offset=&source=`.
#[derive(Deserialize)]
pub(crate) struct Page {
    limit: Option<usize>,
    offset: Option<usize>,
    source: Option<String>,
}

fn cost(row: &SessionRow) -> Option<f64> {
    row.actual_cost_usd.or(row.estimated_cost_usd)
}

/// `GET /api/sessions`: newest first, with tokens and cost.
pub(crate) async fn list(
    Extract(state): Extract<Arc<State>>,
    Query(page): Query<Page>,
) -> ApiResult {
    let admin = admin(&state)?;
    let limit = page.limit.unwrap_or(50).clamp(1, 500);
    blocking(move || {
        let mut rows = admin.list_sessions(&ListFilter {
            source: page.source.filter(|s| !s.is_empty()),
            limit: limit + 1,
            offset: page.offset.unwrap_or(0),
            ..ListFilter::default()
        })?;
        let has_more = rows.len() > limit;
        rows.truncate(limit);
        let mut sessions = Vec::with_capacity(rows.len());
        for s in rows {
            let row = admin.session_row(&s.id)?;
            sessions.push(json!({
                "id": s.id, "title": s.title, "source": s.source, "model": s.model,
                "started_at": s.started_at, "last_active": s.last_active,
                "message_count": s.message_count, "preview": s.preview,
                "cost_usd": row.as_ref().and_then(cost),
                "input_tokens": row.as_ref().map(|r| r.input_tokens),
                "output_tokens": row.as_ref().map(|r| r.output_tokens),
            }));
        }
        Ok(Json(json!({"sessions": sessions, "has_more": has_more})))
    })
    .await
}

/// `?q=`.
#[derive(Deserialize)]
pub(crate) struct Search {
    q: String,
}

/// A `>>>hit<<<` snippet as parts, so the page marks hits without HTML.
fn parts(snippet: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut rest = snippet;
    while let Some(start) = rest.find(">>>") {
        if start > 0 {
            out.push(json!({"text": &rest[..start], "hit": false}));
        }
        let after = &rest[start + 3..];
        let end = after.find("<<<").unwrap_or(after.len());
        out.push(json!({"text": &after[..end], "hit": true}));
        rest = after.get(end + 3..).unwrap_or("");
    }
    if !rest.is_empty() {
        out.push(json!({"text": rest, "hit": false}));
    }
    out
}

/// `GET /api/sessions/search?q=`: the best hits over every message.
pub(crate) async fn search(
    Extract(state): Extract<Arc<State>>,
    Query(search): Query<Search>,
) -> ApiResult {
    let admin = admin(&state)?;
    if search.q.trim().is_empty() {
        return Err(ApiError::bad_request("type something to search for"));
    }
    blocking(move || {
        let hits = admin.search(&SearchQuery {
            query: search.q,
            limit: 50,
            ..SearchQuery::default()
        })?;
        let results: Vec<Value> = hits
            .into_iter()
            .map(|h| {
                json!({
                    "session_id": h.session_id, "title": h.session_title,
                    "source": h.session_source, "model": h.model, "when": h.timestamp,
                    "role": h.role, "parts": parts(&h.snippet),
                })
            })
            .collect();
        Ok(Json(json!({"results": results})))
    })
    .await
}

fn message_json(m: &StoredMessage) -> Value {
    let calls: Vec<Value> = hermes_state::transcript::calls(m)
        .into_iter()
        .map(|c| json!({"id": c.id, "name": c.name, "arguments": c.arguments}))
        .collect();
    json!({
        "role": m.role,
        "content": hermes_state::transcript::text(m),
        "tool_calls": calls,
        "tool_call_id": m.tool_call_id,
        "tool_name": m.tool_name,
        "timestamp": m.timestamp,
    })
}

fn session_json(row: &SessionRow) -> Value {
    json!({
        "id": row.id, "title": row.title, "source": row.source, "model": row.model,
        "started_at": row.started_at, "ended_at": row.ended_at,
        "message_count": row.message_count, "input_tokens": row.input_tokens,
        "output_tokens": row.output_tokens, "cost_usd": cost(row),
    })
}

/// The session `id` and its messages, or 404.
async fn load(state: &State, id: String) -> Result<(SessionRow, Vec<StoredMessage>), ApiError> {
    let admin = admin(state)?;
    blocking(move || {
        let row = admin
            .session_row(&id)?
            .ok_or_else(|| ApiError::not_found(format!("no session {id}")))?;
        let messages = admin.messages(&id)?;
        Ok((row, messages))
    })
    .await
}

/// `GET /api/sessions/{id}`: the session and its transcript.
pub(crate) async fn show(Extract(state): Extract<Arc<State>>, Path(id): Path<String>) -> ApiResult {
    let (row, messages) = load(&state, id).await?;
    let messages: Vec<Value> = messages.iter().map(message_json).collect();
    Ok(Json(
        json!({"session": session_json(&row), "messages": messages}),
    ))
}

/// `PATCH /api/sessions/{id} {title}`.
pub(crate) async fn rename(
    Extract(state): Extract<Arc<State>>,
    Path(id): Path<String>,
    Json(body): Json<Value>,
) -> ApiResult {
    let title = hermes_state::session_db::sanitize_title(required(&body, "title")?)
        .map_err(|e| ApiError::bad_request(e.to_string()))?
        .ok_or_else(|| ApiError::bad_request("the title is empty once cleaned"))?;
    let store = state
        .manager
        .services()
        .store()
        .ok_or_else(|| ApiError::unavailable("session history is off"))?;
    blocking(move || {
        if store.session(&id)?.is_none() {
            return Err(ApiError::not_found(format!("no session {id}")));
        }
        store
            .set_title(&id, &title)
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
        Ok(Json(json!({"id": id, "title": title})))
    })
    .await
}

/// `DELETE /api/sessions/{id}`.
pub(crate) async fn remove(
    Extract(state): Extract<Arc<State>>,
    Path(id): Path<String>,
) -> ApiResult {
    let admin = admin(&state)?;
    blocking(move || {
        if admin.delete_session(&id)? {
            Ok(Json(json!({"deleted": id})))
        } else {
            Err(ApiError::not_found(format!("no session {id}")))
        }
    })
    .await
}

/// `?format=md|jsonl`.
#[derive(Deserialize)]
pub(crate) struct Format {
    format: Option<String>,
}

/// `GET /api/sessions/{id}/export?format=`: a download.
pub(crate) async fn export(
    Extract(state): Extract<Arc<State>>,
    Path(id): Path<String>,
    Query(format): Query<Format>,
) -> Result<Response, ApiError> {
    let safe: String = id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
        .collect();
    let (body, kind, ext) = match format.format.as_deref().unwrap_or("md") {
        "jsonl" => {
            let admin = admin(&state)?;
            let key = id.clone();
            let export = blocking(move || Ok(admin.export_session(&key)?))
                .await?
                .ok_or_else(|| ApiError::not_found(format!("no session {id}")))?;
            (format!("{export}\n"), "application/x-ndjson", "jsonl")
        }
        "md" => {
            let (row, messages) = load(&state, id).await?;
            let as_is = |t: &str| t.to_owned();
            (
                hermes_state::transcript::markdown(&row, &messages, &as_is),
                "text/markdown; charset=utf-8",
                "md",
            )
        }
        other => {
            return Err(ApiError::bad_request(format!(
                "format '{other}' is not md or jsonl"
            )));
        }
    };
    let disposition = format!("attachment; filename=\"hermes-{safe}.{ext}\"");
    Ok((
        [
            (header::CONTENT_TYPE, kind.to_owned()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        body,
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_become_marked_parts() {
        let got = parts("the >>>deploy<<< failed at >>>stage<<<");
        assert_eq!(
            got,
            vec![
                json!({"text": "the ", "hit": false}),
                json!({"text": "deploy", "hit": true}),
                json!({"text": " failed at ", "hit": false}),
                json!({"text": "stage", "hit": true}),
            ]
        );
        assert_eq!(parts("plain"), vec![json!({"text": "plain", "hit": false})]);
    }
}
