//! A step (written with herald-sdk): marks the recipient by setting its COUNTRY to "FR".

use herald_sdk::extensions::Step;
use herald_sdk::{recipients, Record};

struct Tagger;

impl Step for Tagger {
    fn run(recipient: Record, _context: Option<serde_json::Value>) -> Result<(), String> {
        let id = recipient.number("USER_ID").ok_or("no USER_ID")?;
        recipients::update("USER_ID", id, Record::new().with("COUNTRY", "FR")).map_err(|e| e.to_string())?;
        Ok(())
    }
}

herald_sdk::step_extension!(Tagger);
