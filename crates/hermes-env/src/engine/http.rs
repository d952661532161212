//! Just enough HTTP/1.1 over the engine's Unix socket: one request per
//! connection, a JSON answer (sized or chunked), or the raw stream an exec
//! hijacks once the engine has answered its headers. Blocking: container
//! set-up happens before a command's process exists, and the exec relay is
//! a process of its own.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

/// How long one call may take (a pull takes longer: see `call_slow`).
const CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// An engine's answer.
#[derive(Debug)]
pub(crate) struct Answer {
    /// The status code.
    pub status: u16,
    /// The body, as JSON when it parses (else a string, or null when empty).
    pub body: Value,
}

impl Answer {
    /// The engine's own error message, for a failed call.
    pub(crate) fn message(&self) -> String {
        self.body
            .get("message")
            .and_then(Value::as_str)
            .map_or_else(|| self.body.to_string(), str::to_owned)
    }
}

fn request_head(method: &str, path: &str, body: &[u8], upgrade: bool) -> String {
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: docker\r\nUser-Agent: hermes\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    if upgrade {
        head.push_str("Connection: Upgrade\r\nUpgrade: tcp\r\n");
    } else {
        head.push_str("Connection: close\r\n");
    }
    head.push_str("\r\n");
    head
}

/// Reads the status line and headers; the status and whether the body is
/// chunked, and its length when given.
fn read_head(reader: &mut BufReader<UnixStream>) -> std::io::Result<(u16, bool, Option<usize>)> {
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("not an HTTP answer: {line:?}")))?;
    let (mut chunked, mut length) = (false, None);
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            let value = value.trim();
            if name.eq_ignore_ascii_case("transfer-encoding") && value.contains("chunked") {
                chunked = true;
            }
            if name.eq_ignore_ascii_case("content-length") {
                length = value.parse().ok();
            }
        }
    }
    Ok((status, chunked, length))
}

fn read_chunked(reader: &mut BufReader<UnixStream>) -> std::io::Result<Vec<u8>> {
    let mut body = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            break;
        }
        let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or("0"), 16)
            .map_err(|_| std::io::Error::other("a bad chunk size"))?;
        if size == 0 {
            break;
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..])?;
        line.clear();
        reader.read_line(&mut line)?;
    }
    Ok(body)
}

/// `method path` with `body` (JSON) on the engine at `socket`.
pub(crate) fn call(
    socket: &Path,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> std::io::Result<Answer> {
    call_within(socket, method, path, body, CALL_TIMEOUT)
}

/// [`call`] allowed `timeout` (an image pull).
pub(crate) fn call_within(
    socket: &Path,
    method: &str,
    path: &str,
    body: Option<&Value>,
    timeout: Duration,
) -> std::io::Result<Answer> {
    let payload = body.map(Value::to_string).unwrap_or_default();
    let mut stream = UnixStream::connect(socket)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.write_all(request_head(method, path, payload.as_bytes(), false).as_bytes())?;
    stream.write_all(payload.as_bytes())?;
    let mut reader = BufReader::new(stream);
    let (status, chunked, length) = read_head(&mut reader)?;
    let raw = if chunked {
        read_chunked(&mut reader)?
    } else if let Some(n) = length {
        let mut buf = vec![0; n];
        reader.read_exact(&mut buf)?;
        buf
    } else {
        let mut buf = Vec::new();
        reader.read_to_end(&mut buf)?;
        buf
    };
    let text = String::from_utf8_lossy(&raw);
    let body = if text.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or_else(|_| Value::String(text.trim().to_owned()))
    };
    Ok(Answer { status, body })
}

/// `POST path` with `body`, then the connection itself once the engine has
/// answered (an exec's attached streams), with what it read past the head.
pub(crate) fn hijack(
    socket: &Path,
    path: &str,
    body: &Value,
) -> std::io::Result<(BufReader<UnixStream>, u16)> {
    let payload = body.to_string();
    let mut stream = UnixStream::connect(socket)?;
    stream.write_all(request_head("POST", path, payload.as_bytes(), true).as_bytes())?;
    stream.write_all(payload.as_bytes())?;
    let mut reader = BufReader::new(stream);
    let (status, _, _) = read_head(&mut reader)?;
    Ok((reader, status))
}
