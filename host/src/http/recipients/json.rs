//! The JSON form of a recipient, the one place that writes it: single reads, creates, the
//! streamed collection and paged documents all answer with it.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::Value as Json_;

use crate::http::wire;
use crate::model::Model;
use crate::store::tenant::Recipient;

/// `{"personData": {...}}` with every field, empty ones as null, as a JSON tree (a paged
/// document's content); `recipient_body` writes the same straight into an answer.
pub(super) fn recipient_json(model: &Model, r: &Recipient) -> Json_ {
    serde_json::to_value(recipient_body(model, r)).expect("a recipient serialises")
}

/// `{"personData": {...}}`, serialised where it is written.
pub(super) fn recipient_body<'a>(model: &'a Model, r: &'a Recipient) -> RecipientBody<'a> {
    RecipientBody { person_data: wire::Record { fields: &model.def.person_data, values: &r.values, formats: &model.formats } }
}

#[derive(serde::Serialize)]
pub(super) struct RecipientBody<'a> {
    #[serde(rename = "personData")]
    person_data: wire::Record<'a, crate::model::PersonField>,
}

fn location(model: &Model, r: &Recipient) -> String {
    let index = model.def.recipient_id_index();
    let id = r.values[index].to_text(&model.formats);
    let encoded = percent_encoding::utf8_percent_encode(&id, percent_encoding::NON_ALPHANUMERIC).to_string();
    format!("/recipients/{}", encoded.replace('%', "%25"))
}

pub(super) fn created(model: &Model, r: &Recipient) -> Response {
    (StatusCode::CREATED, [(header::LOCATION, location(model, r))], Json(recipient_body(model, r))).into_response()
}

#[cfg(test)]
mod tests {
    use chrono::NaiveDate;

    use super::{recipient_body, recipient_json};
    use crate::http::wire;
    use crate::model::{FieldType, Value};
    use crate::store::tenant::Recipient;

    /// The answer written straight from the values is the tree `record_json` builds, byte for
    /// byte, for every kind of value.
    #[test]
    fn the_body_is_the_record_written_as_a_tree() {
        let model = crate::fuzz::demo_model();
        let date = NaiveDate::from_ymd_opt(2026, 2, 28).expect("a date");
        let samples = |round: usize| {
            let kinds: [&dyn Fn(FieldType) -> Value; 3] = [
                &|ty| match ty {
                    FieldType::Number => Value::Number(7.0),
                    FieldType::Boolean => Value::Bool(true),
                    FieldType::Date => Value::Date(date),
                    FieldType::Timestamp => Value::Timestamp(date.and_hms_opt(9, 30, 5).expect("a time")),
                    FieldType::String => Value::Text("Ada \"the\" \u{e9}l\u{e8}ve\n".into()),
                },
                &|ty| match ty {
                    FieldType::Number => Value::Number(-2.5),
                    FieldType::Boolean => Value::Bool(false),
                    _ => Value::Null,
                },
                &|_| Value::Null,
            ];
            model.def.person_data.iter().map(|f| kinds[round](f.ty)).collect::<Vec<_>>()
        };
        for round in 0..3 {
            let r = Recipient { key: 1, values: samples(round) };
            let tree = serde_json::json!({ "personData": wire::record_json(&model.def.person_data, &r.values, &model.formats) });
            assert_eq!(serde_json::to_string(&recipient_body(&model, &r)).expect("serialises"), tree.to_string());
            assert_eq!(recipient_json(&model, &r), tree);
        }
    }
}
