//! `HERMES_HOME/cron/jobs.json`, read and written as the reference does:
//! `{"jobs": [...], "updated_at": ISO}`, owner-only, replaced atomically
//! (a document of the shared database when replicas share one).
//! Jobs stay JSON objects so fields this build does not use survive a rewrite.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hermes_state::coordination::Fence;
use hermes_state::documents::{self, Documents, HomeDocuments};
use serde_json::{Map, Value, json};

use super::schedule::{iso, next_run, parse_schedule};
use super::zone::Zone;

/// The cron directory of a Hermes home.
pub fn cron_dir(home: &Path) -> PathBuf {
    home.join("cron")
}

/// The jobs document (a path relative to the home).
pub const JOBS: &str = "cron/jobs.json";

/// Where cron keeps what it knows: the home (scripts are read from its
/// `scripts/`) and the documents holding the jobs and their outputs (files
/// under the home on one machine, the shared database for replicas).
#[derive(Clone)]
pub struct Book {
    /// The Hermes home.
    pub home: PathBuf,
    /// `cron/jobs.json` and `cron/output/…`.
    pub docs: Arc<dyn Documents>,
}

impl std::fmt::Debug for Book {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Book").field("home", &self.home).finish()
    }
}

impl Book {
    /// The book of a home whose jobs are its own files.
    pub fn at_home(home: &Path) -> Self {
        Self {
            home: home.to_owned(),
            docs: Arc::new(HomeDocuments::new(home)),
        }
    }
}

/// The jobs in `text`, in file order (a bare top-level list is accepted too).
fn parse(text: Option<&str>) -> Result<Vec<Value>, String> {
    let Some(text) = text else {
        return Ok(Vec::new());
    };
    let value: Value = serde_json::from_str(text.trim_start_matches('\u{feff}'))
        .map_err(|e| format!("{JOBS} is not valid JSON ({e}); fix or remove it"))?;
    match value {
        Value::Object(mut top) => match top.remove("jobs") {
            Some(Value::Array(jobs)) => Ok(jobs),
            None => Ok(Vec::new()),
            Some(_) => Err(format!("{JOBS}: \"jobs\" is not a list")),
        },
        Value::Array(jobs) => Ok(jobs),
        _ => Err(format!("{JOBS}: expected {{\"jobs\": [...]}}")),
    }
}

/// The jobs, in file order.
pub fn load(book: &Book) -> Result<Vec<Value>, String> {
    parse(book.docs.read(JOBS).map_err(|e| e.to_string())?.as_deref())
}

/// Changes the jobs by `change` and writes them back unless it fails or
/// leaves them as they were; an edit made meanwhile by another process is
/// read first (`change` then runs again), never overwritten.
pub fn edit<R>(
    book: &Book,
    now: i64,
    change: impl FnMut(&mut Vec<Value>) -> Result<R, String>,
) -> Result<R, String> {
    edit_fenced(book, None, now, change)?
        .ok_or_else(|| "the scheduler lease moved to another process".to_owned())
}

