//! `recipients-read` and `recipients-write`: a recipient by a unique field, a filter, its
//! One-To-Many records; creating, changing and deleting recipients and their records, events.
//! What a call creates or achieves starts flows one step further down its chain (`happened`).

use std::sync::Arc;

use futures_util::StreamExt;
use wasmtime::component::Linker;

use super::bindings::herald::platform::{recipients_read, recipients_write};
use super::values::{
    all_shown, condition, field_values, person_fields, person_values, recipient_id, shown, table_fields, table_id, unique_key,
};
use super::{from_domain, from_store, guest_text, invalid, Answer, Data, DataView, Field, GuestError, WitValue, MAX_FIND};
use crate::domain;
use crate::domain::triggers::Happening;
use crate::model::fields::Fields;
use crate::runtime::state::CallState;
use crate::store::tenant::EntryOutcome;

pub(super) fn add_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    recipients_read::add_to_linker::<CallState, Data>(linker, DataView::of)?;
    recipients_write::add_to_linker::<CallState, Data>(linker, DataView::of)
}

impl recipients_read::Host for DataView<'_> {
    async fn records(&mut self, key_field: String, key: WitValue, table: String, filter: String, limit: u32) -> Answer<Vec<Vec<Field>>> {
        let tenant = Arc::clone(self.tenant);
        let (index, value) = unique_key(&tenant.model, &key_field, key)?;
        let recipient = domain::recipients::find(&tenant, index, &value).await.map_err(from_domain)?.ok_or(GuestError::NotFound)?;
        let scope = domain::tables::one_to_many(&tenant, &table, recipient.key).map_err(from_domain)?;
        let condition = condition(&filter, scope.def, &tenant)?;
        let records = domain::tables::records(&tenant, &scope, condition.as_ref()).await.map_err(from_domain)?;
        Ok(records.iter().take(limit.min(MAX_FIND) as usize).map(|r| table_fields(scope.def, r)).collect())
    }

    async fn get(&mut self, key_field: String, key: WitValue) -> Answer<Option<Vec<Field>>> {
        let tenant = Arc::clone(self.tenant);
        let (index, value) = unique_key(&tenant.model, &key_field, key)?;
        let found = domain::recipients::find(&tenant, index, &value).await.map_err(from_domain)?;
        Ok(found.map(|r| person_fields(&tenant.model, &r.values)))
    }

    async fn find(&mut self, filter: String, limit: u32) -> Answer<Vec<Vec<Field>>> {
        let tenant = Arc::clone(self.tenant);
        let (db, model) = (&tenant.db, &tenant.model);
        let condition = condition(&filter, &model.def, &tenant)?;
        let sql = db.recipients_sql(model, condition.as_ref());
        let mut reader = db.stream_reader().await.map_err(from_store)?;
        let rows = db.recipients_stream(&mut reader, model, condition.as_ref(), &sql).take(limit.min(MAX_FIND) as usize);
        futures_util::pin_mut!(rows);
        let mut out = Vec::new();
        while let Some(r) = rows.next().await {
            out.push(person_fields(model, &r.map_err(from_store)?.values));
        }
        Ok(out)
    }
}

