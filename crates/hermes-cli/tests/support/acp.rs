//! A bare JSON-RPC client for `hermes acp`: newline-delimited frames over the
//! child's stdio, with the agent's own requests (permission) answered by a callback.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::Sandbox;

/// Answers the agent's `fs/*` requests: method and params to the result.
type FsServer = Box<dyn FnMut(&str, &Value) -> Value>;

pub struct AcpClient {
    pub child: Child,
    stdin: ChildStdin,
    frames: mpsc::Receiver<Value>,
    next_id: u64,
    /// Every `session/update` seen so far.
    pub updates: Vec<Value>,
    /// Every permission request seen so far.
    pub permission_requests: Vec<Value>,
    /// Answers `fs/*` requests.
    fs: Option<FsServer>,
}

impl AcpClient {
    pub fn start(sb: &Sandbox, extra: &[&str]) -> Self {
        let mut cmd = sb.command();
        cmd.arg("acp")
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, frames) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if line.trim().is_empty() {
                    continue;
                }
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("agent wrote a non-JSON line {line:?}: {e}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            stdin,
            frames,
            next_id: 0,
            updates: Vec::new(),
            permission_requests: Vec::new(),
            fs: None,
        }
    }

    pub fn send(&mut self, frame: &Value) {
        writeln!(self.stdin, "{frame}").unwrap();
        self.stdin.flush().unwrap();
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and waits for its response, answering the agent's
    /// requests with `answer` (and calling `on_update` for each update).
    pub fn request_with(
        &mut self,
        method: &str,
        params: Value,
        answer: &mut dyn FnMut(&Value) -> Value,
        on_update: &mut dyn FnMut(&mut Self, &Value),
    ) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let frame = self
                .frames
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no response to {method} in time"));
            match (frame.get("method").and_then(Value::as_str), frame.get("id")) {
                (Some("session/update"), _) => {
                    let update = frame["params"]["update"].clone();
                    self.updates.push(update.clone());
                    on_update(self, &update);
                }
                (Some("session/request_permission"), Some(rid)) => {
                    self.permission_requests.push(frame["params"].clone());
                    let result = answer(&frame["params"]);
                    let rid = rid.clone();
                    self.send(&json!({"jsonrpc": "2.0", "id": rid, "result": result}));
                }
                (Some(other), Some(rid)) => {
                    let rid = rid.clone();
                    let reply = match &mut self.fs {
                        Some(fs) if other.starts_with("fs/") => {
                            json!({"jsonrpc": "2.0", "id": rid, "result": fs(other, &frame["params"])})
                        }
                        _ => {
                            json!({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": format!("no {other}")}})
                        }
                    };
                    self.send(&reply);
                }
                (None, Some(rid)) if *rid == json!(id) => {
                    if let Some(err) = frame.get("error") {
                        return json!({"error": err});
                    }
                    return frame["result"].clone();
                }
                _ => {}
            }
        }
    }

    /// Answers the agent's `fs/*` requests with `fs` from now on (a client
    /// offering the fs capabilities).
    pub fn serve_fs(&mut self, fs: impl FnMut(&str, &Value) -> Value + 'static) {
        self.fs = Some(Box::new(fs));
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.request_with(
            method,
            params,
            &mut |_| json!({"outcome": {"outcome": "cancelled"}}),
            &mut |_, _| {},
        )
    }

    /// initialize + session/new in `cwd`; the session id.
    pub fn open(&mut self, cwd: &std::path::Path) -> String {
        let init = self.request(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": true, "writeTextFile": true}}}),
        );
        assert_eq!(init["protocolVersion"], 1, "{init}");
        let s = self.request("session/new", json!({"cwd": cwd, "mcpServers": []}));
        s["sessionId"].as_str().unwrap().to_owned()
    }

    pub fn prompt(&mut self, session: &str, text: &str) -> Value {
        self.request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
        )
    }

    /// A prompt whose permission requests are all answered with `option`.
    pub fn prompt_answering(&mut self, session: &str, text: &str, option: &str) -> Value {
        let answer = json!({"outcome": {"outcome": "selected", "optionId": option}});
        self.request_with(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
            &mut |_| answer.clone(),
            &mut |_, _| {},
        )
    }

    /// Updates of one kind.
    pub fn updates_of(&self, kind: &str) -> Vec<&Value> {
        self.updates
            .iter()
            .filter(|u| u["sessionUpdate"] == kind)
            .collect()
    }

    /// Closes stdin and waits for the agent to exit.
    pub fn close(mut self) -> std::process::ExitStatus {
        drop(self.stdin);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("hermes acp did not exit after stdin closed");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