/// [`edit`] under `fence` when given: `None` when the lease it names is no
/// longer held (a replica that lost the scheduler lease writes nothing).
pub fn edit_fenced<R>(
    book: &Book,
    fence: Option<&Fence>,
    now: i64,
    mut change: impl FnMut(&mut Vec<Value>) -> Result<R, String>,
) -> Result<Option<R>, String> {
    let edited = documents::update(book.docs.as_ref(), &[JOBS], fence, |texts| {
        let mut jobs = parse(texts[0].as_deref())?;
        let before = jobs.clone();
        let result = change(&mut jobs)?;
        if jobs != before {
            let body = json!({"jobs": jobs, "updated_at": iso(now)});
            texts[0] = Some(serde_json::to_string_pretty(&body).map_err(|e| e.to_string())?);
        }
        Ok(result)
    });
    match edited {
        Ok(result) => result.map(Some),
        Err(documents::UpdateError::Fenced) => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

/// Sets the optional fields of a job from `args` (the tool's or the CLI's):
/// `skills`, `script` (checked to lie in `HERMES_HOME/scripts/`), `no_agent`,
/// `context_from`, `workdir`; an empty `script` or `workdir` clears it.
/// Returns whether anything changed.
pub fn set_extras(home: &Path, job: &mut Value, args: &Value) -> Result<bool, String> {
    let mut changed = false;
    if let Some(skills) = args.get("skills").filter(|v| !v.is_null()) {
        let names: Vec<Value> = match skills {
            Value::String(one) => vec![Value::from(one.trim())],
            Value::Array(items) => items
                .iter()
                .filter_map(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(Value::from)
                .collect(),
            _ => return Err("skills must be a list of skill names".into()),
        };
        job["skill"] = names.first().cloned().unwrap_or(Value::Null);
        job["skills"] = Value::Array(names);
        changed = true;
    }
    if let Some(script) = args.get("script").and_then(Value::as_str) {
        let script = script.trim();
        if script.is_empty() {
            job["script"] = Value::Null;
        } else {
            super::script::resolve(home, script, None)?;
            job["script"] = Value::from(script);
        }
        changed = true;
    }
    if let Some(no_agent) = args.get("no_agent").and_then(Value::as_bool) {
        job["no_agent"] = Value::Bool(no_agent);
        changed = true;
    }
    if let Some(sources) = args.get("context_from").filter(|v| !v.is_null()) {
        let ids: Vec<Value> = match sources {
            Value::String(one) => vec![Value::from(one.trim())],
            Value::Array(items) => items
                .iter()
                .filter_map(Value::as_str)
                .map(Value::from)
                .collect(),
            _ => return Err("context_from must be a list of job ids".into()),
        };
        job["context_from"] = Value::Array(ids);
        changed = true;
    }
    if let Some(dir) = args.get("workdir").and_then(Value::as_str) {
        let dir = dir.trim();
        if dir.is_empty() {
            job["workdir"] = Value::Null;
        } else if !Path::new(dir).is_absolute() || !Path::new(dir).is_dir() {
            return Err(format!(
                "workdir must be an absolute path to a directory: {dir}"
            ));
        } else {
            job["workdir"] = Value::from(dir);
        }
        changed = true;
    }
    if job["no_agent"] == true && job["script"].as_str().is_none_or(str::is_empty) {
        return Err("no_agent needs a script: the script's output is what the job delivers".into());
    }
    Ok(changed)
}

/// Changes the fields `args` names; a new schedule is parsed and re-timed.
pub fn update(
    book: &Book,
    key: &str,
    args: &Value,
    now: i64,
    zone: &Zone,
) -> Result<Value, String> {
    edit(book, now, |all| {
        let i = find(all, key)?;
        let job = &mut all[i];
        let mut changed = false;
        for field in ["prompt", "name", "deliver"] {
            if let Some(v) = args[field].as_str() {
                job[field] = Value::from(v);
                changed = true;
            }
        }
        changed |= set_extras(&book.home, job, args)?;
        if let Some(s) = args["schedule"].as_str() {
            let schedule = parse_schedule(s, now, zone)?;
            let next = next_run(&schedule, None, now, zone);
            job["schedule_display"] = schedule["display"].clone();
            job["schedule"] = schedule;
            job["next_run_at"] = next.map_or(Value::Null, |n| Value::from(zone.iso(n)));
            if job["state"] != "paused" {
                job["enabled"] = Value::Bool(true);
                job["state"] = Value::from("scheduled");
            }
            changed = true;
        }
        if let Some(n) = args["repeat"].as_i64() {
            let completed = job["repeat"]["completed"].clone();
            job["repeat"] = json!({"times": if n > 0 { Value::from(n) } else { Value::Null }, "completed": completed});
            changed = true;
        }
        if !changed {
            return Err("No updates provided.".into());
        }
        Ok(job.clone())
    })
}

/// A new job as the reference creates it (12 hex digit id).
pub fn new_job(
    schedule_text: &str,
    prompt: &str,
    name: Option<&str>,
    deliver: Option<&str>,
    repeat: Option<i64>,
    now: i64,
    zone: &Zone,
) -> Result<Value, String> {
    let schedule = parse_schedule(schedule_text, now, zone)?;
    let once = schedule["kind"] == "once";
    let times = match repeat {
        Some(n) if n > 0 => Value::from(n),
        Some(_) => Value::Null,
        None if once => Value::from(1),
        None => Value::Null,
    };
    let next = next_run(&schedule, None, now, zone).ok_or_else(|| {
        "Requested one-shot time is more than 120s in the past and cannot be scheduled.".to_owned()
    })?;
    let name = name
        .map(str::to_owned)
        .or_else(|| (!prompt.trim().is_empty()).then(|| prompt.chars().take(50).collect()))
        .unwrap_or_else(|| "cron job".to_owned());
    let display = schedule["display"].clone();
    let mut job = Map::new();
    for (key, value) in [
        ("id", Value::from(new_id())),
        ("name", Value::from(name)),
        ("prompt", Value::from(prompt)),
        ("skills", json!([])),
        ("skill", Value::Null),
        ("model", Value::Null),
        ("provider", Value::Null),
        ("base_url", Value::Null),
        ("schedule", schedule),
        ("schedule_display", display),
        ("repeat", json!({"times": times, "completed": 0})),
        ("enabled", Value::Bool(true)),
        ("state", Value::from("scheduled")),
        ("paused_at", Value::Null),
        ("paused_reason", Value::Null),
        ("created_at", Value::from(iso(now))),
        ("next_run_at", Value::from(zone.iso(next))),
        ("last_run_at", Value::Null),
        ("last_status", Value::Null),
        ("last_error", Value::Null),
        ("last_delivery_error", Value::Null),
        ("deliver", Value::from(deliver.unwrap_or("local"))),
        ("origin", Value::Null),
        ("enabled_toolsets", Value::Null),
        ("workdir", Value::Null),
    ] {
        job.insert(key.to_owned(), value);
    }
    Ok(Value::Object(job))
}

fn new_id() -> String {
    format!("{:012x}", fastrand::u64(..1 << 48))
}

/// The index of the job with this id, else the one job with this name
/// (case-insensitive).
pub fn find(jobs: &[Value], key: &str) -> Result<usize, String> {
    if let Some(i) = jobs.iter().position(|j| j["id"] == key) {
        return Ok(i);
    }
    let by_name: Vec<usize> = jobs
        .iter()
        .enumerate()
        .filter(|(_, j)| {
            j["name"]
                .as_str()
                .is_some_and(|n| n.eq_ignore_ascii_case(key))
        })
        .map(|(i, _)| i)
        .collect();
    match by_name.as_slice() {
        [i] => Ok(*i),
        [] => Err(format!("Job with ID or name '{key}' not found.")),
        many => Err(format!(
            "Job name '{key}' is ambiguous — matches {} jobs. Use the job ID instead.",
            many.len()
        )),
    }
}

/// Whether the job should run at `now`.
pub fn is_due(job: &Value, now: i64) -> bool {
    job["enabled"].as_bool().unwrap_or(true)
        && job["next_run_at"]
            .as_str()
            .and_then(super::schedule::parse_iso)
            .is_some_and(|at| at <= now)
}

/// Pauses the job `key` (id or name); returns it as saved.
pub fn pause(book: &Book, key: &str, now: i64) -> Result<Value, String> {
    change(book, key, now, |job| {
        job["enabled"] = Value::Bool(false);
        job["state"] = Value::from("paused");
        job["paused_at"] = Value::from(iso(now));
    })
}

/// Resumes the job `key`, scheduling its next run from now.
pub fn resume(book: &Book, key: &str, now: i64, zone: &Zone) -> Result<Value, String> {
    change(book, key, now, |job| {
        let next = next_run(&job["schedule"].clone(), None, now, zone);
        job["enabled"] = Value::Bool(true);
        job["state"] = Value::from("scheduled");
        job["paused_at"] = Value::Null;
        job["paused_reason"] = Value::Null;
        job["next_run_at"] = next.map_or(Value::Null, |n| Value::from(zone.iso(n)));
    })
}

/// The folder of a job's saved outputs.
pub fn output_folder(id: &str) -> String {
    format!("cron/output/{id}")
}

/// One saved run of a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedRun {
    /// `2026-11-28_09-00-00`: the output's name without folder and `.md`.
    pub run: String,
    /// The output's document name (`cron/output/ID/RUN.md`).
    pub name: String,
}

/// The saved runs of job `id`, oldest first.
pub fn saved_runs(book: &Book, id: &str) -> Result<Vec<SavedRun>, String> {
    let folder = output_folder(id);
    let names = book.docs.list(&folder).map_err(|e| e.to_string())?;
    Ok(names
        .into_iter()
        .filter_map(|name| {
            let run = name
                .strip_prefix(&format!("{folder}/"))?
                .strip_suffix(".md")?
                .to_owned();
            Some(SavedRun { run, name })
        })
        .collect())
}

/// Whether a saved output is of a failed run (its heading says so).
pub fn output_failed(text: &str) -> bool {
    text.lines().next().is_some_and(|l| l.ends_with("(FAILED)"))
}

/// Removes the job `key` and its saved outputs; returns it.
pub fn remove(book: &Book, key: &str, now: i64) -> Result<Value, String> {
    let removed = edit(book, now, |all| {
        let i = find(all, key)?;
        Ok(all.remove(i))
    })?;
    if let Some(id) = removed["id"].as_str().filter(|id| !id.is_empty()) {
        let _ = book.docs.remove_folder(&output_folder(id));
    }
    Ok(removed)
}

/// Adds a job; returns it as saved.
pub fn add(book: &Book, job: Value, now: i64) -> Result<Value, String> {
    edit(book, now, |all| {
        all.push(job.clone());
        Ok(())
    })?;
    Ok(job)
}

fn change(book: &Book, key: &str, now: i64, apply: impl Fn(&mut Value)) -> Result<Value, String> {
    edit(book, now, |all| {
        let i = find(all, key)?;
        apply(&mut all[i]);
        Ok(all[i].clone())
    })
}
