//! `process`: manage the background processes `terminal(background=true)`
//! started — list, poll, read the log, wait, kill, write to stdin.

use std::time::Duration;

use futures_util::future::BoxFuture;
use hermes_protocol::ToolSchema;
use serde_json::{Value, json};

use crate::processes::{Background, Exit};
use crate::{Tool, ToolContext, ToolError, ToolResult, arg_i64, arg_str};

/// `wait`'s default and longest wait, in seconds.
pub const WAIT_MAX_SECS: u64 = 180;
/// Lines `log` returns by default.
const LOG_LINES: usize = 200;

/// The `process` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessTool;

impl Tool for ProcessTool {
    fn name(&self) -> &str {
        "process"
    }

    fn toolset(&self) -> &str {
        "terminal"
    }

    fn emoji(&self) -> &str {
        "⚙️"
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "process".into(),
            description: "Manage processes started with terminal(background=true). Actions: 'list' \
                (every process of this session), 'poll' (status and the latest output), 'log' (output \
                by lines, paginated), 'wait' (block until it exits or the timeout passes), 'kill' \
                (end it and its children), 'write' (send raw text to its stdin, no newline), \
                'submit' (send text plus Enter, to answer a prompt), 'close' (end its input: EOF, \
                Ctrl-D on a terminal). write/submit/close need a process started with pty=true; \
                'write' can send control characters, e.g. \\u0003 for Ctrl-C."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "action": {
                        "type": "string",
                        "enum": ["list", "poll", "log", "wait", "kill", "write", "submit", "close"],
                        "description": "Action to perform on background processes"
                    },
                    "session_id": {"type": "string", "description": "Process session ID (from terminal background output). Required for all actions except 'list'."},
                    "data": {"type": "string", "description": "Text to send to process stdin (for 'write' and 'submit' actions)"},
                    "timeout": {"type": "integer", "minimum": 1, "description": "Max seconds to block for 'wait' action. Returns partial output on timeout."},
                    "offset": {"type": "integer", "description": "Line offset for 'log' action (default: last 200 lines)"},
                    "limit": {"type": "integer", "minimum": 1, "description": "Max lines to return for 'log' action"}
                },
                "required": ["action"]
            }),
        }
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let action = arg_str(&args, "action").unwrap_or("").trim().to_owned();
            if action == "list" {
                return Ok(list(ctx).to_string());
            }
            const ACTIONS: &[&str] = &["poll", "log", "wait", "kill", "write", "submit", "close"];
            if !ACTIONS.contains(&action.as_str()) {
                return Ok(json!({"error": format!(
                    "Unknown process action: {action}. Use: list, poll, log, wait, kill, write, submit, close"
                )})
                .to_string());
            }
            let id = match args.get("session_id") {
                Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_owned(),
                Some(Value::Number(n)) => n.to_string(),
                _ => {
                    return Ok(
                        json!({"error": format!("session_id is required for {action}")})
                            .to_string(),
                    );
                }
            };
            let Some(process) = ctx.processes.get(&id) else {
                return Ok(
                    json!({"status": "not_found", "error": format!("No process with ID {id}")})
                        .to_string(),
                );
            };
            let data = arg_str(&args, "data").unwrap_or("");
            let value = match action.as_str() {
                "poll" => poll(&process),
                "log" => log(&process, arg_i64(&args, "offset"), arg_i64(&args, "limit")),
                "wait" => wait(&process, arg_i64(&args, "timeout"), ctx).await?,
                "kill" => kill(&process).await,
                "write" => write(&process, data).await,
                "submit" => write(&process, &format!("{data}\n")).await,
                _ => close(&process).await,
            };
            Ok(value.to_string())
        })
    }
}

fn status_of(exit: Option<Exit>) -> &'static str {
    if exit.is_some() { "exited" } else { "running" }
}

fn list(ctx: &ToolContext) -> Value {
    let processes: Vec<Value> = ctx
        .processes
        .list()
        .iter()
        .map(|p| {
            let mut entry = json!({
                "session_id": p.id,
                "command": p.command.chars().take(200).collect::<String>(),
                "cwd": p.cwd.display().to_string(),
                "pid": p.pid,
                "started_at": hermes_started_at(p),
                "uptime_seconds": p.uptime_secs(),
                "status": status_of(p.exit()),
                "output_preview": p.tail(200),
            });
            // What the process itself will say, so the agent can wait for it.
            let patterns = p.watch_patterns();
            if !patterns.is_empty() {
                entry["watch_patterns"] = json!(patterns);
                entry["watch_hit"] = json!(p.watch_hit());
            }
            if p.announces_exit() {
                entry["notify_on_complete"] = json!(true);
            }
            if let Some(exit) = p.exit() {
                entry["exit_code"] = json!(exit.code);
            }
            entry
        })
        .collect();
    json!({"processes": processes})
}

