//! Plugins as external executables: one long-lived process per plugin that
//! speaks newline-delimited JSON-RPC 2.0 on stdin/stdout. Hermes sends
//! `initialize` once (its reply may list the plugin's tools), then a `hook`
//! request (`{"event", "payload"}`) per lifecycle point the plugin declared
//! and a `tools/call` request (`{"name", "arguments", "session_id", "cwd"}`)
//! per call of one of its tools. A hook's result is the plugin's answer in
//! the shell-hook wire shape, a bare string (a replacement for `transform_*`
//! events, context for `pre_llm_call`), or `null`. A plugin that dies or
//! stalls is restarted on its next call; meanwhile it contributes nothing.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::Mutex;

use super::{HookEvent, HookHandler};
use crate::{Tool, ToolContext, ToolError, ToolResult};
use hermes_protocol::ToolSchema;

/// The protocol a plugin is told it speaks.
pub const PLUGIN_PROTOCOL: &str = "hermes-plugin/1";

/// How to start a plugin and what it listens for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginCommand {
    /// Its key (the name people enable).
    pub name: String,
    /// The program and its arguments.
    pub argv: Vec<String>,
    /// Its directory (the working directory it runs in).
    pub dir: PathBuf,
    /// The events it declared (`provides_hooks`).
    pub events: Vec<HookEvent>,
    /// The tools it declared (`provides_tools`); their schemas come with `initialize`.
    pub tools: Vec<String>,
    /// Seconds one call may take.
    pub timeout_secs: u64,
}

struct Running {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

/// A plugin's hooks and tools, answered by its process.
#[derive(Debug)]
pub struct PluginHook {
    command: PluginCommand,
    process: Mutex<Option<Running>>,
    /// The tools its last `initialize` listed.
    schemas: std::sync::Mutex<Vec<ToolSchema>>,
}

impl std::fmt::Debug for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running")
            .field("next_id", &self.next_id)
            .finish()
    }
}

impl PluginHook {
    /// A plugin that is started on its first call.
    pub fn new(command: PluginCommand) -> Self {
        Self {
            command,
            process: Mutex::new(None),
            schemas: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.command.name
    }

    /// Whether it declared tools.
    pub fn declares_tools(&self) -> bool {
        !self.command.tools.is_empty()
    }

    /// The schemas of the tools it declared, as its `initialize` reply lists
    /// them (starting it if needed).
    pub async fn tool_schemas(&self) -> Result<Vec<ToolSchema>, String> {
        let mut slot = self.process.lock().await;
        if slot.is_none() {
            *slot = Some(self.start().await?);
        }
        drop(slot);
        let listed = self
            .schemas
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let missing: Vec<&str> = self
            .command
            .tools
            .iter()
            .filter(|t| !listed.iter().any(|s| &s.name == *t))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "its initialize reply lists no schema for {}",
                missing.join(", ")
            ));
        }
        Ok(listed
            .into_iter()
            .filter(|s| self.command.tools.contains(&s.name))
            .collect())
    }

    /// Runs its tool `name` (`tools/call`); the result as text for the model.
    pub async fn call_tool(&self, name: &str, args: Value, ctx: &ToolContext) -> ToolResult {
        let params = json!({
            "name": name,
            "arguments": args,
            "session_id": ctx.session_id,
            "cwd": ctx.cwd.display().to_string(),
        });
        match self.ask("tools/call", params).await {
            Ok(Value::String(text)) => Ok(text),
            Ok(other) => Ok(other.to_string()),
            Err(e) => Err(ToolError::model(format!(
                "{name} (plugin {}) failed: {e}",
                self.command.name
            ))),
        }
    }

    async fn start(&self) -> Result<Running, String> {
        let (program, args) = self
            .command
            .argv
            .split_first()
            .ok_or_else(|| "its executable is empty".to_owned())?;
        let program = if program.starts_with("./") {
            self.command.dir.join(program).display().to_string()
        } else {
            program.clone()
        };
        let mut child = tokio::process::Command::new(&program)
            .args(args)
            .current_dir(&self.command.dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start {program}: {e}"))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("its pipes could not be opened".into());
        };
        let mut running = Running {
            child,
            stdin,
            stdout: BufReader::new(stdout),
            next_id: 0,
        };
        let events: Vec<&str> = self.command.events.iter().map(|e| e.as_str()).collect();
        let limit = Duration::from_secs(self.command.timeout_secs);
        let init = json!({
            "protocol": PLUGIN_PROTOCOL,
            "hermes_version": env!("CARGO_PKG_VERSION"),
            "hooks": events,
            "tools": self.command.tools,
        });
        let reply = tokio::time::timeout(limit, request(&mut running, "initialize", init))
            .await
            .map_err(|_| format!("initialize timed out after {}s", self.command.timeout_secs))??;
        *self
            .schemas
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = listed_tools(&reply);
        Ok(running)
    }

    /// One JSON-RPC call of `method` (starting or restarting the process as
    /// needed); the reply's result, or why there is none.
    pub async fn ask(&self, method: &str, params: Value) -> Result<Value, String> {
        let mut slot = self.process.lock().await;
        // A plugin that exited since its last answer is started afresh.
        if slot
            .as_mut()
            .is_some_and(|r| r.child.try_wait().ok().flatten().is_some())
        {
            *slot = None;
        }
        if slot.is_none() {
            *slot = Some(self.start().await?);
        }
        let Some(running) = slot.as_mut() else {
            return Err("not running".into());
        };
        let limit = Duration::from_secs(self.command.timeout_secs);
        let answer = tokio::time::timeout(limit, request(running, method, params)).await;
        match answer {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => {
                *slot = None;
                Err(e)
            }
            Err(_) => {
                // A stalled plugin is killed (kill_on_drop) and restarted next time.
                *slot = None;
                Err(format!("timed out after {}s", self.command.timeout_secs))
            }
        }
    }
}

