//! Recipients (Person Data), their events and their communication history.

use chrono::NaiveDateTime;
use futures_util::future::BoxFuture;
use futures_util::StreamExt;
use sqlx::any::AnyRow;
use sqlx::Row;

use super::codec::{bind, bind_all, bind_typed, decode, AnyQuery};
use super::schema::insertion_order;
use super::{conflict_on_unique, select_list, Conn, TenantDb};
use crate::model::{column, FieldType, Model, Value};
use crate::rsql::{Condition, Dialect};
use crate::store::group::Turn;
use crate::store::{StoreError, StoreResult};
use crate::values::value::MAX_EXACT_NUMBER;

/// A recipient: its internal key and its Person Data values in the model's field order.
#[derive(Debug, Clone)]
pub struct Recipient {
    pub key: i64,
    pub values: Vec<Value>,
}

#[derive(Debug, Clone)]
pub struct EventRecord {
    pub event: String,
    pub achieved_at: NaiveDateTime,
}

/// A field index into the model's Person Data and the value to store.
pub type Assignment = (usize, Value);

pub(super) fn decode_recipient(model: &Model, row: &AnyRow) -> Result<Recipient, sqlx::Error> {
    decode_typed(model.def.person_data.iter().map(|f| f.ty), row)
}

/// A recipient read with `returning`'s columns, its fields of these types.
fn decode_typed(types: impl ExactSizeIterator<Item = FieldType>, row: &AnyRow) -> Result<Recipient, sqlx::Error> {
    decode_typed_from(types, row, 0)
}

/// A recipient read with `returning`'s columns from column `first` on.
pub(super) fn decode_typed_from(
    types: impl ExactSizeIterator<Item = FieldType>,
    row: &AnyRow,
    first: usize,
) -> Result<Recipient, sqlx::Error> {
    let mut values = Vec::with_capacity(types.len());
    for (i, ty) in types.enumerate() {
        values.push(decode(row, first + i + 1, ty)?);
    }
    Ok(Recipient { key: row.try_get(first)?, values })
}

/// Binds the values of `assignments`, each as its field's type.
fn bind_assignments<'q>(mut q: AnyQuery<'q>, model: &Model, assignments: &[Assignment]) -> AnyQuery<'q> {
    for (i, v) in assignments {
        q = bind_typed(q, v, model.def.person_data[*i].ty);
    }
    q
}

pub(super) fn select(model: &Model) -> String {
    format!("SELECT {} FROM recipients", returning(model))
}

/// The columns a recipient is read from: its key, then every Person Data field in model order.
pub(super) fn returning(model: &Model) -> String {
    select_list("_id", model.def.person_data.iter().map(|f| f.name.as_str()))
}

