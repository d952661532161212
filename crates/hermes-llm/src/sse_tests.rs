use bytes::Bytes;
use futures_util::stream::{self, StreamExt};

use super::{SseDecoder, SseEvent, decode};

fn ev(data: &str) -> SseEvent {
    SseEvent {
        event: None,
        data: data.to_owned(),
        id: None,
    }
}

fn all(input: &[u8]) -> Vec<SseEvent> {
    let mut d = SseDecoder::new();
    let mut out = d.push(input);
    out.extend(d.finish());
    out
}

/// A sample exercising most of the grammar, with multi-byte characters.
const SAMPLE: &str = "\u{FEFF}: keep-alive\r\n\
    data: {\"a\":\"héllo 👋\"}\r\n\r\n\
    event: ping\nid: 7\ndata:no-space\n\n\
    data: line one\rdata:  two spaces\r\r\
    data\n\n\
    retry: 100\nunknown: x\ndata: [DONE]\n\n";

fn sample_expected() -> Vec<SseEvent> {
    vec![
        ev("{\"a\":\"héllo 👋\"}"),
        SseEvent {
            event: Some("ping".into()),
            data: "no-space".into(),
            id: Some("7".into()),
        },
        ev("line one\n two spaces"),
        ev(""),
        ev("[DONE]"),
    ]
}

#[test]
fn decodes_sample_in_one_go() {
    assert_eq!(all(SAMPLE.as_bytes()), sample_expected());
}

#[test]
fn decodes_sample_split_at_every_position() {
    let bytes = SAMPLE.as_bytes();
    for cut in 0..=bytes.len() {
        let mut d = SseDecoder::new();
        let mut out = d.push(&bytes[..cut]);
        out.extend(d.push(&bytes[cut..]));
        out.extend(d.finish());
        assert_eq!(out, sample_expected(), "split at {cut}");
    }
}

#[test]
fn decodes_sample_split_at_every_pair_of_positions() {
    let bytes = SAMPLE.as_bytes();
    for a in 0..=bytes.len() {
        for b in a..=bytes.len() {
            let mut d = SseDecoder::new();
            let mut out = d.push(&bytes[..a]);
            out.extend(d.push(&bytes[a..b]));
            out.extend(d.push(&bytes[b..]));
            out.extend(d.finish());
            assert_eq!(out, sample_expected(), "split at {a} and {b}");
        }
    }
}

#[test]
fn decodes_byte_by_byte() {
    let mut d = SseDecoder::new();
    let mut out = Vec::new();
    for b in SAMPLE.as_bytes() {
        out.extend(d.push(std::slice::from_ref(b)));
    }
    out.extend(d.finish());
    assert_eq!(out, sample_expected());
}

#[test]
fn crlf_split_between_cr_and_lf_is_one_line_ending() {
    let mut d = SseDecoder::new();
    assert!(d.push(b"data: x\r").is_empty());
    assert!(d.push(b"\n").is_empty());
    assert_eq!(d.push(b"\r"), vec![ev("x")]);
    assert!(d.push(b"\ndata: y\n\n").len() == 1);
}

#[test]
fn multi_line_data_joins_with_newline() {
    assert_eq!(
        all(b"data: a\ndata: b\ndata:\ndata: c\n\n"),
        vec![ev("a\nb\n\nc")]
    );
}

#[test]
fn comments_and_events_without_data_are_dropped() {
    assert!(all(b": only a comment\n\nevent: x\n\nid: 3\n\n").is_empty());
}

#[test]
fn only_one_space_is_stripped_and_colons_in_values_survive() {
    assert_eq!(all(b"data:   x: y\n\n"), vec![ev("  x: y")]);
}

#[test]
fn trailing_event_without_blank_line_is_flushed_by_finish() {
    let mut d = SseDecoder::new();
    assert!(d.push(b"data: tail").is_empty());
    assert_eq!(d.finish(), Some(ev("tail")));
    assert_eq!(d.finish(), None);
    let mut d = SseDecoder::new();
    assert!(d.push(b"data: tail\n").is_empty());
    assert_eq!(d.finish(), Some(ev("tail")));
}

#[test]
fn bom_only_stripped_at_start() {
    assert_eq!(all("\u{FEFF}data: a\n\n".as_bytes()), vec![ev("a")]);
    // A BOM in a later line is not a field name we know: the line is ignored.
    assert!(all("data: a\n\u{FEFF}data: b\n\n".as_bytes()) == vec![ev("a")]);
}

#[test]
fn done_marker_is_plain_data() {
    assert_eq!(all(b"data: [DONE]\n\n"), vec![ev("[DONE]")]);
}

#[test]
fn invalid_utf8_is_replaced_not_fatal() {
    let out = all(b"data: \xFF ok\n\n");
    assert_eq!(out.len(), 1);
    assert!(out[0].data.ends_with(" ok"));
}

#[tokio::test]
async fn stream_helper_decodes_chunks_and_passes_errors() {
    let chunks: Vec<Result<Bytes, String>> = vec![
        Ok(Bytes::from_static(b"data: a\n")),
        Ok(Bytes::from_static(b"\ndata: b")),
        Err("boom".to_owned()),
        Ok(Bytes::from_static(b"\n\ndata: c")),
    ];
    let out: Vec<Result<SseEvent, String>> = decode(stream::iter(chunks)).collect().await;
    assert_eq!(
        out,
        vec![
            Ok(ev("a")),
            Err("boom".to_owned()),
            Ok(ev("b")),
            Ok(ev("c"))
        ]
    );
}
