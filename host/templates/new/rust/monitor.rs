//! {{name}}: a monitor, run every five minutes. Healthy while a campaign is running (the Global
//! Data item CAMPAIGN_NAME is set).

use herald_sdk::extensions::{Health, Monitor};
use herald_sdk::global_data;

herald_sdk::config!(schedule: "every 5m");

struct Extension;

impl Monitor for Extension {
    fn check() -> Health {
        match global_data::get("CAMPAIGN_NAME") {
            Ok(Some(name)) if !name.is_empty() => Health::ok(format!("running: {name}")),
            Ok(_) => Health::failing("no campaign is running"),
            Err(e) => Health::failing(format!("CAMPAIGN_NAME cannot be read: {e}")),
        }
    }
}

herald_sdk::monitor_extension!(Extension);
