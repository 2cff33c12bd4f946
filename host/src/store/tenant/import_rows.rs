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
//! A row that would leave its recipient as it is writes nothing (it counts as updated).
//!
//! A batch first runs without a savepoint per row, its rows gathered into multi-row statements
//! (`import_writes`). A statement that fails (a unique value taken by another recipient) undoes
//! the batch, which then runs again one row at a time with a savepoint around every row, so the
//! failing rows are rejected and the others kept: the common batch pays nothing for the rare one
//! (PostgreSQL slows every session down while a transaction holds more than 64 subtransactions).

use std::collections::HashMap;

use sqlx::Row;

use super::codec::{bind_typed, decode};
use super::import_writes::{Known, Numbering, PendingWrites, Sent, Write, ROWS_PER_STATEMENT};
use super::imports::{ImportCounts, MAX_RECORDED_ERRORS};
use super::{EntryOutcome, TableRef, TenantDb};
use crate::model::{column, FieldType, Model, Value};
use crate::rsql::Dialect;
use crate::store::backend_priority::Lowered;
use crate::store::group::Turn;
use crate::store::{StoreError, StoreResult};

/// A field index into the model's Person Data and its value.
pub type Assignment = (usize, Value);

/// One row as read from the file: its values, or why it cannot be written.
#[derive(Debug, Clone)]
pub struct ImportRow {
    pub row: i64,
    pub values: Result<Vec<Assignment>, Refusal>,
    /// The recipient's One-To-Many records the row carries (NDJSON), upserted by identifier.
    pub related: Vec<Related>,
}

/// Records of One-To-Many table `table` (an index into the model's) for a row's recipient.
#[derive(Debug, Clone)]
pub struct Related {
    pub table: usize,
    pub records: Vec<Vec<Assignment>>,
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
    /// A Global Data Table whose records the rows are (upserts by its identifier, as
    /// `:batchUpdateRecords` writes them); recipients when `None`.
    pub table: Option<&'a TableRef<'a>>,
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
    /// Written: the batch's counts, and the recipients it created (for their triggers; `None`
    /// for a table's records).
    Applied { counts: ImportCounts, created: Vec<Option<i64>> },
    /// The import was cancelled meanwhile, or another stretch of it (on a node thought gone)
    /// wrote these rows first: nothing of the batch was written.
    Stale,
}

enum RowOutcome {
    /// The internal key of a new recipient; `None` for a table's record.
    Created(Option<i64>),
    /// The internal key of the recipient updated (0 for a table's record).
    Updated(i64),
    Rejected(Refusal),
}

/// A failed statement: the batch runs again row by row (`careful`).
fn statement_failed(e: &StoreError) -> bool {
    matches!(e, StoreError::Db(sqlx::Error::Database(_)))
}

impl TenantDb {
    /// Writes `batch` (see the module's notes). On PostgreSQL its statements run `backend_nice`
    /// steps below the API's priority where that can be done (`store::backend_priority`), and at the
    /// backend's own priority again before the commit.
    pub async fn apply_import_batch(&self, model: &Model, batch: &ImportBatch<'_>, backend_nice: u8) -> StoreResult<BatchOutcome> {
        let mut turn = self.db.group.turn().await?;
        let lowered = match self.dialect() {
            Dialect::Postgres => Lowered::backend_of(&mut turn, backend_nice).await,
            Dialect::Sqlite => None,
        };
        let written = self.write_batch(&mut turn, model, batch).await;
        drop(lowered);
        match written {
            Ok(None) => {
                turn.undo().await?;
                turn.finish(Ok::<_, StoreError>(BatchOutcome::Stale)).await
            }
            Ok(Some(applied)) => turn.finish(Ok::<_, StoreError>(applied)).await,
            // Given back unfinished: what the batch wrote is undone.
            Err(e) => turn.finish(Err(e)).await,
        }
    }

    /// The batch's rows, their records and the import's new position, in `turn`; `None` when
    /// the import no longer stands where the batch starts.
    async fn write_batch(&self, turn: &mut Turn, model: &Model, batch: &ImportBatch<'_>) -> StoreResult<Option<BatchOutcome>> {
        let outcomes = match batch.table {
            Some(table) => self.apply_records(turn, table, batch).await?,
            None => {
                let outcomes = match self.apply_rows(turn, model, batch, false).await {
                    Err(e) if statement_failed(&e) => {
                        turn.undo().await?;
                        self.apply_rows(turn, model, batch, true).await
                    }
                    other => other,
                }?;
                self.apply_related(turn, model, batch, &outcomes).await?;
                outcomes
            }
        };
        self.record_batch(turn, batch, outcomes).await
    }

