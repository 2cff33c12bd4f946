//! A condition (written with herald-sdk): the recipient's AGE is 18 or more.

use herald_sdk::extensions::Condition;
use herald_sdk::Record;

struct Adult;

impl Condition for Adult {
    fn evaluate(recipient: Record, _context: Option<serde_json::Value>) -> Result<bool, String> {
        Ok(recipient.number("AGE").is_some_and(|age| age >= 18.0))
    }
}

herald_sdk::condition_extension!(Adult);
