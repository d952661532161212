use super::*;

static UTC: std::sync::LazyLock<Zone> = std::sync::LazyLock::new(Zone::utc);

/// 2026-11-25T11:30:00+00:00 (a Wednesday).
const NOW: i64 = 1_795_606_200;

#[test]
fn the_reference_schedule_forms_parse_as_it_stores_them() {
    assert_eq!(iso(NOW), "2026-11-25T11:30:00+00:00");
    assert_eq!(
        parse_schedule("every 2h", NOW, &UTC).unwrap(),
        json!({"kind": "interval", "minutes": 120, "display": "every 120m"})
    );
    assert_eq!(
        parse_schedule("30m", NOW, &UTC).unwrap(),
        json!({"kind": "once", "run_at": "2026-11-25T12:00:00+00:00", "display": "once in 30m"})
    );
    assert_eq!(
        parse_schedule("0 9 * * 1-5", NOW, &UTC).unwrap(),
        json!({"kind": "cron", "expr": "0 9 * * 1-5", "display": "0 9 * * 1-5"})
    );
    assert_eq!(
        parse_schedule("2030-01-15T09:30", NOW, &UTC).unwrap(),
        json!({"kind": "once", "run_at": "2030-01-15T09:30:00+00:00", "display": "once at 2030-01-15 09:30"})
    );
    for bad in ["sometime", "30s", "61 * * * *", "every soon"] {
        assert!(parse_schedule(bad, NOW, &UTC).is_err(), "{bad}");
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
        next_run(&weekdays_at_nine, None, NOW, &UTC)
            .map(iso)
            .as_deref(),
        Some("2026-11-26T09:00:00+00:00")
    );
    // Friday 09:00 → Monday 09:00.
    let friday = parse_iso("2026-11-27T09:00:00+00:00").unwrap();
    assert_eq!(
        next_run(&weekdays_at_nine, Some(friday), NOW, &UTC)
            .map(iso)
            .as_deref(),
        Some("2026-11-30T09:00:00+00:00")
    );
    let every_15 = json!({"kind": "cron", "expr": "*/15 * * * *"});
    assert_eq!(
        next_run(&every_15, None, NOW, &UTC).map(iso).as_deref(),
        Some("2026-11-25T11:45:00+00:00")
    );
    let interval = json!({"kind": "interval", "minutes": 120});
    assert_eq!(next_run(&interval, Some(NOW), NOW, &UTC), Some(NOW + 7200));
    let once = json!({"kind": "once", "run_at": iso(NOW + 60)});
    assert_eq!(next_run(&once, None, NOW, &UTC), Some(NOW + 60));
    assert_eq!(
        next_run(&once, Some(NOW), NOW, &UTC),
        None,
        "a one-shot runs once"
    );
    let stale = json!({"kind": "once", "run_at": iso(NOW - 3600)});
    assert_eq!(next_run(&stale, None, NOW, &UTC), None);
    assert_eq!(grace_secs(&interval, NOW, &UTC), 3600);
    assert_eq!(grace_secs(&every_15, NOW, &UTC), 450);
    assert_eq!(
        grace_secs(&json!({"kind": "interval", "minutes": 1}), NOW, &UTC),
        120
    );
    // Day-of-month and day-of-week both restricted: either matches.
    let first_or_sunday = CronExpr::parse("0 0 1 * 0").unwrap();
    assert_eq!(
        first_or_sunday.next_after(NOW, &UTC).map(iso).as_deref(),
        Some("2026-11-29T00:00:00+00:00")
    );
}

#[test]
fn cron_expressions_and_naive_times_are_read_in_the_zone() {
    // Paris is at +01:00 in November, +02:00 in July.
    let paris = Zone::named("CET-1CEST,M3.5.0,M10.5.0/3").unwrap();
    let at_nine = json!({"kind": "cron", "expr": "0 9 * * *"});
    let next = next_run(&at_nine, None, NOW, &paris).unwrap();
    assert_eq!(paris.iso(next), "2026-11-26T09:00:00+01:00");
    assert_eq!(iso(next), "2026-11-26T08:00:00+00:00");
    // Across the spring change the wall clock still says 09:00.
    let before_change = parse_iso("2027-03-27T12:00:00+00:00").unwrap();
    let after = next_run(&at_nine, Some(before_change), NOW, &paris).unwrap();
    assert_eq!(paris.iso(after), "2027-03-28T09:00:00+02:00");
    let once = parse_schedule("2030-07-01T09:30", NOW, &paris).unwrap();
    assert_eq!(once["run_at"], "2030-07-01T09:30:00+02:00");
    // Stored times keep their own offsets whatever the zone.
    assert_eq!(parse_iso_in("2026-11-25T11:30:00+00:00", &paris), Some(NOW));
}

#[test]
fn offsets_read_in_every_iso_form() {
    let utc = parse_iso("2030-01-15T14:30:00Z").unwrap();
    // `-0500` is five hours, not five hundred.
    assert_eq!(parse_iso("2030-01-15T09:30:00-0500"), Some(utc));
    assert_eq!(parse_iso("2030-01-15T09:30:00-05:00"), Some(utc));
    assert_eq!(parse_iso("2030-01-15T09:30:00-05"), Some(utc));
    assert_eq!(parse_iso("2030-01-15T20:00+0530"), Some(utc));
    assert_eq!(parse_iso("2030-01-15T09:30:00-2500"), None);
    assert_eq!(parse_iso("2030-01-15T09:30:00+05:75"), None);
}