impl TenantDb {
    /// Recipients matching `condition` (all without one), in creation order, as a stream: rows
    /// are decoded as they come, so memory stays flat whatever the selection's size.
    pub fn recipients_stream<'a>(
        &'a self,
        reader: &'a mut Conn,
        model: &'a Model,
        condition: Option<&'a Condition>,
        sql: &'a str,
    ) -> impl futures_util::Stream<Item = StoreResult<Recipient>> + Send + 'a {
        let binds = condition.map(|c| c.binds.as_slice()).unwrap_or_default();
        bind_all(sqlx::query(sql), binds).fetch(&mut **reader).map(move |row| Ok(decode_recipient(model, &row?)?))
    }

    /// `recipients_stream` for a reader that holds no model: the fields' types and the filter's
    /// values (`batches.rs`).
    pub(super) fn typed_recipients_stream<'a>(
        &'a self,
        reader: &'a mut Conn,
        types: &'a [FieldType],
        binds: &'a [Value],
        sql: &'a str,
    ) -> impl futures_util::Stream<Item = StoreResult<Recipient>> + Send + 'a {
        bind_all(sqlx::query(sql), binds).fetch(&mut **reader).map(move |row| Ok(decode_typed(types.iter().copied(), &row?)?))
    }

    /// The SQL of `recipients_stream`.
    pub fn recipients_sql(&self, model: &Model, condition: Option<&Condition>) -> String {
        let mut sql = select(model);
        if let Some(c) = condition {
            sql.push_str(" WHERE ");
            sql.push_str(&c.sql);
        }
        sql.push_str(" ORDER BY _id");
        self.db.sql_string(sql)
    }

    /// The recipients with these keys, in key order; keys of deleted recipients are skipped.
    pub async fn recipients_by_keys(&self, model: &Model, keys: &[i64]) -> StoreResult<Vec<Recipient>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let sql = self.db.sql_string(format!("{} WHERE _id IN ({}) ORDER BY _id", select(model), vec!["?"; keys.len()].join(", ")));
        let mut q = sqlx::query(&sql);
        for k in keys {
            q = q.bind(*k);
        }
        let rows = q.fetch_all(&mut *self.db.reader().await?).await?;
        Ok(rows.iter().map(|r| decode_recipient(model, r)).collect::<Result<_, _>>()?)
    }

    /// Whether recipient `key` satisfies `condition` (target groups, promotions).
    pub async fn recipient_matches(&self, key: i64, condition: &Condition) -> StoreResult<bool> {
        let sql = self.db.sql_string(format!("SELECT 1 FROM recipients WHERE _id = ? AND ({})", condition.sql));
        let row = bind_all(sqlx::query(&sql).bind(key), &condition.binds).fetch_optional(&mut *self.db.reader().await?).await?;
        Ok(row.is_some())
    }

    /// The keys of up to `limit` recipients after key `after` that satisfy `condition` (all when
    /// none), in key order: a scheduled flow's sweep, one batch at a time.
    pub async fn recipient_keys_after(&self, condition: Option<&Condition>, after: i64, limit: i64) -> StoreResult<Vec<i64>> {
        let filter = condition.map_or("1=1".to_string(), |c| format!("({})", c.sql));
        let sql = self.db.sql_string(format!("SELECT _id FROM recipients WHERE _id > ? AND {filter} ORDER BY _id LIMIT ?"));
        let query = bind_all(sqlx::query(&sql).bind(after), condition.map_or(&[][..], |c| &c.binds));
        let rows = query.bind(limit).fetch_all(&mut *self.db.reader().await?).await?;
        Ok(rows.iter().map(|r| r.get::<i64, _>(0)).collect())
    }

    /// Creates a recipient. A NUMBER Recipient Id left empty gets the next free number. Written
    /// in a turn of the group commit: the answer comes once the recipient is on disk (one
    /// statement writes: the INSERT).
    pub async fn create_recipient(&self, model: &Model, values: Vec<Assignment>) -> StoreResult<Recipient> {
        check_indexed(model, &values)?;
        let mut turn = self.db.group.single_write().await?;
        let result = self.create_in(&mut turn, model, values).await;
        turn.finish(result).await
    }

    async fn create_in(&self, turn: &mut Turn, model: &Model, values: Vec<Assignment>) -> StoreResult<Recipient> {
        let id_index = model.def.recipient_id_index();
        let id_field = &model.def.person_data[id_index];
        let numbered = !values.iter().any(|(i, v)| *i == id_index && !v.is_null());
        if numbered {
            if id_field.ty != FieldType::Number {
                return Err(StoreError::Invalid(format!("the Recipient Id field {} is required", id_field.name)));
            }
            if self.db.dialect == Dialect::Postgres {
                // Writers of other nodes must not take the same next number (this node's writes
                // of the instance take turns in one transaction). Readers are not blocked.
                sqlx::query("LOCK TABLE recipients IN SHARE ROW EXCLUSIVE MODE").execute(&mut **turn).await?;
            }
        } else if let Some((_, Value::Number(n))) = values.iter().find(|(i, _)| *i == id_index) {
            if id_field.ty == FieldType::Number && !crate::values::is_recipient_number(*n) {
                return Err(StoreError::Invalid(format!(
                    "the Recipient Id {} must be a whole number from 1 to {}",
                    id_field.name, MAX_EXACT_NUMBER as i64
                )));
            }
        }
        let values: Vec<Assignment> = values.into_iter().filter(|(i, _)| !(numbered && *i == id_index)).collect();
        let names: Vec<String> = values.iter().map(|(i, _)| column(&model.def.person_data[*i].name)).collect();
        let marks = vec!["?"; names.len()];
        let returning = returning(model);
        let sql = if numbered {
            numbered_insert(self.db.dialect, &names, &id_field.name, &returning)
        } else if names.is_empty() {
            format!("INSERT INTO recipients DEFAULT VALUES RETURNING {returning}")
        } else {
            format!("INSERT INTO recipients ({}) VALUES ({}) RETURNING {returning}", names.join(", "), marks.join(", "))
        };
        let sql = self.db.sql_string(sql);
        match bind_assignments(sqlx::query(&sql), model, &values).fetch_optional(&mut **turn).await {
            Ok(Some(row)) => Ok(decode_recipient(model, &row)?),
            Ok(None) => Err(StoreError::Conflict(format!(
                "no Recipient Id is free above the largest one ({}): give {} explicitly",
                MAX_EXACT_NUMBER as i64, id_field.name
            ))),
            Err(e) => Err(unique_conflict(turn, e, &self.unique_probes(model, &values), None).await),
        }
    }

    /// Sets the given fields of recipient `key`; other fields keep their values.
    pub async fn update_recipient(&self, model: &Model, key: i64, values: Vec<Assignment>) -> StoreResult<Recipient> {
        check_indexed(model, &values)?;
        let gone = || StoreError::Conflict("the recipient was deleted while it was being updated".into());
        if values.is_empty() {
            return self.recipient_by_key(model, key).await?.ok_or_else(gone);
        }
        self.update_where(model, "_id", Which::Key(key), &values, Some(key)).await?.ok_or_else(gone)
    }

    /// Sets `values` (not empty, not the Recipient Id) on the recipient whose unique field
    /// `field` holds `value`, in one statement; `None` when no recipient holds it.
    pub async fn update_recipient_by(
        &self,
        model: &Model,
        field: usize,
        value: &Value,
        values: Vec<Assignment>,
    ) -> StoreResult<Option<Recipient>> {
        check_indexed(model, &values)?;
        let name = column(&model.def.person_data[field].name);
        self.update_where(model, &name, Which::Value(value.clone()), &values, None).await
    }

    /// `UPDATE ... WHERE {column} = ? RETURNING` the recipient, in a turn run by the group
    /// commit's writer (the hot path of a step's writes: `store::group` says why).
    async fn update_where(
        &self,
        model: &Model,
        column_name: &str,
        which: Which,
        values: &[Assignment],
        own: Option<i64>,
    ) -> StoreResult<Option<Recipient>> {
        let sets: Vec<String> = values.iter().map(|(i, _)| format!("{} = ?", column(&model.def.person_data[*i].name))).collect();
        let sql =
            self.db.sql_string(format!("UPDATE recipients SET {} WHERE {column_name} = ? RETURNING {}", sets.join(", "), returning(model)));
        let typed: Vec<(Value, FieldType)> = values.iter().map(|(i, v)| (v.clone(), model.def.person_data[*i].ty)).collect();
        let probes = self.unique_probes(model, values);
        let row = self
            .db
            .group
            .write(true, move |turn: &mut Turn| -> BoxFuture<'_, StoreResult<Option<AnyRow>>> {
                Box::pin(async move {
                    let mut query = sqlx::query(&sql);
                    for (v, ty) in &typed {
                        query = bind_typed(query, v, *ty);
                    }
                    let query = match &which {
                        Which::Key(key) => query.bind(*key),
                        Which::Value(value) => bind(query, value),
                    };
                    match query.fetch_optional(&mut **turn).await {
                        Ok(row) => Ok(row),
                        Err(e) => Err(unique_conflict(turn, e, &probes, own).await),
                    }
                })
            })
            .await?;
        Ok(row.map(|r| decode_recipient(model, &r)).transpose()?)
    }

    pub async fn delete_recipient(&self, key: i64) -> StoreResult<bool> {
        let sql = self.db.sql("DELETE FROM recipients WHERE _id = ?").into_owned();
        (self.db.group)
            .write(true, move |turn: &mut Turn| -> BoxFuture<'_, StoreResult<bool>> {
                Box::pin(async move { Ok(sqlx::query(&sql).bind(key).execute(&mut **turn).await?.rows_affected() > 0) })
            })
            .await
    }

    /// The unique fields `values` set, each with how to find the recipient holding its value.
    fn unique_probes(&self, model: &Model, values: &[Assignment]) -> Vec<UniqueProbe> {
        let unique = values.iter().filter(|(i, v)| model.def.person_data[*i].unique && !v.is_null());
        unique
            .map(|(i, v)| {
                let name = &model.def.person_data[*i].name;
                UniqueProbe {
                    holder: self.db.sql_string(format!("SELECT _id FROM recipients WHERE {} = ? LIMIT 1", column(name))),
                    value: v.clone(),
                    taken: format!("a recipient with {name} '{}' already exists", v.to_text(&model.formats)),
                }
            })
            .collect()
    }

    pub async fn achieve_event(&self, key: i64, event: &str, at: NaiveDateTime) -> StoreResult<()> {
        let sql = self.db.sql("INSERT INTO _events (_recipient, event, achieved_at) VALUES (?, ?, ?)").into_owned();
        let (event, at) = (event.to_string(), at.format("%Y-%m-%dT%H:%M:%S%.3f").to_string());
        (self.db.group)
            .write(true, move |turn: &mut Turn| -> BoxFuture<'_, StoreResult<()>> {
                Box::pin(async move {
                    sqlx::query(&sql).bind(key).bind(event).bind(at).execute(&mut **turn).await?;
                    Ok(())
                })
            })
            .await
    }

    pub async fn events(&self, key: i64) -> StoreResult<Vec<EventRecord>> {
        let sql = format!(
            "SELECT event, achieved_at FROM _events WHERE _recipient = ? ORDER BY achieved_at, {}",
            insertion_order(self.db.dialect)
        );
        let rows = sqlx::query(&self.db.sql_string(sql)).bind(key).fetch_all(&mut *self.db.reader().await?).await?;
        rows.iter()
            .map(|r| {
                let at = decode(r, 1, FieldType::Timestamp)?;
                let Value::Timestamp(achieved_at) = at else { unreachable!("not null") };
                Ok(EventRecord { event: r.get(0), achieved_at })
            })
            .collect()
    }
}

