//! Running jobs: a tick finds the due ones (at most one process ticks at a
//! time: a lock on `cron/.tick.lock` on one machine, the `cron:scheduler`
//! lease among replicas, whose token fences the tick's write), claims them
//! and moves recurring ones to their next slot before running them (a crash
//! never runs a job twice), runs each as a fresh session with source `cron`,
//! saves the answer under `cron/output/` and records the outcome in
//! `jobs.json`.

use std::path::Path;
use std::time::Duration;

use hermes_state::coordination::Fence;

use super::schedule::now;
use hermes_protocol::{Event, Op};
use serde_json::{Value, json};

use super::jobs::{self, Book, cron_dir, is_due};
use super::schedule::{iso, next_run};
use super::{deliver, prompt, script};
use crate::{SessionManager, SessionSpec};

/// Outputs kept per job (`cron.output_retention` in the reference).
const OUTPUT_RETENTION: usize = 50;

/// What one run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOutcome {
    /// The job's id.
    pub job_id: String,
    /// The job's name.
    pub name: String,
    /// The final answer, or why the run failed.
    pub result: Result<String, String>,
    /// The answer asked for no delivery (`[SILENT]`).
    pub silent: bool,
    /// The saved output (a path relative to the home).
    pub output: Option<String>,
    /// Why the answer did not reach every chat it was meant for.
    pub delivery_error: Option<String>,
}

/// Whether an answer asks not to be delivered.
pub fn is_silent(text: &str) -> bool {
    let marker = |line: &str| {
        matches!(
            line.trim().to_ascii_uppercase().as_str(),
            "[SILENT]" | "SILENT" | "NO_REPLY" | "NO REPLY"
        )
    };
    let trimmed = text.trim();
    trimmed.to_ascii_uppercase().starts_with("[SILENT]")
        || marker(trimmed)
        || trimmed
            .lines()
            .find(|l| !l.trim().is_empty())
            .is_some_and(marker)
        || trimmed.lines().last().is_some_and(marker)
}

/// The scheduler lease replicas take before ticking.
pub const SCHEDULER_LEASE: &str = "cron:scheduler";
/// How long a tick's lease lasts; ticks come each minute, so the holder
/// renews it long before it lapses, and a dead holder's jobs move to
/// another replica within this time.
const SCHEDULER_TTL: Duration = Duration::from_secs(150);
/// A claimed fire that never finished may be claimed again after this long
/// (the reference's five minutes).
const CLAIM_TTL_SECS: i64 = 300;

/// The cron book of a manager's store.
pub fn book(manager: &SessionManager) -> Result<Book, String> {
    let services = manager.services();
    Ok(Book {
        home: services.setup().home.root().to_path_buf(),
        docs: services.documents()?,
    })
}

/// A fire claimed by someone less than [`CLAIM_TTL_SECS`] ago.
fn freshly_claimed(job: &Value, now: i64) -> bool {
    job["fire_claim"]["at"]
        .as_str()
        .and_then(super::schedule::parse_iso)
        .is_some_and(|at| (0..CLAIM_TTL_SECS).contains(&(now - at)))
}

/// Who may tick here: on one machine, the holder of the lock file (kept
/// while the returned guard lives); among replicas, the holder of the
/// scheduler lease, whose fence the tick writes under. `None`: someone else.
enum Ticker {
    /// The open lock file: its lock goes with it when dropped.
    Alone {
        _lock: std::fs::File,
    },
    Leased(Fence),
}

fn take_turn(manager: &SessionManager, home: &Path) -> Result<Option<Ticker>, String> {
    let services = manager.services();
    if let Some(shared) = services.shared() {
        let holder = services.replica().to_owned();
        let lease = shared
            .coordinator
            .acquire(SCHEDULER_LEASE, &holder, SCHEDULER_TTL)
            .map_err(|e| format!("cannot take the scheduler lease: {e}"))?;
        return Ok(lease.map(|l| {
            Ticker::Leased(Fence {
                lease: SCHEDULER_LEASE.to_owned(),
                holder,
                token: l.token,
            })
        }));
    }
    let dir = cron_dir(home);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(".tick.lock"))
        .map_err(|e| format!("cannot open the tick lock: {e}"))?;
    Ok(lock.try_lock().ok().map(|()| Ticker::Alone { _lock: lock }))
}

