//! Server-sent events: frames from a channel, `: keepalive` comments when
//! the run is silent, and the run interrupted when the client goes away.

use std::convert::Infallible;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use tokio::sync::mpsc;

/// Silence longer than this gets a keepalive comment.
pub const KEEPALIVE: Duration = Duration::from_secs(30);

/// One `data:` frame (with an `event:` line when named).
pub fn frame(event: Option<&str>, data: &str) -> Bytes {
    match event {
        Some(name) => Bytes::from(format!("event: {name}\ndata: {data}\n\n")),
        None => Bytes::from(format!("data: {data}\n\n")),
    }
}

/// A streamed response whose body is what `frames` yields; dropping the body
/// (the client went away) closes the channel the producer writes into.
pub fn response(mut frames: mpsc::Receiver<Bytes>, extra: HeaderMap) -> Response {
    let stream = async_stream(move |tx| async move {
        loop {
            match tokio::time::timeout(KEEPALIVE, frames.recv()).await {
                Ok(Some(bytes)) => {
                    if tx.send(Ok::<_, Infallible>(bytes)).await.is_err() {
                        return;
                    }
                }
                Ok(None) => return,
                Err(_) => {
                    if tx
                        .send(Ok(Bytes::from_static(b": keepalive\n\n")))
                        .await
                        .is_err()
                    {
                        return;
                    }
                }
            }
        }
    });
    let mut response = Response::new(Body::from_stream(stream));
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    headers.extend(extra);
    response
}

/// A stream fed by a task (the task ends when the body is dropped).
fn async_stream<F, Fut>(
    produce: F,
) -> impl futures_util::Stream<Item = Result<Bytes, Infallible>> + Send + 'static
where
    F: FnOnce(mpsc::Sender<Result<Bytes, Infallible>>) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let (tx, rx) = mpsc::channel(64);
    tokio::spawn(produce(tx));
    futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    })
}