/// The recipient an update is for: its key, or the value of the unique field the update names.
enum Which {
    Key(i64),
    Value(Value),
}

/// A unique value a write sets: the query of the recipient holding it, and the conflict's message.
struct UniqueProbe {
    holder: String,
    value: Value,
    taken: String,
}

/// Turns a unique violation into a conflict naming the field and value that are taken (read
/// in the turn: the recipient holding it may be in the same group, not yet committed).
async fn unique_conflict(turn: &mut Turn, e: sqlx::Error, probes: &[UniqueProbe], own: Option<i64>) -> StoreError {
    if !matches!(&e, sqlx::Error::Database(d) if d.is_unique_violation()) {
        return e.into();
    }
    if turn.undo().await.is_ok() {
        for probe in probes {
            if let Ok(Some(row)) = bind(sqlx::query(&probe.holder), &probe.value).fetch_optional(&mut **turn).await {
                if Some(row.get::<i64, _>(0)) != own {
                    return StoreError::Conflict(probe.taken.clone());
                }
            }
        }
    }
    StoreError::Conflict("a unique Person Data value is already taken".into())
}

/// An INSERT of `names` (bound in order) that numbers the recipient: the next number is read and
/// taken by the INSERT itself, the largest Recipient Id `id_name` (floored: ids stored before the
/// range was enforced may be fractional) plus one, or no row when that would leave the exact
/// range. MAX as a scalar subquery: SQLite reads it from the index's end only there (in a FROM
/// subquery it scans the whole index).
pub(super) fn numbered_insert(dialect: Dialect, names: &[String], id_name: &str, returning: &str) -> String {
    let id = column(id_name);
    let next = match dialect {
        Dialect::Sqlite => "CAST(m AS INTEGER) + 1",
        Dialect::Postgres => "FLOOR(m) + 1",
    };
    let mut selected = vec!["?".to_string(); names.len()];
    selected.push(format!("CASE WHEN m IS NULL OR m < 1 THEN 1 ELSE {next} END"));
    let mut names = names.to_vec();
    names.push(id.clone());
    format!(
        "INSERT INTO recipients ({}) SELECT {} FROM (SELECT (SELECT MAX({id}) FROM recipients) AS m) AS largest \
         WHERE m IS NULL OR m < {} RETURNING {returning}",
        names.join(", "),
        selected.join(", "),
        MAX_EXACT_NUMBER as i64
    )
}

