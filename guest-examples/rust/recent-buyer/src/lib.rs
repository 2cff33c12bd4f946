//! A condition (written with herald-sdk): the recipient bought something in the last 30 days,
//! read from its One-To-Many PURCHASES records (PURCHASED_AT) through `recipients::records`.
//! The demo's flow STORE_ASSIGNMENT uses it.

use herald_sdk::extensions::Condition;
use herald_sdk::{log, recipients, Record};

const DAY: u64 = 86_400;

struct RecentBuyer;

impl Condition for RecentBuyer {
    fn evaluate(recipient: Record, _context: Option<serde_json::Value>) -> Result<bool, String> {
        let id = recipient.number("USER_ID").ok_or("the recipient has no USER_ID")?;
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_err(|e| e.to_string())?.as_secs();
        let since = rfc3339(now.saturating_sub(30 * DAY));
        let filter = format!("PURCHASED_AT=ge=\"{since}\"");
        let recent = recipients::records("USER_ID", id, "PURCHASES", &filter, 1).map_err(|e| e.to_string())?;
        log::info(&format!("purchases since {since}: {}", if recent.is_empty() { "none" } else { "some" }));
        Ok(!recent.is_empty())
    }
}

/// Seconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ` (the civil calendar, UTC).
fn rfc3339(secs: u64) -> String {
    let (days, rest) = ((secs / DAY) as i64, secs % DAY);
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rest / 3600, rest % 3600 / 60, rest % 60)
}

herald_sdk::condition_extension!(RecentBuyer);