    /// The One-To-Many records the batch's rows carry, for the recipients the rows wrote: per
    /// table, upserts of many recipients' records in multi-row statements, in row order.
    async fn apply_related(&self, turn: &mut Turn, model: &Model, batch: &ImportBatch<'_>, outcomes: &[RowOutcome]) -> StoreResult<()> {
        for (table, def) in model.def.one_to_many.iter().enumerate() {
            let mut records: Vec<(i64, &[Assignment])> = Vec::new();
            for (row, outcome) in batch.rows.iter().zip(outcomes) {
                let own = match outcome {
                    RowOutcome::Created(Some(own)) | RowOutcome::Updated(own) => *own,
                    _ => continue,
                };
                for related in row.related.iter().filter(|r| r.table == table) {
                    records.extend(related.records.iter().map(|r| (own, r.as_slice())));
                }
            }
            if !records.is_empty() {
                let t = TableRef { sql_name: super::otm_table(&def.name), def, recipient: None };
                self.upsert_records_of_recipients(turn, &t, &records).await?;
            }
        }
        Ok(())
    }

    /// A table's records, written as `:batchUpdateRecords` writes them (one multi-row statement
    /// per shape when it can, else a savepoint an entry).
    async fn apply_records(&self, turn: &mut Turn, table: &TableRef<'_>, batch: &ImportBatch<'_>) -> StoreResult<Vec<RowOutcome>> {
        let entries: Vec<_> = batch.rows.iter().filter_map(|row| row.values.as_ref().ok()).map(|values| Ok(values.clone())).collect();
        let mut written = self.batch_upsert_in(turn, table, entries).await?.into_iter();
        let mut outcomes = Vec::with_capacity(batch.rows.len());
        for row in &batch.rows {
            outcomes.push(match &row.values {
                Err(refusal) => RowOutcome::Rejected(refusal.clone()),
                Ok(_) => match written.next() {
                    Some(EntryOutcome::Created) => RowOutcome::Created(None),
                    Some(EntryOutcome::Invalid(message)) => RowOutcome::Rejected(Refusal::of(None, message)),
                    Some(_) => RowOutcome::Updated(0),
                    None => return Err(StoreError::Invalid("a batch of records came back short".into())),
                },
            });
        }
        Ok(outcomes)
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
                RowOutcome::Updated(_) => counts.updated += 1,
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
        let mut numbering = Numbering::default();
        let mut pending = PendingWrites::default();
        // `None` for a row waiting in `pending`.
        let mut outcomes: Vec<Option<RowOutcome>> = Vec::with_capacity(batch.rows.len());
        for (slot, row) in batch.rows.iter().enumerate() {
            let values = match &row.values {
                Ok(values) => values,
                Err(refusal) => {
                    outcomes.push(Some(RowOutcome::Rejected(refusal.clone())));
                    continue;
                }
            };
            if let Some((i, e)) = values.iter().find_map(|(i, v)| v.check_indexed().err().map(|e| (i, e))) {
                let name = &fields[*i].name;
                outcomes.push(Some(RowOutcome::Rejected(Refusal::of(Some(name), format!("Person Data field {name} {e}")))));
                continue;
            }
            let key = values.iter().find(|(i, v)| *i == batch.key_field && !v.is_null()).map(|(_, v)| v.to_text(&model.formats));
            if key.as_ref().is_some_and(|k| pending.holds_key(k)) {
                // An earlier row of the batch creates this row's recipient.
                let sent = self.send(turn, model, &mut pending).await?;
                remember(&mut known, &mut outcomes, sent);
            }
            let given_id = values.iter().find(|(i, v)| *i == id_index && !v.is_null()).map(|(_, v)| v);
            // An update the fast path gathers (after the borrow of `known` below ends).
            let mut update = None;
            let outcome = match key.as_ref().and_then(|k| known.get_mut(k)) {
                Some(existing) => {
                    if given_id.is_some_and(|given| *given != existing.id) {
                        let name = &fields[id_index].name;
                        let message = format!("the Recipient Id ({name}) of an existing recipient cannot be changed");
                        outcomes.push(Some(RowOutcome::Rejected(Refusal::of(Some(name), message))));
                        continue;
                    }
                    // Only what changes is written; the Recipient Id never is.
                    let write = sorted(values.iter().filter(|(i, v)| *i != id_index && existing.values[*i] != *v).cloned());
                    let own = existing.own;
                    if write.columns.is_empty() {
                        Some(RowOutcome::Updated(own))
                    } else if careful {
                        match self.write_carefully(turn, model, Some(own), &write).await? {
                            Ok(_) => {
                                existing.values_from(&write);
                                Some(RowOutcome::Updated(own))
                            }
                            Err(refusal) => Some(RowOutcome::Rejected(refusal)),
                        }
                    } else {
                        existing.values_from(&write);
                        update = Some((own, write));
                        Some(RowOutcome::Updated(own))
                    }
                }
                None => {
                    let id = match given_id {
                        Some(id) => id.clone(),
                        None if fields[id_index].ty != FieldType::Number => {
                            let name = &fields[id_index].name;
                            let message = format!("the Recipient Id field {name} is required");
                            outcomes.push(Some(RowOutcome::Rejected(Refusal::of(Some(name), message))));
                            continue;
                        }
                        None => match numbering.peek(self, turn, model).await? {
                            Ok(number) => Value::Number(number),
                            Err(message) => {
                                outcomes.push(Some(RowOutcome::Rejected(Refusal::of(Some(&fields[id_index].name), message))));
                                continue;
                            }
                        },
                    };
                    let mut write = sorted(values.iter().filter(|(i, _)| *i != id_index).cloned());
                    write.set(id_index, id.clone());
                    let key = if batch.key_field == id_index { Some(id.to_text(&model.formats)) } else { key };
                    if careful {
                        match self.write_carefully(turn, model, None, &write).await? {
                            Ok(own) => {
                                if given_id.is_none() {
                                    numbering.take();
                                }
                                numbering.given(&id);
                                let known_row = Known::inserted(model, own, id, &write);
                                if let Some(key) = key {
                                    known.insert(key, known_row);
                                }
                                Some(RowOutcome::Created(Some(own)))
                            }
                            Err(refusal) => Some(RowOutcome::Rejected(refusal)),
                        }
                    } else {
                        if given_id.is_none() {
                            numbering.take();
                        }
                        numbering.given(&id);
                        if !pending.takes_insert(&write) {
                            let sent = self.send(turn, model, &mut pending).await?;
                            remember(&mut known, &mut outcomes, sent);
                        }
                        pending.push_insert(slot, key, id, write);
                        None
                    }
                }
            };
            if let Some((own, write)) = update {
                if !pending.takes_update(own, &write) {
                    let sent = self.send(turn, model, &mut pending).await?;
                    remember(&mut known, &mut outcomes, sent);
                }
                pending.push_update(slot, own, write);
            }
            outcomes.push(outcome);
        }
        let sent = self.send(turn, model, &mut pending).await?;
        remember(&mut known, &mut outcomes, sent);
        Ok(outcomes.into_iter().map(|o| o.expect("every row has an outcome once the last group is sent")).collect())
    }

