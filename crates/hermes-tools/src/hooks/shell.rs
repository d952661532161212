//! Shell hooks: a configured command run without a shell, the payload as
//! JSON on stdin, its answer read from stdout. Exit codes carry no meaning.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

use super::allowlist::expand_tilde;
use super::{HookEvent, HookHandler, HookSpec};

/// What a blocking hook says when it gives no message.
pub const DEFAULT_BLOCK_MESSAGE: &str = "Blocked by shell hook.";

/// How much of a hook's stderr goes into a warning.
const STDERR_SHOWN: usize = 400;

/// A configured command, ready to run.
#[derive(Debug, Clone)]
pub struct ShellHook {
    spec: HookSpec,
    matcher: Option<regex::Regex>,
    home: Option<PathBuf>,
}

/// One run of a hook command.
#[derive(Debug, Clone, PartialEq)]
pub struct ShellRun {
    /// Its exit status (`None` when it did not exit by itself).
    pub returncode: Option<i32>,
    /// What it printed.
    pub stdout: String,
    /// What it printed on stderr.
    pub stderr: String,
    /// It ran past its timeout and was killed.
    pub timed_out: bool,
    /// Seconds it ran.
    pub elapsed_secs: f64,
    /// Why it could not be started.
    pub error: Option<String>,
}

impl ShellHook {
    /// The hook `spec`; `home` expands a leading `~`.
    pub fn new(spec: HookSpec, home: Option<PathBuf>) -> Self {
        let matcher = spec
            .matcher
            .as_deref()
            .and_then(|m| regex::Regex::new(&format!("^(?:{m})$")).ok());
        Self {
            spec,
            matcher,
            home,
        }
    }

    /// Its configuration.
    pub fn spec(&self) -> &HookSpec {
        &self.spec
    }

    /// Whether it runs for `tool` (always, when it has no matcher).
    pub fn matches(&self, tool: Option<&str>) -> bool {
        let Some(pattern) = &self.spec.matcher else {
            return true;
        };
        let Some(tool) = tool else {
            return false;
        };
        match &self.matcher {
            Some(re) => re.is_match(tool),
            None => pattern == tool,
        }
    }

    /// Runs the command once with `payload` on stdin.
    pub async fn run(&self, payload: &Value) -> ShellRun {
        let started = Instant::now();
        let mut run = ShellRun {
            returncode: None,
            stdout: String::new(),
            stderr: String::new(),
            timed_out: false,
            elapsed_secs: 0.0,
            error: None,
        };
        let expanded = expand_leading_tilde(&self.spec.command, self.home.as_deref());
        let argv = match shlex::split(&expanded) {
            None => {
                run.error = Some(format!(
                    "command '{}' cannot be parsed: unbalanced quotes",
                    self.spec.command
                ));
                return run;
            }
            Some(argv) if argv.is_empty() => {
                run.error = Some("empty command".into());
                return run;
            }
            Some(argv) => argv,
        };
        let mut cmd = tokio::process::Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = match cmd.spawn() {
            Ok(child) => child,
            Err(e) => {
                run.error = Some(match e.kind() {
                    std::io::ErrorKind::NotFound => "command not found".into(),
                    std::io::ErrorKind::PermissionDenied => "command not executable".into(),
                    _ => e.to_string(),
                });
                return run;
            }
        };
        if let Some(mut stdin) = child.stdin.take() {
            let text = payload.to_string();
            // A hook that never reads its stdin must not stall us.
            tokio::spawn(async move {
                let _ = stdin.write_all(text.as_bytes()).await;
                let _ = stdin.shutdown().await;
            });
        }
        let limit = Duration::from_secs(self.spec.timeout_secs);
        match tokio::time::timeout(limit, child.wait_with_output()).await {
            Ok(Ok(out)) => {
                run.returncode = out.status.code();
                run.stdout = String::from_utf8_lossy(&out.stdout).into_owned();
                run.stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            }
            Ok(Err(e)) => run.error = Some(e.to_string()),
            Err(_) => run.timed_out = true,
        }
        run.elapsed_secs = (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
        run
    }
}

impl HookHandler for ShellHook {
    fn handles(&self, event: HookEvent, tool: Option<&str>) -> bool {
        event == self.spec.event && (!event.is_tool_event() || self.matches(tool))
    }

