//! What an execution was given, kept with the record of a failed one so that its author can run a
//! new version against the same input (`herald extension replay`, `run --input`). Bounded (a
//! request body's first 64 KiB), and never a credential: the caller's `Authorization`, cookies
//! and headers named like a token, key, secret or password are withheld, and every value the call
//! revealed (an instance secret) is redacted.

use std::sync::{Arc, Mutex};

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

use super::host::bindings::herald::platform::types::{Field, Value as WitValue};
use crate::model::fields::{Fields, Given};
use crate::model::{Model, Value};

/// The most of a request body kept for a replay.
pub const MAX_RECORDED_BODY: usize = 64 * 1024;
/// What a withheld header's value is recorded as.
pub const WITHHELD: &str = "[withheld]";

/// An execution's input, as JSON (`kind` tells which).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum RecordedInput {
    Http {
        method: String,
        /// Path and query, as the extension saw them.
        uri: String,
        #[serde(default)]
        headers: Vec<(String, String)>,
        /// The body as text (when it is UTF-8)...
        #[serde(default, skip_serializing_if = "Option::is_none")]
        body: Option<String>,
        /// ... or in base64.
        #[serde(default, rename = "bodyBase64", skip_serializing_if = "Option::is_none")]
        body_base64: Option<String>,
        /// Whether the body was longer than what was kept.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        truncated: bool,
    },
    Step {
        recipient: Map<String, Json>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        context: Option<Json>,
    },
    Condition {
        recipient: Map<String, Json>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        context: Option<Json>,
    },
    Monitor {},
    Authheader {
        host: String,
        method: String,
        path: String,
    },
}

impl RecordedInput {
    /// The extension type this input is for.
    pub fn kind(&self) -> super::ExtensionKind {
        use super::ExtensionKind as K;
        match self {
            RecordedInput::Http { .. } => K::Http,
            RecordedInput::Step { .. } => K::Step,
            RecordedInput::Condition { .. } => K::Condition,
            RecordedInput::Monitor {} => K::Monitor,
            RecordedInput::Authheader { .. } => K::Authheader,
        }
    }

    /// The body of a recorded request, as bytes.
    pub fn body_bytes(body: &Option<String>, body_base64: &Option<String>) -> Result<Vec<u8>, String> {
        match (body, body_base64) {
            (Some(text), _) => Ok(text.clone().into_bytes()),
            (None, Some(encoded)) => {
                base64::engine::general_purpose::STANDARD.decode(encoded).map_err(|e| format!("bodyBase64 is not base64: {e}"))
            }
            (None, None) => Ok(Vec::new()),
        }
    }

    /// The input as kept: JSON with every string the call revealed redacted.
    pub fn to_kept_json(&self, revealed: &[String]) -> String {
        let mut json = serde_json::to_value(self).expect("an input serialises");
        if !revealed.is_empty() {
            redact_strings(&mut json, revealed);
        }
        json.to_string()
    }
}

fn redact_strings(json: &mut Json, revealed: &[String]) {
    match json {
        Json::String(s) => *s = crate::secrets::redact(s, revealed),
        Json::Array(items) => items.iter_mut().for_each(|item| redact_strings(item, revealed)),
        Json::Object(map) => map.values_mut().for_each(|item| redact_strings(item, revealed)),
        _ => {}
    }
}

/// Whether a request header may hold a credential, and is withheld from the record.
fn withheld(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    matches!(name.as_str(), "authorization" | "proxy-authorization" | "cookie")
        || ["token", "secret", "password", "api-key", "apikey"].iter().any(|word| name.contains(word))
}

/// A request's headers as recorded.
pub fn recorded_headers(headers: &hyper::HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(name, value)| {
            let value = if withheld(name.as_str()) { WITHHELD.to_string() } else { String::from_utf8_lossy(value.as_bytes()).into_owned() };
            (name.as_str().to_string(), value)
        })
        .collect()
}

/// The first bytes of a request body, copied as the guest reads it.
#[derive(Clone, Default)]
pub struct BodyCopy(Arc<Mutex<(Vec<u8>, bool)>>);

