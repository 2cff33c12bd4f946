//! A step: marks the recipient by setting its COUNTRY to "FR" (through herald:platform).

wit_bindgen::generate!({ path: "../../../wit", world: "herald:platform/step-extension", generate_all });

use exports::herald::platform::step::Guest;
use herald::platform::recipients_write;
use herald::platform::types::{Field, Value};

struct Tagger;

impl Guest for Tagger {
    fn run(recipient: Vec<Field>, _context: Option<String>) -> Result<(), String> {
        let id = recipient.into_iter().find(|f| f.name == "USER_ID").ok_or("no USER_ID")?;
        recipients_write::upsert(&[id, Field { name: "COUNTRY".into(), value: Value::Text("FR".into()) }]).map_err(|e| format!("{e:?}"))?;
        Ok(())
    }
}

export!(Tagger);
