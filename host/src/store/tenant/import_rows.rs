//! One batch of an import's rows, written in one turn of the group commit with the import's new
//! position and its rejected rows: either all of it is on disk or none of it, so a resumed
//! import neither skips nor repeats a row.
//!
//! Each row is an upsert by the import's key field, with the REST API's rules: the recipients
//! the batch's keys name are read first (one query per 500 keys); a row whose key is taken
//! updates that recipient (its Recipient Id cannot change), any other creates one (a NUMBER
//! Recipient Id left out gets the next free number, as `POST /recipients` does). A later row
//! with the same key updates what an earlier one wrote: the last row wins.
//!
//! A batch first runs without a savepoint per row. A statement that fails (a unique value taken
//! by another recipient) undoes the batch, which then runs again with a savepoint around every
//! row, so the failing rows are rejected and the others kept: the common batch pays nothing
//! for the rare one (PostgreSQL slows every session down while a transaction holds more than
//! 64 subtransactions).

use std::collections::HashMap;

use sqlx::any::AnyRow;
use sqlx::Row;

use super::codec::{bind, bind_typed, decode};
use super::imports::{ImportCounts, MAX_RECORDED_ERRORS};
use super::recipients::numbered_insert;
use super::TenantDb;
use crate::model::{column, FieldType, Model, Value};
use crate::rsql::Dialect;
use crate::store::group::Turn;
use crate::store::{StoreError, StoreResult};
use crate::values::value::MAX_EXACT_NUMBER;

/// A field index into the model's Person Data and its value.
pub type Assignment = (usize, Value);

/// One row as read from the file: its values, or why it cannot be written.
#[derive(Debug, Clone)]
pub struct ImportRow {
    pub row: i64,
    pub values: Result<Vec<Assignment>, Refusal>,
}

/// Why a row is rejected: the field at fault (if one is) and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub field: Option<String>,
    pub message: String,
}

impl Refusal {
    pub fn of(field: Option<&str>, message: impl Into<String>) -> Refusal {
        Refusal { field: field.map(str::to_string), message: message.into() }
    }
}

/// A batch and where the import stands once it is written.
pub struct ImportBatch<'a> {
    pub import_id: &'a str,
    /// The unique Person Data field that names each row's recipient.
    pub key_field: usize,
    pub rows: Vec<ImportRow>,
    /// Where the batch's first row starts: the import must still stand there.
    pub from_offset: i64,
    /// Where the row after the batch starts, and its number.
    pub next_offset: i64,
    pub next_row: i64,
    /// Rows the import rejected before this batch (only the first `MAX_RECORDED_ERRORS` are kept).
    pub rejected_before: i64,
}

/// What became of a batch.
#[derive(Debug)]
pub enum BatchOutcome {
    /// Written: the batch's counts, and the recipients it created (for their triggers).
    Applied { counts: ImportCounts, created: Vec<i64> },
    /// The import was cancelled meanwhile, or another stretch of it (on a node thought gone)
    /// wrote these rows first: nothing of the batch was written.
    Stale,
}

enum RowOutcome {
    Created(i64),
    Updated,
    Rejected(Refusal),
}

/// A failed statement: the batch runs again row by row (`careful`).
fn statement_failed(e: &StoreError) -> bool {
    matches!(e, StoreError::Db(sqlx::Error::Database(_)))
}

impl TenantDb {
    /// Writes `batch` (see the module's notes).
    pub async fn apply_import_batch(&self, model: &Model, batch: &ImportBatch<'_>) -> StoreResult<BatchOutcome> {
        let mut turn = self.db.group.turn().await?;
        let outcomes = match self.apply_rows(&mut turn, model, batch, false).await {
            Err(e) if statement_failed(&e) => {
                turn.undo().await?;
                self.apply_rows(&mut turn, model, batch, true).await
            }
            other => other,
        };
        let outcomes = match outcomes {
            Ok(outcomes) => outcomes,
            Err(e) => return turn.finish(Err(e)).await,
        };
        let result = self.record_batch(&mut turn, batch, outcomes).await;
        match result {
            Ok(None) => {
                turn.undo().await?;
                turn.finish(Ok::<_, StoreError>(BatchOutcome::Stale)).await
            }
            Ok(Some(applied)) => turn.finish(Ok::<_, StoreError>(applied)).await,
            Err(e) => turn.finish(Err(e)).await,
        }
    }

