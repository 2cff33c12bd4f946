//! Flow definitions (read as the API reads them, then checked against the demo's model) and the
//! schedules of flows and monitors.

use rand::Rng;

use super::{cases, mutate, rng, text};
use crate::model::event_graph::event_cycle;
use crate::model::flow::{problems, Flow};
use crate::model::{DefinitionFile, Model, DEMO};

const FLOW_WORDS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    "\"trigger\"",
    "\"event\"",
    "\"WELCOME\"",
    "\"schedule\"",
    "\"0 9 * * 1\"",
    "\"targetGroup\"",
    "\"ADULTS\"",
    "\"filter\"",
    "\"AGE>18\"",
    "\"nodes\"",
    "\"condition\"",
    "\"else\"",
    "\"step\"",
    "\"wait\"",
    "\"2d\"",
    "\"set\"",
    "\"AGE\"",
    "\"send\"",
    "\"description\"",
    "\"contextSchema\"",
    "\"recipientCreated\"",
    "true",
    "null",
    "1e400",
    "\"\\u0000\"",
];

const CRON_WORDS: &[&str] = &["*", "*/5", "0", "59", "60", "1-5", "L", "#", "?", "W", "MON", "JAN", "@yearly", "@every", ",", " ", "  "];

const VALID_FLOW: &str = r#"{"description": "d", "trigger": {"event": "WELCOME"}, "nodes": [{"condition": {"filter": "AGE>18"}, "else": [{"wait": "2d"}, {"event": "NEWSLETTER_SIGNUP"}]}, {"set": {"OPTIN": true}}, {"send": "welcome"}]}"#;

#[test]
fn flow_definitions_never_panic_and_every_refusal_says_why() {
    let mut rng = rng("flows");
    let model = Model::new(DefinitionFile::from_toml(DEMO).expect("the demo reads").model).expect("the demo is valid");
    let valid: Flow = serde_json::from_str(VALID_FLOW).expect("the example reads");
    assert!(problems(&valid, &model).is_empty(), "{:?}", problems(&valid, &model));
    for _ in 0..cases() {
        let input = if rng.gen_bool(0.5) { text(&mut rng, FLOW_WORDS, 24) } else { mutate(&mut rng, VALID_FLOW) };
        let Ok(flow) = serde_json::from_str::<Flow>(&input) else { continue };
        let found = problems(&flow, &model);
        assert!(found.iter().all(|p| !p.is_empty()), "{input}: an empty problem");
        let _ = event_cycle(&flow, &[&valid]);
        // What is accepted serialises and reads back as the same flow.
        if found.is_empty() {
            let again: Flow = serde_json::from_str(&serde_json::to_string(&flow).unwrap()).unwrap();
            assert_eq!(again, flow, "{input}");
        }
    }
}

#[test]
fn schedules_take_five_fields_or_say_why() {
    let mut rng = rng("schedules");
    for _ in 0..cases() {
        let input = if rng.gen_bool(0.5) { text(&mut rng, CRON_WORDS, 12) } else { mutate(&mut rng, "*/15 9-17 * * MON-FRI") };
        match crate::model::cron::parse(&input) {
            Ok(cron) => {
                assert_eq!(input.split_whitespace().count(), 5, "{input:?} was taken");
                // A schedule that is taken can be asked for its next time without a panic.
                let _ = crate::flows::schedule::next_after(&cron, 1_764_000_000_000);
            }
            Err(why) => assert!(why.contains("schedule"), "{input:?}: {why}"),
        }
        let _ = crate::runtime::config::Schedule::parse(&input);
    }
}
