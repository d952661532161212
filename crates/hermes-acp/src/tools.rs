//! How a tool call looks to an editor: its kind (the icon), its title, what
//! it shows while it runs and when it ends.

use std::path::Path;

use agent_client_protocol::v1::schema::{
    ContentBlock, Diff, ToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus,
    ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use serde_json::Value;

/// Most characters of a tool's result shown in an update.
const RESULT_SHOWN: usize = 4900;

/// The editor's kind for a Hermes tool.
pub fn kind_of(tool: &str) -> ToolKind {
    match tool {
        "read_file" | "skill_view" | "skills_list" | "browser_snapshot" | "browser_vision"
        | "browser_get_images" | "vision_analyze" => ToolKind::Read,
        "write_file" | "patch" | "skill_manage" => ToolKind::Edit,
        "search_files" => ToolKind::Search,
        "terminal" | "process" | "execute_code" | "browser_click" | "browser_type"
        | "browser_scroll" | "browser_press" | "browser_back" | "delegate_task"
        | "image_generate" | "text_to_speech" => ToolKind::Execute,
        "web_search" | "web_extract" | "browser_navigate" => ToolKind::Fetch,
        _ => ToolKind::Other,
    }
}

fn arg<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let head: String = text.chars().take(max.saturating_sub(3)).collect();
    format!("{head}...")
}

/// The one-line title an editor shows for a call.
pub fn title_of(tool: &str, args: &Value) -> String {
    let path = arg(args, "path").unwrap_or("");
    match tool {
        "terminal" => format!("terminal: {}", clip(arg(args, "command").unwrap_or(""), 80)),
        "read_file" => format!("read: {path}"),
        "write_file" => format!("write: {path}"),
        "patch" => format!("patch ({}): {path}", arg(args, "mode").unwrap_or("replace")),
        "search_files" => format!("search: {}", arg(args, "pattern").unwrap_or("")),
        "web_search" => format!("web search: {}", arg(args, "query").unwrap_or("")),
        "web_extract" => match args.get("urls").and_then(Value::as_array) {
            Some(urls) if !urls.is_empty() => {
                let first = urls[0].as_str().unwrap_or("");
                if urls.len() > 1 {
                    format!("extract: {first} (+{})", urls.len() - 1)
                } else {
                    format!("extract: {first}")
                }
            }
            _ => "web extract".into(),
        },
        "process" => match arg(args, "session_id") {
            Some(id) => format!("process {}: {id}", arg(args, "action").unwrap_or("manage")),
            None => format!("process {}", arg(args, "action").unwrap_or("manage")),
        },
        "delegate_task" => match args.get("tasks").and_then(Value::as_array) {
            Some(tasks) if !tasks.is_empty() => format!("delegate batch ({} tasks)", tasks.len()),
            _ => arg(args, "goal").map_or("delegate task".into(), |g| {
                format!("delegate: {}", clip(g, 60))
            }),
        },
        "session_search" => {
            arg(args, "query").map_or("recent sessions".into(), |q| format!("session search: {q}"))
        }
        "memory" => format!(
            "memory {}: {}",
            arg(args, "action").unwrap_or("update"),
            arg(args, "target").unwrap_or("memory")
        ),
        "execute_code" => arg(args, "code")
            .and_then(|c| c.lines().find(|l| !l.trim().is_empty()))
            .map_or("python code".into(), |l| {
                format!("python: {}", clip(l.trim(), 70))
            }),
        "todo" => match args.get("todos").and_then(Value::as_array) {
            Some(items) => format!(
                "todo ({} item{})",
                items.len(),
                if items.len() == 1 { "" } else { "s" }
            ),
            None => "todo".into(),
        },
        "skill_view" => format!("skill view ({})", arg(args, "name").unwrap_or("")),
        "skills_list" => {
            arg(args, "category").map_or("skills list".into(), |c| format!("skills list ({c})"))
        }
        "skill_manage" => format!(
            "skill {}: {}",
            arg(args, "action").unwrap_or("manage"),
            clip(arg(args, "name").unwrap_or(""), 64)
        ),
        "browser_navigate" => format!("navigate: {}", arg(args, "url").unwrap_or("")),
        "browser_snapshot" => "browser snapshot".into(),
        "vision_analyze" => format!(
            "analyze image: {}",
            clip(arg(args, "question").unwrap_or(""), 50)
        ),
        "cronjob" => format!("cron {}", arg(args, "action").unwrap_or("manage")),
        other => other.to_owned(),
    }
}

