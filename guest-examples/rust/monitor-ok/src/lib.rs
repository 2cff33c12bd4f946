//! A monitor (written with herald-sdk): healthy while a campaign is running (Global Data
//! CAMPAIGN_NAME is set).

use herald_sdk::extensions::{Health, Monitor};
use herald_sdk::global_data;

herald_sdk::config!(schedule: "every 5m");

struct Campaign;

impl Monitor for Campaign {
    fn check() -> Health {
        match global_data::get("CAMPAIGN_NAME") {
            Ok(Some(name)) if !name.is_empty() => Health::ok(format!("running: {name}")),
            other => Health::failing(format!("no campaign: {other:?}")),
        }
    }
}

herald_sdk::monitor_extension!(Campaign);
