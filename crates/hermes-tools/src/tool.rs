//! The contract every tool implements.

use std::path::{Path, PathBuf};

use futures_util::future::BoxFuture;
use hermes_protocol::ToolSchema;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// How a tool may share a concurrent batch with other calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParallelClass {
    /// Runs alone, in order (the default: anything with side effects).
    Exclusive,
    /// Read-only with no shared state: always safe to run alongside others.
    ReadOnly,
    /// Safe alongside calls whose `path` argument does not overlap its own.
    PathScoped,
}

/// What a tool call can see of the session it runs in.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The session's working directory; relative paths resolve against it.
    pub cwd: PathBuf,
    /// Fires when the user interrupts the turn; long-running tools must stop.
    pub cancel: CancellationToken,
    /// The session id, for tools that key state by session.
    pub session_id: String,
    /// The user's home and Hermes home, for `~` expansion and protected paths.
    pub homes: Homes,
    /// Dangerous-command policy for this session (who to ask, what is allowed).
    pub approvals: std::sync::Arc<crate::approval::ApprovalGate>,
    /// Where tools report status lines (e.g. a refused command); `None` drops them.
    pub events: Option<tokio::sync::mpsc::UnboundedSender<hermes_protocol::Event>>,
    /// Who answers the `clarify` tool's questions; `None` where nobody can (one-shot runs).
    pub clarifier: Option<std::sync::Arc<dyn Clarifier>>,
    /// The tools offered in this turn, for tools that call other tools (`execute_code`).
    pub registry: Option<crate::Registry>,
    /// Environment variables that processes the tools start never inherit:
    /// the provider keys and other credentials the session knows about.
    pub hidden_env: std::sync::Arc<[String]>,
    /// The session's background processes (`terminal(background=true)`, `process`).
    pub processes: std::sync::Arc<crate::processes::ProcessTable>,
    /// Lifecycle hooks run around each tool call (none by default).
    pub hooks: std::sync::Arc<crate::hooks::Hooks>,
    /// An editor's view of the files (its unsaved buffers), which `read_file`
    /// and `write_file` go through when set.
    pub client_files: Option<std::sync::Arc<dyn ClientFiles>>,
    /// Where commands and file operations run (`terminal.backend`).
    pub env: std::sync::Arc<dyn hermes_env::Environment>,
    /// The session's external memory provider, told of delegated work.
    pub memory: Option<crate::memory_provider::ProviderHandle>,
}

/// Files as an editor client holds them (ACP's `fs/read_text_file` and
/// `fs/write_text_file`).
pub trait ClientFiles: Send + Sync + std::fmt::Debug {
    /// The text of `path` as the editor has it; `None` to read the disk instead.
    fn read<'a>(&'a self, path: &'a std::path::Path) -> BoxFuture<'a, Option<String>>;
    /// Writes `content` to `path` through the editor; `Ok(false)` to write the disk instead.
    fn write<'a>(
        &'a self,
        path: &'a std::path::Path,
        content: &'a str,
    ) -> BoxFuture<'a, Result<bool, String>>;
}

/// Puts a clarifying question to the user through the front-end's UI.
pub trait Clarifier: Send + Sync + std::fmt::Debug {
    /// Asks `question`, offering `choices` (empty for an open question); the
    /// answer is the chosen choice or the user's own text. `Err` says why no
    /// answer came (the user cancelled, the input closed).
    fn ask<'a>(
        &'a self,
        question: &'a str,
        choices: &'a [String],
    ) -> BoxFuture<'a, Result<String, String>>;
}

/// The user's home directory and `HERMES_HOME`, passed in (never read from the process environment).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Homes {
    /// `$HOME`.
    pub home: Option<PathBuf>,
    /// `$HERMES_HOME` (default `~/.hermes`).
    pub hermes_home: Option<PathBuf>,
}

impl ToolContext {
    /// Where hooks run for a call in this context; their warnings become status lines.
    pub fn hook_site(&self) -> crate::hooks::HookSite<'_> {
        crate::hooks::HookSite {
            session_id: &self.session_id,
            cwd: &self.cwd,
            events: self.events.as_ref(),
        }
    }

    /// Asks the approval gate about an action flagged for `reason`; `Err`
    /// holds the tool result that refuses it.
    pub async fn approve_action(&self, subject: &str, reason: &str) -> Result<(), String> {
        let site = self.hook_site();
        let observers = (!self.hooks.is_empty()).then_some((self.hooks.as_ref(), site));
        match self
            .approvals
            .check_flagged(subject, reason, observers)
            .await
        {
            crate::approval::Decision::Allow { .. } => Ok(()),
            crate::approval::Decision::Refuse { result, status } => {
                self.status(status);
                Err(result)
            }
        }
    }

    /// Asks for approval when writing `path` changes what runs later (the
    /// Hermes home's scripts, hooks, plugins, cron jobs, skills' scripts).
    pub async fn approve_write(&self, tool: &str, path: &std::path::Path) -> Result<(), String> {
        match crate::builtin::write_file::guard::runs_later(&self.homes, path) {
            Some(reason) => {
                self.approve_action(&format!("{tool} {}", path.display()), reason)
                    .await
            }
            None => Ok(()),
        }
    }

    /// A context rooted at `cwd` with a fresh cancellation token.
    pub fn new(cwd: impl Into<PathBuf>, session_id: impl Into<String>) -> Self {
        Self {
            cwd: cwd.into(),
            cancel: CancellationToken::new(),
            session_id: session_id.into(),
            homes: Homes::default(),
            approvals: std::sync::Arc::default(),
            events: None,
            clarifier: None,
            registry: None,
            hidden_env: std::sync::Arc::from(Vec::new()),
            processes: std::sync::Arc::default(),
            hooks: std::sync::Arc::default(),
            client_files: None,
            env: hermes_env::local(),
            memory: None,
        }
    }

    /// Sends a status line to the front-end, if one listens.
    pub fn status(&self, message: impl Into<String>) {
        if let Some(tx) = &self.events {
            let _ = tx.send(hermes_protocol::Event::Status {
                message: message.into(),
            });
        }
    }

    /// Resolves a user-supplied path (absolute, relative to `cwd`, or `~/…`).
    pub fn resolve(&self, raw: &str) -> PathBuf {
        crate::paths::resolve(&self.cwd, raw, self.homes.home.as_deref())
    }

    /// The working directory.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }
}

