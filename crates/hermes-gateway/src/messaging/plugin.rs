//! A messaging platform served by a plugin: an executable that speaks
//! newline-delimited JSON-RPC 2.0 on stdio (`hermes-platform/1`). The
//! gateway asks it to `initialize` (its reply: `capabilities` and
//! `identity`), `ping`s it, then asks it to `start` (from the saved cursor); the plugin reports what people do as
//! `message` notifications (an [`Incoming`] plus an optional `cursor`) and
//! answers `send`, `edit`, `typing`, `send_file`, `answer_press` and `mark`
//! requests. An error's `data.kind` (`transient`, `rejected`, `unsupported`)
//! says whether to retry. A plugin that dies is started again.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, mpsc, oneshot};

use super::media::OutgoingFile;
use super::platform::{
    Adapter, Batch, BotIdentity, Capabilities, ChatRef, Incoming, Outgoing, PlatformError, Progress,
};

/// The protocol a platform plugin is told it speaks.
pub const PROTOCOL: &str = "hermes-platform/1";

/// Seconds one request may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(60);

type Pending = Arc<std::sync::Mutex<HashMap<u64, oneshot::Sender<Result<Value, PlatformError>>>>>;

/// A running plugin process.
struct Process {
    _child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    pending: Pending,
    /// Closed when the process's output ends (it died).
    alive: mpsc::Sender<()>,
}

/// What a plugin reported: a message and the position after it.
type Report = (Incoming, Option<String>);

/// The adapter for one plugin platform.
pub struct PluginPlatform {
    name: &'static str,
    argv: Vec<String>,
    dir: PathBuf,
    settings: Value,
    /// What the plugin's first `initialize` stated (kept for the process's life).
    learned: std::sync::OnceLock<Capabilities>,
    default_caps: Capabilities,
    process: Mutex<Option<Process>>,
    next_id: AtomicU64,
    reports_tx: mpsc::UnboundedSender<Report>,
    reports: Mutex<mpsc::UnboundedReceiver<Report>>,
    started: std::sync::atomic::AtomicBool,
    /// Who the bot is, as `initialize` said.
    identity: std::sync::Mutex<BotIdentity>,
}

impl std::fmt::Debug for PluginPlatform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginPlatform")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

fn error_of(value: &Value) -> PlatformError {
    let message = value["message"]
        .as_str()
        .unwrap_or("plugin error")
        .to_owned();
    match value["data"]["kind"].as_str() {
        Some("transient") => PlatformError::Transient(message),
        Some("unsupported") => PlatformError::Unsupported(message),
        _ => PlatformError::Rejected(message),
    }
}

impl PluginPlatform {
    /// A platform named `name` run by `argv` in `dir`; `settings` are passed
    /// to its `initialize` (its config.yaml block).
    pub fn new(name: &str, argv: Vec<String>, dir: PathBuf, settings: Value) -> Self {
        let (reports_tx, reports) = mpsc::unbounded_channel();
        Self {
            // Adapter names are 'static; one per configured platform, for the process's life.
            name: Box::leak(name.to_owned().into_boxed_str()),
            argv,
            dir,
            settings,
            learned: std::sync::OnceLock::new(),
            default_caps: Capabilities {
                max_len: 4000,
                edit_interval: Duration::from_secs(1),
                buttons: false,
            },
            process: Mutex::new(None),
            next_id: AtomicU64::new(1),
            reports_tx,
            reports: Mutex::new(reports),
            started: std::sync::atomic::AtomicBool::new(false),
            identity: std::sync::Mutex::new(BotIdentity::default()),
        }
    }

