//! {{name}}: a condition of a flow. The flow goes on for recipients whose AGE is 18 or more.

use herald_sdk::extensions::Condition;
use herald_sdk::Record;

struct Extension;

impl Condition for Extension {
    fn evaluate(recipient: Record, _context: Option<serde_json::Value>) -> Result<bool, String> {
        Ok(recipient.number("AGE").is_some_and(|age| age >= 18.0))
    }
}

herald_sdk::condition_extension!(Extension);
