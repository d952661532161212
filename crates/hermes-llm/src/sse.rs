//! An incremental Server-Sent Events decoder.
//!
//! Follows the WHATWG event-stream rules: lines end with CRLF, LF or CR; a
//! blank line dispatches the event; lines starting with `:` are comments;
//! `field: value` loses one optional space after the colon; a line without a
//! colon is a field with an empty value; several `data:` lines join with
//! `\n`; a leading byte-order mark is dropped. Input may be split anywhere,
//! including inside a UTF-8 character or between `\r` and `\n`.

use bytes::Bytes;
use futures_util::stream::{self, Stream, StreamExt};

/// One dispatched event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, when the event had one.
    pub event: Option<String>,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
    /// The `id:` field, when the event had one.
    pub id: Option<String>,
}

/// Turns byte chunks into [`SseEvent`]s.
#[derive(Debug)]
pub struct SseDecoder {
    /// Bytes of the line being read (kept as bytes so split characters survive).
    line: Vec<u8>,
    /// The previous chunk ended with `\r`; a leading `\n` belongs to it.
    after_cr: bool,
    /// No line has been completed yet (a BOM may still be stripped).
    first_line: bool,
    /// The event being assembled.
    event: Option<String>,
    data: String,
    has_data: bool,
    id: Option<String>,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl Default for SseDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self {
            line: Vec::new(),
            after_cr: false,
            first_line: true,
            event: None,
            data: String::new(),
            has_data: false,
            id: None,
        }
    }

    /// Feeds the next bytes and returns the events they complete.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        for &b in bytes {
            match b {
                b'\n' if self.after_cr => self.after_cr = false,
                b'\r' | b'\n' => {
                    self.after_cr = b == b'\r';
                    self.end_line(&mut out);
                }
                _ => {
                    self.after_cr = false;
                    self.line.push(b);
                }
            }
        }
        out
    }

    /// Ends the input: a last line without its line ending is processed, and a
    /// pending event without its blank line is dispatched.
    pub fn finish(&mut self) -> Option<SseEvent> {
        let mut out = Vec::new();
        if !self.line.is_empty() {
            self.end_line(&mut out);
        }
        self.after_cr = false;
        self.dispatch(&mut out);
        out.pop()
    }

    fn end_line(&mut self, out: &mut Vec<SseEvent>) {
        let mut raw = std::mem::take(&mut self.line);
        if self.first_line {
            self.first_line = false;
            if raw.starts_with(BOM) {
                raw.drain(..BOM.len());
            }
        }
        let line = String::from_utf8_lossy(&raw);
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_ref(), ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = Some(value.to_owned()),
            "id" if !value.contains('\0') => self.id = Some(value.to_owned()),
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = self.event.take();
        let id = self.id.take();
        if !self.has_data {
            // Events without data are dropped, like browsers do.
            return;
        }
        self.has_data = false;
        out.push(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
            id,
        });
    }
}

/// Decodes a stream of byte chunks into a stream of events; errors from the
/// byte stream pass through and end nothing by themselves.
pub fn decode<S, E>(bytes: S) -> impl Stream<Item = Result<SseEvent, E>>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
{
    stream::unfold(
        (bytes, SseDecoder::new(), false),
        |(mut bytes, mut decoder, ended)| async move {
            if ended {
                return None;
            }
            match bytes.next().await {
                Some(Ok(chunk)) => {
                    let events: Vec<Result<SseEvent, E>> =
                        decoder.push(&chunk).into_iter().map(Ok).collect();
                    Some((stream::iter(events), (bytes, decoder, false)))
                }
                Some(Err(e)) => Some((stream::iter(vec![Err(e)]), (bytes, decoder, false))),
                None => {
                    let last: Vec<Result<SseEvent, E>> =
                        decoder.finish().into_iter().map(Ok).collect();
                    Some((stream::iter(last), (bytes, decoder, true)))
                }
            }
        },
    )
    .flatten()
}

/// The events of an HTTP response body.
pub fn response_events(
    response: reqwest::Response,
) -> impl Stream<Item = Result<SseEvent, reqwest::Error>> {
    decode(response.bytes_stream().boxed())
}

#[cfg(test)]
#[path = "sse_tests.rs"]
mod tests;
