use super::*;

/// 2026-11-25T11:30:00+00:00 (a Wednesday).
const NOW: i64 = 1_795_606_200;

#[test]
fn the_reference_schedule_forms_parse_as_it_stores_them() {
    assert_eq!(iso(NOW), "2026-11-25T11:30:00+00:00");
    assert_eq!(
        parse_schedule("every 2h", NOW).unwrap(),
        json!({"kind": "interval", "minutes": 120, "display": "every 120m"})
    );
    assert_eq!(
        parse_schedule("30m", NOW).unwrap(),
        json!({"kind": "once", "run_at": "2026-11-25T12:00:00+00:00", "display": "once in 30m"})
    );
    assert_eq!(
        parse_schedule("0 9 * * 1-5", NOW).unwrap(),
        json!({"kind": "cron", "expr": "0 9 * * 1-5", "display": "0 9 * * 1-5"})
    );
    assert_eq!(
        parse_schedule("2030-01-15T09:30", NOW).unwrap(),
        json!({"kind": "once", "run_at": "2030-01-15T09:30:00+00:00", "display": "once at 2030-01-15 09:30"})
    );
    for bad in ["sometime", "30s", "61 * * * *", "every soon"] {
        assert!(parse_schedule(bad, NOW).is_err(), "{bad}");
    }
}

#[test]
fn timestamps_with_offsets_and_fractions() {
    assert_eq!(
        parse_iso("2026-11-25T11:30:39.931666+00:00"),
        Some(NOW + 39)
    );
    assert_eq!(parse_iso("2026-11-25T17:00:00+05:30"), Some(NOW));
    assert_eq!(parse_iso("2026-11-25T11:30:00Z"), Some(NOW));
    assert_eq!(parse_iso("2026-11-25"), Some(NOW - 11 * 3600 - 30 * 60));
    assert_eq!(parse_iso("yesterday"), None);
}

#[test]
fn next_runs() {
    let weekdays_at_nine = json!({"kind": "cron", "expr": "0 9 * * 1-5"});
    assert_eq!(
        next_run(&weekdays_at_nine, None, NOW).map(iso).as_deref(),
        Some("2026-11-26T09:00:00+00:00")
    );
    // Friday 09:00 → Monday 09:00.
    let friday = parse_iso("2026-11-27T09:00:00+00:00").unwrap();
    assert_eq!(
        next_run(&weekdays_at_nine, Some(friday), NOW)
            .map(iso)
            .as_deref(),
        Some("2026-11-30T09:00:00+00:00")
    );
    let every_15 = json!({"kind": "cron", "expr": "*/15 * * * *"});
    assert_eq!(
        next_run(&every_15, None, NOW).map(iso).as_deref(),
        Some("2026-11-25T11:45:00+00:00")
    );
    let interval = json!({"kind": "interval", "minutes": 120});
    assert_eq!(next_run(&interval, Some(NOW), NOW), Some(NOW + 7200));
    let once = json!({"kind": "once", "run_at": iso(NOW + 60)});
    assert_eq!(next_run(&once, None, NOW), Some(NOW + 60));
    assert_eq!(
        next_run(&once, Some(NOW), NOW),
        None,
        "a one-shot runs once"
    );
    let stale = json!({"kind": "once", "run_at": iso(NOW - 3600)});
    assert_eq!(next_run(&stale, None, NOW), None);
    assert_eq!(grace_secs(&interval, NOW), 3600);
    assert_eq!(grace_secs(&every_15, NOW), 450);
    assert_eq!(
        grace_secs(&json!({"kind": "interval", "minutes": 1}), NOW),
        120
    );
    // Day-of-month and day-of-week both restricted: either matches.
    let first_or_sunday = CronExpr::parse("0 0 1 * 0").unwrap();
    assert_eq!(
        first_or_sunday.next_after(NOW).map(iso).as_deref(),
        Some("2026-11-29T00:00:00+00:00")
    );
}
