//! The statements an import batch writes its rows with.
//!
//! On the fast path, consecutive rows of one kind (new recipients, or updates) with the same
//! fields are gathered into one multi-row statement (`PendingWrites`): a statement per 500 rows
//! rather than one per row is what makes a million-row import take a minute. The order of the
//! rows is kept (a change of kind, of fields, or a row naming a recipient already waiting in the
//! group sends the group first), so a batch that goes through has written what writing its rows
//! one by one would have. A batch with a failing statement is written again one row at a time
//! (`write_one`), each in a savepoint of its own.

use std::collections::{HashMap, HashSet};

use sqlx::Row;

use super::codec::{bind, bind_typed, decode};
use super::TenantDb;
use crate::model::{column, Model, Value};
use crate::store::group::Turn;
use crate::store::{StoreError, StoreResult};
use crate::values::value::MAX_EXACT_NUMBER;

/// The most rows one multi-row statement carries (and keys one lookup names): large enough that
/// a million-row import is a few thousand statements, small enough that one statement holds a
/// writer's turn for milliseconds, not tens of them.
pub(super) const ROWS_PER_STATEMENT: usize = 500;

/// A recipient the batch knows: its internal key, Recipient Id and Person Data as stored (in
/// model order), so that a row that changes nothing writes nothing.
#[derive(Debug, Clone)]
pub(super) struct Known {
    pub own: i64,
    pub id: Value,
    pub values: Vec<Value>,
}

impl Known {
    /// A recipient a row of the batch created with `write`.
    pub fn inserted(model: &Model, own: i64, id: Value, write: &Write) -> Known {
        let mut values = vec![Value::Null; model.def.person_data.len()];
        for (i, v) in write.columns.iter().zip(&write.values) {
            values[*i] = v.clone();
        }
        Known { own, id, values }
    }

    /// Notes what `write` changed.
    pub fn values_from(&mut self, write: &Write) {
        for (i, v) in write.columns.iter().zip(&write.values) {
            self.values[*i] = v.clone();
        }
    }
}

/// What one row writes: the fields it sets (sorted by field index) and their values.
#[derive(Debug)]
pub(super) struct Write {
    pub columns: Vec<usize>,
    pub values: Vec<Value>,
}

