//! The JSON form of a recipient, the one place that writes it: single reads, creates, the
//! streamed collection and paged documents all answer with it.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value as Json_};

use crate::http::wire;
use crate::model::Model;
use crate::store::tenant::Recipient;

/// `{"personData": {...}}` with every field, empty ones as null.
pub(super) fn recipient_json(model: &Model, r: &Recipient) -> Json_ {
    json!({ "personData": wire::record_json(&model.def.person_data, &r.values, &model.formats) })
}

fn location(model: &Model, r: &Recipient) -> String {
    let index = model.def.recipient_id_index();
    let id = r.values[index].to_text(&model.formats);
    let encoded = percent_encoding::utf8_percent_encode(&id, percent_encoding::NON_ALPHANUMERIC).to_string();
    format!("/recipients/{}", encoded.replace('%', "%25"))
}

pub(super) fn created(model: &Model, r: &Recipient) -> Response {
    (StatusCode::CREATED, [(header::LOCATION, location(model, r))], Json(recipient_json(model, r))).into_response()
}
