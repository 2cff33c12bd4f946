//! Global Data values: checked against the item's type, stored as text in the instance's formats.

use super::{DomainError, DomainResult};
use crate::model::fields::{self, Given};
use crate::store::tenant::GlobalValue;
use crate::tenants::Tenant;

/// Sets item `name` to `text` (empty clears it), after checking it against the item's type.
pub async fn set(tenant: &Tenant, name: &str, text: &str) -> DomainResult<GlobalValue> {
    let item = tenant.model.def.global_data_item(name).ok_or(DomainError::NotFound)?;
    let value = fields::typed(item.ty, Given::Text(text), &tenant.model.formats)
        .map_err(|e| DomainError::Invalid(format!("VALUE of {name} {e}")))?;
    let stored = (!value.is_null()).then(|| value.to_text(&tenant.model.formats));
    Ok(tenant.db.set_global_value(name, stored.as_deref()).await?)
}

/// Item `name`'s stored value (none: never set).
pub async fn get(tenant: &Tenant, name: &str) -> DomainResult<Option<GlobalValue>> {
    Ok(tenant.db.global_value(name).await?)
}
