//! A monitor (written with herald-sdk): every minute, checks the URL in the instance's Global
//! Data item `STATUS_URL` and reports healthy when it answers 2xx. When its status changes, Herald
//! achieves the event `INTEGRATION_DOWN` for recipient 1 (its `alert`), whose flows can tell
//! someone.

use herald_sdk::extensions::{Health, Monitor};
use herald_sdk::{client, global_data};

herald_sdk::config!(
    schedule: "every 1m",
    allowed_hosts: ["127.0.0.1", "status.example.com"],
    timeout_ms: 5000,
    alert: {"event": "INTEGRATION_DOWN", "recipient": 1}
);

struct Status;

impl Monitor for Status {
    fn check() -> Health {
        let url = match global_data::get("STATUS_URL") {
            Ok(Some(url)) if !url.is_empty() => url,
            other => return Health::failing(format!("STATUS_URL is not set: {other:?}")),
        };
        match client::get(&url) {
            Ok(answer) if (200..300).contains(&answer.status) => Health::ok(format!("{url} answered {}", answer.status)),
            Ok(answer) => Health::failing(format!("{url} answered {}", answer.status)),
            Err(e) => Health::failing(format!("{url} did not answer: {e}")),
        }
    }
}

herald_sdk::monitor_extension!(Status);
