//! Taking an import's body in: streamed into the instance's store in pieces as it arrives (never
//! whole in memory), with what can be told from its start checked before anything is stored —
//! that it is UTF-8 text and not binary, and for CSV that its header names only the target's
//! fields (Person Data, or a table's), none twice, and the key. A body that is empty, over the limit, cut off, or refused
//! leaves nothing behind.

use bytes::Bytes;
use futures_util::{Stream, StreamExt};

use super::rows;
use super::{Format, ImportPlan};
use crate::store::tenant::{NewImport, IMPORT_CHUNK_BYTES};
use crate::store::StoreError;
use crate::tenants::Tenant;

/// Why a body was not taken.
#[derive(Debug)]
pub enum Refused {
    Empty,
    /// Over the limit (bytes).
    TooLarge(u64),
    /// Not what it claims to be; the message says what is wrong.
    Invalid(String),
    /// The client's stream broke off.
    Broken(String),
    Store(StoreError),
}

impl From<StoreError> for Refused {
    fn from(e: StoreError) -> Refused {
        Refused::Store(e)
    }
}

/// Stores `body` as import `new.id` of `tenant`; the import is then queued (the caller queues
/// its job).
pub async fn receive<S, E>(tenant: &Tenant, new: &NewImport, plan: &ImportPlan, body: S, limit: u64) -> Result<(), Refused>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::fmt::Display,
{
    let db = &tenant.db;
    db.create_import(new).await?;
    match store_body(tenant, &new.id, plan, body, limit).await {
        Ok((size, head)) => Ok(db.import_received(&new.id, size as i64, &head.columns, head.data_offset, head.first_row).await?),
        Err(refused) => {
            if let Err(e) = db.discard_import(&new.id).await {
                tracing::warn!(import = %new.id, error = %e, "a refused import's stored pieces could not be removed");
            }
            Err(refused)
        }
    }
}

/// What the start of a body says: its CSV header's columns, and where its first row starts.
struct Head {
    columns: Vec<String>,
    data_offset: i64,
    first_row: i64,
}

async fn store_body<S, E>(tenant: &Tenant, id: &str, plan: &ImportPlan, mut body: S, limit: u64) -> Result<(u64, Head), Refused>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::fmt::Display,
{
    let (mut pending, mut size, mut seq) = (Vec::with_capacity(IMPORT_CHUNK_BYTES), 0u64, 0i64);
    let mut head = None;
    loop {
        let next = body.next().await.transpose().map_err(|e| Refused::Broken(e.to_string()))?;
        if let Some(bytes) = &next {
            size += bytes.len() as u64;
            if size > limit {
                return Err(Refused::TooLarge(limit));
            }
            pending.extend_from_slice(bytes);
        }
        let ended = next.is_none();
        if head.is_none() && (pending.len() >= IMPORT_CHUNK_BYTES || ended) {
            if pending.is_empty() {
                return Err(Refused::Empty);
            }
            head = Some(read_head(tenant, plan, &pending[..pending.len().min(IMPORT_CHUNK_BYTES)], ended)?);
        }
        while pending.len() >= IMPORT_CHUNK_BYTES || (ended && !pending.is_empty()) {
            let piece: Vec<u8> = pending.drain(..pending.len().min(IMPORT_CHUNK_BYTES)).collect();
            tenant.db.put_import_chunk(id, seq, &piece).await?;
            seq += 1;
        }
        if ended {
            return Ok((size, head.expect("read before the first piece was stored")));
        }
    }
}

/// Checks the body's first piece (`whole`: it is the whole body).
fn read_head(tenant: &Tenant, plan: &ImportPlan, first: &[u8], whole: bool) -> Result<Head, Refused> {
    let bom = if first.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
    let text = &first[bom..];
    if let Some(at) = text.iter().position(|b| *b == 0) {
        return Err(Refused::Invalid(format!("the body is not text: it holds a NUL byte at byte {} (a binary file?)", at + bom)));
    }
    if let Err(e) = std::str::from_utf8(text) {
        // A character cut at the piece's end is fine: the rest follows.
        if e.error_len().is_some() || whole {
            return Err(Refused::Invalid(format!("the body is not UTF-8 text (byte {}): save the file as UTF-8", e.valid_up_to() + bom)));
        }
    }
    match plan.format {
        Format::Csv => csv_head(tenant, plan, text, bom, whole),
        Format::Ndjson => {
            if let Some(line) = text.split(|b| *b == b'\n').find(|l| !l.iter().all(u8::is_ascii_whitespace)) {
                let complete = whole || line.len() < text.len();
                if complete {
                    if let Err(e) = serde_json::from_slice::<serde_json::Value>(line) {
                        return Err(Refused::Invalid(format!("the body is not NDJSON: its first line is not JSON ({e})")));
                    }
                }
            }
            Ok(Head { columns: Vec::new(), data_offset: bom as i64, first_row: 1 })
        }
    }
}

fn csv_head(tenant: &Tenant, plan: &ImportPlan, text: &[u8], bom: usize, whole: bool) -> Result<Head, Refused> {
    use csv_core::ReadRecordResult as Read;
    let mut reader = csv_core::Reader::new();
    let (mut out, mut ends) = (vec![0u8; text.len() + 1], vec![0usize; text.len() + 2]);
    let (first, read, wrote, fields) = reader.read_record(text, &mut out, &mut ends);
    let (result, fields) = match first {
        Read::Record => (Read::Record, fields),
        // A body of one line without a line end: the header alone, ended by the body's end.
        Read::InputEmpty if whole => {
            // Field ends count from the record's start (csv-core's rule).
            let (result, _, _, more) = reader.read_record(&[], &mut out[wrote..], &mut ends[fields..]);
            (result, fields + more)
        }
        _ => return Err(Refused::Invalid(format!("the header row does not end within its first {IMPORT_CHUNK_BYTES} bytes"))),
    };
    finish_head(tenant, plan, header_names(&out, &ends[..fields], result)?, bom + read)
}

fn header_names(out: &[u8], ends: &[usize], result: csv_core::ReadRecordResult) -> Result<Vec<String>, Refused> {
    if !matches!(result, csv_core::ReadRecordResult::Record) {
        return Err(Refused::Invalid("the CSV body has no header row".into()));
    }
    let mut names = Vec::with_capacity(ends.len());
    let mut start = 0;
    for end in ends {
        names.push(String::from_utf8_lossy(&out[start..*end]).into_owned());
        start = *end;
    }
    Ok(names)
}

fn finish_head(tenant: &Tenant, plan: &ImportPlan, names: Vec<String>, data_offset: usize) -> Result<Head, Refused> {
    let model = &tenant.model;
    let shape = plan.shape(model);
    if names.len() == 1 && names[0].is_empty() {
        return Err(Refused::Invalid(format!("the header row is empty: it names the {} field of each column", shape.kind())));
    }
    rows::columns(shape, &names).map_err(Refused::Invalid)?;
    let key = shape.name(plan.key_field);
    let numbered = shape.table.is_none()
        && plan.key_field == model.def.recipient_id_index()
        && model.def.person_data[plan.key_field].ty == crate::model::FieldType::Number;
    if !names.iter().any(|n| n == key) && !numbered {
        let what = if shape.table.is_some() { "record" } else { "recipient" };
        return Err(Refused::Invalid(format!("the header has no {key} column, the key that names each row's {what}")));
    }
    Ok(Head { columns: names, data_offset: data_offset as i64, first_row: 2 })
}