    /// Writes one row in a savepoint of its own: its internal key, or why it was refused.
    async fn write_carefully(&self, turn: &mut Turn, model: &Model, own: Option<i64>, write: &Write) -> StoreResult<Result<i64, Refusal>> {
        sqlx::query("SAVEPOINT herald_row").execute(&mut **turn).await?;
        match self.write_one(turn, model, own, write).await {
            Ok(own) => {
                sqlx::query("RELEASE SAVEPOINT herald_row").execute(&mut **turn).await?;
                Ok(Ok(own))
            }
            Err(e) if statement_failed(&e) => {
                sqlx::query("ROLLBACK TO SAVEPOINT herald_row").execute(&mut **turn).await?;
                sqlx::query("RELEASE SAVEPOINT herald_row").execute(&mut **turn).await?;
                Ok(Err(self.why_refused(turn, model, write, own, e).await?))
            }
            Err(e) => Err(e),
        }
    }

    /// The recipients the batch's keys name, by key (as text).
    async fn known_keys(&self, turn: &mut Turn, model: &Model, batch: &ImportBatch<'_>) -> StoreResult<HashMap<String, Known>> {
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
        let names: Vec<String> = fields.iter().map(|f| column(&f.name)).collect();
        for chunk in keys.chunks(ROWS_PER_STATEMENT) {
            let marks = vec!["?"; chunk.len()].join(", ");
            let sql =
                self.db.sql_string(format!("SELECT _id, {} FROM recipients WHERE {} IN ({marks})", names.join(", "), column(&key.name)));
            // See `plans_cached`: planned for the table's size at each run, not for its size
            // when the first import began.
            let mut query = sqlx::query(&sql).persistent(self.plans_cached());
            for v in chunk {
                query = bind_typed(query, v, key.ty);
            }
            for row in query.fetch_all(&mut **turn).await? {
                let values = fields.iter().enumerate().map(|(i, f)| decode(&row, i + 1, f.ty)).collect::<Result<Vec<_>, _>>()?;
                let own = row.try_get::<i64, _>(0)?;
                known.insert(values[batch.key_field].to_text(&model.formats), Known { own, id: values[id_index].clone(), values });
            }
        }
        Ok(known)
    }
}

/// A write of `assignments`, sorted by field (so that rows setting the same fields share a
/// statement).
fn sorted(assignments: impl Iterator<Item = Assignment>) -> Write {
    let mut assignments: Vec<Assignment> = assignments.collect();
    assignments.sort_by_key(|(i, _)| *i);
    let (columns, values) = assignments.into_iter().unzip();
    Write { columns, values }
}

/// Notes what a sent insert group created: each row's outcome, and its recipient by key.
fn remember(known: &mut HashMap<String, Known>, outcomes: &mut [Option<RowOutcome>], sent: Sent) {
    for (slot, key, row) in sent {
        outcomes[slot] = Some(RowOutcome::Created(Some(row.own)));
        if let Some(key) = key {
            known.insert(key, row);
        }
    }
}
