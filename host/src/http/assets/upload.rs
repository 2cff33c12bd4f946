//! Reading the Assets API's multipart forms: `file` (an uploaded file, streamed to the instance's
//! `tmp/` folder and hashed on the way, never held in memory; or, for delete and commit, the
//! item's path as text), `folder` and `type`. Any other field is refused.

use axum::extract::multipart::{Field, Multipart, MultipartError, MultipartRejection};
use axum::extract::FromRequest;
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;

use crate::assets::names::RelPath;
use crate::assets::quota::{full_message, Budget};
use crate::assets::{MediaArea, TempPath};
use crate::http::error::{ApiError, ApiResult};
use crate::http::MAX_PAYLOAD_BYTES;
use crate::tenants::InstanceMedia;

/// A multipart body; a body that is not `multipart/form-data` is 415.
pub struct Form(pub Multipart);

impl<S: Send + Sync> FromRequest<S> for Form {
    type Rejection = ApiError;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Form, ApiError> {
        Ok(Form(Multipart::from_request(req, state).await?))
    }
}

impl From<MultipartRejection> for ApiError {
    fn from(r: MultipartRejection) -> ApiError {
        match r {
            MultipartRejection::InvalidBoundary(_) => ApiError::UnsupportedMediaType,
            r => ApiError::bad(format!("the form could not be read: {}", r.body_text())),
        }
    }
}

fn field_error(e: MultipartError) -> ApiError {
    if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::PayloadTooLarge
    } else {
        ApiError::bad(format!("the form could not be read: {}", e.body_text()))
    }
}

/// An uploaded file in `tmp/`.
pub struct Uploaded {
    pub name: String,
    pub temp: TempPath,
    pub size: u64,
    pub sha256: String,
}

/// The fields of an asset form.
#[derive(Default)]
pub struct Fields {
    pub file: Option<Uploaded>,
    /// `file` sent as text: the path of an existing item (delete, commit).
    pub file_path: Option<String>,
    pub folder: Option<String>,
    pub kind: Option<String>,
}

impl Fields {
    pub fn folder(&self) -> ApiResult<RelPath> {
        RelPath::parse("folder", self.folder.as_deref().unwrap_or("")).map_err(ApiError::BadRequest)
    }

    pub fn take_file(&mut self) -> ApiResult<Uploaded> {
        self.file.take().ok_or_else(|| ApiError::bad("the form needs a 'file' field holding the uploaded file"))
    }

    /// The item the form names: `file` as a path (or an uploaded file's name), within `folder`.
    pub fn item(&self) -> ApiResult<RelPath> {
        let text = match (&self.file_path, &self.file) {
            (Some(p), _) => p.clone(),
            (None, Some(f)) => f.name.clone(),
            (None, None) => return Err(ApiError::bad("the form needs a 'file' field naming the item")),
        };
        let item = RelPath::parse("file", &text).map_err(ApiError::BadRequest)?;
        if item.is_root() {
            return Err(ApiError::bad("the form's 'file' names no item"));
        }
        Ok(self.folder()?.concat(&item))
    }
}

const MAX_TEXT_FIELD: usize = 4096;

pub async fn read(media: &InstanceMedia, Form(mut form): Form) -> ApiResult<Fields> {
    let mut fields = Fields::default();
    while let Some(field) = form.next_field().await.map_err(field_error)? {
        let name = field.name().unwrap_or("").to_string();
        match (name.as_str(), field.file_name().map(str::to_string)) {
            ("file", Some(file_name)) if fields.file.is_none() => {
                let name = RelPath::file_name(&file_name).map_err(ApiError::BadRequest)?;
                fields.file = Some(stream_to_temp(media, name, field).await?);
            }
            ("file", None) if fields.file_path.is_none() => fields.file_path = Some(text(field).await?),
            ("folder", _) if fields.folder.is_none() => fields.folder = Some(text(field).await?),
            ("type", _) if fields.kind.is_none() => fields.kind = Some(text(field).await?),
            ("file" | "folder" | "type", _) => return Err(ApiError::bad(format!("the form has '{name}' twice"))),
            _ => return Err(ApiError::bad(format!("unknown form field '{name}' (expected file, folder, type)"))),
        }
    }
    Ok(fields)
}

async fn text(mut field: Field<'_>) -> ApiResult<String> {
    let mut bytes = Vec::new();
    while let Some(chunk) = field.chunk().await.map_err(field_error)? {
        bytes.extend_from_slice(&chunk);
        if bytes.len() > MAX_TEXT_FIELD {
            return Err(ApiError::bad(format!("a text field is longer than {MAX_TEXT_FIELD} bytes")));
        }
    }
    String::from_utf8(bytes).map_err(|_| ApiError::bad("a text field is not UTF-8"))
}

async fn stream_to_temp(media: &InstanceMedia, name: String, field: Field<'_>) -> ApiResult<Uploaded> {
    let budget = Budget::within(media.room().await?, MAX_PAYLOAD_BYTES as u64);
    let temp = media.temp_path().await.map_err(|e| ApiError::Internal(e.into()))?;
    let (size, sha256) = write_limited(media, &temp, field, budget, field_error).await?;
    Ok(Uploaded { name, temp, size, sha256 })
}

/// Writes `chunks` to `temp`, at most `budget` bytes (the payload limit, or the room the media
/// quota leaves: 413 either way, with the quota's message for the latter), hashing on the way and
/// synced to disk before it returns. `read_error` turns a failure of the client's body into the
/// client's error.
pub(crate) async fn write_limited<E>(
    media: &MediaArea,
    temp: &TempPath,
    chunks: impl futures_util::Stream<Item = Result<axum::body::Bytes, E>>,
    budget: Budget,
    read_error: impl Fn(E) -> ApiError,
) -> ApiResult<(u64, String)> {
    use futures_util::StreamExt;
    let mut out = tokio::fs::File::create(temp.path()).await.map_err(|e| ApiError::Internal(e.into()))?;
    let mut hash = Sha256::new();
    let mut size = 0u64;
    futures_util::pin_mut!(chunks);
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(&read_error)?;
        size += chunk.len() as u64;
        if size > budget.bytes {
            return Err(if budget.by_quota { ApiError::quota_exceeded(full_message(media)) } else { ApiError::PayloadTooLarge });
        }
        hash.update(&chunk);
        out.write_all(&chunk).await.map_err(|e| ApiError::Internal(e.into()))?;
    }
    out.sync_all().await.map_err(|e| ApiError::Internal(e.into()))?;
    Ok((size, hash.finalize().iter().map(|b| format!("{b:02x}")).collect()))
}