    async fn spawn(&self) -> Result<Process, PlatformError> {
        let (program, args) = self.argv.split_first().ok_or_else(|| {
            PlatformError::Rejected(format!("plugin {}: no executable", self.name))
        })?;
        let mut child = tokio::process::Command::new(program)
            .args(args)
            .current_dir(&self.dir)
            .env("HERMES_PLUGIN_ROLE", "platform")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| {
                PlatformError::Rejected(format!(
                    "plugin {}: cannot start {program}: {e}",
                    self.name
                ))
            })?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| PlatformError::Transient("no stdin".into()))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| PlatformError::Transient("no stdout".into()))?;
        let pending: Pending = Arc::default();
        let (alive, mut dead) = mpsc::channel::<()>(1);
        let reader_pending = pending.clone();
        let reports = self.reports_tx.clone();
        let name = self.name;
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let Ok(msg) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                if let Some(id) = msg["id"].as_u64()
                    && msg.get("method").is_none()
                {
                    let answer = match msg.get("error") {
                        Some(e) if !e.is_null() => Err(error_of(e)),
                        _ => Ok(msg["result"].clone()),
                    };
                    if let Some(tx) = reader_pending.lock().ok().and_then(|mut p| p.remove(&id)) {
                        let _ = tx.send(answer);
                    }
                } else if msg["method"] == "message" {
                    let params = &msg["params"];
                    // A malformed report is dropped (the plugin's own stderr,
                    // which reaches the gateway's, is where it can say why).
                    if let Ok(incoming) =
                        serde_json::from_value::<Incoming>(params["message"].clone())
                    {
                        let cursor = params["cursor"].as_str().map(str::to_owned);
                        let _ = reports.send((incoming, cursor));
                    }
                }
            }
            // Every request still waiting learns the plugin is gone.
            if let Ok(mut waiting) = reader_pending.lock() {
                for (_, tx) in waiting.drain() {
                    let _ = tx.send(Err(PlatformError::Transient(format!(
                        "plugin {name} exited"
                    ))));
                }
            }
            dead.close();
        });
        Ok(Process {
            _child: child,
            stdin,
            pending,
            alive,
        })
    }

    /// One request; starts the plugin (and initializes it) when it is not running.
    async fn call(&self, method: &str, params: Value) -> Result<Value, PlatformError> {
        let rx =
            {
                let mut slot = self.process.lock().await;
                if slot.as_ref().is_none_or(|p| p.alive.is_closed()) {
                    *slot = Some(self.spawn().await?);
                    self.started.store(false, Ordering::Relaxed);
                    let process = slot
                        .as_mut()
                        .ok_or_else(|| PlatformError::Transient("plugin gone".into()))?;
                    let init = self.send_request(process, "initialize", json!({
                    "protocol": PROTOCOL, "platform": self.name, "settings": self.settings,
                })).await?;
                    drop(slot);
                    let info = wait(init).await?;
                    self.learn(&info);
                    slot = self.process.lock().await;
                }
                let process = slot
                    .as_mut()
                    .ok_or_else(|| PlatformError::Transient("plugin gone".into()))?;
                self.send_request(process, method, params).await?
            };
        wait(rx).await
    }

    async fn send_request(
        &self,
        process: &mut Process,
        method: &str,
        params: Value,
    ) -> Result<oneshot::Receiver<Result<Value, PlatformError>>, PlatformError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        if let Ok(mut pending) = process.pending.lock() {
            pending.insert(id, tx);
        }
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
            .to_string()
            + "\n";
        process
            .stdin
            .write_all(line.as_bytes())
            .await
            .map_err(|e| PlatformError::Transient(format!("plugin {}: {e}", self.name)))?;
        Ok(rx)
    }

    /// Takes the capabilities an `initialize` reply states.
    fn learn(&self, info: &Value) {
        let c = &info["capabilities"];
        let mut caps = self.default_caps.clone();
        if let Some(n) = c["max_len"].as_u64() {
            caps.max_len = usize::try_from(n).unwrap_or(4000).max(100);
        }
        if let Some(ms) = c["edit_interval_ms"].as_u64() {
            caps.edit_interval = Duration::from_millis(ms);
        }
        if let Some(b) = c["buttons"].as_bool() {
            caps.buttons = b;
        }
        let _ = self.learned.set(caps);
        if let Ok(mut me) = self.identity.lock() {
            let who = &info["identity"];
            me.id = who["id"].as_str().unwrap_or(self.name).to_owned();
            me.username = who["username"].as_str().unwrap_or(&me.id).to_owned();
        }
    }

    fn outgoing(message: &Outgoing) -> Value {
        let buttons: Vec<Vec<Value>> = message
            .buttons
            .iter()
            .map(|row| {
                row.iter()
                    .map(|b| json!({"label": b.label, "data": b.data}))
                    .collect()
            })
            .collect();
        json!({"text": message.text, "plain": message.plain, "buttons": buttons})
    }
}