fn hermes_started_at(p: &Background) -> String {
    let secs = p
        .started_at
        .duration_since(std::time::SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    hermes_state::time::UtcTime::from_unix(i64::try_from(secs).unwrap_or(i64::MAX)).iso()
}

fn ended(p: &Background, exit: Exit, value: &mut Value) {
    value["exit_code"] = json!(exit.code);
    value["completion_reason"] = json!(if exit.killed { "killed" } else { "exited" });
    value["termination_source"] = json!(if exit.killed { "process.kill" } else { "" });
    let _ = p;
}

fn poll(p: &Background) -> Value {
    let mut value = json!({
        "session_id": p.id,
        "command": p.command,
        "status": status_of(p.exit()),
        "pid": p.pid,
        "uptime_seconds": p.uptime_secs(),
        "output_preview": p.tail(1000),
    });
    if let Some(exit) = p.exit() {
        ended(p, exit, &mut value);
    }
    value
}

fn log(p: &Background, offset: Option<i64>, limit: Option<i64>) -> Value {
    let lines = p.lines();
    let total = lines.len();
    let limit = limit.filter(|l| *l > 0).map_or(LOG_LINES, |l| l as usize);
    let offset = offset.unwrap_or(0);
    let (start, end) = if offset == 0 {
        (total.saturating_sub(limit), total)
    } else {
        // Negative offsets count from the end, as Python slicing does.
        let start = if offset < 0 {
            total.saturating_sub(offset.unsigned_abs() as usize)
        } else {
            (offset as usize).min(total)
        };
        (start, (start + limit).min(total))
    };
    let shown = &lines[start..end];
    if end == total && p.exit().is_some() {
        p.mark_consumed();
    }
    json!({
        "session_id": p.id,
        "command": p.command,
        "status": status_of(p.exit()),
        "output": shown.join("\n"),
        "total_lines": total,
        "showing": format!("{} lines", shown.len()),
    })
}

async fn wait(p: &Background, timeout: Option<i64>, ctx: &ToolContext) -> Result<Value, ToolError> {
    let asked = timeout
        .filter(|t| *t > 0)
        .map_or(WAIT_MAX_SECS, |t| t as u64);
    let secs = asked.min(WAIT_MAX_SECS);
    let waited = tokio::select! {
        exit = p.wait(Duration::from_secs(secs)) => exit,
        () = ctx.cancel.cancelled() => {
            return Ok(json!({
                "status": "interrupted",
                "command": p.command,
                "output": p.tail(1000),
                "note": "User sent a new message -- wait interrupted",
            }));
        }
    };
    let clamp = (asked > WAIT_MAX_SECS).then(|| {
        format!("Requested wait of {asked}s was clamped to configured limit of {WAIT_MAX_SECS}s")
    });
    Ok(match waited {
        Some(exit) => {
            p.mark_consumed();
            let mut value =
                json!({"status": "exited", "command": p.command, "output": p.tail(2000)});
            ended(p, exit, &mut value);
            if let Some(note) = clamp {
                value["timeout_note"] = json!(note);
            }
            value
        }
        None => json!({
            "status": "timeout",
            "command": p.command,
            "output": p.tail(1000),
            "timeout_note": clamp.unwrap_or_else(|| format!("Waited {secs}s, process still running")),
        }),
    })
}

async fn kill(p: &Background) -> Value {
    p.mark_consumed();
    match p.kill().await {
        Some(_) => json!({
            "status": "killed",
            "session_id": p.id,
            "completion_reason": "killed",
            "termination_source": "process.kill",
            "output": p.tail(2000),
        }),
        None => {
            let mut value =
                json!({"status": "already_exited", "command": p.command, "output": p.tail(2000)});
            if let Some(exit) = p.exit() {
                ended(p, exit, &mut value);
            }
            value
        }
    }
}

async fn write(p: &Background, data: &str) -> Value {
    match p.write(data).await {
        Ok(n) => json!({"status": "ok", "bytes_written": n}),
        Err(e) if p.exit().is_some() => json!({"status": "already_exited", "error": e}),
        Err(e) => json!({"status": "error", "error": e}),
    }
}

async fn close(p: &Background) -> Value {
    match p.close_stdin().await {
        Ok(message) => json!({"status": "ok", "message": message}),
        Err(e) if p.exit().is_some() => json!({"status": "already_exited", "error": e}),
        Err(e) => json!({"status": "error", "error": e}),
    }
}
