//! Streaming many recipients (the unpaged Recipients collection as a JSON array, and exports as CSV
//! or NDJSON): rows come from the store in batches (`TenantDb::recipient_batches`: one statement,
//! one snapshot) and go to the socket in 64 KiB chunks through a small bounded channel, so a slow
//! client slows the query instead of the server buffering the whole answer.
//!
//! The status is decided by the query, not guessed before it: the answer starts only once the
//! query has produced its first row (or its end), so a query that fails at once (an unreachable
//! database, a statement the engine refuses) is a proper error status. A fault after the first
//! bytes can no longer change the status: the connection is then cut, so the client sees an
//! incomplete body rather than a truncated array that parses.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use tokio::sync::mpsc;

use super::json::recipient_body;
use crate::domain::export::{self, ExportFormat};
use crate::http::error::{ApiError, ApiResult};
use crate::http::negotiate::JSON_UTF8;
use crate::model::Model;
use crate::rsql::Condition;
use crate::store::tenant::Recipient;
use crate::store::StoreError;
use crate::tenants::Tenant;

const CHUNK_BYTES: usize = 64 * 1024;

/// A buffer for one chunk (and the row that fills it past `CHUNK_BYTES`).
fn chunk_buffer() -> Vec<u8> {
    Vec::with_capacity(CHUNK_BYTES + 4096)
}

/// The chunk written so far, leaving a fresh buffer of full capacity in its place.
fn take_chunk(buf: &mut Vec<u8>) -> Bytes {
    Bytes::from(std::mem::replace(buf, chunk_buffer()))
}

/// How the rows are written.
pub(super) enum Encoding {
    /// `[{"personData": {...}}, ...]` with every field.
    JsonArray,
    /// An export's format and fields (`domain::export`).
    Export(ExportFormat, Vec<usize>),
}

impl Encoding {
    fn content_type(&self) -> &'static str {
        match self {
            Encoding::JsonArray => JSON_UTF8,
            Encoding::Export(format, _) => format.content_type(),
        }
    }

    fn start(&self, model: &Model, buf: &mut Vec<u8>) {
        match self {
            Encoding::JsonArray => buf.push(b'['),
            Encoding::Export(format, fields) => export::header(*format, model, fields, buf),
        }
    }

    fn row(&self, model: &Model, r: &Recipient, first: bool, buf: &mut Vec<u8>) {
        match self {
            Encoding::JsonArray => {
                if !first {
                    buf.push(b',');
                }
                serde_json::to_writer(&mut *buf, &recipient_body(model, r)).expect("a recipient serialises");
            }
            Encoding::Export(format, fields) => export::row(*format, model, fields, r, buf),
        }
    }

    fn end(&self, buf: &mut Vec<u8>) {
        if let Encoding::JsonArray = self {
            buf.push(b']');
        }
    }
}

pub(super) async fn json_array(tenant: Arc<Tenant>, condition: Option<Condition>) -> ApiResult<Response> {
    rows(tenant, condition, Encoding::JsonArray).await
}

pub(super) async fn rows(tenant: Arc<Tenant>, condition: Option<Condition>, encoding: Encoding) -> ApiResult<Response> {
    let content_type = encoding.content_type();
    let (tx, rx) = mpsc::channel::<Result<Bytes, StoreError>>(4);
    let mut batches = tenant.db.recipient_batches(&tenant.model, condition.as_ref());
    tokio::spawn(async move {
        let mut buf = chunk_buffer();
        encoding.start(&tenant.model, &mut buf);
        let mut first = true;
        while let Some(batch) = batches.recv().await {
            let batch = match batch {
                Ok(batch) => batch,
                Err(e) => {
                    let _ = tx.send(Err(e)).await;
                    return;
                }
            };
            for r in &batch {
                encoding.row(&tenant.model, r, first, &mut buf);
                // The first row goes out at once: it is what lets the answer start.
                let full = first || buf.len() >= CHUNK_BYTES;
                first = false;
                if full && tx.send(Ok(take_chunk(&mut buf))).await.is_err() {
                    return; // the client went away
                }
            }
        }
        encoding.end(&mut buf);
        let _ = tx.send(Ok(Bytes::from(buf))).await;
    });
    respond(rx, content_type).await
}

/// Recipients with their One-To-Many records (`fields` of each, the records of `tables`), as
/// NDJSON: read page by page in one read transaction (`TenantDb::export_page`), one snapshot.
pub(super) async fn rows_with_records(
    tenant: Arc<Tenant>,
    condition: Option<Condition>,
    fields: Vec<usize>,
    tables: Vec<usize>,
) -> ApiResult<Response> {
    let (tx, rx) = mpsc::channel::<Result<Bytes, StoreError>>(4);
    tokio::spawn(async move {
        if let Err(e) = write_with_records(&tenant, condition.as_ref(), &fields, &tables, &tx).await {
            let _ = tx.send(Err(e)).await;
        }
    });
    respond(rx, ExportFormat::Ndjson.content_type()).await
}

/// Sends the NDJSON of `rows_with_records` to `tx`, page by page; a failure is the caller's to send.
async fn write_with_records(
    tenant: &Tenant,
    condition: Option<&Condition>,
    fields: &[usize],
    tables: &[usize],
    tx: &mpsc::Sender<Result<Bytes, StoreError>>,
) -> Result<(), StoreError> {
    const PAGE: i64 = 1000;
    let mut reader = tenant.db.stream_reader().await?;
    let mut snapshot = tenant.db.begin_snapshot(&mut reader).await?;
    let (mut after, mut first) = (0i64, true);
    let mut buf = chunk_buffer();
    loop {
        let page = tenant.db.export_page(&mut snapshot, &tenant.model, condition, after, PAGE, tables).await?;
        let last = page.len() < PAGE as usize;
        for (r, records) in &page {
            export::row_with_records(&tenant.model, fields, r, tables, records, &mut buf);
            after = r.key;
        }
        // The first page goes out at once: it is what lets the answer start.
        if (first || buf.len() >= CHUNK_BYTES || last) && tx.send(Ok(take_chunk(&mut buf))).await.is_err() {
            return Ok(()); // the client went away
        }
        first = false;
        if last {
            return Ok(());
        }
    }
}

/// The answer whose body the producer behind `rx` writes: its status is decided by the first
/// chunk (or error) the producer sends.
async fn respond(mut rx: mpsc::Receiver<Result<Bytes, StoreError>>, content_type: &'static str) -> ApiResult<Response> {
    let head = match rx.recv().await {
        Some(Ok(bytes)) => bytes,
        Some(Err(e)) => return Err(e.into()),
        None => return Err(ApiError::Internal(anyhow::anyhow!("the recipients stream ended without an answer"))),
    };
    let rest = futures_util::stream::unfold(rx, |mut rx| async move {
        let item = rx.recv().await?.map_err(|e| {
            tracing::error!(error = %e, "streaming recipients failed after the answer had started");
            std::io::Error::other("the query failed")
        });
        Some((item, rx))
    });
    let body = futures_util::stream::once(async move { Ok(head) }).chain(rest);
    Ok(([(header::CONTENT_TYPE, content_type)], Body::from_stream(body)).into_response())
}
