//! `cronjob`: the model schedules and manages jobs itself, with the
//! reference's schema. Jobs land in `cron/jobs.json` and the gateway's
//! ticker (or `hermes cron tick`) runs them.

use super::schedule::now;
use futures_util::future::BoxFuture;
use hermes_protocol::ToolSchema;
use hermes_tools::{Tool, ToolContext, ToolResult};
use serde_json::{Value, json};

use super::jobs;
use crate::SessionManager;

/// The `cronjob` tool of one session.
#[derive(Clone)]
pub struct CronjobTool {
    manager: SessionManager,
}

impl std::fmt::Debug for CronjobTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CronjobTool")
    }
}

impl CronjobTool {
    /// A tool whose jobs run through `manager`.
    pub fn new(manager: SessionManager) -> Self {
        Self { manager }
    }

    /// The chat a gateway session talks in (its stored `origin_json`), as a
    /// job's `origin`.
    fn origin(&self, session_id: &str) -> Option<Value> {
        let store = self.manager.services().store()?;
        let raw = store.origin(session_id).ok()??;
        let origin: Value = serde_json::from_str(&raw).ok()?;
        origin["platform"]
            .as_str()
            .is_some_and(|p| !p.is_empty())
            .then_some(origin)
    }
}

/// A job as the model sees it.
fn format_job(job: &Value) -> Value {
    let prompt = job["prompt"].as_str().unwrap_or_default();
    let preview: String = if prompt.chars().count() > 100 {
        format!("{}...", prompt.chars().take(100).collect::<String>())
    } else {
        prompt.to_owned()
    };
    let repeat = match (
        job["repeat"]["times"].as_i64(),
        job["repeat"]["completed"].as_i64().unwrap_or(0),
    ) {
        (None, _) => "forever".to_owned(),
        (Some(1), 0) => "once".to_owned(),
        (Some(t), 0) => format!("{t} times"),
        (Some(t), c) => format!("{c}/{t}"),
    };
    json!({
        "job_id": job["id"],
        "name": job["name"],
        "skill": job["skill"],
        "skills": job["skills"],
        "prompt_preview": preview,
        "model": job["model"],
        "provider": job["provider"],
        "base_url": job["base_url"],
        "schedule": job["schedule"]["display"],
        "repeat": repeat,
        "deliver": job["deliver"],
        "next_run_at": job["next_run_at"],
        "last_run_at": job["last_run_at"],
        "last_status": job["last_status"],
        "last_delivery_error": job["last_delivery_error"],
        "enabled": job["enabled"],
        "state": job["state"],
        "paused_at": job["paused_at"],
        "paused_reason": job["paused_reason"],
    })
}

fn error(message: impl Into<String>) -> String {
    json!({"success": false, "error": message.into()}).to_string()
}

fn ok(value: Value) -> String {
    serde_json::to_string_pretty(&value).unwrap_or_default()
}

impl Tool for CronjobTool {
    fn name(&self) -> &str {
        "cronjob"
    }

    fn toolset(&self) -> &str {
        "cronjob"
    }

