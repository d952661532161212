//! `hermes gateway run` over a sandbox, and plain HTTP/1.1 to talk to it.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Sandbox, free_port};

pub const KEY: &str = "test-key-0123456789abcdef";

/// A running gateway over a sandbox; SIGTERM on drop.
pub struct Gateway {
    pub child: Child,
    pub port: u16,
}

impl Drop for Gateway {
    fn drop(&mut self) {
        // Only a process still running is signalled (its pid is not reused yet).
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = Command::new("kill")
                .arg(self.child.id().to_string())
                .status();
        }
        let _ = self.child.wait();
    }
}

pub fn gateway(sb: &Sandbox, extra_config: &str) -> Gateway {
    gateway_with_env(sb, extra_config, &[])
}

/// [`gateway`] with more environment variables.
pub fn gateway_with_env(sb: &Sandbox, extra_config: &str, env: &[(&str, &str)]) -> Gateway {
    let port = free_port();
    sb.no_retries();
    sb.add_config(&format!(
        "platforms:\n  api_server:\n    enabled: true\n    extra:\n      port: {port}\n{extra_config}"
    ));
    let gw = spawn_with_env(sb, port, &[], env);
    wait_healthy(port);
    gw
}

/// `hermes gateway run EXTRA…` over the sandbox's config (not waited for).
pub fn spawn(sb: &Sandbox, port: u16, extra: &[&str]) -> Gateway {
    spawn_with_env(sb, port, extra, &[])
}

/// [`spawn`] with more environment variables.
pub fn spawn_with_env(sb: &Sandbox, port: u16, extra: &[&str], env: &[(&str, &str)]) -> Gateway {
    let child = sb
        .command()
        .args(["gateway", "run"])
        .args(extra)
        .envs(env.iter().copied())
        .env("API_SERVER_KEY", KEY)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    Gateway { child, port }
}

/// Waits until `/health` answers on `port`.
pub fn wait_healthy(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while http_try(port, "GET", "/health", &[], "").map_or(0, |a| a.0) != 200 {
        assert!(Instant::now() < deadline, "gateway never answered /health");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A non-streamed chat sent from another thread (for runs still going when
/// something else happens).
pub fn chat_in_background(port: u16, content: &str) -> std::thread::JoinHandle<Answer> {
    let body = json!({"messages": [{"role": "user", "content": content}]}).to_string();
    std::thread::spawn(move || {
        let (k, v) = auth();
        http_try(port, "POST", "/v1/chat/completions", &[(k, &v)], &body).unwrap()
    })
}

/// Status, lower-cased headers and body of one answer.
pub type Answer = (u16, Vec<(String, String)>, String);

/// One HTTP/1.1 request; returns status, lower-cased headers and body.
pub fn http_try(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<Answer> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes())?;
    // A server refusing an oversized body answers and closes before reading it all.
    let _ = stream.write_all(body.as_bytes());
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, rest) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect::<Vec<_>>();
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
    Ok((
        status,
        headers,
        if chunked {
            dechunk(rest)
        } else {
            rest.to_owned()
        },
    ))
}

fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, tail)) = rest.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || tail.len() < n {
            break;
        }
        out.push_str(&tail[..n]);
        rest = tail[n..].trim_start_matches("\r\n");
    }
    out
}

pub fn auth() -> (&'static str, String) {
    ("Authorization", format!("Bearer {KEY}"))
}

pub fn post(gw: &Gateway, path: &str, body: &Value) -> (u16, Vec<(String, String)>, Value) {
    let (k, v) = auth();
    let (status, headers, text) = http_try(
        gw.port,
        "POST",
        path,
        &[(k, &v), ("Content-Type", "application/json")],
        &body.to_string(),
    )
    .unwrap();
    (
        status,
        headers,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

pub fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}