    fn call<'a>(
        &'a self,
        event: HookEvent,
        payload: &'a Value,
    ) -> BoxFuture<'a, Result<Option<Value>, String>> {
        Box::pin(async move {
            let run = self.run(payload).await;
            let command = &self.spec.command;
            if let Some(error) = run.error {
                return Err(format!(
                    "shell hook failed (event={event} command={command}): {error}"
                ));
            }
            if run.timed_out {
                return Err(format!(
                    "shell hook timed out after {}s (event={event} command={command})",
                    self.spec.timeout_secs
                ));
            }
            let parsed = parse_shell_response(event, &run.stdout);
            if run.returncode != Some(0) && parsed.is_none() {
                let stderr: String = run.stderr.trim().chars().take(STDERR_SHOWN).collect();
                return Err(format!(
                    "shell hook exited {} (event={event} command={command}); stderr={stderr}",
                    run.returncode.map_or("by signal".into(), |c| c.to_string())
                ));
            }
            Ok(parsed)
        })
    }
}

/// What a hook's stdout means for `event`, in the wire shape; `None` when it
/// says nothing we act on.
///
/// `pre_tool_call`: `{"action":"block","message":…}` or Claude Code's
/// `{"decision":"block","reason":…}` blocks. `pre_verify`: continue/block with
/// a message. `transform_tool_result`, `transform_llm_output` and
/// `transform_terminal_output`: `{"result":"…"}` replaces the text (our
/// extension: the reference lets only Python plugins do that). Anything else:
/// `{"context":"…"}`, which `pre_llm_call` adds to the turn.
pub fn parse_shell_response(event: HookEvent, stdout: &str) -> Option<Value> {
    let text = stdout.trim();
    if text.is_empty() {
        return None;
    }
    let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(text) else {
        return None;
    };
    let str_of = |key: &str| {
        obj.get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
    };
    match event {
        HookEvent::PreToolCall => {
            let blocked = |key: &str| str_of(key).is_some_and(|v| v.eq_ignore_ascii_case("block"));
            let message = if blocked("action") {
                str_of("message").or_else(|| str_of("reason"))
            } else if blocked("decision") {
                str_of("reason").or_else(|| str_of("message"))
            } else {
                return None;
            };
            Some(json!({
                "action": "block",
                "message": message.unwrap_or(DEFAULT_BLOCK_MESSAGE),
            }))
        }
        HookEvent::PreVerify => {
            let action = str_of("action")
                .or_else(|| str_of("decision"))?
                .to_lowercase();
            let message = str_of("message").or_else(|| str_of("reason"))?;
            matches!(action.as_str(), "continue" | "block")
                .then(|| json!({"action": "continue", "message": message.trim()}))
        }
        HookEvent::TransformToolResult
        | HookEvent::TransformLlmOutput
        | HookEvent::TransformTerminalOutput => obj
            .get("result")
            .and_then(Value::as_str)
            .map(|r| json!({"result": r})),
        HookEvent::PreGatewayDispatch => {
            let action = str_of("action")?.to_lowercase();
            match action.as_str() {
                "skip" => Some(json!({"action": "skip", "reason": str_of("reason")})),
                "rewrite" => obj
                    .get("text")
                    .and_then(Value::as_str)
                    .map(|t| json!({"action": "rewrite", "text": t})),
                "allow" => Some(json!({"action": "allow"})),
                _ => None,
            }
        }
        _ => str_of("context").map(|c| json!({"context": c})),
    }
}

/// `~` at the very start of a command line, as the reference expands it.
fn expand_leading_tilde(command: &str, home: Option<&std::path::Path>) -> String {
    if command == "~" || command.starts_with("~/") {
        let (first, rest) = command.split_at(command.find(' ').unwrap_or(command.len()));
        return format!("{}{rest}", expand_tilde(first, home).display());
    }
    command.to_owned()
}