/// Every Person Data field but a BOOLEAN is indexed (range filters, unique values): its text
/// must fit an index entry.
fn check_indexed(model: &Model, values: &[Assignment]) -> StoreResult<()> {
    for (i, v) in values {
        v.check_indexed().map_err(|e| StoreError::Invalid(format!("Person Data field {} {e}", model.def.person_data[*i].name)))?;
    }
    Ok(())
}

/// The largest value of the NUMBER column `field` (0 for none), read as the double it is stored
/// as: a cast to an integer type would overflow for values beyond 2^63.
async fn largest_id(conn: &mut sqlx::AnyConnection, field: &str) -> StoreResult<f64> {
    let sql = format!("SELECT MAX({}) FROM recipients", column(field));
    Ok(sqlx::query(&sql).fetch_one(&mut *conn).await?.try_get::<Option<f64>, _>(0)?.unwrap_or(0.0))
}

impl TenantDb {
    /// The highest numeric Recipient Id (0 when there is none or it is not a NUMBER).
    pub async fn max_numeric_recipient_id(&self, model: &Model) -> StoreResult<u64> {
        let id = model.def.recipient_id_field();
        if id.ty != FieldType::Number {
            return Ok(0);
        }
        let mut conn = self.db.reader().await?;
        Ok(largest_id(&mut conn, &id.name).await?.max(0.0) as u64)
    }

