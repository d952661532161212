use super::*;

const NOW: f64 = 1_800_000_000.0;

#[test]
fn durations_read_like_the_reference() {
    assert_eq!(duration_secs("90"), Some(90.0 * 86_400.0));
    assert_eq!(duration_secs("5h"), Some(18_000.0));
    assert_eq!(duration_secs("30m"), Some(1_800.0));
    assert_eq!(duration_secs("2 days"), Some(172_800.0));
    assert_eq!(duration_secs("1w"), Some(604_800.0));
    assert_eq!(duration_secs("1.5h"), Some(5_400.0));
    assert_eq!(duration_secs("45s"), Some(45.0));
    assert_eq!(duration_secs("5y"), None);
    assert_eq!(duration_secs("soon"), None);
    assert_eq!(duration_secs(""), None);
}

#[test]
fn timestamps_are_utc_unless_they_say_otherwise() {
    let at = |s: &str| point_in_time(s, "--before", NOW).unwrap();
    assert_eq!(at("2026-07-05"), 1_783_209_600.0);
    assert_eq!(at("2026-07-05 14:30"), 1_783_209_600.0 + 52_200.0);
    assert_eq!(at("2026-07-05T14:30:15Z"), 1_783_209_600.0 + 52_215.0);
    assert_eq!(at("2026-07-05T16:30:15+02:00"), 1_783_209_600.0 + 52_215.0);
    assert_eq!(at("2026-07-05T14:30:15.5"), 1_783_209_600.0 + 52_215.5);
    assert_eq!(at("2d"), NOW - 172_800.0);
    let err = point_in_time("2026-13-01", "--after", NOW).unwrap_err();
    assert!(err.contains("invalid value for --after"), "{err}");
    assert!(point_in_time("yesterday", "--after", NOW).is_err());
}

#[test]
fn the_tighter_bound_wins_and_an_empty_window_is_refused() {
    let args = FilterArgs {
        older_than: Some("1d".into()),
        before: Some("3d".into()),
        newer_than: Some("10d".into()),
        after: Some("5d".into()),
        title: Some("codex".into()),
        ..FilterArgs::default()
    };
    let f = args.to_filter(NOW).unwrap();
    assert_eq!(f.started_before, Some(NOW - 3.0 * 86_400.0));
    assert_eq!(f.started_after, Some(NOW - 5.0 * 86_400.0));
    assert_eq!(f.title_like.as_deref(), Some("codex"));
    let text = describe(&f);
    assert!(
        text.contains("started before") && text.contains("title contains 'codex'"),
        "{text}"
    );
    let empty = FilterArgs {
        older_than: Some("5d".into()),
        newer_than: Some("2d".into()),
        ..FilterArgs::default()
    };
    assert!(
        empty
            .to_filter(NOW)
            .unwrap_err()
            .contains("time window is empty")
    );
    assert_eq!(
        describe(&SessionFilter::default()),
        "no filters: every ended session"
    );
}
