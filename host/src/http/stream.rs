//! Streaming a large JSON array (the unpaged Recipients collection): rows go from the database to
//! the socket in 64 KiB chunks through a small bounded channel, so a slow client slows the query
//! instead of the server buffering the whole answer. A database fault after the first bytes can
//! no longer change the status: the connection is then cut, so the client sees an incomplete
//! body rather than a truncated array that parses.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use tokio::sync::mpsc;

use super::negotiate::JSON_UTF8;
use super::recipients::recipient_json;
use crate::rsql::Condition;
use crate::tenants::Tenant;

const CHUNK_BYTES: usize = 64 * 1024;

pub(super) fn json_array(tenant: Arc<Tenant>, condition: Option<Condition>) -> Response {
    let (tx, rx) = mpsc::channel::<Result<Bytes, std::io::Error>>(4);
    tokio::spawn(async move {
        let sql = tenant.db.recipients_sql(&tenant.model, condition.as_ref());
        let rows = tenant.db.recipients_stream(&tenant.model, condition.as_ref(), &sql);
        futures_util::pin_mut!(rows);
        let mut buf = Vec::with_capacity(CHUNK_BYTES + 4096);
        buf.push(b'[');
        let mut first = true;
        while let Some(row) = rows.next().await {
            match row {
                Ok(r) => {
                    if !first {
                        buf.push(b',');
                    }
                    first = false;
                    serde_json::to_writer(&mut buf, &recipient_json(&tenant.model, &r)).expect("JSON values serialise");
                    if buf.len() >= CHUNK_BYTES && tx.send(Ok(Bytes::from(std::mem::take(&mut buf)))).await.is_err() {
                        return; // the client went away
                    }
                }
                Err(e) => {
                    tracing::error!(error = %e, "streaming recipients failed");
                    let _ = tx.send(Err(std::io::Error::other("the query failed"))).await;
                    return;
                }
            }
        }
        buf.push(b']');
        let _ = tx.send(Ok(Bytes::from(buf))).await;
    });
    let body = futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|item| (item, rx)) });
    ([(header::CONTENT_TYPE, JSON_UTF8)], Body::from_stream(body)).into_response()
}