impl BodyCopy {
    pub fn keep(&self, bytes: &[u8]) {
        let mut copy = self.0.lock().expect("body copy lock");
        let room = MAX_RECORDED_BODY.saturating_sub(copy.0.len());
        if bytes.len() > room {
            copy.1 = true;
        }
        copy.0.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    /// (body, body in base64, truncated) as `RecordedInput::Http` keeps them.
    pub fn taken(&self) -> (Option<String>, Option<String>, bool) {
        let copy = self.0.lock().expect("body copy lock");
        if copy.0.is_empty() {
            return (None, None, copy.1);
        }
        match std::str::from_utf8(&copy.0) {
            Ok(text) => (Some(text.to_string()), None, copy.1),
            Err(_) => (None, Some(base64::engine::general_purpose::STANDARD.encode(&copy.0)), copy.1),
        }
    }
}

/// A record (a recipient's Person Data) as JSON, as the SDKs show it: dates and timestamps in
/// ISO 8601, whole numbers as integers.
pub fn fields_to_json(fields: &[Field]) -> Map<String, Json> {
    fields
        .iter()
        .map(|f| {
            let value = match &f.value {
                WitValue::Null => Json::Null,
                WitValue::Text(t) | WitValue::Date(t) | WitValue::Timestamp(t) => Json::String(t.clone()),
                WitValue::Number(n) => crate::values::value::number_to_json(*n),
                WitValue::Boolean(b) => Json::Bool(*b),
            };
            (f.name.clone(), value)
        })
        .collect()
}

/// A recipient given as JSON (`{"FIELD": value}`, values as the REST API takes them, dates also in
/// ISO 8601) as the Person Data a step or condition receives; fields not given are empty.
pub fn recipient_from_json(model: &Model, json: &Map<String, Json>) -> Result<Vec<Field>, String> {
    // Every problem at once (an author fixes the file in one go), in `model::fields`' words.
    let person = Fields::person_data(&model.def);
    let mut problems = Vec::new();
    let mut values = vec![Value::Null; model.def.person_data.len()];
    for (name, json) in json {
        match person.position(name).and_then(|i| Ok((i, person.value(i, Given::Json(json), &model.formats)?))) {
            Ok((i, value)) => values[i] = value,
            Err(e) => problems.push(e),
        }
    }
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    Ok(super::person_fields(model, &values))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_withheld_and_bodies_bounded() {
        let mut headers = hyper::HeaderMap::new();
        headers.insert("authorization", "Bearer abc".parse().unwrap());
        headers.insert("x-shop-token", "t".parse().unwrap());
        headers.insert("x-signature", "sig".parse().unwrap());
        let kept = recorded_headers(&headers);
        assert!(kept.contains(&("authorization".into(), WITHHELD.into())), "{kept:?}");
        assert!(kept.contains(&("x-shop-token".into(), WITHHELD.into())), "{kept:?}");
        assert!(kept.contains(&("x-signature".into(), "sig".into())), "{kept:?}");
        let copy = BodyCopy::default();
        copy.keep(&vec![b'a'; MAX_RECORDED_BODY - 1]);
        copy.keep(b"bc");
        let (body, base64, truncated) = copy.taken();
        assert_eq!((body.unwrap().len(), base64, truncated), (MAX_RECORDED_BODY, None, true));
        let binary = BodyCopy::default();
        binary.keep(&[0xff, 0xfe]);
        assert_eq!(binary.taken(), (None, Some("//4=".into()), false));
    }

    #[test]
    fn kept_input_redacts_revealed_values_even_inside_json_strings() {
        let input = RecordedInput::Authheader { host: "api.example.com".into(), method: "GET".into(), path: "/x?key=s3\"cret".into() };
        let kept = input.to_kept_json(&["s3\"cret".to_string()]);
        assert!(!kept.contains("s3"), "{kept}");
        let back: RecordedInput = serde_json::from_str(&kept).unwrap();
        assert_eq!(
            back,
            RecordedInput::Authheader { host: "api.example.com".into(), method: "GET".into(), path: "/x?key=[secret]".into() }
        );
    }
}