impl recipients_write::Host for DataView<'_> {
    async fn create(&mut self, fields: Vec<Field>) -> Answer<Vec<Field>> {
        let tenant = Arc::clone(self.tenant);
        let values = person_values(&tenant.model, &fields)?;
        let stored = domain::recipients::create(&tenant, values).await.map_err(from_domain)?;
        self.note_change(1, || {
            format!("recipient {} created: {}", recipient_id(&tenant.model, &stored.values), all_shown(&tenant.model, &stored.values))
        });
        self.happened(stored.key, Happening::Created).await;
        Ok(person_fields(&tenant.model, &stored.values))
    }

    async fn update(&mut self, key_field: String, key: WitValue, fields: Vec<Field>) -> Answer<Vec<Field>> {
        let tenant = Arc::clone(self.tenant);
        let model = &tenant.model;
        let (index, value) = unique_key(model, &key_field, key)?;
        let values = person_values(model, &fields)?;
        let given = self.journal.as_ref().map(|_| shown(model, &values));
        let stored =
            domain::recipients::update_by(&tenant, index, &value, values).await.map_err(from_domain)?.ok_or(GuestError::NotFound)?;
        self.note_change(1, || format!("recipient {} updated: {}", recipient_id(model, &stored.values), given.unwrap_or_default()));
        Ok(person_fields(model, &stored.values))
    }

    async fn upsert(&mut self, fields: Vec<Field>) -> Answer<Vec<Field>> {
        let tenant = Arc::clone(self.tenant);
        let values = person_values(&tenant.model, &fields)?;
        let given = self.journal.as_ref().map(|_| shown(&tenant.model, &values));
        let (stored, created) = domain::recipients::upsert(&tenant, values).await.map_err(from_domain)?;
        self.note_change(1, || {
            let id = recipient_id(&tenant.model, &stored.values);
            if created {
                format!("recipient {id} created: {}", all_shown(&tenant.model, &stored.values))
            } else {
                format!("recipient {id} updated: {}", given.unwrap_or_default())
            }
        });
        if created {
            self.happened(stored.key, Happening::Created).await;
        }
        Ok(person_fields(&tenant.model, &stored.values))
    }

    async fn delete(&mut self, key_field: String, key: WitValue) -> Answer<bool> {
        let tenant = Arc::clone(self.tenant);
        let (index, value) = unique_key(&tenant.model, &key_field, key)?;
        match domain::recipients::find(&tenant, index, &value).await.map_err(from_domain)? {
            Some(r) => {
                let deleted = domain::recipients::delete(&tenant, r.key).await.map_err(from_domain)?;
                if deleted {
                    self.note_change(1, || format!("recipient {} deleted", recipient_id(&tenant.model, &r.values)));
                }
                Ok(deleted)
            }
            None => Ok(false),
        }
    }

    async fn upsert_records(&mut self, key_field: String, key: WitValue, table: String, records: Vec<Vec<Field>>) -> Answer<u32> {
        let tenant = Arc::clone(self.tenant);
        let model = &tenant.model;
        if records.len() > 1000 {
            return Err(invalid("at most 1000 records at once").into());
        }
        let def = model.def.one_to_many_table(&table).ok_or(GuestError::NotFound)?;
        let (index, value) = unique_key(model, &key_field, key)?;
        let recipient = domain::recipients::find(&tenant, index, &value).await.map_err(from_domain)?.ok_or(GuestError::NotFound)?;
        let entries = records.into_iter().map(|fields| field_values(Fields::table(def), &fields, model).map_err(guest_text)).collect();
        let scope = domain::tables::one_to_many(&tenant, &def.name, recipient.key).map_err(from_domain)?;
        let outcomes = domain::tables::batch_upsert(&tenant, &scope, entries).await.map_err(from_domain)?;
        if let Some(EntryOutcome::Invalid(m)) = outcomes.iter().find(|o| matches!(o, EntryOutcome::Invalid(_))) {
            return Err(invalid(m.clone()).into());
        }
        self.note_change(outcomes.len() as u64, || {
            format!("{}: {} record(s) upserted for recipient {}", def.name, outcomes.len(), recipient_id(model, &recipient.values))
        });
        Ok(outcomes.len() as u32)
    }

    async fn delete_records(&mut self, key_field: String, key: WitValue, table: String, ids: Vec<WitValue>) -> Answer<u32> {
        let tenant = Arc::clone(self.tenant);
        let model = &tenant.model;
        let def = model.def.one_to_many_table(&table).ok_or(GuestError::NotFound)?;
        let (index, value) = unique_key(model, &key_field, key)?;
        let recipient = domain::recipients::find(&tenant, index, &value).await.map_err(from_domain)?.ok_or(GuestError::NotFound)?;
        let ids = ids.iter().map(|v| table_id(model, def, v).map_err(guest_text)).collect();
        let scope = domain::tables::one_to_many(&tenant, &def.name, recipient.key).map_err(from_domain)?;
        let outcomes = domain::tables::batch_delete(&tenant, &scope, ids).await.map_err(from_domain)?;
        let deleted = outcomes.iter().filter(|o| matches!(o, EntryOutcome::Deleted)).count() as u32;
        if deleted > 0 {
            self.note_change(u64::from(deleted), || {
                format!("{}: {deleted} record(s) deleted for recipient {}", def.name, recipient_id(model, &recipient.values))
            });
        }
        Ok(deleted)
    }

    async fn achieve_event(&mut self, key_field: String, key: WitValue, event: String) -> Answer<()> {
        let tenant = Arc::clone(self.tenant);
        let (index, value) = unique_key(&tenant.model, &key_field, key)?;
        let r = domain::recipients::find(&tenant, index, &value).await.map_err(from_domain)?.ok_or(GuestError::NotFound)?;
        let now = self.clock.now_utc();
        domain::recipients::achieve_event(&tenant, r.key, &event, now).await.map_err(from_domain)?;
        self.note_change(1, || format!("event {event} achieved by recipient {}", recipient_id(&tenant.model, &r.values)));
        self.happened(r.key, Happening::EventAchieved(&event)).await;
        Ok(())
    }
}