    fn emoji(&self) -> &str {
        "⏰"
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "cronjob".into(),
            description: "Schedule and manage jobs that run the agent later or repeatedly.\n\
                action='create' schedules a job from a prompt (schedule and prompt are required); \
                action='list' shows the jobs; action='update', 'pause', 'resume', 'remove' or 'run' \
                act on one by job_id (list first: never guess ids). Each run is a fresh session \
                without this conversation, so the prompt must say everything needed. The final \
                answer of a run is delivered automatically; a run cannot ask questions. A job run \
                must not schedule further jobs."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "action": {"type": "string", "description": "One of: create, list, update, pause, resume, remove, run. When action=create, the 'schedule' and 'prompt' fields are REQUIRED."},
                    "job_id": {"type": "string", "description": "The job to act on (update, pause, resume, remove, run)."},
                    "prompt": {"type": "string", "description": "What the agent is asked at each run; self-contained."},
                    "schedule": {"type": "string", "description": "'30m' (once, in 30 minutes), 'every 2h', '0 9 * * *' (cron), or an ISO timestamp."},
                    "name": {"type": "string", "description": "A short name for the job."},
                    "repeat": {"type": "integer", "description": "How many runs (default: once for a one-shot, forever otherwise)."},
                    "deliver": {"type": "string", "description": "Where the answer goes: origin, local, all, or platform:chat_id:thread_id; comma-separated for several."},
                    "skills": {"type": "array", "items": {"type": "string"}, "description": "Skills to load before the prompt."},
                    "model": {"type": "object", "properties": {"provider": {"type": "string"}, "model": {"type": "string"}}, "required": ["model"], "description": "A model for this job's runs."},
                    "script": {"type": "string", "description": "A script under HERMES_HOME/scripts/ whose output feeds the prompt."},
                    "no_agent": {"type": "boolean", "default": false, "description": "Deliver the script's output as is, without the agent."},
                    "context_from": {"type": "array", "items": {"type": "string"}, "description": "Jobs whose latest output is added to the prompt."},
                    "enabled_toolsets": {"type": "array", "items": {"type": "string"}, "description": "Toolsets the runs get."},
                    "workdir": {"type": "string", "description": "Absolute directory the runs work in."},
                    "attach_to_session": {"type": "boolean", "description": "Deliver into this conversation."}
                },
                "required": ["action"]
            }),
        }
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let book = match super::run::book(&self.manager) {
                Ok(book) => book,
                Err(e) => return Ok(error(e)),
            };
            let action = args["action"]
                .as_str()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase();
            // Say so rather than store what no run would honour.
            if matches!(action.as_str(), "create" | "update")
                && args["attach_to_session"].as_bool() == Some(true)
            {
                return Ok(error(
                    "attach_to_session is not supported by this build's scheduler yet; the answer is delivered to the job's chat instead.",
                ));
            }
            let (zone, _) = super::zone::Zone::for_setup(self.manager.services().setup());
            let call = Call {
                book: &book,
                args: &args,
                now: now(),
                zone,
            };
            if matches!(action.as_str(), "create" | "list") {
                return Ok(if action == "create" {
                    self.create(&call, ctx)
                } else {
                    list(&call)
                });
            }
            let Some(key) = call.text("job_id").map(str::to_owned) else {
                return Ok(match action.as_str() {
                    "pause" | "resume" | "remove" | "run" | "run_now" | "trigger" | "update" => {
                        error(format!("job_id is required for {action}"))
                    }
                    other => error(format!("Unknown cron action '{other}'")),
                });
            };
            Ok(match action.as_str() {
                "pause" | "resume" => toggle(&call, &key, action == "pause"),
                "remove" => remove(&call, &key),
                "run" | "run_now" | "trigger" => self.run_now(&call, &key, ctx).await,
                "update" => match jobs::update(call.book, &key, call.args, call.now, &call.zone) {
                    Ok(job) => ok(json!({"success": true, "job": format_job(&job)})),
                    Err(e) => error(e),
                },
                other => error(format!("Unknown cron action '{other}'")),
            })
        })
    }
}

/// One cronjob call: the job book, the arguments, the time and time zone.
struct Call<'a> {
    book: &'a jobs::Book,
    args: &'a Value,
    now: i64,
    zone: super::zone::Zone,
}

impl Call<'_> {
    /// A non-empty string argument.
    fn text(&self, key: &str) -> Option<&str> {
        self.args[key]
            .as_str()
            .map(str::trim)
            .filter(|s| !s.is_empty())
    }
}

impl CronjobTool {
    /// `create`: a new job; one made in a chat answers there unless told otherwise.
    fn create(&self, call: &Call<'_>, ctx: &ToolContext) -> String {
        let (Some(schedule), Some(prompt)) = (call.text("schedule"), call.text("prompt")) else {
            return error("create requires both schedule and prompt");
        };
        let args = call.args;
        let origin = self.origin(&ctx.session_id);
        let deliver =
            call.text("deliver")
                .unwrap_or(if origin.is_some() { "origin" } else { "local" });
        let made = jobs::new_job(
            schedule,
            prompt,
            call.text("name"),
            Some(deliver),
            args["repeat"].as_i64(),
            call.now,
            &call.zone,
        )
        .and_then(|mut job| {
            if let Some(origin) = &origin {
                job["origin"] = origin.clone();
            }
            jobs::set_extras(&call.book.home, &mut job, args)?;
            if let Some(toolsets) = args.get("enabled_toolsets").filter(|v| v.is_array()) {
                job["enabled_toolsets"] = toolsets.clone();
            }
            if let Some(m) = args["model"]["model"].as_str() {
                job["model"] = Value::from(m);
                job["provider"] = args["model"]["provider"].clone();
            }
            jobs::add(call.book, job, call.now)
        });
        match made {
            Ok(job) => ok(json!({
                "success": true,
                "job_id": job["id"],
                "name": job["name"],
                "skill": job["skill"],
                "skills": job["skills"],
                "schedule": job["schedule"]["display"],
                "repeat": format_job(&job)["repeat"],
                "deliver": job["deliver"],
                "next_run_at": job["next_run_at"],
                "job": format_job(&job),
                "message": format!("Cron job '{}' created.", job["name"].as_str().unwrap_or("")),
            })),
            Err(e) => error(e),
        }
    }

