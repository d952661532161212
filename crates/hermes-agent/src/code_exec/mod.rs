//! `execute_code`: runs a model-written Python script whose `hermes_tools` calls
//! come back over a Unix socket and run through the session's own tools. Only the
//! script's printed output reaches the conversation; the inner calls show up as
//! nested progress events, so a dozen tool calls cost the context one result.

mod child;
mod rpc;
mod schema;
mod stubs;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use hermes_protocol::ToolSchema;
use hermes_tools::{Registry, Tool, ToolContext, ToolError, ToolResult};
use serde_json::{Map, Value, json};

pub use schema::build_schema;
pub use stubs::{SANDBOX_ALLOWED_TOOLS, generate_module, sandbox_tools};

/// Default wall-clock limit for one script, in seconds (the reference's `DEFAULT_TIMEOUT`).
pub const DEFAULT_TIMEOUT_SECS: f64 = 300.0;
/// Default cap on tool calls one script may make.
pub const DEFAULT_MAX_TOOL_CALLS: usize = 50;

/// Where the script runs and with which interpreter (`code_execution.mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExecMode {
    /// The session's working directory, the active venv's python (the default).
    #[default]
    Project,
    /// A private temp directory, `python3` from PATH.
    Strict,
}

/// The `code_execution:` section of config.yaml.
#[derive(Debug, Clone, PartialEq)]
pub struct CodeExecSettings {
    /// Seconds before the script is killed.
    pub timeout_secs: f64,
    /// Tool calls allowed per script.
    pub max_tool_calls: usize,
    /// Working-directory/interpreter policy.
    pub mode: ExecMode,
}

impl Default for CodeExecSettings {
    fn default() -> Self {
        Self {
            timeout_secs: DEFAULT_TIMEOUT_SECS,
            max_tool_calls: DEFAULT_MAX_TOOL_CALLS,
            mode: ExecMode::Project,
        }
    }
}

impl CodeExecSettings {
    /// Applies the `code_execution:` section over the defaults.
    pub fn from_section(section: &hermes_state::settings::CodeExecutionSection) -> Self {
        let mut s = Self::default();
        if let Some(t) = section.timeout.filter(|t| *t > 0.0) {
            s.timeout_secs = t;
        }
        if let Some(n) = section.max_tool_calls.filter(|n| *n >= 0.0) {
            s.max_tool_calls = n as usize;
        }
        if let Some(m) = &section.mode {
            // Unknown values fall back to project mode, as the reference does.
            s.mode = match m.to_ascii_lowercase().as_str() {
                "strict" => ExecMode::Strict,
                _ => ExecMode::Project,
            };
        }
        s
    }

    /// The timeout as the reference prints it (`300`, or `2.5`).
    pub(crate) fn timeout_display(&self) -> String {
        if self.timeout_secs.fract() == 0.0 {
            format!("{}", self.timeout_secs as u64)
        } else {
            format!("{}", self.timeout_secs)
        }
    }
}

/// The `execute_code` tool, bound to the sandbox tools of one session.
#[derive(Debug, Clone)]
pub struct ExecuteCodeTool {
    sandbox: BTreeSet<String>,
    settings: CodeExecSettings,
}

impl ExecuteCodeTool {
    /// A tool whose scripts may call `enabled_tools` ∩ the sandbox allow-list.
    pub fn new(
        enabled_tools: impl IntoIterator<Item = String>,
        settings: CodeExecSettings,
    ) -> Self {
        let enabled: Vec<String> = enabled_tools.into_iter().collect();
        Self {
            sandbox: sandbox_tools(enabled.iter().map(String::as_str)),
            settings,
        }
    }

    /// The tools a script may call.
    pub fn sandbox_tools(&self) -> &BTreeSet<String> {
        &self.sandbox
    }
}