    /// The rejected rows and the import's new position; `None` when the import no longer stands
    /// where the batch starts, running.
    async fn record_batch(&self, turn: &mut Turn, batch: &ImportBatch<'_>, outcomes: Vec<RowOutcome>) -> StoreResult<Option<BatchOutcome>> {
        let mut counts = ImportCounts { rows_read: outcomes.len() as i64, ..ImportCounts::default() };
        let mut created = Vec::new();
        let insert_error =
            self.db.sql("INSERT INTO _import_errors (import_id, row_number, field, message) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING");
        for (row, outcome) in batch.rows.iter().zip(outcomes) {
            match outcome {
                RowOutcome::Created(key) => {
                    counts.created += 1;
                    created.push(key);
                }
                RowOutcome::Updated => counts.updated += 1,
                RowOutcome::Rejected(refusal) => {
                    if batch.rejected_before + counts.rejected < MAX_RECORDED_ERRORS {
                        let query = sqlx::query(&insert_error).bind(batch.import_id).bind(row.row);
                        query.bind(refusal.field).bind(refusal.message).execute(&mut **turn).await?;
                    }
                    counts.rejected += 1;
                }
            }
        }
        let sql = self.db.sql(
            "UPDATE _imports SET next_offset = ?, next_row = ?, rows_read = rows_read + ?, created = created + ?,
                 updated = updated + ?, rejected = rejected + ?
             WHERE id = ? AND state = 'running' AND next_offset = ?",
        );
        let moved = sqlx::query(&sql)
            .bind(batch.next_offset)
            .bind(batch.next_row)
            .bind(counts.rows_read)
            .bind(counts.created)
            .bind(counts.updated)
            .bind(counts.rejected)
            .bind(batch.import_id)
            .bind(batch.from_offset)
            .execute(&mut **turn)
            .await?;
        Ok((moved.rows_affected() == 1).then_some(BatchOutcome::Applied { counts, created }))
    }

    async fn apply_rows(&self, turn: &mut Turn, model: &Model, batch: &ImportBatch<'_>, careful: bool) -> StoreResult<Vec<RowOutcome>> {
        let fields = &model.def.person_data;
        let id_index = model.def.recipient_id_index();
        let mut known = self.known_keys(turn, model, batch).await?;
        let mut numbering_locked = false;
        let mut outcomes = Vec::with_capacity(batch.rows.len());
        for row in &batch.rows {
            let values = match &row.values {
                Ok(values) => values,
                Err(refusal) => {
                    outcomes.push(RowOutcome::Rejected(refusal.clone()));
                    continue;
                }
            };
            if let Some((i, e)) = values.iter().find_map(|(i, v)| v.check_indexed().err().map(|e| (i, e))) {
                let name = &fields[*i].name;
                outcomes.push(RowOutcome::Rejected(Refusal::of(Some(name), format!("Person Data field {name} {e}"))));
                continue;
            }
            let key = values.iter().find(|(i, v)| *i == batch.key_field && !v.is_null()).map(|(_, v)| v.to_text(&model.formats));
            let given_id = values.iter().find(|(i, v)| *i == id_index && !v.is_null()).map(|(_, v)| v);
            let existing = key.as_ref().and_then(|k| known.get(k)).cloned();
            if let (Some((_, stored_id)), Some(given)) = (&existing, given_id) {
                if given != stored_id {
                    let name = &fields[id_index].name;
                    let message = format!("the Recipient Id ({name}) of an existing recipient cannot be changed");
                    outcomes.push(RowOutcome::Rejected(Refusal::of(Some(name), message)));
                    continue;
                }
            }
            // The Recipient Id is not set by an update, nor when a row leaves it empty.
            let writes: Vec<&Assignment> = values.iter().filter(|(i, v)| *i != id_index || (existing.is_none() && !v.is_null())).collect();
            if existing.is_none() && given_id.is_none() {
                if fields[id_index].ty != FieldType::Number {
                    let name = &fields[id_index].name;
                    outcomes.push(RowOutcome::Rejected(Refusal::of(Some(name), format!("the Recipient Id field {name} is required"))));
                    continue;
                }
                if self.db.dialect == Dialect::Postgres && !numbering_locked {
                    // As `create_recipient`: other nodes' writers must not take the same numbers.
                    sqlx::query("LOCK TABLE recipients IN SHARE ROW EXCLUSIVE MODE").execute(&mut **turn).await?;
                    numbering_locked = true;
                }
            }
            if careful {
                sqlx::query("SAVEPOINT herald_row").execute(&mut **turn).await?;
            }
            let written = match &existing {
                Some((own, _)) => self.update_row(turn, model, *own, &writes).await.map(|()| RowOutcome::Updated),
                None => self.insert_row(turn, model, &writes, given_id.is_none()).await.map(|(own, id)| {
                    let key = if batch.key_field == id_index { Some(id.to_text(&model.formats)) } else { key.clone() };
                    if let Some(key) = key {
                        known.insert(key, (own, id));
                    }
                    RowOutcome::Created(own)
                }),
            };
            match written {
                Ok(outcome) => {
                    if careful {
                        sqlx::query("RELEASE SAVEPOINT herald_row").execute(&mut **turn).await?;
                    }
                    outcomes.push(outcome);
                }
                Err(StoreError::Conflict(message)) => {
                    // No Recipient Id left to number with: nothing was written.
                    if careful {
                        sqlx::query("RELEASE SAVEPOINT herald_row").execute(&mut **turn).await?;
                    }
                    outcomes.push(RowOutcome::Rejected(Refusal::of(Some(&fields[id_index].name), message)));
                }
                Err(e) if careful && statement_failed(&e) => {
                    sqlx::query("ROLLBACK TO SAVEPOINT herald_row").execute(&mut **turn).await?;
                    sqlx::query("RELEASE SAVEPOINT herald_row").execute(&mut **turn).await?;
                    let own = existing.as_ref().map(|(own, _)| *own);
                    outcomes.push(RowOutcome::Rejected(self.why_refused(turn, model, &writes, own, e).await?));
                }
                Err(e) => return Err(e),
            }
        }
        Ok(outcomes)
    }

