//! Helpers for the bulk transfer tests: send a file to an import, watch the import, export.

use std::time::Duration;

use reqwest::{header, Method};
use serde_json::Value;

use crate::{answer, Answer, Api};

/// POSTs `body` as a file of `content_type` to an `:import` path.
pub async fn import_to(api: &Api, path: &str, content_type: &str, body: impl Into<reqwest::Body>) -> Answer {
    let request = api.request(Method::POST, path).header(header::CONTENT_TYPE, content_type);
    answer(request.body(body).send().await.unwrap()).await
}

/// The id of the import an answer started (checking it is a 202).
pub fn started(answer: &Answer) -> String {
    answer.expect(202);
    answer.json()["importId"].as_str().expect("an importId").to_string()
}

/// Waits until import `id` is over (or `until` holds), within `within`.
pub async fn watch(api: &Api, id: &str, within: Duration, until: impl Fn(&Value) -> bool) -> Value {
    let until = &until;
    crate::eventually(within, &format!("import {id} there"), || async move {
        let answer = api.get(&format!("/imports/{id}")).await;
        answer.expect(200);
        let import = answer.json();
        if until(&import) {
            Ok(import)
        } else {
            Err(import.to_string())
        }
    })
    .await
}

/// Whether an import is over.
pub fn over(import: &Value) -> bool {
    matches!(import["state"].as_str(), Some("completed" | "failed" | "cancelled"))
}

/// POSTs an export request to an `:export` path: the status, the content type and the body.
pub async fn export_from(api: &Api, path: &str, body: Value) -> (u16, String, String) {
    let r = api.request(Method::POST, path).json(&body).send().await.unwrap();
    let status = r.status().as_u16();
    let kind = r.headers().get(header::CONTENT_TYPE).map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    (status, kind, r.text().await.unwrap())
}
