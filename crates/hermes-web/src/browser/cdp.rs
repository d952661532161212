//! A small Chrome DevTools Protocol client: Chromium started headless with
//! a DevTools port, one WebSocket to it, commands as JSON-RPC with their
//! answers matched by id, and the events of one page kept for the tools.
//!
//! We use some fifteen CDP methods. The CDP crates bring hundreds of
//! generated types (and crates) for the whole protocol; JSON over the
//! WebSocket client the gateway already uses is all this needs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message as WsMessage;

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Value, String>>>>>;

/// Events a page sends that the tools read later.
#[derive(Debug, Default)]
pub struct PageLog {
    /// `Runtime.consoleAPICalled`: (type, text).
    pub console: Vec<(String, String)>,
    /// `Runtime.exceptionThrown` texts.
    pub errors: Vec<String>,
}

/// The most console lines kept.
const MAX_LOG: usize = 1000;

/// A running Chromium and the page the tools drive.
pub struct Browser {
    child: tokio::process::Child,
    out: mpsc::UnboundedSender<String>,
    pending: Pending,
    next: AtomicU64,
    session: String,
    /// What the page logged.
    pub log: Arc<Mutex<PageLog>>,
    _profile: tempfile::TempDir,
}

impl std::fmt::Debug for Browser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Browser").finish_non_exhaustive()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