impl HookHandler for PluginHook {
    fn handles(&self, event: HookEvent, _tool: Option<&str>) -> bool {
        self.command.events.contains(&event)
    }

    fn call<'a>(
        &'a self,
        event: HookEvent,
        payload: &'a Value,
    ) -> BoxFuture<'a, Result<Option<Value>, String>> {
        Box::pin(async move {
            let params = json!({"event": event.as_str(), "payload": payload});
            let result = self
                .ask("hook", params)
                .await
                .map_err(|e| format!("plugin {} failed on {event}: {e}", self.command.name))?;
            Ok(normalize(event, result))
        })
    }
}

/// The tools an `initialize` reply lists (`{"tools": [{name, description, parameters}]}`).
fn listed_tools(reply: &Value) -> Vec<ToolSchema> {
    let Some(list) = reply.get("tools").and_then(Value::as_array) else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|t| {
            Some(ToolSchema {
                name: t.get("name")?.as_str()?.to_owned(),
                description: t
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                parameters: t
                    .get("parameters")
                    .cloned()
                    .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
            })
        })
        .collect()
}

/// A plugin's result in the wire shape the hook bus reads.
fn normalize(event: HookEvent, result: Value) -> Option<Value> {
    match result {
        Value::String(s) => match event {
            HookEvent::TransformToolResult
            | HookEvent::TransformLlmOutput
            | HookEvent::TransformTerminalOutput => Some(json!({"result": s})),
            HookEvent::PreLlmCall if !s.trim().is_empty() => Some(json!({"context": s})),
            _ => None,
        },
        Value::Object(_) => Some(result),
        _ => None,
    }
}

async fn request(running: &mut Running, method: &str, params: Value) -> Result<Value, String> {
    running.next_id += 1;
    let id = running.next_id;
    let mut line =
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
    line.push('\n');
    running
        .stdin
        .write_all(line.as_bytes())
        .await
        .map_err(|e| format!("cannot write to it: {e}"))?;
    running.stdin.flush().await.map_err(|e| e.to_string())?;
    loop {
        let mut reply = String::new();
        let n = running
            .stdout
            .read_line(&mut reply)
            .await
            .map_err(|e| format!("cannot read from it: {e}"))?;
        if n == 0 {
            let status = running.child.try_wait().ok().flatten();
            return Err(match status {
                Some(s) => format!("it exited ({s})"),
                None => "it closed its stdout".into(),
            });
        }
        let Ok(msg) = serde_json::from_str::<Value>(reply.trim()) else {
            // Stray output (a print meant for a log) is skipped.
            continue;
        };
        if msg.get("id").and_then(Value::as_u64) != Some(id) {
            continue;
        }
        if let Some(err) = msg.get("error") {
            let text = err
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("error");
            return Err(format!("it answered {method} with an error: {text}"));
        }
        return Ok(msg.get("result").cloned().unwrap_or(Value::Null));
    }
}

/// One of a plugin's tools, run by the plugin's process.
#[derive(Debug)]
pub struct PluginTool {
    plugin: std::sync::Arc<PluginHook>,
    schema: ToolSchema,
    toolset: String,
}

impl PluginTool {
    /// The tool `schema` of `plugin` (toolset `plugin-<name>`).
    pub fn new(plugin: std::sync::Arc<PluginHook>, schema: ToolSchema) -> Self {
        let toolset = format!("plugin-{}", plugin.name());
        Self {
            plugin,
            schema,
            toolset,
        }
    }
}

impl Tool for PluginTool {
    fn name(&self) -> &str {
        &self.schema.name
    }

    fn toolset(&self) -> &str {
        &self.toolset
    }

    fn emoji(&self) -> &str {
        "🧩"
    }

    fn schema(&self) -> ToolSchema {
        self.schema.clone()
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(self.plugin.call_tool(&self.schema.name, args, ctx))
    }
}
