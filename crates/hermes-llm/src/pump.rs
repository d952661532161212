//! Turning an SSE response body into a stream of deltas, shared by every
//! streaming transport: queueing, idle timeout, cancellation, and ending with
//! the error after the deltas that arrived before it.

use std::collections::VecDeque;
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream::{self, BoxStream, StreamExt};
use tokio_util::sync::CancellationToken;

use crate::chat_completions::guarded;
use crate::error::describe;
use crate::sse::{SseDecoder, SseEvent};
use crate::{DeltaStream, LlmError, StreamDelta};

/// What one wire format does with its SSE events.
pub(crate) trait WireEvents: Send + 'static {
    /// Handles one event, pushing deltas; `Ok(true)` when the response is complete.
    fn on_event(
        &mut self,
        event: &SseEvent,
        request_id: Option<&str>,
        out: &mut Vec<StreamDelta>,
    ) -> Result<bool, LlmError>;
    /// The body ended before a completion event: `Ok` when that is a normal end.
    fn on_eof(&self) -> Result<(), LlmError>;
}

/// One SSE response being turned into deltas.
pub(crate) struct Pump<W> {
    body: BoxStream<'static, reqwest::Result<Bytes>>,
    sse: SseDecoder,
    wire: W,
    /// Decoded items not yet handed out; an error is always the last.
    queue: VecDeque<Result<StreamDelta, LlmError>>,
    /// No more reading: complete, end of input, or an error queued.
    done: bool,
    request_id: Option<String>,
    cancel: CancellationToken,
    idle: Duration,
}

impl<W: WireEvents> Pump<W> {
    /// A pump over `body`, stopping when `cancel` fires or no bytes arrive for `idle`.
    pub(crate) fn stream(
        body: BoxStream<'static, reqwest::Result<Bytes>>,
        wire: W,
        request_id: Option<String>,
        cancel: CancellationToken,
        idle: Duration,
    ) -> DeltaStream {
        let pump = Self {
            body,
            sse: SseDecoder::new(),
            wire,
            queue: VecDeque::new(),
            done: false,
            request_id,
            cancel,
            idle,
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
                for event in self.sse.push(&bytes) {
                    self.event(&event);
                    if self.done {
                        return;
                    }
                }
            }
            Some(Err(e)) => {
                let text = describe(&e.without_url());
                self.fail(LlmError::StreamEnded(format!(
                    "connection lost mid-stream: {text}"
                )));
            }
            None => {
                if let Some(event) = self.sse.finish() {
                    self.event(&event);
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

    fn event(&mut self, event: &SseEvent) {
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