    /// The recipients the batch's keys name: key (as text) to (internal key, Recipient Id).
    async fn known_keys(&self, turn: &mut Turn, model: &Model, batch: &ImportBatch<'_>) -> StoreResult<HashMap<String, (i64, Value)>> {
        let fields = &model.def.person_data;
        let id_index = model.def.recipient_id_index();
        let keys: Vec<&Value> = batch
            .rows
            .iter()
            .filter_map(|r| r.values.as_ref().ok())
            .filter_map(|values| values.iter().find(|(i, v)| *i == batch.key_field && !v.is_null()).map(|(_, v)| v))
            .collect();
        let mut known = HashMap::with_capacity(keys.len());
        let key = &fields[batch.key_field];
        for chunk in keys.chunks(500) {
            let marks = vec!["?"; chunk.len()].join(", ");
            let sql = self.db.sql_string(format!(
                "SELECT _id, {}, {} FROM recipients WHERE {} IN ({marks})",
                column(&fields[id_index].name),
                column(&key.name),
                column(&key.name)
            ));
            let mut query = sqlx::query(&sql);
            for v in chunk {
                query = bind_typed(query, v, key.ty);
            }
            for row in query.fetch_all(&mut **turn).await? {
                let id = decode(&row, 1, fields[id_index].ty)?;
                let value = decode(&row, 2, key.ty)?;
                known.insert(value.to_text(&model.formats), (row.try_get::<i64, _>(0)?, id));
            }
        }
        Ok(known)
    }

    async fn update_row(&self, turn: &mut Turn, model: &Model, own: i64, writes: &[&Assignment]) -> StoreResult<()> {
        if writes.is_empty() {
            return Ok(());
        }
        let fields = &model.def.person_data;
        let sets: Vec<String> = writes.iter().map(|(i, _)| format!("{} = ?", column(&fields[*i].name))).collect();
        let sql = self.db.sql_string(format!("UPDATE recipients SET {} WHERE _id = ?", sets.join(", ")));
        let mut query = sqlx::query(&sql);
        for (i, v) in writes {
            query = bind_typed(query, v, fields[*i].ty);
        }
        query.bind(own).execute(&mut **turn).await?;
        Ok(())
    }

    /// Inserts a recipient (numbered when `numbered`); its internal key and Recipient Id.
    async fn insert_row(&self, turn: &mut Turn, model: &Model, writes: &[&Assignment], numbered: bool) -> StoreResult<(i64, Value)> {
        let fields = &model.def.person_data;
        let id_field = model.def.recipient_id_field();
        let names: Vec<String> = writes.iter().map(|(i, _)| column(&fields[*i].name)).collect();
        let returning = format!("_id, {}", column(&id_field.name));
        let sql = if numbered {
            numbered_insert(self.db.dialect, &names, &id_field.name, &returning)
        } else {
            format!("INSERT INTO recipients ({}) VALUES ({}) RETURNING {returning}", names.join(", "), vec!["?"; names.len()].join(", "))
        };
        let sql = self.db.sql_string(sql);
        let mut query = sqlx::query(&sql);
        for (i, v) in writes {
            query = bind_typed(query, v, fields[*i].ty);
        }
        let row: Option<AnyRow> = query.fetch_optional(&mut **turn).await?;
        let row = row.ok_or_else(|| {
            StoreError::Conflict(format!(
                "no Recipient Id is free above the largest one ({}): give {} explicitly",
                MAX_EXACT_NUMBER as i64, id_field.name
            ))
        })?;
        Ok((row.try_get(0)?, decode(&row, 1, id_field.ty)?))
    }

    /// Why a row's statement failed, in the customer's terms: which of its unique values another
    /// recipient holds.
    async fn why_refused(
        &self,
        turn: &mut Turn,
        model: &Model,
        writes: &[&Assignment],
        own: Option<i64>,
        e: StoreError,
    ) -> StoreResult<Refusal> {
        let fields = &model.def.person_data;
        for (i, v) in writes.iter().filter(|(i, v)| fields[*i].unique && !v.is_null()) {
            let name = &fields[*i].name;
            let sql = self.db.sql_string(format!("SELECT _id FROM recipients WHERE {} = ? LIMIT 1", column(name)));
            if let Some(holder) = bind(sqlx::query(&sql), v).fetch_optional(&mut **turn).await? {
                if Some(holder.try_get::<i64, _>(0)?) != own {
                    let message = format!("a recipient with {name} '{}' already exists", v.to_text(&model.formats));
                    return Ok(Refusal::of(Some(name), message));
                }
            }
        }
        tracing::debug!(error = %e, "an imported row was refused by the store");
        Ok(Refusal::of(None, "the store refused the row (a unique value taken by a row written at the same time?)"))
    }
}
