//! A step for the flow tests. It writes what it saw into the recipient's CITY: the `city` of the
//! contextual data, or "no context"; and it logs both the context and the `context` interface's
//! view. The recipient's LAST_NAME asks for trouble: "trap" panics, "spin" never returns,
//! "decline" returns an error, "chain" achieves NEWSLETTER_SIGNUP.

use herald_sdk::extensions::Step;
use herald_sdk::{log, recipients, Record};

struct Probe;

impl Step for Probe {
    fn run(recipient: Record, context: Option<serde_json::Value>) -> Result<(), String> {
        let id = recipient.number("USER_ID").ok_or("no USER_ID")?;
        match recipient.text("LAST_NAME") {
            Some("trap") => panic!("the probe was asked to trap"),
            Some("spin") => {
                let mut n: u64 = 0;
                loop {
                    n = std::hint::black_box(n.wrapping_add(1));
                }
            }
            Some("decline") => return Err("the probe declines".into()),
            Some("chain") => recipients::achieve_event("USER_ID", id, "NEWSLETTER_SIGNUP").map_err(|e| e.to_string())?,
            _ => {}
        }
        log::info(&format!("context: {}", context.as_ref().map_or("none".to_string(), |c| c.to_string())));
        log::info(&format!("context interface: {}", herald_sdk::context().map_or("none".to_string(), |c| c.to_string())));
        let city = context.as_ref().and_then(|c| c.get("city")).and_then(|c| c.as_str()).unwrap_or("no context").to_string();
        recipients::update("USER_ID", id, Record::new().with("CITY", city.as_str())).map_err(|e| e.to_string())?;
        Ok(())
    }
}

herald_sdk::step_extension!(Probe);