async fn wait(rx: oneshot::Receiver<Result<Value, PlatformError>>) -> Result<Value, PlatformError> {
    match tokio::time::timeout(CALL_TIMEOUT, rx).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(_)) => Err(PlatformError::Transient("the plugin went away".into())),
        Err(_) => Err(PlatformError::Transient(
            "the plugin did not answer in time".into(),
        )),
    }
}

impl Adapter for PluginPlatform {
    fn name(&self) -> &'static str {
        self.name
    }

    fn capabilities(&self) -> &Capabilities {
        self.learned.get().unwrap_or(&self.default_caps)
    }

    fn connect(&self) -> BoxFuture<'_, Result<BotIdentity, PlatformError>> {
        Box::pin(async move {
            // Any request starts and initializes the plugin; `ping` does only that.
            self.call("ping", json!({})).await?;
            Ok(self.identity.lock().map(|m| m.clone()).unwrap_or_default())
        })
    }

    fn single_consumer(&self) -> bool {
        true
    }

    fn receive<'a>(
        &'a self,
        cursor: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Batch, PlatformError>> {
        Box::pin(async move {
            if !self.started.swap(true, Ordering::Relaxed) {
                self.call("start", json!({"cursor": cursor})).await?;
            }
            let mut reports = self.reports.lock().await;
            let first = tokio::time::timeout(Duration::from_secs(25), reports.recv()).await;
            let mut batch = Batch::default();
            let Ok(Some((message, next))) = first else {
                return Ok(batch);
            };
            batch.messages.push(message);
            batch.cursor = next;
            while let Ok((message, next)) = reports.try_recv() {
                batch.messages.push(message);
                if next.is_some() {
                    batch.cursor = next;
                }
            }
            Ok(batch)
        })
    }

    fn send<'a>(
        &'a self,
        chat: &'a ChatRef,
        message: &'a Outgoing,
    ) -> BoxFuture<'a, Result<String, PlatformError>> {
        Box::pin(async move {
            let answer = self
                .call(
                    "send",
                    json!({"chat": chat, "message": Self::outgoing(message)}),
                )
                .await?;
            Ok(answer["message_id"].as_str().unwrap_or_default().to_owned())
        })
    }

    fn edit<'a>(
        &'a self,
        chat: &'a ChatRef,
        message_id: &'a str,
        message: &'a Outgoing,
    ) -> BoxFuture<'a, Result<(), PlatformError>> {
        Box::pin(async move {
            self.call(
                "edit",
                json!({"chat": chat, "message_id": message_id, "message": Self::outgoing(message)}),
            )
            .await
            .map(|_| ())
        })
    }

    fn typing<'a>(&'a self, chat: &'a ChatRef) -> BoxFuture<'a, Result<(), PlatformError>> {
        Box::pin(async move { self.call("typing", json!({"chat": chat})).await.map(|_| ()) })
    }

    fn answer_press<'a>(
        &'a self,
        press_id: &'a str,
        note: &'a str,
    ) -> BoxFuture<'a, Result<(), PlatformError>> {
        Box::pin(async move {
            self.call("answer_press", json!({"press_id": press_id, "note": note}))
                .await
                .map(|_| ())
        })
    }

    fn send_file<'a>(
        &'a self,
        chat: &'a ChatRef,
        file: &'a OutgoingFile,
        caption: &'a str,
    ) -> BoxFuture<'a, Result<String, PlatformError>> {
        Box::pin(async move {
            let kind = format!("{:?}", file.kind).to_ascii_lowercase();
            let answer = self
                .call(
                    "send_file",
                    json!({"chat": chat, "path": file.path, "kind": kind, "caption": caption}),
                )
                .await?;
            Ok(answer["message_id"].as_str().unwrap_or_default().to_owned())
        })
    }

    fn mark<'a>(
        &'a self,
        message: &'a Incoming,
        progress: Progress,
    ) -> BoxFuture<'a, Result<(), PlatformError>> {
        Box::pin(async move {
            let progress = match progress {
                Progress::Working => "working",
                Progress::Done => "done",
                Progress::Failed => "failed",
            };
            match self
                .call("mark", json!({"message": message, "progress": progress}))
                .await
            {
                Err(PlatformError::Unsupported(_)) => Ok(()),
                other => other.map(|_| ()),
            }
        })
    }
}
