//! Date patterns, typed values read from text and JSON, and the `{recipientId}` path form.

use chrono::{Datelike, NaiveDate};
use rand::Rng;

use super::{cases, demo_model, mutate, rng, text};
use crate::model::{FieldType, Formats, Value};
use crate::values::format::Pattern;
use crate::values::value::{FIRST_YEAR, LAST_YEAR, MAX_EXACT_NUMBER};

const PATTERN_WORDS: &[&str] = &["yyyy", "yy", "MM", "dd", "HH", "mm", "ss", "SSS", "'T'", "'", ".", "-", " ", "%", "%Y", "EEE", "MMM"];
const VALUE_WORDS: &[&str] =
    &["2024", "12", "31", "00", "-", ".", ":", "T", "Z", "+02:00", "1e19", "9007199254740993", "NaN", "inf", "0x10", "true"];

/// Accepted values keep the documented ranges.
fn in_range(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.is_finite() && n.abs() <= MAX_EXACT_NUMBER,
        Value::Date(d) => (FIRST_YEAR..=LAST_YEAR).contains(&d.year()),
        Value::Timestamp(t) => (FIRST_YEAR..=LAST_YEAR).contains(&t.year()),
        Value::Text(t) => !t.contains('\0'),
        _ => true,
    }
}

#[test]
fn date_patterns_and_values_never_panic_and_keep_their_ranges() {
    let mut rng = rng("values");
    let formats = Formats::new("dd.MM.yyyy", "dd.MM.yyyy HH:mm:ss").unwrap();
    for _ in 0..cases() {
        // Patterns: any text is parsed or refused; an accepted pattern formats and reads dates.
        let source = text(&mut rng, PATTERN_WORDS, 8);
        if let Ok(pattern) = Pattern::parse(&source) {
            let date = NaiveDate::from_ymd_opt(rng.gen_range(1000..=9999), rng.gen_range(1..=12), rng.gen_range(1..=28)).unwrap();
            let shown = pattern.format_date(date);
            let _ = pattern.parse_date(&shown);
            let _ = pattern.parse_timestamp(&shown);
        }
        // Values of every type from random and mutated text, and from JSON.
        let valid = ["31.12.1999", "1999-12-31", "01.02.2024 13:04:05", "2024-01-01T10:00:00+02:00", "42", "-0.5", "true"];
        let pick = valid[rng.gen_range(0..valid.len())];
        let input = if rng.gen_bool(0.5) { text(&mut rng, VALUE_WORDS, 6) } else { mutate(&mut rng, pick) };
        for ty in [FieldType::String, FieldType::Number, FieldType::Boolean, FieldType::Date, FieldType::Timestamp] {
            if let Ok(v) = Value::from_text(ty, &input, &formats) {
                assert!(in_range(&v), "{ty:?} from {input:?} gave {v:?}");
                // What is accepted is written back in the instance's format and read again.
                let again = Value::from_text(ty, &v.to_text(&formats), &formats);
                assert!(again.is_ok(), "{ty:?}: {v:?} does not read back from {:?}", v.to_text(&formats));
            }
            let json = match rng.gen_range(0..3) {
                0 => serde_json::Value::String(input.clone()),
                1 => serde_json::json!(rng.gen::<f64>() * 10f64.powi(rng.gen_range(-5..25))),
                _ => serde_json::json!(rng.gen::<i64>()),
            };
            if let Ok(v) = Value::from_json(ty, &json, &formats) {
                assert!(in_range(&v), "{ty:?} from {json} gave {v:?}");
            }
        }
    }
}

#[test]
fn recipient_path_forms_never_panic_and_keep_their_ranges() {
    let mut rng = rng("recipient path");
    let model = demo_model();
    let words = ["USER_ID=", "EMAIL=", "MOBILE=", "CITY=", "=", "%25", "%2540", "%FF", "%00", "1", "1e19", "-1", "a@b"];
    for _ in 0..cases() {
        let segment = if rng.gen_bool(0.5) { text(&mut rng, &words, 6) } else { mutate(&mut rng, "EMAIL=ann%2540example.com") };
        if let Ok(r) = crate::http::parse_ref(&model, &segment) {
            assert!(in_range(&r.value), "{segment:?} gave {:?}", r.value);
            assert!(model.def.person_data[r.field].unique || model.def.person_data[r.field].name == model.def.recipient_id);
        }
    }
}
