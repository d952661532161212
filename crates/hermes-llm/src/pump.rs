//! Turning a streamed response body into a stream of deltas, shared by every
//! streaming transport: queueing, idle timeout, cancellation, and ending with
//! the error after the deltas that arrived before it. The body is split into
//! frames by a [`Framing`] (SSE, or AWS event-stream for Bedrock).

use std::collections::VecDeque;
use std::time::Duration;

use futures_util::stream::{self, StreamExt};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::{describe, truncate};
use crate::open::{Body, guarded};
use crate::sse::{SseDecoder, SseEvent};
use crate::{DeltaStream, LlmError, StreamDelta};

/// Splits a response body into frames.
pub(crate) trait Framing: Send + 'static {
    /// One decoded unit (an SSE event, an event-stream message).
    type Frame;
    /// Feeds bytes, appending the frames they complete; an error ends the
    /// stream after the frames appended before it.
    fn push(&mut self, bytes: &[u8], out: &mut Vec<Self::Frame>) -> Result<(), LlmError>;
    /// The body ended: a last pending frame, or an error for a cut frame.
    fn finish(&mut self) -> Result<Option<Self::Frame>, LlmError>;
}

impl Framing for SseDecoder {
    type Frame = SseEvent;

    fn push(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) -> Result<(), LlmError> {
        out.extend(SseDecoder::push(self, bytes));
        Ok(())
    }

    fn finish(&mut self) -> Result<Option<SseEvent>, LlmError> {
        Ok(SseDecoder::finish(self))
    }
}

/// What one wire format does with its frames (SSE events unless stated).
pub(crate) trait WireEvents<F = SseEvent>: Send + 'static {
    /// Handles one event, pushing deltas; `Ok(true)` when the response is complete.
    fn on_event(
        &mut self,
        event: &F,
        request_id: Option<&str>,
        out: &mut Vec<StreamDelta>,
    ) -> Result<bool, LlmError>;
    /// The body ended before a completion event: `Ok` when that is a normal end.
    fn on_eof(&self) -> Result<(), LlmError>;
}

/// The JSON in an SSE event's (trimmed, non-empty) `data`; `what` names it in
/// a decode error (`bad stream {what}`).
pub(crate) fn data_json(data: &str, what: &str) -> Result<Value, LlmError> {
    serde_json::from_str(data)
        .map_err(|e| LlmError::Decode(format!("bad stream {what} ({e}): {}", truncate(data, 200))))
}

/// One streamed response being turned into deltas.
pub(crate) struct Pump<W, D> {
    body: Body,
    framing: D,
    wire: W,
    /// Decoded items not yet handed out; an error is always the last.
    queue: VecDeque<Result<StreamDelta, LlmError>>,
    /// No more reading: complete, end of input, or an error queued.
    done: bool,
    request_id: Option<String>,
    cancel: CancellationToken,
    idle: Duration,
    /// Frames decoded so far, and the first bytes of the body: a body that
    /// ends without a single frame is shown as what it was.
    frames: usize,
    head: Vec<u8>,
}

/// How much of the body is kept to show when it turns out not to be a stream.
const HEAD_KEPT: usize = 1024;

impl<D: Framing, W: WireEvents<D::Frame>> Pump<W, D> {
    /// A pump over `body` split by `framing`, stopping when `cancel` fires or no
    /// bytes arrive for `idle`.
    pub(crate) fn framed(
        body: Body,
        framing: D,
        wire: W,
        request_id: Option<String>,
        cancel: CancellationToken,
        idle: Duration,
    ) -> DeltaStream {
        let pump = Self {
            body,
            framing,
            wire,
            queue: VecDeque::new(),
            done: false,
            request_id,
            cancel,
            idle,
            frames: 0,
            head: Vec::new(),
        };
        stream::unfold(pump, Self::next).boxed()
    }

    async fn next(mut self) -> Option<(Result<StreamDelta, LlmError>, Self)> {
        loop {
            if self.cancel.is_cancelled() && !(self.done && self.queue.is_empty()) {
                // Stop at once: what is still queued is dropped.
                self.queue.clear();
                self.fail(LlmError::Cancelled);
            }
            if let Some(item) = self.queue.pop_front() {
                return Some((item, self));
            }
            if self.done {
                return None;
            }
            self.read().await;
        }
    }

    /// Ends the stream with `error`, after the deltas already queued.
    fn fail(&mut self, error: LlmError) {
        self.queue.push_back(Err(error));
        self.done = true;
    }

    async fn read(&mut self) {
        let next = match guarded(&self.cancel, self.idle, "no data", self.body.next()).await {
            Ok(next) => next,
            Err(e) => return self.fail(e),
        };
        match next {
            Some(Ok(bytes)) => {
                if self.frames == 0 && self.head.len() < HEAD_KEPT {
                    let room = HEAD_KEPT - self.head.len();
                    self.head.extend_from_slice(&bytes[..bytes.len().min(room)]);
                }
                let mut frames = Vec::new();
                let pushed = self.framing.push(&bytes, &mut frames);
                for frame in &frames {
                    self.event(frame);
                    if self.done {
                        return;
                    }
                }
                if let Err(e) = pushed {
                    self.fail(e);
                }
            }
            Some(Err(e)) if e.is_timeout() => {
                self.fail(LlmError::Timeout(
                    "the request ran past its time limit (HERMES_API_TIMEOUT or the \
                     provider's request_timeout_seconds)"
                        .into(),
                ));
            }
            Some(Err(e)) => {
                let text = describe(&e.without_url());
                self.fail(LlmError::StreamEnded(format!(
                    "connection lost mid-stream: {text}"
                )));
            }
            None => {
                match self.framing.finish() {
                    Ok(Some(frame)) => self.event(&frame),
                    Ok(None) => {}
                    Err(e) => return self.fail(e),
                }
                if !self.done && self.frames == 0 && !looks_like_sse(&self.head) {
                    let body = String::from_utf8_lossy(&self.head).into_owned();
                    return self.fail(LlmError::Decode(format!(
                        "the reply is not a model response stream: {}",
                        crate::error::summarize_body(&body)
                    )));
                }
                if !self.done {
                    match self.wire.on_eof() {
                        Ok(()) => self.done = true,
                        Err(e) => self.fail(e),
                    }
                }
            }
        }
    }

    fn event(&mut self, event: &D::Frame) {
        self.frames += 1;
        let mut deltas = Vec::new();
        let result = self
            .wire
            .on_event(event, self.request_id.as_deref(), &mut deltas);
        self.queue.extend(deltas.into_iter().map(Ok));
        match result {
            Err(e) => self.fail(e),
            Ok(true) => self.done = true,
            Ok(false) => {}
        }
    }
}

/// Whether a body's first line is an SSE field or comment (or there is none):
/// a stream that only sent keep-alives is cut off, not something else.
fn looks_like_sse(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    match text.lines().map(str::trim).find(|l| !l.is_empty()) {
        None => true,
        Some(line) => {
            line.starts_with(':')
                || ["data", "event", "id", "retry"].iter().any(|field| {
                    line.strip_prefix(field)
                        .is_some_and(|rest| rest.is_empty() || rest.starts_with(':'))
                })
        }
    }
}
