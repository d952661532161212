//! The parent's side of the sandbox RPC: a Unix socket serving newline-delimited
//! `{"tool","args","token"}` requests by running the session's own tools. Each
//! call is reported as a nested progress event and never enters the conversation.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use hermes_protocol::{Event, ToolOutcome};
use hermes_tools::{ToolContext, ToolError, error_json};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::Mutex;
use tokio::task::JoinSet;

/// Terminal arguments a throwaway script must not use (they outlive the script).
const TERMINAL_BLOCKED_PARAMS: &[&str] =
    &["background", "pty", "notify_on_complete", "watch_patterns"];

/// How long shutdown waits for the last progress events to be forwarded.
const FLUSH_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// What the server enforces.
pub struct RpcConfig {
    /// The per-run secret every request must carry.
    pub token: String,
    /// Tools the script may call.
    pub allowed: BTreeSet<String>,
    /// Calls allowed per run.
    pub max_tool_calls: usize,
    /// Calls made so far (shared with the result builder).
    pub calls: Arc<AtomicUsize>,
}

/// A running server; [`RpcServer::shutdown`] stops it.
pub struct RpcServer {
    accept: tokio::task::JoinHandle<()>,
    forward: tokio::task::JoinHandle<()>,
    cancel: tokio_util::sync::CancellationToken,
}

struct Shared {
    config: RpcConfig,
    ctx: ToolContext,
    /// One call at a time, as the reference's single-threaded server: tools
    /// such as `patch` assume they are not racing each other.
    serial: Mutex<()>,
}

impl RpcServer {
    /// Binds `path` (mode 0600) and starts serving calls through `parent`'s registry.
    pub fn bind(path: &Path, config: RpcConfig, parent: &ToolContext) -> std::io::Result<Self> {
        let listener = UnixListener::bind(path)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        }
        // Whatever the inner tools report (status lines, refusals) is wrapped as
        // coming from execute_code, so front-ends indent it under the script.
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Event>();
        let upstream = parent.events.clone();
        let forward = tokio::spawn(async move {
            while let Some(event) = rx.recv().await {
                if let Some(up) = &upstream {
                    let _ = up.send(Event::Nested {
                        origin: "execute_code".into(),
                        inner: Box::new(event),
                    });
                }
            }
        });
        let mut ctx = parent.clone();
        ctx.cancel = parent.cancel.child_token();
        ctx.events = Some(tx);
        let cancel = ctx.cancel.clone();
        let shared = Arc::new(Shared {
            config,
            ctx,
            serial: Mutex::new(()),
        });
        let accept = tokio::spawn(accept_loop(listener, shared));
        Ok(Self {
            accept,
            forward,
            cancel,
        })
    }

    /// Stops accepting, drops open connections, and flushes pending progress events.
    pub async fn shutdown(self) {
        // Aborting the accept loop drops its JoinSet, which aborts the
        // connection tasks and with them the last copies of the event sender.
        // A tool still running for a script that is gone has nobody to answer.
        self.cancel.cancel();
        self.accept.abort();
        let _ = self.accept.await;
        // A tool may have kept a copy of the sender in a task of its own; don't
        // wait on that forever.
        let _ = tokio::time::timeout(FLUSH_WAIT, self.forward).await;
    }
}

async fn accept_loop(listener: UnixListener, shared: Arc<Shared>) {
    let mut connections = JoinSet::new();
    while let Ok((stream, _)) = listener.accept().await {
        connections.spawn(serve(stream, Arc::clone(&shared)));
    }
}

async fn serve(stream: UnixStream, shared: Arc<Shared>) {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read);
    let mut line = Vec::new();
    loop {
        line.clear();
        match lines.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let response = handle(text, &shared).await;
        let mut bytes = response.into_bytes();
        bytes.push(b'\n');
        if write.write_all(&bytes).await.is_err() {
            break;
        }
    }
}

/// Answers one request line with one JSON line.
async fn handle(line: &str, shared: &Shared) -> String {
    let request: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => return error_json(&format!("Invalid RPC request: {e}")),
    };
    let config = &shared.config;
    let token = request.get("token").and_then(Value::as_str).unwrap_or("");
    if config.token.is_empty() || !constant_time_eq(token.as_bytes(), config.token.as_bytes()) {
        return error_json("Unauthorized RPC request");
    }
    let name = request.get("tool").and_then(Value::as_str).unwrap_or("");
    let mut args = request
        .get("args")
        .cloned()
        .unwrap_or_else(|| Value::Object(Default::default()));
    if !config.allowed.contains(name) {
        let available: Vec<&str> = config.allowed.iter().map(String::as_str).collect();
        return error_json(&format!(
            "Tool '{name}' is not available in execute_code. Available: {}",
            available.join(", ")
        ));
    }
    let _turn = shared.serial.lock().await;
    if config.calls.load(Ordering::SeqCst) >= config.max_tool_calls {
        return error_json(&format!(
            "Tool call limit reached ({}). No more tool calls allowed in this execution.",
            config.max_tool_calls
        ));
    }
    if name == "terminal"
        && let Some(map) = args.as_object_mut()
    {
        for param in TERMINAL_BLOCKED_PARAMS {
            map.remove(*param);
        }
    }
    let number = config.calls.fetch_add(1, Ordering::SeqCst) + 1;
    dispatch(name, args, number, &shared.ctx).await
}

/// Runs the tool through the session's registry, reporting start and finish.
async fn dispatch(name: &str, args: Value, number: usize, ctx: &ToolContext) -> String {
    let call_id = format!("execute_code_{number}");
    let started = Instant::now();
    let send = |event: Event| {
        if let Some(tx) = &ctx.events {
            let _ = tx.send(event);
        }
    };
    send(Event::ToolStarted {
        call_id: call_id.clone(),
        name: name.to_owned(),
        arguments: crate::redaction::tool_arguments(&args.to_string()),
    });
    let tool = ctx.registry.as_ref().and_then(|r| r.get(name)).cloned();
    let shown_args = args.clone();
    let (content, outcome) = match tool {
        None => (
            error_json(&format!("Tool '{name}' is not enabled in this session.")),
            ToolOutcome::Error,
        ),
        Some(tool) => match tool.call(args, ctx).await {
            Ok(text) => (text, ToolOutcome::Ok),
            Err(ToolError::Model(msg)) => (error_json(&msg), ToolOutcome::Error),
            Err(ToolError::Cancelled) => (error_json("Interrupted"), ToolOutcome::Cancelled),
            Err(ToolError::Fatal(msg)) => (
                error_json(&format!("{name} failed: {msg}")),
                ToolOutcome::Error,
            ),
        },
    };
    let content = crate::redaction::tool_result(name, &shown_args, &content);
    send(Event::ToolFinished {
        call_id,
        name: name.to_owned(),
        outcome,
        result: content.clone(),
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    });
    one_line(content)
}

/// The stub reads until a newline, so a pretty-printed result must be re-encoded
/// onto one line; non-JSON text is sent as a JSON string (the stub unwraps it).
fn one_line(content: String) -> String {
    match serde_json::from_str::<Value>(&content) {
        Ok(v) => v.to_string(),
        Err(_) => Value::String(content).to_string(),
    }
}

/// Compares without an early exit, so response timing does not leak the token.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
