//! {{name}}: a step of a flow. It sets the recipient's COUNTRY from the triggering call's
//! contextual data (`{"country": "FR"}`), or to "FR".

use herald_sdk::extensions::Step;
use herald_sdk::{log, recipients, Record};

struct Extension;

impl Step for Extension {
    fn run(recipient: Record, context: Option<serde_json::Value>) -> Result<(), String> {
        let id = recipient.number("USER_ID").ok_or("the recipient has no USER_ID")?;
        let country = context.as_ref().and_then(|c| c["country"].as_str()).unwrap_or("FR").to_string();
        recipients::update("USER_ID", id, Record::new().with("COUNTRY", country.as_str())).map_err(|e| e.to_string())?;
        log::info(&format!("recipient {id}: COUNTRY={country}"));
        Ok(())
    }
}

herald_sdk::step_extension!(Extension);
