use super::*;
use serde_json::json;

#[test]
fn iso_round_trips_through_epoch() {
    let t = UNIX_EPOCH + Duration::from_micros(1_795_326_774_153_494);
    let text = format_iso_utc(t);
    assert_eq!(text, "2026-11-22T05:52:54.153494+00:00");
    let back = parse_iso8601(&text).unwrap_or_default();
    assert!((back - to_epoch(t)).abs() < 1e-5);
}

#[test]
fn parses_offsets_and_zulu() {
    let utc = parse_iso8601("2026-01-02T03:04:05Z").unwrap_or_default();
    let plus = parse_iso8601("2026-01-02T05:04:05+02:00").unwrap_or_default();
    let minus = parse_iso8601("2026-01-02T02:04:05-0100").unwrap_or_default();
    assert_eq!(utc, plus);
    assert_eq!(utc, minus);
    assert_eq!(parse_iso8601("1970-01-01"), Some(0.0));
    assert_eq!(parse_iso8601("not a date"), None);
    assert_eq!(parse_iso8601("2026-13-01T00:00:00"), None);
}

#[test]
fn parse_timestamp_accepts_reference_encodings() {
    assert_eq!(
        parse_timestamp(&json!(1_700_000_000.5)),
        Some(1_700_000_000.5)
    );
    assert_eq!(
        parse_timestamp(&json!(1_700_000_000_000u64)),
        Some(1_700_000_000.0)
    );
    assert_eq!(parse_timestamp(&json!("1700000000")), Some(1_700_000_000.0));
    assert_eq!(
        parse_timestamp(&json!("2023-11-14T22:13:20Z")),
        Some(1_700_000_000.0)
    );
    assert_eq!(parse_timestamp(&json!(0)), None);
    assert_eq!(parse_timestamp(&json!("")), None);
    assert_eq!(parse_timestamp(&Value::Null), None);
}

#[test]
fn epoch_conversions() {
    assert_eq!(from_epoch(0.0), None);
    assert_eq!(from_epoch(f64::NAN), None);
    let t = from_epoch(10.25).unwrap_or(UNIX_EPOCH);
    assert_eq!(to_epoch(t), 10.25);
}
