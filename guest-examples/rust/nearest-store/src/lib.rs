//! A step (written with herald-sdk): assigns the recipient a store from the STORES Global Data
//! Table: the store of the city the triggering call names in its contextual data (a Context
//! Parameter Schema with a model VISIT and its field CITY: `{"VISIT": {"CITY": "Nice"}}`, typed
//! with `context_as`), else of the recipient's own CITY, else the first store. It writes the
//! store's ID into the recipient's STORE. The demo's flow STORE_ASSIGNMENT uses it.

use herald_sdk::extensions::{context_as, Step};
use herald_sdk::{log, recipients, tables, Record};

/// The recipient as this step reads it (typed Person Data).
#[derive(serde::Deserialize)]
#[allow(non_snake_case)]
struct Shopper {
    USER_ID: f64,
    CITY: Option<String>,
}

/// The contextual data it understands.
#[derive(serde::Deserialize)]
#[allow(non_snake_case)]
struct Context {
    VISIT: Option<Visit>,
}

#[derive(serde::Deserialize)]
#[allow(non_snake_case)]
struct Visit {
    CITY: Option<String>,
}

struct NearestStore;

impl Step for NearestStore {
    fn run(recipient: Record, context: Option<serde_json::Value>) -> Result<(), String> {
        let shopper: Shopper = recipient.parse()?;
        let visit: Option<Context> = context_as(&context)?;
        let city = visit.and_then(|c| c.VISIT).and_then(|v| v.CITY).or(shopper.CITY);
        let in_city = match &city {
            Some(city) => tables::find("STORES", &format!("CITY=={}", quoted(city)), 1).map_err(|e| e.to_string())?,
            None => Vec::new(),
        };
        let store = match in_city.into_iter().next() {
            Some(store) => store,
            None => tables::find("STORES", "", 1).map_err(|e| e.to_string())?.into_iter().next().ok_or("the STORES table is empty")?,
        };
        let id = store.text("ID").ok_or("a store without ID")?.to_string();
        log::info(&format!("store {id} for city {}", city.as_deref().unwrap_or("(none)")));
        recipients::update("USER_ID", shopper.USER_ID, Record::new().with("STORE", id.as_str())).map_err(|e| e.to_string())?;
        Ok(())
    }
}

/// An RSQL argument in double quotes.
fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

herald_sdk::step_extension!(NearestStore);
