//! Session ids in the reference's shape: `YYYYMMDD_HHMMSS_<6 hex>`.

use std::time::{SystemTime, UNIX_EPOCH};

use hermes_state::time::UtcTime;

/// A new session id from the current UTC time and six random hex digits.
pub fn new_session_id() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    format_id(
        now.as_secs(),
        format!("{:06x}", fastrand::u32(..0x100_0000)),
    )
}

pub(crate) fn format_id(unix_secs: u64, suffix: String) -> String {
    let time = UtcTime::from_unix(i64::try_from(unix_secs).unwrap_or(i64::MAX));
    format!("{}_{suffix}", time.compact())
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