    /// Inserts complete rows (every Person Data field, in model order) in one transaction, with
    /// multi-row statements. For bulk loads: unique conflicts fail the whole call.
    pub async fn insert_recipients(&self, model: &Model, rows: &[Vec<Value>]) -> StoreResult<()> {
        let fields = &model.def.person_data;
        let names: Vec<String> = fields.iter().map(|f| column(&f.name)).collect();
        // SQLite binds at most 32766 values per statement.
        let per_statement = (30_000 / fields.len().max(1)).clamp(1, 500);
        let row_marks = format!("({})", vec!["?"; fields.len()].join(", "));
        let mut tx = self.db.begin().await?;
        for chunk in rows.chunks(per_statement) {
            let sql = format!("INSERT INTO recipients ({}) VALUES {}", names.join(", "), vec![row_marks.as_str(); chunk.len()].join(", "));
            let sql = self.db.sql_string(sql);
            let mut q = sqlx::query(&sql);
            for row in chunk {
                for (value, field) in row.iter().zip(fields) {
                    q = bind_typed(q, value, field.ty);
                }
            }
            q.execute(&mut *tx).await.map_err(|e| conflict_on_unique(e, || "a generated unique value is already taken".into()))?;
        }
        tx.commit().await?;
        Ok(())
    }
}
