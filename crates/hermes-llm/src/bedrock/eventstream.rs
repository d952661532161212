//! The `application/vnd.amazon.eventstream` binary framing.
//!
//! A message is `total length (u32) | headers length (u32) | prelude CRC32 |
//! headers | payload | message CRC32`, all big-endian; each header is
//! `name length (u8) | name | value type (u8) | value`.

use crate::LlmError;
use crate::pump::Framing;

/// Prelude (two lengths and its CRC) plus the trailing message CRC.
const OVERHEAD: usize = 16;
/// Largest message accepted; AWS caps payloads at 16 MiB and headers at 128 KiB.
const MAX_MESSAGE: usize = 16 * 1024 * 1024 + 128 * 1024 + OVERHEAD;
/// Header value type of a UTF-8 string.
const TYPE_STRING: u8 = 7;

/// One decoded message: its string headers and its payload.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Frame {
    /// String-typed headers in order (other value types are skipped).
    pub headers: Vec<(String, String)>,
    /// The payload bytes (JSON for Bedrock).
    pub payload: Vec<u8>,
}

impl Frame {
    /// The value of the string header `name`.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// CRC-32 (IEEE 802.3, the zlib one) of `data`, as event-stream framing uses.
pub fn crc32(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}

/// Encodes one message with string headers (for tests and tools).
pub fn encode_frame(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut head = Vec::new();
    for (name, value) in headers {
        let name = &name.as_bytes()[..name.len().min(255)];
        let value = &value.as_bytes()[..value.len().min(usize::from(u16::MAX))];
        head.push(name.len() as u8);
        head.extend_from_slice(name);
        head.push(TYPE_STRING);
        head.extend_from_slice(&(value.len() as u16).to_be_bytes());
        head.extend_from_slice(value);
    }
    let total = OVERHEAD + head.len() + payload.len();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&(total as u32).to_be_bytes());
    out.extend_from_slice(&(head.len() as u32).to_be_bytes());
    let prelude_crc = crc32(&out);
    out.extend_from_slice(&prelude_crc.to_be_bytes());
    out.extend_from_slice(&head);
    out.extend_from_slice(payload);
    let crc = crc32(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

/// Incremental decoder: feed network chunks of any size, get whole messages.
#[derive(Debug, Default)]
pub struct EventStreamDecoder {
    buf: Vec<u8>,
}

fn bad(what: impl std::fmt::Display) -> LlmError {
    LlmError::Decode(format!("bad event-stream message: {what}"))
}

fn be_u32(bytes: &[u8], at: usize) -> usize {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[at..at + 4]);
    u32::from_be_bytes(word) as usize
}

impl EventStreamDecoder {
    /// A decoder with an empty buffer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds `bytes`, appending every message they complete to `out`. A bad
    /// length or CRC is an error; the messages before it are still appended.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<Frame>) -> Result<(), LlmError> {
        self.buf.extend_from_slice(bytes);
        let mut start = 0;
        let result = loop {
            let rest = &self.buf[start..];
            if rest.len() < 12 {
                break Ok(());
            }
            let total = be_u32(rest, 0);
            let headers_len = be_u32(rest, 4);
            let prelude_crc = be_u32(rest, 8) as u32;
            if crc32(&rest[..8]) != prelude_crc {
                break Err(bad("prelude CRC mismatch"));
            }
            if !(OVERHEAD..=MAX_MESSAGE).contains(&total) || headers_len > total - OVERHEAD {
                break Err(bad(format!(
                    "length {total} with {headers_len} header bytes"
                )));
            }
            if rest.len() < total {
                break Ok(());
            }
            let message = &rest[..total];
            let crc = be_u32(message, total - 4) as u32;
            if crc32(&message[..total - 4]) != crc {
                break Err(bad("message CRC mismatch"));
            }
            let headers = match parse_headers(&message[12..12 + headers_len]) {
                Ok(h) => h,
                Err(e) => break Err(e),
            };
            out.push(Frame {
                headers,
                payload: message[12 + headers_len..total - 4].to_vec(),
            });
            start += total;
        };
        self.buf.drain(..start);
        result
    }

    /// Bytes received that do not yet form a whole message.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }
}

fn parse_headers(mut bytes: &[u8]) -> Result<Vec<(String, String)>, LlmError> {
    let mut out = Vec::new();
    let take = |bytes: &mut &[u8], n: usize| -> Result<Vec<u8>, LlmError> {
        if bytes.len() < n {
            return Err(bad("header runs past its block"));
        }
        let (head, tail) = bytes.split_at(n);
        *bytes = tail;
        Ok(head.to_vec())
    };
    while !bytes.is_empty() {
        let name_len = usize::from(take(&mut bytes, 1)?[0]);
        let name = String::from_utf8_lossy(&take(&mut bytes, name_len)?).into_owned();
        let kind = take(&mut bytes, 1)?[0];
        let fixed = match kind {
            0 | 1 => Some(0),
            2 => Some(1),
            3 => Some(2),
            4 => Some(4),
            5 | 8 => Some(8),
            9 => Some(16),
            6 | TYPE_STRING => None,
            other => return Err(bad(format!("unknown header value type {other}"))),
        };
        match fixed {
            Some(n) => {
                take(&mut bytes, n)?;
            }
            None => {
                let len = take(&mut bytes, 2)?;
                let len = usize::from(u16::from_be_bytes([len[0], len[1]]));
                let value = take(&mut bytes, len)?;
                if kind == TYPE_STRING {
                    out.push((name, String::from_utf8_lossy(&value).into_owned()));
                }
            }
        }
    }
    Ok(out)
}

impl Framing for EventStreamDecoder {
    type Frame = Frame;

    fn push(&mut self, bytes: &[u8], out: &mut Vec<Frame>) -> Result<(), LlmError> {
        self.feed(bytes, out)
    }

    fn finish(&mut self) -> Result<Option<Frame>, LlmError> {
        match self.pending() {
            0 => Ok(None),
            n => Err(LlmError::StreamEnded(format!(
                "connection closed inside an event-stream message ({n} bytes pending)"
            ))),
        }
    }
}

#[cfg(test)]
#[path = "eventstream_tests.rs"]
mod tests;
