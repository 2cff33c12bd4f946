//! A condition: the recipient's AGE is 18 or more.

wit_bindgen::generate!({ path: "../../../wit", world: "herald:platform/condition-extension", generate_all });

use exports::herald::platform::condition::Guest;
use herald::platform::types::{Field, Value};

struct Adult;

impl Guest for Adult {
    fn evaluate(recipient: Vec<Field>, _context: Option<String>) -> Result<bool, String> {
        Ok(recipient.iter().any(|f| f.name == "AGE" && matches!(f.value, Value::Number(n) if n >= 18.0)))
    }
}

export!(Adult);
