//! Session ids in the reference's shape: `YYYYMMDD_HHMMSS_<6 hex>`.

use std::time::{SystemTime, UNIX_EPOCH};

/// A new session id from the current UTC time and six random hex digits.
pub fn new_session_id() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    format_id(now.as_secs(), random_hex6(now.subsec_nanos()))
}

fn format_id(unix_secs: u64, suffix: String) -> String {
    let days = unix_secs / 86_400;
    let rem = unix_secs % 86_400;
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}{m:02}{d:02}_{:02}{:02}{:02}_{suffix}",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

fn random_hex6(nanos: u32) -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(nanos);
    h.write_u32(std::process::id());
    format!("{:06x}", h.finish() & 0xff_ffff)
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_the_reference() {
        assert_eq!(format_id(0, "abcdef".into()), "19700101_000000_abcdef");
        assert_eq!(
            format_id(1_795_322_096, "012345".into()),
            "20261122_043456_012345"
        );
        assert_eq!(format_id(951_782_400, "x".into()), "20000229_000000_x");
    }

    #[test]
    fn ids_have_the_right_shape() {
        let id = new_session_id();
        assert_eq!(id.len(), 22, "{id}");
        assert!(id[16..].chars().all(|c| c.is_ascii_hexdigit()));
    }
}
