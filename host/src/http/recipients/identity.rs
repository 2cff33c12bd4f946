//! Which recipient a `{recipientId}` path segment names: the Recipient Id, or
//! `<unique field>=<value>`.

use crate::http::error::{ApiError, ApiResult};
use crate::http::extract::decode_twice;
use crate::model::fields::{typed, Given};
use crate::model::{Model, Value};
use crate::store::tenant::Recipient;
use crate::tenants::Tenant;

/// A `{recipientId}` path segment: which unique field, and the value to look for.
pub(crate) struct RecipientRef {
    pub field: usize,
    pub value: Value,
}

/// Reads a `{recipientId}` segment (decoded once by the router): the Recipient Id value, or
/// `<unique field>=<value>`, each part decoded a second time.
pub(crate) fn parse_ref(model: &Model, segment: &str) -> ApiResult<RecipientRef> {
    let fields = &model.def.person_data;
    let (field, raw_value) = match segment.split_once('=') {
        Some((name, value)) => {
            let name = decode_twice(name)?;
            let index = fields
                .iter()
                .position(|f| f.name == name)
                .ok_or_else(|| ApiError::bad(format!("the path expression field '{name}' is not a Person Data field")))?;
            if !fields[index].unique {
                return Err(ApiError::bad(format!("the path expression field '{name}' is not unique")));
            }
            (index, value)
        }
        None => (model.def.recipient_id_index(), segment),
    };
    let text = decode_twice(raw_value)?;
    if text.is_empty() {
        return Err(ApiError::bad("the recipient identifier in the path is empty"));
    }
    let value = typed(fields[field].ty, Given::Text(&text), &model.formats)
        .map_err(|e| ApiError::bad(format!("the path expression field {} {e}", fields[field].name)))?;
    Ok(RecipientRef { field, value })
}

/// The recipient a `{recipientId}` segment names, or 404.
pub(in crate::http) async fn resolve(tenant: &Tenant, segment: &str) -> ApiResult<Recipient> {
    let r = parse_ref(&tenant.model, segment)?;
    crate::domain::recipients::find(tenant, r.field, &r.value).await?.ok_or(ApiError::NotFound)
}