/// Gives the scheduler lease up (a one-off tick, a replica stopping), so
/// another replica ticks at once; nothing on one machine.
pub fn release_scheduler(manager: &SessionManager) {
    let services = manager.services();
    if let Some(shared) = services.shared() {
        let _ = shared
            .coordinator
            .release(SCHEDULER_LEASE, services.replica());
    }
}

/// Runs the jobs that are due; `None` when another process is ticking.
pub async fn tick(manager: &SessionManager) -> Result<Option<Vec<RunOutcome>>, String> {
    let book = book(manager)?;
    let Some(ticker) = take_turn(manager, &book.home)? else {
        return Ok(None);
    };
    let fence = match &ticker {
        Ticker::Leased(fence) => Some(fence),
        Ticker::Alone { .. } => None,
    };
    let now = now();
    let (zone, _) = super::zone::Zone::for_setup(manager.services().setup());
    let claim = json!({"at": iso(now), "by": manager.services().replica()});
    let claimed = jobs::edit_fenced(&book, fence, now, |all| {
        let mut due = Vec::new();
        for job in all.iter_mut() {
            if !is_due(job, now) || freshly_claimed(job, now) {
                continue;
            }
            due.push(job["id"].as_str().unwrap_or_default().to_owned());
            job["fire_claim"] = claim.clone();
            let schedule = job["schedule"].clone();
            if schedule["kind"] != "once" {
                // Missed slots collapse into this one run; the next is in the future.
                job["next_run_at"] = next_run(&schedule, Some(now), now, &zone)
                    .map_or(Value::Null, |t| Value::from(zone.iso(t)));
            }
        }
        Ok(due)
    });
    // None: the lease moved on between taking it and writing; the new holder ticks.
    let Some(due) = claimed? else {
        return Ok(None);
    };
    let mut outcomes = Vec::new();
    for id in due {
        outcomes.push(run_job(manager, &book, &id).await?);
    }
    drop(ticker);
    Ok(Some(outcomes))
}

/// Runs one job now (by id or name) and records the outcome.
pub async fn run_job(
    manager: &SessionManager,
    book: &Book,
    key: &str,
) -> Result<RunOutcome, String> {
    let all = jobs::load(book)?;
    let job = all[jobs::find(&all, key)?].clone();
    let id = job["id"].as_str().unwrap_or_default().to_owned();
    let name = job["name"].as_str().unwrap_or(&id).to_owned();
    let started = now();
    let Ran { result, alert } = execute(manager, book, &job, started).await;
    let output = save_output(book, &job, started, &result).ok();
    let silent = result.as_ref().is_ok_and(|t| is_silent(t));
    // Failed runs always say so; a [SILENT] answer is kept, not sent.
    let content = match (&result, alert) {
        (_, Some(alert)) => Some(alert),
        (Ok(_), None) if silent => None,
        (Ok(text), None) => Some(text.clone()),
        (Err(e), None) => Some(deliver::failure_note(&job, e)),
    };
    let delivery_error = match content {
        Some(content) => {
            let wrap = manager
                .services()
                .setup()
                .config
                .raw
                .pointer("/cron/wrap_response")
                .and_then(Value::as_bool)
                .unwrap_or(true);
            let text = deliver::wrapped(&job, &content, wrap);
            let sender = manager.services().cron_delivery();
            deliver::deliver(&job, &text, sender.as_deref()).await
        }
        None => None,
    };
    let (zone, _) = super::zone::Zone::for_setup(manager.services().setup());
    record(book, &id, &result, delivery_error.clone(), now(), &zone)?;
    Ok(RunOutcome {
        job_id: id,
        name,
        result,
        silent,
        output,
        delivery_error,
    })
}

/// What one run produced: the answer (or why there is none) and, for a
/// script job whose script failed, the alert to send instead of the usual
/// failure note.
struct Ran {
    result: Result<String, String>,
    alert: Option<String>,
}

