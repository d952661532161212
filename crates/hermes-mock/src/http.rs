//! Just enough HTTP/1.1 to serve one request per connection.

use std::io;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Longest accepted request line or header line.
const MAX_LINE: usize = 64 * 1024;
/// Largest accepted request body.
const MAX_BODY: usize = 64 * 1024 * 1024;

/// The request line and headers of one request.
#[derive(Debug)]
pub(crate) struct Head {
    pub method: String,
    pub path: String,
    /// Header names in lowercase, in arrival order.
    pub headers: Vec<(String, String)>,
}

impl Head {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

fn bad(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.to_owned())
}

/// Reads one line without its line ending; `None` at a clean end of input.
async fn read_line<R: AsyncBufRead + Unpin>(r: &mut R) -> io::Result<Option<String>> {
    let mut buf = Vec::new();
    let n = (&mut *r)
        .take(MAX_LINE as u64)
        .read_until(b'\n', &mut buf)
        .await?;
    if n == 0 {
        return Ok(None);
    }
    if buf.last() != Some(&b'\n') {
        return Err(bad("line too long or truncated"));
    }
    buf.pop();
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    String::from_utf8(buf)
        .map(Some)
        .map_err(|_| bad("header is not UTF-8"))
}

/// Reads the request line and headers; `None` when the peer sent nothing.
pub(crate) async fn read_head<R: AsyncBufRead + Unpin>(r: &mut R) -> io::Result<Option<Head>> {
    let Some(line) = read_line(r).await? else {
        return Ok(None);
    };
    let mut parts = line.split_whitespace();
    let (Some(method), Some(path)) = (parts.next(), parts.next()) else {
        return Err(bad("malformed request line"));
    };
    let mut head = Head {
        method: method.to_owned(),
        path: path.to_owned(),
        headers: Vec::new(),
    };
    loop {
        let line = read_line(r)
            .await?
            .ok_or_else(|| bad("headers truncated"))?;
        if line.is_empty() {
            break;
        }
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| bad("malformed header"))?;
        head.headers
            .push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    Ok(Some(head))
}

/// Reads the body announced by `head` (`Content-Length` or chunked).
pub(crate) async fn read_body<R: AsyncBufRead + Unpin>(
    r: &mut R,
    head: &Head,
) -> io::Result<Vec<u8>> {
    let chunked = head
        .header("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    if chunked {
        return read_chunked(r).await;
    }
    let len = match head.header("content-length") {
        Some(v) => v
            .trim()
            .parse::<usize>()
            .map_err(|_| bad("bad content-length"))?,
        None => 0,
    };
    if len > MAX_BODY {
        return Err(bad("body too large"));
    }
    let mut body = vec![0; len];
    r.read_exact(&mut body).await?;
    Ok(body)
}

async fn read_chunked<R: AsyncBufRead + Unpin>(r: &mut R) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line = read_line(r)
            .await?
            .ok_or_else(|| bad("chunked body truncated"))?;
        let size_text = line.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16).map_err(|_| bad("bad chunk size"))?;
        if size == 0 {
            // Trailers, up to the blank line.
            while let Some(line) = read_line(r).await? {
                if line.is_empty() {
                    break;
                }
            }
            return Ok(body);
        }
        if body.len() + size > MAX_BODY {
            return Err(bad("body too large"));
        }
        let start = body.len();
        body.resize(start + size, 0);
        r.read_exact(&mut body[start..]).await?;
        read_line(r).await?;
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

/// Writes the status line and headers, ending with the blank line.
pub(crate) async fn write_head<W: AsyncWrite + Unpin>(
    w: &mut W,
    status: u16,
    headers: &[(String, String)],
) -> io::Result<()> {
    let mut out = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (name, value) in headers {
        out.push_str(name);
        out.push_str(": ");
        out.push_str(value);
        out.push_str("\r\n");
    }
    out.push_str("\r\n");
    w.write_all(out.as_bytes()).await?;
    w.flush().await
}

/// Writes a complete response with a `Content-Length` body.
pub(crate) async fn write_full<W: AsyncWrite + Unpin>(
    w: &mut W,
    status: u16,
    content_type: &str,
    extra: &[(String, String)],
    body: &str,
) -> io::Result<()> {
    // A reply's own `content-type` header (an HTML error page) replaces the default.
    let overridden = extra
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("content-type"));
    let mut headers = vec![
        ("content-length".to_owned(), body.len().to_string()),
        ("connection".to_owned(), "close".to_owned()),
    ];
    if !overridden {
        headers.insert(0, ("content-type".to_owned(), content_type.to_owned()));
    }
    headers.extend(extra.iter().cloned());
    write_head(w, status, &headers).await?;
    w.write_all(body.as_bytes()).await?;
    w.flush().await
}

/// Writes one chunk of a chunked body.
pub(crate) async fn write_chunk<W: AsyncWrite + Unpin>(w: &mut W, data: &[u8]) -> io::Result<()> {
    if data.is_empty() {
        return Ok(());
    }
    w.write_all(format!("{:x}\r\n", data.len()).as_bytes())
        .await?;
    w.write_all(data).await?;
    w.write_all(b"\r\n").await?;
    w.flush().await
}

/// Writes the last chunk of a chunked body.
pub(crate) async fn end_chunks<W: AsyncWrite + Unpin>(w: &mut W) -> io::Result<()> {
    w.write_all(b"0\r\n\r\n").await?;
    w.flush().await
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod tests;