    /// `run`: the job now; its script needs the same approval as running it.
    async fn run_now(&self, call: &Call<'_>, key: &str, ctx: &ToolContext) -> String {
        if let Some(refused) = approve_script(call.book, key, ctx).await {
            return refused;
        }
        match super::run::run_job(&self.manager, call.book, key).await {
            Ok(outcome) => ok(json!({
                "success": true,
                "job": {"job_id": outcome.job_id, "name": outcome.name},
                "executed": true,
                "execution_success": outcome.result.is_ok(),
                "execution_error": outcome.result.err(),
            })),
            Err(e) => error(e),
        }
    }
}

/// `list`: every job.
fn list(call: &Call<'_>) -> String {
    match jobs::load(call.book) {
        Ok(all) => ok(json!({
            "success": true,
            "count": all.len(),
            "jobs": all.iter().map(format_job).collect::<Vec<_>>(),
        })),
        Err(e) => error(e),
    }
}

/// `pause` / `resume`.
fn toggle(call: &Call<'_>, key: &str, pause: bool) -> String {
    let changed = if pause {
        jobs::pause(call.book, key, call.now)
    } else {
        jobs::resume(call.book, key, call.now, &call.zone)
    };
    match changed {
        Ok(job) => ok(json!({"success": true, "job": format_job(&job)})),
        Err(e) => error(format!("{e} Use cronjob(action='list') to inspect jobs.")),
    }
}

/// `remove`.
fn remove(call: &Call<'_>, key: &str) -> String {
    match jobs::remove(call.book, key, call.now) {
        Ok(job) => ok(json!({
            "success": true,
            "message": format!("Cron job '{}' removed.", job["name"].as_str().unwrap_or("")),
            "removed_job": {"id": job["id"], "name": job["name"], "schedule": job["schedule"]["display"]},
        })),
        Err(e) => error(format!("{e} Use cronjob(action='list') to inspect jobs.")),
    }
}

/// The gate's answer for running job `key`'s script now, judged as the
/// command that runs it (the gate reads the script); `Some` holds the
/// refusal.
async fn approve_script(book: &super::jobs::Book, key: &str, ctx: &ToolContext) -> Option<String> {
    let home = book.home.as_path();
    let all = jobs::load(book).ok()?;
    let job = all.get(jobs::find(&all, key).ok()?)?;
    let script = job["script"].as_str().filter(|s| !s.trim().is_empty())?;
    let path = super::script::resolve(home, script, ctx.homes.home.as_deref()).ok()?;
    let shell = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("sh") || e.eq_ignore_ascii_case("bash"));
    let quoted = shlex::try_quote(&path.to_string_lossy()).ok()?.into_owned();
    let command = format!("{} {quoted}", if shell { "bash" } else { "python3" });
    let host = hermes_tools::approval::Host::new(
        ctx.homes.home.clone(),
        path.parent().map(std::path::Path::to_path_buf),
        Vec::new(),
    );
    let site = ctx.hook_site();
    let observers = (!ctx.hooks.is_empty()).then_some((ctx.hooks.as_ref(), site));
    match ctx
        .approvals
        .check_observed(&command, &host, observers)
        .await
    {
        hermes_tools::approval::Decision::Allow { .. } => None,
        hermes_tools::approval::Decision::Refuse { result, status } => {
            ctx.status(status);
            Some(result)
        }
    }
}