impl Ran {
    fn silent() -> Self {
        Self {
            result: Ok("[SILENT]".to_owned()),
            alert: None,
        }
    }
}

/// Runs the job's script (if any), then the agent unless the script is the
/// whole job (`no_agent`) or its output says not to wake it.
async fn execute(manager: &SessionManager, book: &Book, job: &Value, started: i64) -> Ran {
    let setup = manager.services().setup();
    let name = job["name"].as_str().or(job["id"].as_str()).unwrap_or("job");
    let workdir = job["workdir"]
        .as_str()
        .map(std::path::PathBuf::from)
        .filter(|p| p.is_dir());
    let ran_script = match job["script"]
        .as_str()
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        Some(named) => {
            let user_home = setup.env.get("HOME").map(std::path::PathBuf::from);
            Some(
                match script::resolve(&book.home, named, user_home.as_deref()) {
                    Ok(path) => {
                        let timeout = script::timeout(
                            setup.env.get("HERMES_CRON_SCRIPT_TIMEOUT"),
                            &setup.config.raw,
                        );
                        let hidden = crate::secrets::credential_vars(setup);
                        // A no_agent job runs where the job says; a pre-run script beside itself.
                        let cwd = if job["no_agent"] == true {
                            workdir.as_deref()
                        } else {
                            None
                        };
                        script::run(&path, cwd, timeout, &hidden).await
                    }
                    Err(e) => Err(e),
                },
            )
        }
        None => None,
    };
    if job["no_agent"] == true {
        return match ran_script {
            None => Ran {
                result: Err("no_agent=True but no script is set for this job".to_owned()),
                alert: None,
            },
            Some(Err(output)) => {
                let t = hermes_state::time::UtcTime::from_unix(now());
                Ran {
                    alert: Some(format!(
                        "⚠ Cron watchdog '{name}' script failed\n\n{output}\n\nTime: {}",
                        t.iso().replace('T', " ")
                    )),
                    result: Err(output),
                }
            }
            Some(Ok(output)) if output.trim().is_empty() || !script::wakes_agent(&output) => {
                Ran::silent()
            }
            Some(Ok(output)) => Ran {
                result: Ok(output),
                alert: None,
            },
        };
    }
    if let Some(Ok(output)) = &ran_script
        && !script::wakes_agent(output)
    {
        return Ran::silent();
    }
    let Some(prompt) = prompt::build(book, job, ran_script.as_ref()) else {
        return Ran::silent();
    };
    Ran {
        result: answer(manager, job, started, prompt).await,
        alert: None,
    }
}

