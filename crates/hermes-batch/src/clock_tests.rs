use super::*;
use std::time::Duration;

#[test]
fn stamps_are_python_isoformat() {
    let clock = Clock::new(Zone::utc());
    let t = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    assert_eq!(clock.stamp_at(t), "2023-11-14T22:13:20");
    let t = t + Duration::from_micros(42);
    assert_eq!(clock.stamp_at(t), "2023-11-14T22:13:20.000042");
    let paris = Clock::new(Zone::named("CET-1CEST,M3.5.0,M10.5.0/3").unwrap());
    assert_eq!(
        paris.stamp_at(UNIX_EPOCH + Duration::from_secs(1_700_000_000)),
        "2023-11-14T23:13:20"
    );
}