/// The `tool_call` an editor receives when a call starts; `diff` is the edit
/// it will make, when it is known and needs no approval.
pub fn started(id: &str, tool: &str, args: &Value, cwd: &Path, diff: Option<Diff>) -> ToolCall {
    let mut call = ToolCall::new(id.to_owned(), title_of(tool, args))
        .kind(kind_of(tool))
        .status(ToolCallStatus::InProgress);
    if let Some(path) = arg(args, "path") {
        let full = cwd.join(path);
        let mut location = ToolCallLocation::new(full);
        if let Some(line) = args
            .get("offset")
            .or_else(|| args.get("line"))
            .and_then(Value::as_u64)
            .and_then(|l| u32::try_from(l).ok())
        {
            location = location.line(line);
        }
        call = call.locations(vec![location]);
    }
    let content: Option<ToolCallContent> = match (tool, diff) {
        (_, Some(diff)) => Some(diff.into()),
        ("terminal", _) => arg(args, "command").map(|c| text(format!("$ {c}"))),
        ("search_files", _) => arg(args, "pattern").map(|p| {
            text(format!(
                "Searching for '{p}' ({}){}",
                arg(args, "target").unwrap_or("content"),
                arg(args, "path")
                    .map(|d| format!(" in {d}"))
                    .unwrap_or_default()
            ))
        }),
        ("write_file", None) => Some(text(format!(
            "Preparing write to {}. Approval prompt shows the diff.",
            arg(args, "path").unwrap_or("")
        ))),
        ("patch", None) => Some(text(format!(
            "Preparing {} edit for {}. Approval prompt shows the diff.",
            arg(args, "mode").unwrap_or("replace"),
            arg(args, "path").unwrap_or("")
        ))),
        ("read_file" | "web_extract", _) => None,
        _ => Some(text(clip(
            &serde_json::to_string_pretty(args).unwrap_or_default(),
            1200,
        ))),
    };
    if let Some(content) = content {
        call = call.content(vec![content]);
    }
    call.raw_input(args.clone())
}

fn text(s: String) -> ToolCallContent {
    ContentBlock::from(s).into()
}

/// Whether a tool's result reports a failure.
pub fn failed(result: &str) -> bool {
    if result.starts_with("Error executing tool '") {
        return true;
    }
    let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(result) else {
        return false;
    };
    let falsy = |k: &str| obj.get(k) == Some(&Value::Bool(false));
    let nonzero = |k: &str| obj.get(k).and_then(Value::as_i64).is_some_and(|c| c != 0);
    let error = obj.get("error").is_some_and(|e| !e.is_null());
    falsy("success") || falsy("ok") || nonzero("exit_code") || nonzero("returncode") || error
}

/// The `tool_call_update` that ends a call.
pub fn finished(id: &str, tool: &str, args: &Value, result: &str, ok: bool) -> ToolCallUpdate {
    let status = if ok && !failed(result) {
        ToolCallStatus::Completed
    } else {
        ToolCallStatus::Failed
    };
    let summary = match (tool, status) {
        ("write_file" | "patch", ToolCallStatus::Completed) => {
            format!(
                "✅ {tool} completed for `{}`",
                arg(args, "path").unwrap_or("")
            )
        }
        _ => shown(result),
    };
    let raw =
        serde_json::from_str::<Value>(result).unwrap_or_else(|_| Value::String(result.to_owned()));
    ToolCallUpdate::new(
        id.to_owned(),
        ToolCallUpdateFields::new()
            .kind(kind_of(tool))
            .status(status)
            .content(vec![text(summary)])
            .raw_output(raw),
    )
}

fn shown(result: &str) -> String {
    let total = result.chars().count();
    if total <= RESULT_SHOWN + 100 {
        return result.to_owned();
    }
    let head: String = result.chars().take(RESULT_SHOWN).collect();
    format!("{head}\n... ({total} chars total, truncated)")
}
