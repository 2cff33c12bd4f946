//! Context Parameter Schemas and the contextual data checked against them.

use rand::Rng;
use serde_json::{json, Value as Json};

use super::{cases, mutate, rng, text};
use crate::assets::contexts;

const WORDS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "\"models\"",
    "\"name\"",
    "\"type\"",
    "\"otm\"",
    "\"person_data\"",
    "\"fields\"",
    "\"data_type\"",
    "\"string\"",
    "\"date\"",
    "\"required\"",
    ":",
    ",",
    "true",
    "null",
    "\"A\"",
];

/// A random JSON value, up to `depth` deep.
fn json(rng: &mut rand::rngs::StdRng, depth: u32) -> Json {
    match rng.gen_range(0..if depth == 0 { 5 } else { 7 }) {
        0 => Json::Null,
        1 => json!(rng.gen::<bool>()),
        2 => json!(rng.gen::<f64>() * 1e6),
        3 => json!(["2024-01-31", "2024-01-31T10:00:00Z", "x", "", "31.01.2024"][rng.gen_range(0..5)]),
        4 => json!(rng.gen::<i32>()),
        5 => Json::Array((0..rng.gen_range(0..4)).map(|_| json(rng, depth - 1)).collect()),
        _ => {
            let names = ["CUSTOMER", "LINES", "EMAIL", "SKU", "BIRTHDAY", "x"];
            Json::Object(
                (0..rng.gen_range(0..4)).map(|_| (names[rng.gen_range(0..names.len())].to_string(), json(rng, depth - 1))).collect(),
            )
        }
    }
}

#[test]
fn schemas_and_contextual_data_never_panic() {
    let mut rng = rng("contexts");
    let valid = r#"{"models": [{"name": "CUSTOMER", "type": "person_data", "required": true, "fields": [{"name": "EMAIL", "data_type": "string", "required": true}, {"name": "BIRTHDAY", "data_type": "date"}]}, {"name": "LINES", "type": "otm", "fields": [{"name": "SKU", "data_type": "string"}]}]}"#;
    let schema = contexts::parse(valid.as_bytes()).expect("the example is valid");
    for _ in 0..cases() {
        let text = if rng.gen_bool(0.5) { text(&mut rng, WORDS, 16) } else { mutate(&mut rng, valid) };
        if let Ok(parsed) = contexts::parse(text.as_bytes()) {
            let _ = contexts::check_evolution(&schema, &parsed);
            let _ = contexts::validate(&parsed, &json(&mut rng, 3));
        }
        let data = json(&mut rng, 4);
        if let Err(problems) = contexts::validate(&schema, &data) {
            assert!(!problems.is_empty(), "a refusal says why: {data}");
        }
    }
}