/// The job's answer to `prompt` from a fresh session.
async fn answer(
    manager: &SessionManager,
    job: &Value,
    started: i64,
    prompt: String,
) -> Result<String, String> {
    let setup = manager.services().setup();
    let cwd = job["workdir"]
        .as_str()
        .map(std::path::PathBuf::from)
        .filter(|p| p.is_dir())
        .unwrap_or_else(|| setup.home.root().to_path_buf());
    let mut toolsets: Vec<String> = job["enabled_toolsets"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_else(|| setup.config.toolsets_for("cron"));
    toolsets.retain(|t| t != "cronjob" && t != "clarify");
    let stamp = crate::cron::schedule::iso(started).replace([':', '-'], "");
    let spec = SessionSpec {
        provider: job["provider"].as_str().map(str::to_owned),
        model: job["model"].as_str().map(str::to_owned),
        toolsets: Some(toolsets),
        seed: Some(crate::Seed {
            session_id: format!(
                "cron_{}_{}",
                job["id"].as_str().unwrap_or("job"),
                &stamp[..15.min(stamp.len())]
            ),
            history: Vec::new(),
            ephemeral_prompt: None,
        }),
        ..SessionSpec::new("cron", cwd)
    };
    let mut conv = manager.start(spec).await.map_err(|e| e.to_string())?;
    let id = conv
        .submit(Op::UserInput { text: prompt })
        .map_err(|e| e.to_string())?;
    let result = loop {
        let Some(event) = conv.next_event().await else {
            break Err("the session stopped".to_owned());
        };
        if event.submission != id {
            continue;
        }
        match event.event {
            Event::TurnComplete { final_text, .. } if final_text.trim().is_empty() => {
                break Err("Agent completed but produced empty response".to_owned());
            }
            Event::TurnComplete { final_text, .. } => break Ok(final_text),
            Event::Error { message } => break Err(message),
            _ => {}
        }
    };
    let _ = conv.shutdown("cron_complete").await;
    result
}

/// `cron/output/<id>/<YYYY-mm-dd_HH-MM-SS>.md`, as the reference writes it;
/// returns its name.
fn save_output(
    book: &Book,
    job: &Value,
    started: i64,
    result: &Result<String, String>,
) -> Result<String, String> {
    let id = job["id"]
        .as_str()
        .filter(|id| !id.is_empty())
        .unwrap_or("job");
    let folder = jobs::output_folder(id);
    let t = hermes_state::time::UtcTime::from_unix(started);
    let name = format!(
        "{folder}/{:04}-{:02}-{:02}_{:02}-{:02}-{:02}.md",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    );
    let title = job["name"].as_str().unwrap_or(id);
    let header = |failed: bool| {
        format!(
            "# Cron Job: {title}{}\n\n**Job ID:** {id}\n**Run Time:** {}\n**Schedule:** {}\n\n## Prompt\n\n{}\n\n",
            if failed { " (FAILED)" } else { "" },
            t.iso().replace('T', " "),
            job["schedule"]["display"].as_str().unwrap_or_default(),
            job["prompt"].as_str().unwrap_or_default()
        )
    };
    let body = match result {
        Ok(text) => format!("{}## Response\n\n{text}\n", header(false)),
        Err(e) => format!("{}## Error\n\n```\n{e}\n```\n", header(true)),
    };
    hermes_state::documents::update(book.docs.as_ref(), &[&name], None, |texts| {
        texts[0] = Some(body.clone());
    })
    .map_err(|e| e.to_string())?;
    // The newest outputs of each job are kept, as the reference keeps them.
    let saved: Vec<String> = book
        .docs
        .list(&folder)
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter(|n| n.ends_with(".md"))
        .collect();
    let excess = saved.len().saturating_sub(OUTPUT_RETENTION);
    for old in &saved[..excess] {
        let _ = hermes_state::documents::update(book.docs.as_ref(), &[old], None, |texts| {
            texts[0] = None;
        });
    }
    Ok(name)
}

/// Records a run: last run and status, the repeat count, the next run; a job
/// whose repeats are used up is removed.
fn record(
    book: &Book,
    id: &str,
    result: &Result<String, String>,
    delivery_error: Option<String>,
    now: i64,
    zone: &super::zone::Zone,
) -> Result<(), String> {
    jobs::edit(book, now, |all| {
        let Some(i) = all.iter().position(|j| j["id"] == id) else {
            return Ok(());
        };
        let job = &mut all[i];
        job["last_run_at"] = Value::from(zone.iso(now));
        job["last_status"] = Value::from(if result.is_ok() { "ok" } else { "error" });
        job["last_error"] = result
            .as_ref()
            .err()
            .map_or(Value::Null, |e| Value::from(e.as_str()));
        job["fire_claim"] = Value::Null;
        job["last_delivery_error"] = delivery_error.clone().map_or(Value::Null, Value::from);
        let completed = job["repeat"]["completed"].as_i64().unwrap_or(0) + 1;
        let times = job["repeat"]["times"].as_i64();
        job["repeat"] = json!({"times": times, "completed": completed});
        if times.is_some_and(|t| completed >= t) {
            all.remove(i);
        } else if job["schedule"]["kind"] != "once" {
            match next_run(&job["schedule"].clone(), Some(now), now, zone) {
                Some(next) => job["next_run_at"] = Value::from(zone.iso(next)),
                None => job["state"] = Value::from("error"),
            }
        } else {
            job["enabled"] = Value::Bool(false);
            job["state"] = Value::from("completed");
            job["next_run_at"] = Value::Null;
        }
        Ok(())
    })
}