/// Why a tool call did not produce a normal result.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// A problem the model should read and act on; becomes `{"error": …}`.
    #[error("{0}")]
    Model(String),
    /// The call was cancelled by an interrupt.
    #[error("cancelled")]
    Cancelled,
    /// A failure that must end the turn (the model cannot fix it).
    #[error("fatal tool failure: {0}")]
    Fatal(String),
}

impl ToolError {
    /// A model-facing error.
    pub fn model(msg: impl Into<String>) -> Self {
        ToolError::Model(msg.into())
    }
}

/// A tool's result: JSON text for the model, or an error.
pub type ToolResult = Result<String, ToolError>;

/// Formats a model-facing error as the JSON object tools return.
pub fn error_json(message: &str) -> String {
    serde_json::json!({ "error": message }).to_string()
}

/// A tool the model can call.
pub trait Tool: Send + Sync {
    /// Wire name, e.g. `read_file`.
    fn name(&self) -> &str;
    /// Toolset it belongs to, e.g. `file`.
    fn toolset(&self) -> &str;
    /// One emoji for progress lines.
    fn emoji(&self) -> &str {
        "⚡"
    }
    /// The schema the model sees.
    fn schema(&self) -> ToolSchema;
    /// Whether the tool can run here; `Err` says why not (it is then not offered).
    fn check(&self) -> Result<(), String> {
        Ok(())
    }
    /// How it may share a concurrent batch.
    fn parallel_class(&self) -> ParallelClass {
        ParallelClass::Exclusive
    }
    /// Text to re-inject after the conversation is compacted (the todo list), so state
    /// the model relies on survives the summary; `None` for most tools.
    fn compaction_note(&self) -> Option<String> {
        None
    }
    /// Results longer than this (in characters) are truncated before the model sees them.
    fn max_result_chars(&self) -> usize {
        100_000
    }
    /// Runs the tool with already-parsed JSON arguments.
    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult>;
}

/// The schema named `name` in a list of declared schemas (each
/// `{"name", "description", "parameters"}`, as a provider ships them in a
/// JSON file); an empty one when the list has none by that name.
pub fn declared_schema(declared: &[Value], name: &str) -> hermes_protocol::ToolSchema {
    let found = declared.iter().find(|s| s["name"] == name);
    hermes_protocol::ToolSchema {
        name: name.to_owned(),
        description: found
            .and_then(|s| s["description"].as_str())
            .unwrap_or_default()
            .to_owned(),
        parameters: found.map(|s| s["parameters"].clone()).unwrap_or_default(),
    }
}

/// Reads an optional string argument.
pub fn arg_str<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

/// Reads a required string argument, with an error the model can act on.
pub fn require_str<'a>(args: &'a Value, tool: &str, key: &str) -> Result<&'a str, ToolError> {
    arg_str(args, key).ok_or_else(|| {
        ToolError::model(format!(
            "{tool}: missing required string argument '{key}'. Call {tool} again with '{key}' set."
        ))
    })
}

/// Reads an integer argument leniently (numbers, or strings holding numbers).
pub fn arg_i64(args: &Value, key: &str) -> Option<i64> {
    match args.get(key)? {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Reads a boolean argument leniently (`true`, `"true"`, `1`).
pub fn arg_bool(args: &Value, key: &str) -> Option<bool> {
    match args.get(key)? {
        Value::Bool(b) => Some(*b),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" => Some(true),
            "false" | "0" | "no" => Some(false),
            _ => None,
        },
        Value::Number(n) => n.as_i64().map(|v| v != 0),
        _ => None,
    }
}

/// Tools that come and go while a session runs (MCP servers connecting,
/// reconnecting, changing their lists). The agent re-reads them before each
/// model request whenever the generation moves on.
pub trait DynamicTools: Send + Sync {
    /// Changes whenever [`DynamicTools::tools`] would return something else.
    fn generation(&self) -> u64;
    /// The tools on offer now, for a model with `context_length` tokens of
    /// window (a source may offer fewer, bigger-picture tools to small windows).
    fn tools(&self, context_length: u64) -> Vec<std::sync::Arc<dyn Tool>>;
    /// Waits (bounded) for start-up discovery before the first request.
    fn ready(&self) -> BoxFuture<'_, ()>;
}