impl Write {
    /// Sets field `index` to `value`, keeping the fields sorted.
    pub fn set(&mut self, index: usize, value: Value) {
        match self.columns.binary_search(&index) {
            Ok(at) => self.values[at] = value,
            Err(at) => {
                self.columns.insert(at, index);
                self.values.insert(at, value);
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Insert,
    Update,
}

/// Rows waiting to be written in one multi-row statement: all of one kind, with the same fields.
#[derive(Default)]
pub(super) struct PendingWrites {
    kind: Option<Kind>,
    columns: Vec<usize>,
    /// Each row's place in the batch, its internal key (an update) or its key (an insert), values.
    rows: Vec<(usize, Pending)>,
    /// The recipients (updates) and keys (inserts) waiting: a row naming one sends the group first.
    owns: HashSet<i64>,
    keys: HashSet<String>,
}

enum Pending {
    Update { own: i64, values: Vec<Value> },
    Insert { key: Option<String>, id: Value, values: Vec<Value> },
}

/// A sent group: where each row of an insert group is now, by its place in the batch.
pub(super) type Sent = Vec<(usize, Option<String>, Known)>;

impl PendingWrites {
    /// Whether a row keyed `key` must wait for the group to be sent (its recipient is in it).
    pub fn holds_key(&self, key: &str) -> bool {
        self.keys.contains(key)
    }

    fn fits(&self, kind: Kind, columns: &[usize], own: Option<i64>) -> bool {
        let per_statement = (30_000 / (columns.len() + 1)).clamp(1, ROWS_PER_STATEMENT);
        self.kind == Some(kind)
            && self.columns == columns
            && self.rows.len() < per_statement
            && own.is_none_or(|own| !self.owns.contains(&own))
    }

    /// Whether an update of `own` with `write` joins the group; when not, send it first.
    pub fn takes_update(&self, own: i64, write: &Write) -> bool {
        self.rows.is_empty() || self.fits(Kind::Update, &write.columns, Some(own))
    }

    pub fn takes_insert(&self, write: &Write) -> bool {
        self.rows.is_empty() || self.fits(Kind::Insert, &write.columns, None)
    }

    pub fn push_update(&mut self, slot: usize, own: i64, write: Write) {
        self.kind = Some(Kind::Update);
        self.columns = write.columns;
        self.owns.insert(own);
        self.rows.push((slot, Pending::Update { own, values: write.values }));
    }

    pub fn push_insert(&mut self, slot: usize, key: Option<String>, id: Value, write: Write) {
        self.kind = Some(Kind::Insert);
        self.columns = write.columns;
        if let Some(key) = &key {
            self.keys.insert(key.clone());
        }
        self.rows.push((slot, Pending::Insert { key, id, values: write.values }));
    }
}

/// Hands out the Recipient Ids of new recipients that leave theirs out, as `POST /recipients`
/// does (one more than the largest, 1 for the first), without a statement per row: the writer
/// holds the table (the group commit's turn; on PostgreSQL, a lock other nodes' writers wait on),
/// so the largest is read once and counted on.
#[derive(Default)]
pub(super) struct Numbering {
    next: Option<f64>,
    /// The largest Recipient Id the batch gave explicitly (not yet in the table when pending).
    largest_given: f64,
}

impl Numbering {
    pub fn given(&mut self, id: &Value) {
        if let Value::Number(n) = id {
            self.largest_given = self.largest_given.max(*n);
            if let Some(next) = self.next.as_mut() {
                *next = next.max(n.floor() + 1.0);
            }
        }
    }

    /// The number the next numbered row would get, or why there is none.
    pub async fn peek(&mut self, db: &TenantDb, turn: &mut Turn, model: &Model) -> StoreResult<Result<f64, String>> {
        let next = match self.next {
            Some(next) => next,
            None => {
                if db.db.dialect == crate::rsql::Dialect::Postgres {
                    // As `create_recipient`: other nodes' writers must not take the same numbers.
                    sqlx::query("LOCK TABLE recipients IN SHARE ROW EXCLUSIVE MODE").execute(&mut **turn).await?;
                }
                let name = &model.def.recipient_id_field().name;
                let sql = format!("SELECT MAX({}) FROM recipients", column(name));
                let largest = sqlx::query(&sql).fetch_one(&mut **turn).await?.try_get::<Option<f64>, _>(0)?.unwrap_or(0.0);
                let largest = largest.max(self.largest_given);
                let next = if largest < 1.0 { 1.0 } else { largest.floor() + 1.0 };
                self.next = Some(next);
                next
            }
        };
        if next > MAX_EXACT_NUMBER {
            let name = &model.def.recipient_id_field().name;
            return Ok(Err(format!("no Recipient Id is free above the largest one ({}): give {name} explicitly", MAX_EXACT_NUMBER as i64)));
        }
        Ok(Ok(next))
    }

    /// Takes the number `peek` gave.
    pub fn take(&mut self) {
        if let Some(next) = self.next.as_mut() {
            *next += 1.0;
        }
    }
}

impl TenantDb {
    /// Whether the statements of a bulk import whose best plan depends on the recipients table's
    /// size may be kept prepared. On PostgreSQL they may not: a named statement gets a generic
    /// plan after five runs, made with the table's size of that moment. One made while the first
    /// import into an instance had written a handful of rows scanned the whole table for each
    /// lookup as the import grew it (measured with 100-row statements: 250-420 ms a lookup, an
    /// import running for minutes). Unnamed statements are planned at each run, with the table's
    /// statistics of that moment. SQLite's planner does not weigh the table's size that way, and
    /// reuse saves its parse.
    pub(super) fn plans_cached(&self) -> bool {
        self.db.dialect == crate::rsql::Dialect::Sqlite
    }

    /// Writes the waiting group; for an insert group, each new recipient's key and where it is.
    pub(super) async fn send(&self, turn: &mut Turn, model: &Model, pending: &mut PendingWrites) -> StoreResult<Sent> {
        let group = std::mem::take(pending);
        match group.kind {
            None => Ok(Vec::new()),
            Some(Kind::Update) => {
                let rows: Vec<(i64, &[Value])> = group
                    .rows
                    .iter()
                    .map(|(_, p)| match p {
                        Pending::Update { own, values } => (*own, values.as_slice()),
                        Pending::Insert { .. } => unreachable!("an update group holds updates"),
                    })
                    .collect();
                self.update_many(turn, model, &group.columns, &rows).await?;
                Ok(Vec::new())
            }
            Some(Kind::Insert) => {
                let values: Vec<&[Value]> = group
                    .rows
                    .iter()
                    .map(|(_, p)| match p {
                        Pending::Insert { values, .. } => values.as_slice(),
                        Pending::Update { .. } => unreachable!("an insert group holds inserts"),
                    })
                    .collect();
                let owns = self.insert_many(turn, model, &group.columns, &values).await?;
                let mut sent = Vec::with_capacity(group.rows.len());
                for (slot, pending) in group.rows {
                    let Pending::Insert { key, id, values } = pending else { unreachable!("an insert group holds inserts") };
                    let own = *owns.get(&id.to_text(&model.formats)).ok_or_else(|| {
                        StoreError::Invalid(format!(
                            "an inserted recipient's Recipient Id {} did not come back",
                            id.to_text(&model.formats)
                        ))
                    })?;
                    let write = Write { columns: group.columns.clone(), values };
                    sent.push((slot, key, Known::inserted(model, own, id, &write)));
                }
                Ok(sent)
            }
        }
    }

    /// One multi-row INSERT per `ROWS_PER_STATEMENT` rows; the internal key of each Recipient Id
    /// (as text).
    async fn insert_many(&self, turn: &mut Turn, model: &Model, columns: &[usize], rows: &[&[Value]]) -> StoreResult<HashMap<String, i64>> {
        let fields = &model.def.person_data;
        let id_field = model.def.recipient_id_field();
        let names: Vec<String> = columns.iter().map(|i| column(&fields[*i].name)).collect();
        let row_marks = format!("({})", vec!["?"; columns.len()].join(", "));
        let mut owns = HashMap::with_capacity(rows.len());
        for chunk in rows.chunks(ROWS_PER_STATEMENT) {
            let sql = format!(
                "INSERT INTO recipients ({}) VALUES {} RETURNING _id, {}",
                names.join(", "),
                vec![row_marks.as_str(); chunk.len()].join(", "),
                column(&id_field.name)
            );
            let sql = self.db.sql_string(sql);
            let mut query = sqlx::query(&sql);
            for row in chunk {
                for (i, v) in columns.iter().zip(row.iter()) {
                    query = bind_typed(query, v, fields[*i].ty);
                }
            }
            for row in query.fetch_all(&mut **turn).await? {
                owns.insert(decode(&row, 1, id_field.ty)?.to_text(&model.formats), row.try_get::<i64, _>(0)?);
            }
        }
        Ok(owns)
    }

    /// One `UPDATE ... FROM (VALUES ...)` for the rows (distinct recipients, the same fields).
    async fn update_many(&self, turn: &mut Turn, model: &Model, columns: &[usize], rows: &[(i64, &[Value])]) -> StoreResult<()> {
        let fields = &model.def.person_data;
        let sets: Vec<String> =
            columns.iter().enumerate().map(|(n, i)| format!("{} = v.column{}", column(&fields[*i].name), n + 2)).collect();
        let row_marks = format!("({})", vec!["?"; columns.len() + 1].join(", "));
        let sql = format!(
            "UPDATE recipients SET {} FROM (VALUES {}) AS v WHERE recipients._id = v.column1",
            sets.join(", "),
            vec![row_marks.as_str(); rows.len()].join(", ")
        );
        let sql = self.db.sql_string(sql);
        // A join on the recipients table: see `plans_cached` for why PostgreSQL plans it afresh.
        let mut query = sqlx::query(&sql).persistent(self.plans_cached());
        for (own, values) in rows {
            query = query.bind(*own);
            for (i, v) in columns.iter().zip(values.iter()) {
                query = bind_typed(query, v, fields[*i].ty);
            }
        }
        query.execute(&mut **turn).await?;
        Ok(())
    }

    /// Writes one row on its own (the careful path): an update of `own`, or an insert. The
    /// internal key of a new recipient.
    pub(super) async fn write_one(&self, turn: &mut Turn, model: &Model, own: Option<i64>, write: &Write) -> StoreResult<i64> {
        let fields = &model.def.person_data;
        let names: Vec<String> = write.columns.iter().map(|i| column(&fields[*i].name)).collect();
        let sql = match own {
            Some(_) => {
                let sets: Vec<String> = names.iter().map(|n| format!("{n} = ?")).collect();
                format!("UPDATE recipients SET {} WHERE _id = ? RETURNING _id", sets.join(", "))
            }
            None => {
                format!("INSERT INTO recipients ({}) VALUES ({}) RETURNING _id", names.join(", "), vec!["?"; names.len()].join(", "))
            }
        };
        let sql = self.db.sql_string(sql);
        let mut query = sqlx::query(&sql);
        for (i, v) in write.columns.iter().zip(&write.values) {
            query = bind_typed(query, v, fields[*i].ty);
        }
        if let Some(own) = own {
            query = query.bind(own);
        }
        Ok(query.fetch_one(&mut **turn).await?.try_get(0)?)
    }

    /// Why a row's statement failed, in the customer's terms: which of its unique values another
    /// recipient holds.
    pub(super) async fn why_refused(
        &self,
        turn: &mut Turn,
        model: &Model,
        write: &Write,
        own: Option<i64>,
        e: StoreError,
    ) -> StoreResult<super::Refusal> {
        let fields = &model.def.person_data;
        for (i, v) in write.columns.iter().zip(&write.values).filter(|(i, v)| fields[**i].unique && !v.is_null()) {
            let name = &fields[*i].name;
            let sql = self.db.sql_string(format!("SELECT _id FROM recipients WHERE {} = ? LIMIT 1", column(name)));
            if let Some(holder) = bind(sqlx::query(&sql), v).fetch_optional(&mut **turn).await? {
                if Some(holder.try_get::<i64, _>(0)?) != own {
                    let message = format!("a recipient with {name} '{}' already exists", v.to_text(&model.formats));
                    return Ok(super::Refusal::of(Some(name), message));
                }
            }
        }
        tracing::debug!(error = %e, "an imported row was refused by the store");
        Ok(super::Refusal::of(None, "the store refused the row (a unique value taken by a row written at the same time?)"))
    }
}