/// Registers `execute_code` in `tools`, its sandbox list drawn from the tools registered there.
pub fn register(tools: &mut Registry, settings: CodeExecSettings) {
    let names: Vec<String> = tools.names().map(str::to_owned).collect();
    tools.register(Arc::new(ExecuteCodeTool::new(names, settings)));
}

/// Re-registers `execute_code` only where `tools` already offers it (after toolset filtering).
pub fn refresh(tools: &mut Registry, settings: CodeExecSettings) {
    if tools.get("execute_code").is_some() {
        register(tools, settings);
    }
}

impl Tool for ExecuteCodeTool {
    fn name(&self) -> &str {
        "execute_code"
    }

    fn toolset(&self) -> &str {
        "code_execution"
    }

    fn emoji(&self) -> &str {
        "🐍"
    }

    fn schema(&self) -> ToolSchema {
        build_schema(&self.sandbox, &self.settings)
    }

    fn check(&self) -> Result<(), String> {
        // The transport is a Unix domain socket; the script needs a Python 3.
        if !cfg!(unix) {
            return Err("execute_code needs Unix domain sockets".into());
        }
        find_on_path("python3")
            .map(|_| ())
            .ok_or_else(|| "execute_code needs python3 on PATH".into())
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let code = args.get("code").and_then(Value::as_str).unwrap_or("");
            if code.trim().is_empty() {
                return Err(ToolError::model("No code provided."));
            }
            Ok(self.execute(code, ctx).await)
        })
    }
}

impl ExecuteCodeTool {
    /// Runs one script start to finish and builds the reference's result object.
    async fn execute(&self, code: &str, ctx: &ToolContext) -> String {
        let started = Instant::now();
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        match self.run(code, ctx, &calls, started).await {
            Ok(result) => result,
            Err(message) => json!({
                "status": "error",
                "error": message,
                "tool_calls_made": calls.load(std::sync::atomic::Ordering::SeqCst),
                "duration_seconds": round2(started.elapsed()),
            })
            .to_string(),
        }
    }

    async fn run(
        &self,
        code: &str,
        ctx: &ToolContext,
        calls: &Arc<std::sync::atomic::AtomicUsize>,
        started: Instant,
    ) -> Result<String, String> {
        // An empty intersection means the session offered none of the sandbox
        // tools; the reference then stubs the whole allow-list (calls to tools
        // not offered fail inside the script with a readable error).
        let sandbox: BTreeSet<String> = if self.sandbox.is_empty() {
            SANDBOX_ALLOWED_TOOLS
                .iter()
                .map(|s| (*s).to_owned())
                .collect()
        } else {
            self.sandbox.clone()
        };
        let python = resolve_python(self.settings.mode)
            .ok_or_else(|| "python3 was not found on PATH".to_owned())?;
        // Where Python's own tempfile would look, so a read-only /tmp is no obstacle.
        let candidates = hermes_fs::temp_dir_candidates(|k| std::env::var(k).ok(), &ctx.cwd);
        let staging = hermes_fs::scratch_dir_in("hermes_sandbox_", &candidates)
            .map_err(|e| format!("cannot create the sandbox directory: {e}"))?;
        // Owner-only: the socket and token file must not be reachable by other users.
        restrict(staging.path())?;
        std::fs::write(
            staging.path().join("hermes_tools.py"),
            generate_module(&sandbox),
        )
        .map_err(|e| format!("cannot write hermes_tools.py: {e}"))?;
        let script = staging.path().join("script.py");
        std::fs::write(&script, code).map_err(|e| format!("cannot write script.py: {e}"))?;

        let socket_path = staging.path().join("rpc.sock");
        let token = random_token()?;
        let server = rpc::RpcServer::bind(
            &socket_path,
            rpc::RpcConfig {
                token: token.clone(),
                allowed: sandbox,
                max_tool_calls: self.settings.max_tool_calls,
                calls: Arc::clone(calls),
            },
            ctx,
        )
        .map_err(|e| format!("cannot start the RPC socket: {e}"))?;

        let cwd = match self.settings.mode {
            ExecMode::Project if ctx.cwd.is_dir() => ctx.cwd.clone(),
            _ => staging.path().to_path_buf(),
        };
        let visible = std::env::vars().filter(|(k, _)| !ctx.hidden_env.contains(k));
        let env = child_env(visible, staging.path(), &socket_path, &token);
        let outcome = child::run(
            child::Spawn {
                python: &python,
                script: &script,
                cwd: &cwd,
                env,
            },
            Duration::from_secs_f64(self.settings.timeout_secs),
            &ctx.cancel,
        )
        .await;
        server.shutdown().await;
        let outcome = outcome.map_err(|e| format!("cannot run python: {e}"))?;
        Ok(self.result_json(
            outcome,
            calls.load(std::sync::atomic::Ordering::SeqCst),
            started,
        ))
    }

