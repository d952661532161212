//! `todo`: the session's task list, for planning multi-step work.

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use hermes_protocol::ToolSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::{ParallelClass, Tool, ToolContext, ToolError, ToolResult, arg_bool};

const STATUSES: [&str; 4] = ["pending", "in_progress", "completed", "cancelled"];
const MAX_CONTENT_CHARS: usize = 4_000;
const MAX_ITEMS: usize = 256;
const TRUNCATION_MARKER: &str = "… [truncated]";

/// One task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TodoItem {
    /// Model-chosen id.
    pub id: String,
    /// What to do.
    pub content: String,
    /// pending | in_progress | completed | cancelled
    pub status: String,
}

/// The task list, ordered by priority.
#[derive(Debug, Clone, Default)]
pub struct TodoList {
    items: Vec<TodoItem>,
}

impl TodoList {
    /// Current items.
    pub fn items(&self) -> &[TodoItem] {
        &self.items
    }

    /// Replaces the list, or merges by id when `merge` is set.
    pub fn write(&mut self, todos: &[Value], merge: bool) {
        let todos = dedupe_by_id(todos);
        if !merge {
            self.items = todos.iter().map(|t| validate(t)).collect();
        } else {
            for t in todos {
                let id = field(t, "id");
                if id.is_empty() {
                    continue;
                }
                match self.items.iter_mut().find(|i| i.id == id) {
                    Some(existing) => {
                        let content = field(t, "content");
                        if !content.is_empty() {
                            existing.content = cap(content);
                        }
                        let status = field(t, "status").to_ascii_lowercase();
                        if STATUSES.contains(&status.as_str()) {
                            existing.status = status;
                        }
                    }
                    None => self.items.push(validate(t)),
                }
            }
        }
        self.items.truncate(MAX_ITEMS);
    }

    /// The active items as text to re-inject after context compression, if any.
    pub fn format_for_injection(&self) -> Option<String> {
        let active: Vec<_> = self
            .items
            .iter()
            .filter(|i| i.status == "pending" || i.status == "in_progress")
            .collect();
        if active.is_empty() {
            return None;
        }
        let mut lines =
            vec!["[Your active task list was preserved across context compression]".to_owned()];
        for i in active {
            let marker = if i.status == "in_progress" {
                "[>]"
            } else {
                "[ ]"
            };
            lines.push(format!("- {marker} {}. {} ({})", i.id, i.content, i.status));
        }
        Some(lines.join("\n"))
    }

    fn to_json(&self) -> String {
        let count = |s: &str| self.items.iter().filter(|i| i.status == s).count();
        json!({
            "todos": self.items,
            "summary": {
                "total": self.items.len(),
                "pending": count("pending"),
                "in_progress": count("in_progress"),
                "completed": count("completed"),
                "cancelled": count("cancelled"),
            }
        })
        .to_string()
    }
}

fn field(v: &Value, key: &str) -> String {
    match v.get(key) {
        Some(Value::String(s)) => s.trim().to_owned(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

fn cap(content: String) -> String {
    if content.chars().count() <= MAX_CONTENT_CHARS {
        return content;
    }
    let keep = MAX_CONTENT_CHARS - TRUNCATION_MARKER.chars().count();
    content.chars().take(keep).collect::<String>() + TRUNCATION_MARKER
}

fn validate(v: &Value) -> TodoItem {
    if !v.is_object() {
        return TodoItem {
            id: "?".into(),
            content: "(invalid item)".into(),
            status: "pending".into(),
        };
    }
    let id = Some(field(v, "id"))
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "?".into());
    let content = field(v, "content");
    let content = if content.is_empty() {
        "(no description)".into()
    } else {
        cap(content)
    };
    let status = field(v, "status").to_ascii_lowercase();
    let status = if STATUSES.contains(&status.as_str()) {
        status
    } else {
        "pending".into()
    };
    TodoItem {
        id,
        content,
        status,
    }
}

/// Keeps the last occurrence of each id, in its position.
fn dedupe_by_id(todos: &[Value]) -> Vec<&Value> {
    let key = |i: usize, t: &Value| {
        if t.is_object() {
            Some(field(t, "id"))
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "?".into())
        } else {
            format!("\u{0}invalid{i}")
        }
    };
    let keys: Vec<String> = todos.iter().enumerate().map(|(i, t)| key(i, t)).collect();
    todos
        .iter()
        .enumerate()
        .filter(|(i, _)| !keys[i + 1..].contains(&keys[*i]))
        .map(|(_, t)| t)
        .collect()
}

/// The `todo` tool; its list lives as long as the tool instance (one per session).
#[derive(Debug, Clone, Default)]
pub struct TodoTool {
    list: Arc<Mutex<TodoList>>,
}

impl TodoTool {
    /// A handle on the list, e.g. for re-injection after compression.
    pub fn list(&self) -> Arc<Mutex<TodoList>> {
        Arc::clone(&self.list)
    }
}

impl Tool for TodoTool {
    fn name(&self) -> &str {
        "todo"
    }

    fn toolset(&self) -> &str {
        "todo"
    }

    fn emoji(&self) -> &str {
        "📋"
    }

    fn compaction_note(&self) -> Option<String> {
        self.list
            .lock()
            .ok()
            .and_then(|list| list.format_for_injection())
    }

    fn parallel_class(&self) -> ParallelClass {
        ParallelClass::Exclusive
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "todo".into(),
            description: "Keep a task list for this session: use it for work with three or more \
                steps or when the user gives several tasks. Call with no arguments to read the list. \
                Pass 'todos' to write: merge=false (default) replaces the whole list with a new \
                plan, merge=true updates items by id and appends new ones. Each item is {id, \
                content, status} with status pending, in_progress, completed or cancelled. Order is \
                priority; keep one item in_progress; mark items completed as soon as they are done, \
                and cancel and replace items that fail. Every call returns the full list."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "todos": {
                        "type": "array",
                        "description": "Items to write; omit to read the list.",
                        "items": {
                            "type": "object",
                            "properties": {
                                "id": {"type": "string", "description": "Unique item id"},
                                "content": {"type": "string", "description": "What the task is"},
                                "status": {"type": "string", "enum": STATUSES, "description": "Current status"}
                            },
                            "required": ["id", "content", "status"]
                        }
                    },
                    "merge": {"type": "boolean", "description": "true: update items by id and add new ones. false (default): replace the list.", "default": false}
                },
                "required": []
            }),
        }
    }

    fn call<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let merge = arg_bool(&args, "merge").unwrap_or(false);
            let todos = match args.get("todos") {
                None | Some(Value::Null) => None,
                Some(Value::Array(a)) => Some(a.clone()),
                Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
                    Ok(Value::Array(a)) => Some(a),
                    _ => {
                        return Err(ToolError::model(
                            "todos must be a list of objects, got an unparseable string",
                        ));
                    }
                },
                Some(other) => {
                    return Err(ToolError::model(format!(
                        "todos must be a list of {{id, content, status}} objects, got {}",
                        json_type(other)
                    )));
                }
            };
            let mut list = self
                .list
                .lock()
                .map_err(|_| ToolError::Fatal("todo list lock poisoned".into()))?;
            if let Some(todos) = todos {
                list.write(&todos, merge);
            }
            Ok(list.to_json())
        })
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
#[path = "todo_tests.rs"]
mod tests;
