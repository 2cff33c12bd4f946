//! Records of One-To-Many tables (scoped to one recipient) and Global Data Tables (instance-wide).
//! One implementation serves both: a `TableRef` says which table and, for One-To-Many, whose.

use sqlx::any::AnyRow;
use sqlx::AnyConnection;

use super::codec::{bind, bind_all, bind_typed, decode, AnyQuery};
use super::{conflict_on_unique, select_list, TenantDb};
use crate::model::{column, FieldType, TableDef, Value};
use crate::rsql::{Condition, Dialect};
use crate::store::db::sql_for;
use crate::store::{StoreError, StoreResult};

/// A record's values in the table's field order.
pub type Record = Vec<Value>;

/// Which table, and for a One-To-Many table, which recipient's records.
pub struct TableRef<'a> {
    pub sql_name: String,
    pub def: &'a TableDef,
    pub recipient: Option<i64>,
}

/// What an upsert did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upserted {
    Created,
    Updated,
}

/// The outcome of one entry of a batch.
#[derive(Debug, Clone, PartialEq)]
pub enum EntryOutcome {
    Created,
    Updated,
    Deleted,
    NotFound,
    Invalid(String),
}

impl TableRef<'_> {
    fn id_index(&self) -> usize {
        self.def.fields.iter().position(|f| f.identifier).expect("validated")
    }

    /// `WHERE` for the scope (and the identifier when `with_id`), with the scope's bind first.
    fn scope(&self, with_id: bool) -> String {
        let mut parts = Vec::new();
        if self.recipient.is_some() {
            parts.push("_recipient = ?".to_string());
        }
        if with_id {
            parts.push(format!("{} = ?", column(&self.def.identifier().name)));
        }
        if parts.is_empty() {
            "1=1".into()
        } else {
            parts.join(" AND ")
        }
    }

    /// Binds what `scope` asks for: the recipient's key (an integer), then the identifier.
    fn bind_scope<'q>(&self, mut q: AnyQuery<'q>, id: Option<&Value>) -> AnyQuery<'q> {
        if let Some(r) = self.recipient {
            q = q.bind(r);
        }
        match id {
            Some(id) => bind(q, id),
            None => q,
        }
    }

    fn select(&self) -> String {
        // The leading key column is not used for records.
        format!("SELECT {} FROM {}", select_list("0", self.def.fields.iter().map(|f| f.name.as_str())), self.sql_name)
    }

    fn decode(&self, row: &AnyRow) -> Result<Record, sqlx::Error> {
        self.def.fields.iter().enumerate().map(|(i, f)| decode(row, i + 1, f.ty)).collect()
    }
}

fn identifier_of(t: &TableRef<'_>, values: &[(usize, Value)]) -> StoreResult<Value> {
    let id_index = t.id_index();
    let name = &t.def.identifier().name;
    let id = values
        .iter()
        .find(|(i, v)| *i == id_index && !v.is_null())
        .map(|(_, v)| v.clone())
        .ok_or_else(|| StoreError::Invalid(format!("the identifier field {name} is required")))?;
    id.check_indexed().map_err(|e| StoreError::Invalid(format!("the identifier field {name} {e}")))?;
    Ok(id)
}

impl TenantDb {
    /// Records of the table in scope, matching `condition` when given, ordered by identifier.
    pub async fn records(&self, t: &TableRef<'_>, condition: Option<&Condition>) -> StoreResult<Vec<Record>> {
        let mut sql = format!("{} WHERE {}", t.select(), t.scope(false));
        if let Some(c) = condition {
            sql.push_str(&format!(" AND ({})", c.sql));
        }
        sql.push_str(&format!(" ORDER BY {}", column(&t.def.identifier().name)));
        let sql = self.db.sql_string(sql);
        let binds = condition.map(|c| c.binds.as_slice()).unwrap_or_default();
        let rows = bind_all(t.bind_scope(sqlx::query(&sql), None), binds).fetch_all(&self.db.read).await?;
        Ok(rows.iter().map(|r| t.decode(r)).collect::<Result<_, _>>()?)
    }

