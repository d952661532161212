//! The accept loop and the handling of one connection.

use std::io;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

use crate::http::{self, Head};
use crate::reply::{Rendered, Reply, RequestInfo, Wire};
use crate::{RecordedRequest, Shared, lock, path_only};

/// Accepts connections until `shutdown` fires (or its sender is dropped).
pub(crate) async fn serve(
    listener: std::net::TcpListener,
    state: Shared,
    mut shutdown: oneshot::Receiver<()>,
) {
    let Ok(listener) = TcpListener::from_std(listener) else {
        return;
    };
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => {
                if let Ok((socket, _)) = accepted {
                    let _ = socket.set_nodelay(true);
                    tokio::spawn(handle(socket, state.clone()));
                }
            }
        }
    }
}

/// What to answer a request with.
enum Answer {
    Scripted(Box<Reply>, RequestInfo),
    Plain(u16, String),
}

async fn handle(socket: TcpStream, state: Shared) {
    // Errors only mean the client went away; nothing to report.
    let _ = serve_one(socket, state).await;
}

async fn serve_one(socket: TcpStream, state: Shared) -> io::Result<()> {
    let (read_half, mut writer) = socket.into_split();
    let mut reader = BufReader::new(read_half);
    let Some(head) = http::read_head(&mut reader).await? else {
        return Ok(());
    };
    if head
        .header("expect")
        .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
    {
        writer.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").await?;
    }
    let body = http::read_body(&mut reader, &head).await?;
    let answer = record_and_pick(&state, head, &body);
    match answer {
        Answer::Plain(status, body) => {
            http::write_full(&mut writer, status, "application/json", &[], &body).await?;
        }
        Answer::Scripted(reply, info) => send_reply(&mut writer, &reply, &info).await?,
    }
    writer.shutdown().await
}

/// Records the request, then picks the answer (consuming a reply for chat calls).
fn record_and_pick(state: &Shared, head: Head, body: &[u8]) -> Answer {
    let raw_body = String::from_utf8_lossy(body).into_owned();
    let json: Value = serde_json::from_str(&raw_body).unwrap_or(Value::Null);
    let recorded = RecordedRequest {
        method: head.method,
        path: head.path,
        headers: head.headers,
        body: json,
        raw_body,
    };
    let path = path_only(&recorded.path).trim_end_matches('/').to_owned();
    let authorization = recorded.header("authorization").map(str::to_owned);
    let is_chat = recorded.is_chat();
    let mut info = RequestInfo::from_body(&recorded.body, body.len());
    info.wire = recorded.wire();
    if info.wire == Wire::Bedrock {
        // Bedrock says "stream" and names the model in the route, not the body.
        info.stream = path.ends_with("/converse-stream");
        info.model = recorded.bedrock_model();
    }
    // The first queued reply meant for this request (reserved for a marker its
    // body contains, or unreserved), else the responder's. Picked and recorded
    // under one lock, so requests are recorded in the order replies go out.
    let mut guard = lock(state);
    let pick = is_chat
        .then(|| {
            guard.replies.iter().position(|r| {
                r.only_for
                    .as_deref()
                    .is_none_or(|marker| recorded.raw_body.contains(marker))
            })
        })
        .flatten();
    let reply = match pick.and_then(|i| guard.replies.remove(i)) {
        Some(reply) => Some(reply),
        None if is_chat => guard
            .responder
            .clone()
            .and_then(|respond| respond(&recorded)),
        None => None,
    };
    if guard.forget_bodies {
        guard.requests.push(RecordedRequest {
            body: Value::Null,
            raw_body: String::new(),
            ..recorded
        });
    } else {
        guard.requests.push(recorded);
    }
    drop(guard);
    if is_chat {
        const NONE_LEFT: &str = "hermes-mock: no scripted reply left";
        return match reply {
            Some(reply) => Answer::Scripted(Box::new(reply), info),
            None => Answer::Plain(
                500,
                match info.wire {
                    Wire::Anthropic => crate::anthropic::error_body(500, NONE_LEFT),
                    Wire::Bedrock => crate::bedrock::error_body(NONE_LEFT),
                    Wire::Chat | Wire::Responses => {
                        json!({"error": {"message": NONE_LEFT}}).to_string()
                    }
                },
            ),
        };
    }
    if path.ends_with("/models") {
        let wanted = lock(state).required_key.clone();
        if let Some(key) = wanted
            && authorization.as_deref() != Some(format!("Bearer {key}").as_str())
        {
            let body = json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}});
            return Answer::Plain(401, body.to_string());
        }
        let list = json!({"object": "list", "data": [{"id": "mock-model", "object": "model"}]});
        return Answer::Plain(200, list.to_string());
    }
    Answer::Plain(
        404,
        json!({"error": {"message": "hermes-mock: unknown route"}}).to_string(),
    )
}

