//! A monitor: healthy while a campaign is running (Global Data CAMPAIGN_NAME is set).

wit_bindgen::generate!({ path: "../../../wit", world: "herald:platform/monitor-extension", generate_all });

use exports::herald::platform::monitor::{Guest, Report};
use herald::platform::global_data;

struct Campaign;

impl Guest for Campaign {
    fn check() -> Report {
        match global_data::get("CAMPAIGN_NAME") {
            Ok(Some(name)) if !name.is_empty() => Report { healthy: true, message: format!("running: {name}") },
            other => Report { healthy: false, message: format!("no campaign: {other:?}") },
        }
    }
}

export!(Campaign);
