//! The cron page: the jobs with their next run and last status; add, edit,
//! pause, resume, run now and remove; each run's saved output — over the
//! same job book as `hermes cron` (the home's files or the shared database).

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State as Extract};
use hermes_session::cron::{jobs, run, schedule::now, zone::Zone};
use serde_json::{Value, json};

use crate::State;
use crate::api::{ApiError, ApiResult, blocking, field, required};

fn book(state: &State) -> Result<jobs::Book, ApiError> {
    run::book(&state.manager).map_err(ApiError::unavailable)
}

fn zone(state: &State) -> Zone {
    Zone::for_setup(state.manager.services().setup()).0
}

fn job_json(job: &Value) -> Value {
    json!({
        "id": job["id"], "name": job["name"], "schedule": job["schedule"]["display"],
        "prompt": job["prompt"], "deliver": job["deliver"],
        "enabled": job["enabled"].as_bool().unwrap_or(true), "state": job["state"],
        "next_run_at": job["next_run_at"], "last_run_at": job["last_run_at"],
        "last_status": job["last_status"], "last_error": job["last_error"],
    })
}

/// `GET /api/cron`.
pub(crate) async fn list(Extract(state): Extract<Arc<State>>) -> ApiResult {
    let book = book(&state)?;
    blocking(move || {
        let all = jobs::load(&book).map_err(ApiError::internal)?;
        Ok(Json(
            json!({"jobs": all.iter().map(job_json).collect::<Vec<_>>()}),
        ))
    })
    .await
}

/// `POST /api/cron {schedule, prompt, name?, deliver?}`.
pub(crate) async fn add(Extract(state): Extract<Arc<State>>, Json(body): Json<Value>) -> ApiResult {
    let book = book(&state)?;
    let zone = zone(&state);
    blocking(move || {
        let job = jobs::new_job(
            required(&body, "schedule")?,
            required(&body, "prompt")?,
            field(&body, "name").filter(|n| !n.trim().is_empty()),
            field(&body, "deliver").filter(|d| !d.trim().is_empty()),
            None,
            now(),
            &zone,
        )
        .map_err(ApiError::bad_request)?;
        let job = jobs::add(&book, job, now()).map_err(ApiError::internal)?;
        Ok(Json(json!({"job": job_json(&job)})))
    })
    .await
}

/// `PATCH /api/cron/{id} {schedule?, prompt?, name?, deliver?}`.
pub(crate) async fn edit(
    Extract(state): Extract<Arc<State>>,
    Path(id): Path<String>,
    Json(body): Json<Value>,
) -> ApiResult {
    let book = book(&state)?;
    let zone = zone(&state);
    blocking(move || {
        let changes = json!({
            "schedule": field(&body, "schedule").filter(|s| !s.trim().is_empty()),
            "prompt": field(&body, "prompt").filter(|s| !s.trim().is_empty()),
            "name": field(&body, "name").filter(|s| !s.trim().is_empty()),
            "deliver": field(&body, "deliver").filter(|s| !s.trim().is_empty()),
        });
        let job =
            jobs::update(&book, &id, &changes, now(), &zone).map_err(ApiError::bad_request)?;
        Ok(Json(json!({"job": job_json(&job)})))
    })
    .await
}

/// `DELETE /api/cron/{id}`: the job and its saved outputs.
pub(crate) async fn remove(
    Extract(state): Extract<Arc<State>>,
    Path(id): Path<String>,
) -> ApiResult {
    let book = book(&state)?;
    blocking(move || {
        let job = jobs::remove(&book, &id, now()).map_err(ApiError::not_found)?;
        Ok(Json(json!({"removed": job["id"]})))
    })
    .await
}

/// `POST /api/cron/{id}/{pause|resume|run}`.
pub(crate) async fn act(
    Extract(state): Extract<Arc<State>>,
    Path((id, action)): Path<(String, String)>,
) -> ApiResult {
    let book = book(&state)?;
    match action.as_str() {
        "pause" => {
            blocking(move || {
                let job = jobs::pause(&book, &id, now()).map_err(ApiError::not_found)?;
                Ok(Json(json!({"job": job_json(&job)})))
            })
            .await
        }
        "resume" => {
            let zone = zone(&state);
            blocking(move || {
                let job = jobs::resume(&book, &id, now(), &zone).map_err(ApiError::not_found)?;
                Ok(Json(json!({"job": job_json(&job)})))
            })
            .await
        }
        "run" => {
            let outcome = run::run_job(&state.manager, &book, &id)
                .await
                .map_err(ApiError::bad_request)?;
            let output_name = outcome
                .output
                .as_deref()
                .and_then(|n| n.rsplit('/').next())
                .map(|n| n.trim_end_matches(".md").to_owned());
            Ok(Json(json!({
                "ok": outcome.result.is_ok(),
                "error": outcome.result.err(),
                "output_name": output_name,
                "delivery_error": outcome.delivery_error,
            })))
        }
        other => Err(ApiError::not_found(format!("no cron action '{other}'"))),
    }
}

fn job_id(book: &jobs::Book, key: &str) -> Result<String, ApiError> {
    let all = jobs::load(book).map_err(ApiError::internal)?;
    let i = jobs::find(&all, key).map_err(|_| ApiError::not_found(format!("no job {key}")))?;
    Ok(all[i]["id"].as_str().unwrap_or(key).to_owned())
}

/// `GET /api/cron/{id}/runs`: newest first, each ok or failed.
pub(crate) async fn runs(Extract(state): Extract<Arc<State>>, Path(id): Path<String>) -> ApiResult {
    let book = book(&state)?;
    blocking(move || {
        let id = job_id(&book, &id)?;
        let mut saved = jobs::saved_runs(&book, &id).map_err(ApiError::internal)?;
        saved.reverse();
        let mut runs = Vec::with_capacity(saved.len());
        for s in saved {
            let text = book.docs.read(&s.name)?.unwrap_or_default();
            runs.push(json!({"run": s.run, "ok": !jobs::output_failed(&text)}));
        }
        Ok(Json(json!({"runs": runs})))
    })
    .await
}

/// `GET /api/cron/{id}/runs/{run}`: the saved output, as written.
pub(crate) async fn output(
    Extract(state): Extract<Arc<State>>,
    Path((id, run)): Path<(String, String)>,
) -> ApiResult {
    let book = book(&state)?;
    blocking(move || {
        let id = job_id(&book, &id)?;
        let saved = jobs::saved_runs(&book, &id).map_err(ApiError::internal)?;
        let found = saved
            .iter()
            .find(|s| s.run == run)
            .ok_or_else(|| ApiError::not_found(format!("no run {run} of job {id}")))?;
        let text = book.docs.read(&found.name)?.unwrap_or_default();
        Ok(Json(json!({"run": run, "text": text})))
    })
    .await
}