async fn pause(d: Option<Duration>) {
    if let Some(d) = d.filter(|d| !d.is_zero()) {
        tokio::time::sleep(d).await;
    }
}

async fn send_reply<W: tokio::io::AsyncWrite + Unpin>(
    w: &mut W,
    reply: &Reply,
    info: &RequestInfo,
) -> io::Result<()> {
    pause(reply.delay).await;
    match reply.render(info) {
        Rendered::Full {
            status,
            content_type,
            body,
        } if info.wire == Wire::Bedrock && status >= 400 => {
            // AWS names the exception in a header; the body only has the message.
            let mut headers = vec![crate::bedrock::error_header(status)];
            headers.extend(reply.headers.iter().cloned());
            http::write_full(w, status, content_type, &headers, &body).await
        }
        Rendered::Full {
            status,
            content_type,
            body,
        } => http::write_full(w, status, content_type, &reply.headers, &body).await,
        Rendered::Sse { payloads } => {
            let frames = payloads.iter().map(|p| format!("data: {p}\n\n"));
            send_sse(w, reply, frames.collect()).await
        }
        Rendered::NamedSse { events } => {
            let frames = events
                .iter()
                .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"));
            send_sse(w, reply, frames.collect()).await
        }
        Rendered::EventStream { frames } => {
            send_chunked(w, reply, crate::bedrock::EVENT_STREAM, None, frames).await
        }
    }
}

/// Writes an SSE response, one chunk per frame, honouring the reply's chunk
/// delay and cut.
async fn send_sse<W: tokio::io::AsyncWrite + Unpin>(
    w: &mut W,
    reply: &Reply,
    frames: Vec<String>,
) -> io::Result<()> {
    let frames = frames.into_iter().map(String::into_bytes).collect();
    send_chunked(
        w,
        reply,
        "text/event-stream",
        Some(b": keep-alive\n\n"),
        frames,
    )
    .await
}

/// Writes a chunked streaming response of `content_type`: `preamble` (if any),
/// then one chunk per frame, honouring the reply's chunk delay and cut.
async fn send_chunked<W: tokio::io::AsyncWrite + Unpin>(
    w: &mut W,
    reply: &Reply,
    content_type: &str,
    preamble: Option<&[u8]>,
    frames: Vec<Vec<u8>>,
) -> io::Result<()> {
    let mut headers = vec![
        ("content-type".to_owned(), content_type.to_owned()),
        ("cache-control".to_owned(), "no-cache".to_owned()),
        ("transfer-encoding".to_owned(), "chunked".to_owned()),
        ("connection".to_owned(), "close".to_owned()),
    ];
    headers.extend(reply.headers.iter().cloned());
    http::write_head(w, 200, &headers).await?;
    if let Some(preamble) = preamble {
        http::write_chunk(w, preamble).await?;
    }
    for (sent, frame) in frames.iter().enumerate() {
        if reply.cut_after.is_some_and(|n| sent >= n) {
            // Abrupt end: no terminating chunk, the caller closes the socket.
            return Ok(());
        }
        if sent > 0 {
            pause(reply.chunk_delay).await;
        }
        http::write_chunk(w, frame).await?;
    }
    http::end_chunks(w).await
}