    /// The reference's `{status, output, exit_code, tool_calls_made, duration_seconds, …}`.
    fn result_json(&self, outcome: child::Outcome, calls: usize, started: Instant) -> String {
        let clean = |s: &str| {
            let stripped = hermes_tools::builtin::terminal::strip_ansi(s);
            hermes_llm::redact::redact_with(&stripped, hermes_llm::redact::RedactOptions::FILE_READ)
        };
        let (stdout, meta) = outcome.stdout.assemble();
        let stdout = clean(&stdout);
        let stderr = clean(&outcome.stderr);
        let exit_code = outcome.exit_code.unwrap_or(-1);
        let mut result = Map::new();
        let mut status = "success";
        let mut output = stdout.clone();
        let mut error = None;
        match outcome.ending {
            child::Ending::Timeout => {
                status = "timeout";
                let msg = format!(
                    "Script timed out after {}s and was killed.",
                    self.settings.timeout_display()
                );
                // The message goes into the output too: models tend to treat an
                // empty output as "nothing happened" and answer with nothing.
                output = if stdout.is_empty() {
                    format!("⏰ {msg}")
                } else {
                    format!("{stdout}\n\n⏰ {msg}")
                };
                error = Some(msg);
            }
            child::Ending::Interrupted => {
                status = "interrupted";
                output = format!("{stdout}\n[execution interrupted — user sent a new message]");
            }
            child::Ending::Exited if exit_code != 0 => {
                status = "error";
                error = Some(if stderr.is_empty() {
                    format!("Script exited with code {exit_code}")
                } else {
                    stderr.clone()
                });
                if !stderr.is_empty() {
                    output = format!("{stdout}\n--- stderr ---\n{stderr}");
                }
            }
            child::Ending::Exited => {}
        }
        result.insert("status".into(), json!(status));
        result.insert("output".into(), json!(output));
        result.insert("exit_code".into(), json!(exit_code));
        result.insert("tool_calls_made".into(), json!(calls));
        result.insert("duration_seconds".into(), json!(round2(started.elapsed())));
        result.extend(meta);
        if let Some(e) = error {
            result.insert("error".into(), json!(e));
        }
        Value::Object(result).to_string()
    }
}

fn round2(d: Duration) -> f64 {
    (d.as_secs_f64() * 100.0).round() / 100.0
}

#[cfg(unix)]
fn restrict(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| format!("cannot restrict the sandbox directory: {e}"))
}

#[cfg(not(unix))]
fn restrict(_dir: &Path) -> Result<(), String> {
    Ok(())
}

/// 32 random bytes as hex: the per-run secret a script must echo on every call.
fn random_token() -> Result<String, String> {
    // Two v4 UUIDs: 244 bits from the OS generator.
    Ok(format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    ))
}

/// The first executable `name` in `$PATH`.
fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        p.metadata()
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    }
    #[cfg(not(unix))]
    {
        p.is_file()
    }
}