    pub async fn record(&self, t: &TableRef<'_>, id: &Value) -> StoreResult<Option<Record>> {
        let sql = self.db.sql_string(format!("{} WHERE {}", t.select(), t.scope(true)));
        let row = t.bind_scope(sqlx::query(&sql), Some(id)).fetch_optional(&self.db.read).await?;
        Ok(row.map(|r| t.decode(&r)).transpose()?)
    }

    /// Creates a record; a record with the same identifier is a conflict.
    pub async fn insert_record(&self, t: &TableRef<'_>, values: &[(usize, Value)]) -> StoreResult<()> {
        let id = identifier_of(t, values)?;
        let mut turn = self.db.group.single_write().await?;
        let done = insert(&mut turn, self.db.dialect, t, values, false).await.map_err(|e| {
            conflict_on_unique(e, || {
                format!("a record with {} {} already exists", t.def.identifier().name, id_text(&id))
            })
        });
        turn.finish(done).await.map(|_| ())
    }

    /// Creates the record, or sets the given fields of the record with the same identifier.
    pub async fn upsert_record(&self, t: &TableRef<'_>, values: &[(usize, Value)]) -> StoreResult<Upserted> {
        let mut turn = self.db.group.single_write().await?;
        let done = upsert(&mut turn, self.db.dialect, t, values).await;
        turn.finish(done).await
    }

    /// Upserts each entry on its own (a savepoint each): an entry that fails leaves the others.
    /// The batch is one turn of the group commit: one transaction, shared with other writes.
    pub async fn batch_upsert(&self, t: &TableRef<'_>, entries: Vec<Result<Vec<(usize, Value)>, String>>) -> StoreResult<Vec<EntryOutcome>> {
        let mut turn = self.db.group.turn().await?;
        let done = self.batch_upsert_in(&mut turn, t, entries).await;
        turn.finish(done).await
    }

    async fn batch_upsert_in(&self, conn: &mut AnyConnection, t: &TableRef<'_>, entries: Vec<Result<Vec<(usize, Value)>, String>>) -> StoreResult<Vec<EntryOutcome>> {
        let mut outcomes = Vec::with_capacity(entries.len());
        for entry in entries {
            let outcome = match entry {
                Err(message) => EntryOutcome::Invalid(message),
                Ok(values) => {
                    let mut sp = sqlx::Connection::begin(&mut *conn).await?;
                    match upsert(&mut sp, self.db.dialect, t, &values).await {
                        Ok(done) => {
                            sp.commit().await?;
                            match done {
                                Upserted::Created => EntryOutcome::Created,
                                Upserted::Updated => EntryOutcome::Updated,
                            }
                        }
                        Err(StoreError::Db(e)) => return Err(StoreError::Db(e)),
                        Err(e) => EntryOutcome::Invalid(e.to_string()),
                    }
                }
            };
            outcomes.push(outcome);
        }
        Ok(outcomes)
    }

    pub async fn delete_record(&self, t: &TableRef<'_>, id: &Value) -> StoreResult<bool> {
        let sql = self.db.sql_string(format!("DELETE FROM {} WHERE {}", t.sql_name, t.scope(true)));
        let mut turn = self.db.group.single_write().await?;
        let done = t.bind_scope(sqlx::query(&sql), Some(id)).execute(&mut *turn).await;
        turn.finish(done.map_err(StoreError::from)).await.map(|d| d.rows_affected() > 0)
    }