/// The Chromium to run: `AGENT_BROWSER_EXECUTABLE_PATH` or `browser.executable`,
/// else the first of chrome/chromium on `path`.
pub fn find_chromium(configured: Option<&str>, path: Option<&str>) -> Option<PathBuf> {
    if let Some(exe) = configured.map(str::trim).filter(|s| !s.is_empty()) {
        return Some(PathBuf::from(exe)).filter(|p| p.is_file());
    }
    let path = path?;
    for name in [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
        "chrome",
    ] {
        for dir in std::env::split_paths(path) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}

impl Browser {
    /// Starts `exe` headless (visible with `headed`) with all its traffic
    /// sent through the HTTP proxy on loopback `proxy_port`, and opens a page.
    pub async fn launch(
        exe: &Path,
        headed: bool,
        as_root: bool,
        proxy_port: u16,
    ) -> Result<Self, String> {
        let profile = tempfile::Builder::new()
            .prefix("hermes-browser-")
            .tempdir()
            .map_err(|e| format!("cannot make a browser profile: {e}"))?;
        let mut command = tokio::process::Command::new(exe);
        command
            .arg("--remote-debugging-port=0")
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg(format!("--proxy-server=http://127.0.0.1:{proxy_port}"))
            // Chromium goes direct to loopback hosts unless told not to.
            .arg("--proxy-bypass-list=<-loopback>")
            .args([
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-dev-shm-usage",
                "--disable-gpu",
                "--window-size=1280,720",
                "--hide-scrollbars",
                "--mute-audio",
            ]);
        if !headed {
            command.arg("--headless=new");
        }
        if as_root {
            // Chromium refuses to run as root with its sandbox on.
            command.arg("--no-sandbox");
        }
        command
            .arg("about:blank")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        let mut child = command
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
        let stderr = child.stderr.take().ok_or("no stderr from Chromium")?;
        let mut lines = tokio::io::BufReader::new(stderr).lines();
        let find = async {
            let mut seen = Vec::new();
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(url) = line.split("DevTools listening on ").nth(1) {
                    return Ok((url.trim().to_owned(), lines));
                }
                seen.push(line);
            }
            Err(format!(
                "Chromium exited before it was ready: {}",
                seen.iter()
                    .rev()
                    .take(5)
                    .rev()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(" | ")
            ))
        };
        let (ws_url, mut lines) = tokio::time::timeout(Duration::from_secs(30), find)
            .await
            .map_err(|_| "Chromium did not start within 30s".to_owned())??;
        // Keep draining its stderr so it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let (ws, _) = tokio_tungstenite::connect_async(ws_url.as_str())
            .await
            .map_err(|e| format!("cannot reach Chromium's DevTools: {e}"))?;
        let (mut sink, mut stream) = ws.split();
        let (out, mut outgoing) = mpsc::unbounded_channel::<String>();
        tokio::spawn(async move {
            while let Some(text) = outgoing.recv().await {
                if sink.send(WsMessage::text(text)).await.is_err() {
                    break;
                }
            }
        });
        let pending: Pending = Arc::default();
        let log: Arc<Mutex<PageLog>> = Arc::default();
        let (p, l) = (pending.clone(), log.clone());
        tokio::spawn(async move {
            while let Some(Ok(frame)) = stream.next().await {
                let WsMessage::Text(text) = frame else {
                    continue;
                };
                let Ok(msg) = serde_json::from_str::<Value>(text.as_str()) else {
                    continue;
                };
                if let Some(id) = msg["id"].as_u64() {
                    let waiter = p.lock().ok().and_then(|mut p| p.remove(&id));
                    if let Some(waiter) = waiter {
                        let answer = match msg.get("error") {
                            Some(e) => Err(e["message"].as_str().unwrap_or("CDP error").to_owned()),
                            None => Ok(msg["result"].clone()),
                        };
                        let _ = waiter.send(answer);
                    }
                } else {
                    record_event(&l, &msg);
                }
            }
            // The browser went away: fail everything still waiting.
            if let Ok(mut p) = p.lock() {
                for (_, waiter) in p.drain() {
                    let _ = waiter.send(Err("the browser closed".into()));
                }
            }
        });
        let mut browser = Self {
            child,
            out,
            pending,
            next: AtomicU64::new(0),
            session: String::new(),
            log,
            _profile: profile,
        };
        let target = browser
            .call_browser("Target.createTarget", json!({"url": "about:blank"}))
            .await?;
        let target_id = target["targetId"]
            .as_str()
            .ok_or("no target id")?
            .to_owned();
        let attached = browser
            .call_browser(
                "Target.attachToTarget",
                json!({"targetId": target_id, "flatten": true}),
            )
            .await?;
        browser.session = attached["sessionId"]
            .as_str()
            .ok_or("no session id")?
            .to_owned();
        for method in [
            "Page.enable",
            "Runtime.enable",
            "DOM.enable",
            "Accessibility.enable",
        ] {
            browser.call(method, json!({})).await?;
        }
        Ok(browser)
    }

    async fn send(
        &self,
        method: &str,
        params: Value,
        session: Option<&str>,
    ) -> Result<Value, String> {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            msg["sessionId"] = json!(session);
        }
        let (tx, rx) = oneshot::channel();
        if let Ok(mut p) = self.pending.lock() {
            p.insert(id, tx);
        }
        self.out
            .send(msg.to_string())
            .map_err(|_| "the browser closed".to_owned())?;
        match tokio::time::timeout(Duration::from_secs(60), rx).await {
            Ok(Ok(answer)) => answer.map_err(|e| format!("{method}: {e}")),
            Ok(Err(_)) => Err("the browser closed".into()),
            Err(_) => {
                if let Ok(mut p) = self.pending.lock() {
                    p.remove(&id);
                }
                Err(format!("{method} timed out after 60s"))
            }
        }
    }

    async fn call_browser(&self, method: &str, params: Value) -> Result<Value, String> {
        self.send(method, params, None).await
    }

    /// Calls `method` on the page.
    pub async fn call(&self, method: &str, params: Value) -> Result<Value, String> {
        self.send(method, params, Some(&self.session)).await
    }

    /// Evaluates `expression` in the page; its value (promises awaited).
    pub async fn eval(&self, expression: &str) -> Result<Value, String> {
        let answer = self
            .call(
                "Runtime.evaluate",
                json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
            )
            .await?;
        if let Some(details) = answer.get("exceptionDetails") {
            let text = details["exception"]["description"]
                .as_str()
                .or(details["text"].as_str())
                .unwrap_or("exception");
            return Err(format!("Evaluation error: {text}"));
        }
        Ok(answer["result"]["value"].clone())
    }

    /// Waits until the page's document has loaded (or `limit` passes).
    pub async fn wait_loaded(&self, limit: Duration) {
        let started = std::time::Instant::now();
        while started.elapsed() < limit {
            if let Ok(state) = self.eval("document.readyState").await
                && state == "complete"
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

fn record_event(log: &Mutex<PageLog>, msg: &Value) {
    let Ok(mut log) = log.lock() else {
        return;
    };
    match msg["method"].as_str() {
        Some("Runtime.consoleAPICalled") => {
            let kind = msg["params"]["type"].as_str().unwrap_or("log").to_owned();
            let text = msg["params"]["args"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|a| match &a["value"] {
                    Value::String(s) => s.clone(),
                    Value::Null => a["description"].as_str().unwrap_or("").to_owned(),
                    other => other.to_string(),
                })
                .collect::<Vec<_>>()
                .join(" ");
            if log.console.len() < MAX_LOG {
                log.console.push((kind, text));
            }
        }
        Some("Runtime.exceptionThrown") => {
            let details = &msg["params"]["exceptionDetails"];
            let text = details["exception"]["description"]
                .as_str()
                .or(details["text"].as_str())
                .unwrap_or("exception")
                .to_owned();
            if log.errors.len() < MAX_LOG {
                log.errors.push(text);
            }
        }
        _ => {}
    }
}
