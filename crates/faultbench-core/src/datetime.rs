//! RFC 3339 UTC timestamps: the one formatter behind run records (whole seconds) and telemetry
//! points (milliseconds).
//!
//! Timestamps are only ever written, never parsed, and always in UTC, so a civil-date
//! conversion is all it takes; a date crate would add to every build, mock networks included.
//!
//! ```
//! use faultbench_core::datetime::{rfc3339, rfc3339_millis};
//! assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
//! assert_eq!(rfc3339_millis(951_827_696_789), "2000-02-29T12:34:56.789Z");
//! ```

use std::time::{SystemTime, UNIX_EPOCH};

/// The current time as RFC 3339 UTC, whole seconds (`2026-11-29T22:41:18Z`).
pub fn now_rfc3339() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    rfc3339(secs)
}

/// Unix seconds as RFC 3339 UTC, e.g. `2026-11-29T22:41:18Z`.
pub fn rfc3339(secs: i64) -> String {
    let (date, time) = civil(secs);
    format!("{date}T{time}Z")
}

/// Unix milliseconds as RFC 3339 UTC with milliseconds, e.g. `2026-03-01T12:00:05.250Z`.
pub fn rfc3339_millis(ms: u64) -> String {
    // u64 milliseconds / 1000 always fits an i64.
    let (date, time) = civil((ms / 1000) as i64);
    format!("{date}T{time}.{:03}Z", ms % 1000)
}

/// `YYYY-MM-DD` and `hh:mm:ss` of Unix seconds, UTC.
fn civil(secs: i64) -> (String, String) {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (
        format!("{y:04}-{m:02}-{d:02}"),
        format!("{:02}:{:02}:{:02}", rem / 3600, rem % 3600 / 60, rem % 60),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_795_992_078), "2026-11-29T22:41:18Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn seconds_and_milliseconds_share_the_calendar() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_millis(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(-1), "1969-12-31T23:59:59Z");
        assert_eq!(
            rfc3339_millis(1_795_992_078_005),
            "2026-11-29T22:41:18.005Z"
        );
        assert_eq!(rfc3339(4_107_542_400), "2100-03-01T00:00:00Z");
    }
}