/// Project mode prefers the active virtualenv/conda python so project deps import;
/// otherwise (and in strict mode) `python3` from PATH.
fn resolve_python(mode: ExecMode) -> Option<PathBuf> {
    if mode == ExecMode::Project {
        for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
            let Some(root) = std::env::var_os(var).filter(|r| !r.is_empty()) else {
                continue;
            };
            for exe in ["python", "python3"] {
                let candidate = Path::new(&root).join("bin").join(exe);
                if is_executable(&candidate) {
                    return Some(candidate);
                }
            }
        }
    }
    find_on_path("python3")
}

/// Variable names that look like credentials never reach the script.
const SECRET_SUBSTRINGS: &[&str] = &[
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "CREDENTIAL",
    "PASSWD",
    "AUTH",
    "DSN",
    "WEBHOOK",
    "CREDS",
    "BEARER",
    "APIKEY",
];

/// Prefixes of variables a script may need (locale, paths, venvs).
const SAFE_PREFIXES: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LANG",
    "LC_",
    "TERM",
    "TMPDIR",
    "TMP",
    "TEMP",
    "SHELL",
    "LOGNAME",
    "XDG_",
    "PYTHONPATH",
    "VIRTUAL_ENV",
    "CONDA",
];

/// Operational `HERMES_*` variables a script may read by exact name.
const HERMES_CHILD_ALLOWED: &[&str] = &[
    "HERMES_HOME",
    "HERMES_PROFILE",
    "HERMES_CONFIG",
    "HERMES_ENV",
];

/// The reference's `_scrub_child_env`: drop secret-looking names, keep safe prefixes
/// and the operational `HERMES_*` names, drop everything else.
pub fn scrub_env(source: impl IntoIterator<Item = (String, String)>) -> Vec<(String, String)> {
    source
        .into_iter()
        .filter(|(k, _)| {
            let upper = k.to_ascii_uppercase();
            !SECRET_SUBSTRINGS.iter().any(|s| upper.contains(s))
                && (SAFE_PREFIXES.iter().any(|p| k.starts_with(p))
                    || HERMES_CHILD_ALLOWED.contains(&k.as_str()))
        })
        .collect()
}

/// The scrubbed environment plus what the stubs and Python need.
fn child_env(
    source: impl IntoIterator<Item = (String, String)>,
    staging: &Path,
    socket: &Path,
    token: &str,
) -> Vec<(String, String)> {
    let source: Vec<(String, String)> = source.into_iter().collect();
    let timezone = source
        .iter()
        .find(|(k, _)| k == "HERMES_TIMEZONE")
        .map(|(_, v)| v.trim().to_owned())
        .filter(|v| !v.is_empty());
    let (existing_pp, mut env): (Vec<_>, Vec<_>) = scrub_env(source)
        .into_iter()
        .partition(|(k, _)| k == "PYTHONPATH");
    let existing_pp = existing_pp
        .into_iter()
        .map(|(_, v)| v)
        .find(|v| !v.is_empty());
    // The staging dir goes first so `import hermes_tools` resolves even when the
    // script runs in the project directory.
    let pythonpath = match existing_pp {
        Some(pp) => format!("{}:{pp}", staging.display()),
        None => staging.display().to_string(),
    };
    env.extend([
        ("HERMES_RPC_SOCKET".into(), socket.display().to_string()),
        ("HERMES_RPC_TOKEN".into(), token.to_owned()),
        ("PYTHONDONTWRITEBYTECODE".into(), "1".into()),
        ("PYTHONIOENCODING".into(), "utf-8".into()),
        ("PYTHONUTF8".into(), "1".into()),
        ("PYTHONPATH".into(), pythonpath),
    ]);
    if let Some(tz) = timezone {
        env.push(("TZ".into(), tz));
    }
    env
}

#[cfg(test)]
#[path = "tool_tests.rs"]
mod tool_tests;

#[cfg(test)]
#[path = "schema_tests.rs"]
mod schema_tests;
