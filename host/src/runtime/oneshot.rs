//! One execution of an extension of any kind from an input given as data (`input.rs`): what the
//! local runs and replays of `herald extension` do, and what the test harness's `:run` calls. It
//! goes through the production call path (`call.rs`) like every other call.

use std::sync::Arc;

use axum::body::Body;
use http_body_util::BodyExt;
use serde_json::{json, Value as Json};

use super::input::{recipient_from_json, RecordedInput};
use super::kinds::authheader::Outbound;
use super::{Answered, Call, CallFailure, ExtensionKind, Outcome, Runtime};

/// The most of an http extension's response body shown.
const MAX_SHOWN_BODY: usize = 1024 * 1024;

/// How one execution ended: its outcome (`outcome.rs`), the reason of one that is not `ok`, and
/// what it answered (an http response as `status`, `headers`, `body`; a condition's boolean; a
/// monitor's report; an authheader's headers; null for a step).
#[derive(Debug, Clone, PartialEq)]
pub struct Ran {
    pub outcome: Outcome,
    pub reason: Option<String>,
    pub value: Option<Json>,
}

impl Ran {
    pub fn ok(value: Json) -> Ran {
        Ran { outcome: Outcome::Ok, reason: None, value: Some(value) }
    }

    /// The guest's own error (`value`: an http extension's 5xx answer).
    pub fn error(reason: String, value: Option<Json>) -> Ran {
        Ran { outcome: Outcome::Error, reason: Some(reason), value }
    }

    pub fn failed(failure: CallFailure) -> Ran {
        Ran { outcome: failure.outcome(), reason: failure.reason().map(str::to_string), value: None }
    }

    /// `{"outcome": "ok"|"error"|"deadline"|"memory"|"trap"|"fault", "reason"?, "value"?}`.
    pub fn to_json(&self) -> Json {
        let mut out = json!({"outcome": self.outcome.name()});
        if let Some(reason) = &self.reason {
            out["reason"] = Json::String(reason.clone());
        }
        if let Some(value) = &self.value {
            out["value"] = value.clone();
        }
        out
    }

    /// The outcome's word.
    pub fn name(&self) -> &'static str {
        self.outcome.name()
    }
}

fn ran<T>(answer: Answered<T>, value: impl FnOnce(T) -> Json) -> Ran {
    match answer {
        Answered::Ok(answer) => Ran::ok(value(answer)),
        Answered::Error(reason) => Ran::error(reason, None),
        Answered::Failed(failure) => Ran::failed(failure),
    }
}

impl Runtime {
    /// Runs `call` (an extension of `kind`) on `input` (its contextual data becomes the call's);
    /// `Err` when the input does not fit the extension (another kind's input, a field the
    /// instance does not have).
    pub async fn run_input(self: &Arc<Self>, mut call: Call, kind: ExtensionKind, input: RecordedInput) -> Result<Ran, String> {
        if input.kind() != kind {
            return Err(format!("the input is for a {} extension; this one is a {kind} extension", input.kind()));
        }
        if let RecordedInput::Step { context, .. } | RecordedInput::Condition { context, .. } = &input {
            call.context = context.as_ref().map(Json::to_string);
        }
        let model = &call.tenant.model;
        Ok(match input {
            RecordedInput::Step { recipient, .. } => {
                let recipient = recipient_from_json(model, &recipient)?;
                ran(self.call_step(call, recipient).await.answer, |()| Json::Null)
            }
            RecordedInput::Condition { recipient, .. } => {
                let recipient = recipient_from_json(model, &recipient)?;
                ran(self.call_condition(call, recipient).await.answer, Json::from)
            }
            RecordedInput::Monitor {} => {
                ran(self.call_monitor(call).await.map(Ok).into(), |r| json!({"healthy": r.healthy, "message": r.message}))
            }
            RecordedInput::Authheader { host, method, path } => {
                let outbound = Outbound { host, method, path_with_query: path };
                ran(
                    self.call_authheader(call, outbound).await,
                    |made| json!({"headers": made.headers, "maxAgeSeconds": made.max_age_seconds}),
                )
            }
            RecordedInput::Http { method, uri, headers, body, body_base64, .. } => {
                // The guest sees an absolute URI, as the extensions endpoint gives it.
                let uri = if uri.starts_with('/') {
                    let host = headers.iter().find(|(n, _)| n.eq_ignore_ascii_case("host")).map_or("localhost", |(_, v)| v.as_str());
                    format!("http://{host}{uri}")
                } else {
                    uri
                };
                let mut request = hyper::Request::builder().method(method.as_str()).uri(uri.as_str());
                for (name, value) in &headers {
                    request = request.header(name.as_str(), value.as_str());
                }
                let body = RecordedInput::body_bytes(&body, &body_base64)?;
                let request = request.body(Body::from(body)).map_err(|e| format!("the request is not valid: {e}"))?;
                match self.call_http(call, request).await {
                    Ok(response) if response.status().is_server_error() => {
                        let reason = format!("answered {}", response.status().as_u16());
                        Ran::error(reason, Some(shown_response(response).await))
                    }
                    Ok(response) => Ran::ok(shown_response(response).await),
                    Err(failure) => Ran::failed(failure),
                }
            }
        })
    }
}

/// An http extension's response as JSON: its status, headers, and body (text, or base64 when it
/// is not UTF-8; its first MiB).
async fn shown_response(response: super::HttpResponse) -> Json {
    let (parts, body) = response.into_parts();
    let headers: Vec<(String, String)> =
        parts.headers.iter().map(|(n, v)| (n.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned())).collect();
    let mut bytes = Vec::new();
    let mut body = body;
    let mut error = None;
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(frame) => {
                if let Some(data) = frame.data_ref() {
                    bytes.extend_from_slice(&data[..data.len().min(MAX_SHOWN_BODY.saturating_sub(bytes.len()))]);
                }
            }
            Err(e) => {
                error = Some(format!("{e:?}"));
                break;
            }
        }
    }
    let mut shown = json!({"status": parts.status.as_u16(), "headers": headers});
    match String::from_utf8(bytes) {
        Ok(text) => shown["body"] = Json::String(text),
        Err(e) => {
            use base64::Engine as _;
            shown["bodyBase64"] = Json::String(base64::engine::general_purpose::STANDARD.encode(e.into_bytes()));
        }
    }
    if let Some(error) = error {
        shown["bodyError"] = Json::String(error);
    }
    shown
}
