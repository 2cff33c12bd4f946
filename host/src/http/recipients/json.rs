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
    use serde_json::{json, Value as Json_};

    use super::{recipient_body, recipient_json};
    use crate::model::{FieldType, Value};
    use crate::store::tenant::Recipient;

    /// Every kind of value as it goes on the wire, fields in the model's order: integral
    /// numbers as integers, dates and timestamps in the instance's formats, text escaped; the
    /// tree (paged documents) holds the same.
    #[test]
    fn a_recipient_is_written_as_the_wire_says() {
        let model = crate::fuzz::demo_model();
        let date = NaiveDate::from_ymd_opt(2026, 2, 28).expect("a date");
        let time = date.and_hms_opt(9, 30, 5).expect("a time");
        let text = "Ada \"the\" \u{e9}l\u{e8}ve\n";
        let full = |ty| match ty {
            FieldType::Number => (Value::Number(7.0), json!(7)),
            FieldType::Boolean => (Value::Bool(true), json!(true)),
            FieldType::Date => (Value::Date(date), json!(model.formats.date.format_date(date))),
            FieldType::Timestamp => (Value::Timestamp(time), json!(model.formats.timestamp.format_timestamp(time))),
            FieldType::String => (Value::Text(text.into()), json!(text)),
        };
        let sparse = |ty| match ty {
            FieldType::Number => (Value::Number(-2.5), json!(-2.5)),
            FieldType::Boolean => (Value::Bool(false), json!(false)),
            _ => (Value::Null, Json_::Null),
        };
        let empty = |_| (Value::Null, Json_::Null);
        let rounds: [&dyn Fn(FieldType) -> (Value, Json_); 3] = [&full, &sparse, &empty];
        for round in rounds {
            let (values, expected): (Vec<Value>, serde_json::Map<String, Json_>) =
                model.def.person_data.iter().map(|f| (round(f.ty), f.name.clone())).map(|((v, j), name)| (v, (name, j))).unzip();
            let r = Recipient { key: 1, values };
            let expected = json!({ "personData": expected });
            assert_eq!(serde_json::to_string(&recipient_body(&model, &r)).expect("serialises"), expected.to_string());
            assert_eq!(recipient_json(&model, &r), expected);
        }
    }
}