    pub async fn batch_delete(&self, t: &TableRef<'_>, ids: Vec<Result<Value, String>>) -> StoreResult<Vec<EntryOutcome>> {
        let sql = self.db.sql_string(format!("DELETE FROM {} WHERE {}", t.sql_name, t.scope(true)));
        let mut turn = self.db.group.turn().await?;
        let mut outcomes = Vec::with_capacity(ids.len());
        let mut failed = None;
        for id in ids {
            outcomes.push(match id {
                Err(message) => EntryOutcome::Invalid(message),
                Ok(id) => match t.bind_scope(sqlx::query(&sql), Some(&id)).execute(&mut *turn).await {
                    Ok(done) if done.rows_affected() > 0 => EntryOutcome::Deleted,
                    Ok(_) => EntryOutcome::NotFound,
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                },
            });
        }
        let done = match failed {
            Some(e) => Err(e.into()),
            None => Ok(outcomes),
        };
        turn.finish(done).await
    }

    /// Deletes every record in scope; returns how many.
    pub async fn truncate(&self, t: &TableRef<'_>) -> StoreResult<u64> {
        let sql = self.db.sql_string(format!("DELETE FROM {} WHERE {}", t.sql_name, t.scope(false)));
        let mut turn = self.db.group.single_write().await?;
        let done = t.bind_scope(sqlx::query(&sql), None).execute(&mut *turn).await;
        turn.finish(done.map_err(StoreError::from)).await.map(|d| d.rows_affected())
    }
}

fn id_text(id: &Value) -> String {
    match id {
        Value::Text(s) => format!("'{s}'"),
        Value::Number(n) => crate::model::value::number_to_json(*n).to_string(),
        other => format!("{other:?}"),
    }
}

/// Inserts a record; with `unless_exists`, a record with the same identifier is left as it is
/// and `false` returned (atomically, whoever else writes), otherwise it is a unique violation.
async fn insert(
    conn: &mut AnyConnection,
    dialect: Dialect,
    t: &TableRef<'_>,
    values: &[(usize, Value)],
    unless_exists: bool,
) -> Result<bool, sqlx::Error> {
    let mut names: Vec<String> = values.iter().map(|(i, _)| column(&t.def.fields[*i].name)).collect();
    if t.recipient.is_some() {
        names.insert(0, "_recipient".into());
    }
    let mut sql = format!("INSERT INTO {} ({}) VALUES ({})", t.sql_name, names.join(", "), vec!["?"; names.len()].join(", "));
    if unless_exists {
        sql.push_str(" ON CONFLICT DO NOTHING");
    }
    let sql = sql_for(dialect, &sql);
    let mut q = sqlx::query(&sql);
    if let Some(r) = t.recipient {
        q = q.bind(r);
    }
    for (i, v) in values {
        q = bind_typed(q, v, t.def.fields[*i].ty);
    }
    Ok(q.execute(&mut *conn).await?.rows_affected() > 0)
}

async fn upsert(conn: &mut AnyConnection, dialect: Dialect, t: &TableRef<'_>, values: &[(usize, Value)]) -> StoreResult<Upserted> {
    let id = identifier_of(t, values)?;
    if insert(conn, dialect, t, values, true).await? {
        return Ok(Upserted::Created);
    }
    let id_index = t.id_index();
    let sets: Vec<(String, &Value, FieldType)> = values
        .iter()
        .filter(|(i, _)| *i != id_index)
        .map(|(i, v)| (format!("{} = ?", column(&t.def.fields[*i].name)), v, t.def.fields[*i].ty))
        .collect();
    if !sets.is_empty() {
        let sql = format!(
            "UPDATE {} SET {} WHERE {}",
            t.sql_name,
            sets.iter().map(|(s, _, _)| s.as_str()).collect::<Vec<_>>().join(", "),
            t.scope(true)
        );
        let sql = sql_for(dialect, &sql);
        let mut q = sqlx::query(&sql);
        for (_, v, ty) in &sets {
            q = bind_typed(q, v, *ty);
        }
        t.bind_scope(q, Some(&id)).execute(&mut *conn).await?;
    }
    Ok(Upserted::Updated)
}
