use super::*;

fn event(kind: &str, payload: &str) -> Vec<u8> {
    encode_frame(
        &[
            (":event-type", kind),
            (":content-type", "application/json"),
            (":message-type", "event"),
        ],
        payload.as_bytes(),
    )
}

#[test]
fn crc32_is_the_ieee_one() {
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    assert_eq!(crc32(b""), 0);
}

#[test]
fn empty_message_has_the_documented_bytes() {
    // An empty message (no headers, no payload) from the AWS event-stream
    // test vectors: length 16, headers 0, prelude CRC 0x05c248eb, CRC 0x7d98c8ff.
    assert_eq!(
        encode_frame(&[], b""),
        [
            0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x05, 0xc2, 0x48, 0xeb, 0x7d, 0x98,
            0xc8, 0xff
        ]
    );
}

#[test]
fn decodes_whole_and_split_frames() {
    let mut bytes = event("messageStart", r#"{"role":"assistant"}"#);
    let first_len = bytes.len();
    bytes.extend(event("messageStop", r#"{"stopReason":"end_turn"}"#));
    let mut whole = Vec::new();
    EventStreamDecoder::new()
        .feed(&bytes, &mut whole)
        .expect("valid");
    assert_eq!(whole.len(), 2);
    assert_eq!(whole[0].header(":event-type"), Some("messageStart"));
    assert_eq!(whole[1].payload, br#"{"stopReason":"end_turn"}"#);

    // One byte at a time: nothing comes out early, everything comes out once.
    let mut decoder = EventStreamDecoder::new();
    let mut split = Vec::new();
    for (i, b) in bytes.iter().enumerate() {
        decoder.feed(&[*b], &mut split).expect("valid");
        let expected = usize::from(i + 1 >= first_len) + usize::from(i + 1 == bytes.len());
        assert_eq!(split.len(), expected, "after {} bytes", i + 1);
    }
    assert_eq!(split, whole);
    assert_eq!(decoder.pending(), 0);
    assert_eq!(decoder.finish(), Ok(None));
}

#[test]
fn corrupted_crcs_are_errors_after_the_good_frames() {
    let good = event("messageStart", "{}");
    let mut bad_payload = event("contentBlockDelta", r#"{"delta":{"text":"hi"}}"#);
    let at = bad_payload.len() - 6;
    bad_payload[at] ^= 0x01;
    let mut bytes = good.clone();
    bytes.extend(&bad_payload);
    let mut out = Vec::new();
    let err = EventStreamDecoder::new()
        .feed(&bytes, &mut out)
        .expect_err("message CRC");
    assert_eq!(out.len(), 1, "the good frame still comes out");
    assert!(err.to_string().contains("message CRC"), "{err}");

    let mut bad_prelude = good;
    bad_prelude[3] ^= 0x01;
    let err = EventStreamDecoder::new()
        .feed(&bad_prelude, &mut Vec::new())
        .expect_err("prelude CRC");
    assert!(err.to_string().contains("prelude CRC"), "{err}");
}

#[test]
fn other_header_types_are_skipped() {
    // Headers of every non-string type, then a string one.
    let mut head = Vec::new();
    let mut add = |name: &str, kind: u8, value: &[u8]| {
        head.push(name.len() as u8);
        head.extend_from_slice(name.as_bytes());
        head.push(kind);
        head.extend_from_slice(value);
    };
    add("t", 0, &[]);
    add("f", 1, &[]);
    add("b", 2, &[7]);
    add("s", 3, &[0, 7]);
    add("i", 4, &[0, 0, 0, 7]);
    add("l", 5, &[0; 8]);
    add("y", 6, &[0, 3, 1, 2, 3]);
    add("ts", 8, &[0; 8]);
    add("u", 9, &[0; 16]);
    add(":event-type", 7, &[0, 4, b'p', b'i', b'n', b'g']);
    let total = 16 + head.len() + 2;
    let mut msg = Vec::new();
    msg.extend_from_slice(&(total as u32).to_be_bytes());
    msg.extend_from_slice(&(head.len() as u32).to_be_bytes());
    let prelude = crc32(&msg);
    msg.extend_from_slice(&prelude.to_be_bytes());
    msg.extend_from_slice(&head);
    msg.extend_from_slice(b"{}");
    let crc = crc32(&msg);
    msg.extend_from_slice(&crc.to_be_bytes());
    let mut out = Vec::new();
    EventStreamDecoder::new()
        .feed(&msg, &mut out)
        .expect("valid");
    assert_eq!(
        out[0].headers,
        vec![(":event-type".to_owned(), "ping".to_owned())]
    );
    assert_eq!(out[0].payload, b"{}");
}

#[test]
fn a_cut_message_is_reported_at_the_end() {
    let bytes = event("messageStart", "{}");
    let mut decoder = EventStreamDecoder::new();
    let mut out = Vec::new();
    decoder
        .feed(&bytes[..20], &mut out)
        .expect("partial is fine");
    assert!(out.is_empty());
    assert!(matches!(decoder.finish(), Err(LlmError::StreamEnded(_))));
}

#[test]
fn absurd_lengths_are_rejected() {
    let mut msg = Vec::new();
    msg.extend_from_slice(&(8u32).to_be_bytes());
    msg.extend_from_slice(&(0u32).to_be_bytes());
    let prelude = crc32(&msg);
    msg.extend_from_slice(&prelude.to_be_bytes());
    assert!(
        EventStreamDecoder::new()
            .feed(&msg, &mut Vec::new())
            .is_err()
    );
}
