//! `hermes dashboard` over a sandbox, and requests the way its page makes
//! them (the CSRF token from the page on every change; events over SSE).

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::gateway::http_try;
use super::{Sandbox, free_port};

/// A running dashboard; SIGTERM on drop.
pub struct Dashboard {
    pub child: Child,
    pub port: u16,
    pub csrf: String,
}

impl Drop for Dashboard {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = std::process::Command::new("kill")
                .arg(self.child.id().to_string())
                .status();
        }
        let _ = self.child.wait();
    }
}

/// Starts `hermes dashboard --port P EXTRA…` and reads the page's CSRF token.
pub fn start(sb: &Sandbox, extra: &[&str]) -> Dashboard {
    let config = std::fs::read_to_string(sb.home.path().join("config.yaml")).unwrap_or_default();
    if !config.contains("api_max_retries") {
        sb.no_retries();
    }
    let port = free_port();
    let child = sb
        .command()
        .args(["dashboard", "--port", &port.to_string()])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let page = loop {
        if let Ok((200, _, body)) = http_try(port, "GET", "/", &[], "") {
            break body;
        }
        assert!(
            Instant::now() < deadline,
            "the dashboard never served its page"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    Dashboard {
        child,
        port,
        csrf: csrf_of(&page),
    }
}

/// The token in the page's `<meta name="csrf-token">`.
pub fn csrf_of(page: &str) -> String {
    page.split("name=\"csrf-token\" content=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the page carries a CSRF token")
        .to_owned()
}

impl Dashboard {
    /// `GET path` → status and JSON.
    pub fn get(&self, path: &str) -> (u16, Value) {
        let (status, _, body) = http_try(self.port, "GET", path, &[], "").unwrap();
        (status, serde_json::from_str(&body).unwrap_or(Value::Null))
    }

    /// A change as the page sends it (JSON body, CSRF header).
    pub fn send(&self, method: &str, path: &str, body: &Value) -> (u16, Value) {
        let text = body.to_string();
        let (status, _, body) = http_try(
            self.port,
            method,
            path,
            &[
                ("Content-Type", "application/json"),
                ("X-CSRF-Token", &self.csrf),
                ("Origin", "http://127.0.0.1"),
            ],
            &text,
        )
        .unwrap();
        (status, serde_json::from_str(&body).unwrap_or(Value::Null))
    }

    /// Reads the chat's events numbered after `after` until `done` says
    /// stop; returns them with the last number read.
    pub fn events_until(
        &self,
        chat: &str,
        after: u64,
        done: impl Fn(&Value) -> bool,
    ) -> (Vec<Value>, u64) {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        write!(
            stream,
            "GET /api/chat/{chat}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\
             Accept: text/event-stream\r\nLast-Event-ID: {after}\r\n\r\n"
        )
        .unwrap();
        let mut seen = Vec::new();
        let mut last = after;
        for line in BufReader::new(stream).lines() {
            let line = line.expect("the event stream went quiet");
            if let Some(id) = line.strip_prefix("id: ") {
                last = id.trim().parse().unwrap();
            }
            if let Some(data) = line.strip_prefix("data: ") {
                let event: Value = serde_json::from_str(data).unwrap();
                let stop = done(&event);
                seen.push(event);
                if stop {
                    return (seen, last);
                }
            }
        }
        panic!("the event stream ended: {seen:?}");
    }
}
