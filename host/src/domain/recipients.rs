//! Recipients: update, upsert and events, with their rules.

use chrono::NaiveDateTime;

use super::{DomainError, DomainResult};
use crate::model::fields::{self, Given};
use crate::model::Value;
use crate::store::tenant::{Communication, EventRecord, Recipient};
use crate::tenants::Tenant;

/// (Person Data field index, value) pairs.
pub type Assignment = (usize, Value);

/// A Recipient Id given as JSON (a number, or text as a path gives it) read as the Recipient Id
/// field's value with the rules it keeps everywhere: the field's type and ranges, and for a
/// NUMBER id a whole number from 1 to 2^53 − 1.
pub fn recipient_id(model: &crate::model::Model, given: &serde_json::Value) -> Result<Value, String> {
    let field = model.def.recipient_id_field();
    let value =
        fields::typed(field.ty, Given::identifier(given), &model.formats).map_err(|e| format!("the Recipient Id {} {e}", field.name))?;
    match value {
        Value::Null => Err(format!("the Recipient Id {} is empty", field.name)),
        Value::Number(n) if !crate::values::is_recipient_number(n) => {
            Err(format!("the Recipient Id {} must be a whole number from 1 to {}", field.name, crate::values::MAX_EXACT_NUMBER as i64))
        }
        value => Ok(value),
    }
}

/// The recipient whose field `field` holds `value` (a unique field).
pub async fn find(tenant: &Tenant, field: usize, value: &Value) -> DomainResult<Option<Recipient>> {
    Ok(tenant.db.find_recipient(&tenant.model, field, value).await?)
}

/// Sets `values` on `existing`. Its Recipient Id cannot change: sending the same one is fine,
/// another is a conflict.
pub async fn update(tenant: &Tenant, existing: &Recipient, mut values: Vec<Assignment>) -> DomainResult<Recipient> {
    let model = &tenant.model;
    let id_index = model.def.recipient_id_index();
    if values.iter().any(|(i, v)| *i == id_index && *v != existing.values[id_index]) {
        return Err(DomainError::Conflict(format!(
            "the Recipient Id ({}) of an existing recipient cannot be changed",
            model.def.recipient_id
        )));
    }
    values.retain(|(i, _)| *i != id_index);
    Ok(tenant.db.update_recipient(model, existing.key, values).await?)
}

/// Sets `values` on the recipient whose unique field `field` holds `value`; `None` when there is
/// none. The same rules as `update`; a change that names no Recipient Id is one statement (no
/// read before it: a flow's step updates every recipient of a sweep this way).
pub async fn update_by(tenant: &Tenant, field: usize, value: &Value, values: Vec<Assignment>) -> DomainResult<Option<Recipient>> {
    let id_index = tenant.model.def.recipient_id_index();
    if values.is_empty() || values.iter().any(|(i, _)| *i == id_index) {
        return match find(tenant, field, value).await? {
            Some(existing) => Ok(Some(update(tenant, &existing, values).await?)),
            None => Ok(None),
        };
    }
    Ok(tenant.db.update_recipient_by(&tenant.model, field, value, values).await?)
}

/// Creates a recipient (a NUMBER Recipient Id left empty gets the next free number).
pub async fn create(tenant: &Tenant, values: Vec<Assignment>) -> DomainResult<Recipient> {
    Ok(tenant.db.create_recipient(&tenant.model, values).await?)
}

/// Updates the recipient that `values` name, or creates it: the Recipient Id names it, or failing
/// that the first unique field present that matches one. Returns the recipient and whether it
/// was created.
pub async fn upsert(tenant: &Tenant, values: Vec<Assignment>) -> DomainResult<(Recipient, bool)> {
    let model = &tenant.model;
    let id_index = model.def.recipient_id_index();
    let mut keys: Vec<&Assignment> = values.iter().filter(|(i, v)| model.def.person_data[*i].unique && !v.is_null()).collect();
    keys.sort_by_key(|(i, _)| *i != id_index);
    for (i, v) in keys {
        if let Some(existing) = find(tenant, *i, v).await? {
            return Ok((update(tenant, &existing, values).await?, false));
        }
    }
    Ok((create(tenant, values).await?, true))
}

/// Records that recipient `key` achieved `event` at `now` (the server's clock). The event must be
/// one the instance defines.
pub async fn achieve_event(tenant: &Tenant, key: i64, event: &str, now: NaiveDateTime) -> DomainResult<()> {
    if !tenant.model.def.events.iter().any(|e| e.name == event) {
        return Err(DomainError::NotFound);
    }
    Ok(tenant.db.achieve_event(key, event, now).await?)
}

/// Deletes recipient `key` with everything that belongs to it (records, events, communications,
/// flow runs); false when it was gone already.
pub async fn delete(tenant: &Tenant, key: i64) -> DomainResult<bool> {
    Ok(tenant.db.delete_recipient(key).await?)
}

/// Adds `entry` to recipient `key`'s communication history (what a flow's `send` wrote).
pub async fn record_communication(tenant: &Tenant, key: i64, entry: &Communication) -> DomainResult<()> {
    Ok(tenant.db.insert_communication(key, entry).await?)
}

/// The recipient stored under `key` (the store's own key, as runs and batches keep it).
pub async fn by_key(tenant: &Tenant, key: i64) -> DomainResult<Option<Recipient>> {
    Ok(tenant.db.recipient_by_key(&tenant.model, key).await?)
}

/// The recipients stored under `keys`, those that still exist.
pub async fn by_keys(tenant: &Tenant, keys: &[i64]) -> DomainResult<Vec<Recipient>> {
    Ok(tenant.db.recipients_by_keys(&tenant.model, keys).await?)
}

/// Whether recipient `key` matches `condition` (a target group, a promotion).
pub async fn matches(tenant: &Tenant, key: i64, condition: &crate::rsql::Condition) -> DomainResult<bool> {
    Ok(tenant.db.recipient_matches(key, condition).await?)
}

/// The keys, in order, of at most `limit` recipients after key `after` that match `condition`
/// (a sweep's next batch).
pub async fn keys_after(tenant: &Tenant, condition: Option<&crate::rsql::Condition>, after: i64, limit: i64) -> DomainResult<Vec<i64>> {
    Ok(tenant.db.recipient_keys_after(condition, after, limit).await?)
}

/// The events recipient `key` achieved.
pub async fn events(tenant: &Tenant, key: i64) -> DomainResult<Vec<EventRecord>> {
    Ok(tenant.db.events(key).await?)
}

/// Recipient `key`'s communication history.
pub async fn communications(tenant: &Tenant, key: i64) -> DomainResult<Vec<Communication>> {
    Ok(tenant.db.communications(key).await?)
}
