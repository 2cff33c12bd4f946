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

/// A row to write and, in a One-To-Many table, its recipient's key.
type ScopedRow<'r> = (Option<i64>, &'r [(usize, Value)]);

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
        self.def.identifier_index()
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
        let rows = bind_all(t.bind_scope(sqlx::query(&sql), None), binds).fetch_all(&mut *self.db.reader().await?).await?;
        Ok(rows.iter().map(|r| t.decode(r)).collect::<Result<_, _>>()?)
    }

    pub async fn record(&self, t: &TableRef<'_>, id: &Value) -> StoreResult<Option<Record>> {
        let sql = self.db.sql_string(format!("{} WHERE {}", t.select(), t.scope(true)));
        let row = t.bind_scope(sqlx::query(&sql), Some(id)).fetch_optional(&mut *self.db.reader().await?).await?;
        Ok(row.map(|r| t.decode(&r)).transpose()?)
    }

    /// Creates a record; a record with the same identifier is a conflict.
    pub async fn insert_record(&self, t: &TableRef<'_>, values: &[(usize, Value)]) -> StoreResult<()> {
        let id = identifier_of(t, values)?;
        let mut turn = self.db.group.single_write().await?;
        let done = insert(&mut turn, self.db.dialect, t, values, false)
            .await
            .map_err(|e| conflict_on_unique(e, || format!("a record with {} {} already exists", t.def.identifier().name, id_text(&id))));
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
    pub async fn batch_upsert(
        &self,
        t: &TableRef<'_>,
        entries: Vec<Result<Vec<(usize, Value)>, String>>,
    ) -> StoreResult<Vec<EntryOutcome>> {
        let mut turn = self.db.group.turn().await?;
        let done = self.batch_upsert_in(&mut turn, t, entries).await;
        turn.finish(done).await
    }

    pub(super) async fn batch_upsert_in(
        &self,
        conn: &mut AnyConnection,
        t: &TableRef<'_>,
        entries: Vec<Result<Vec<(usize, Value)>, String>>,
    ) -> StoreResult<Vec<EntryOutcome>> {
        if let Some(outcomes) = upsert_at_once(conn, self.db.dialect, t, &entries).await? {
            return Ok(outcomes);
        }
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

    /// Upserts One-To-Many records of many recipients (each its recipient's key and a record
    /// with its identifier) into table `t` (its `recipient` unused), in order: one multi-row
    /// statement for each run of records with the same fields and no record twice.
    pub(super) async fn upsert_records_of_recipients(
        &self,
        conn: &mut AnyConnection,
        t: &TableRef<'_>,
        records: &[(i64, &[(usize, Value)])],
    ) -> StoreResult<()> {
        let id_index = t.id_index();
        let per_statement = (30_000 / (t.def.fields.len() + 2)).clamp(1, ROWS_PER_STATEMENT);
        let mut run: Vec<ScopedRow<'_>> = Vec::new();
        let (mut fields, mut seen) = (Vec::new(), std::collections::HashSet::new());
        for (recipient, record) in records {
            let shape: Vec<usize> = record.iter().map(|(i, _)| *i).collect();
            let id = record.iter().find(|(i, _)| *i == id_index).map_or(String::new(), |(_, v)| id_key(v));
            let key = (*recipient, id);
            if !run.is_empty() && (shape != fields || seen.contains(&key) || run.len() >= per_statement) {
                insert_rows(conn, self.db.dialect, t, &fields, &run).await?;
                run.clear();
                seen.clear();
            }
            fields = shape;
            seen.insert(key);
            run.push((Some(*recipient), record));
        }
        if !run.is_empty() {
            insert_rows(conn, self.db.dialect, t, &fields, &run).await?;
        }
        Ok(())
    }

    pub async fn delete_record(&self, t: &TableRef<'_>, id: &Value) -> StoreResult<bool> {
        let sql = self.db.sql_string(format!("DELETE FROM {} WHERE {}", t.sql_name, t.scope(true)));
        let mut turn = self.db.group.single_write().await?;
        let done = t.bind_scope(sqlx::query(&sql), Some(id)).execute(&mut *turn).await;
        turn.finish(done).await.map(|d| d.rows_affected() > 0)
    }

    pub async fn batch_delete(&self, t: &TableRef<'_>, ids: Vec<Result<Value, String>>) -> StoreResult<Vec<EntryOutcome>> {
        let sql = self.db.sql_string(format!("DELETE FROM {} WHERE {}", t.sql_name, t.scope(true)));
        let mut turn = self.db.group.turn().await?;
        let done = async {
            let mut outcomes = Vec::with_capacity(ids.len());
            for id in ids {
                outcomes.push(match id {
                    Err(message) => EntryOutcome::Invalid(message),
                    Ok(id) => match t.bind_scope(sqlx::query(&sql), Some(&id)).execute(&mut *turn).await?.rows_affected() {
                        0 => EntryOutcome::NotFound,
                        _ => EntryOutcome::Deleted,
                    },
                });
            }
            Ok::<_, sqlx::Error>(outcomes)
        }
        .await;
        turn.finish(done).await
    }

    /// Deletes every record in scope; returns how many.
    pub async fn truncate(&self, t: &TableRef<'_>) -> StoreResult<u64> {
        let sql = self.db.sql_string(format!("DELETE FROM {} WHERE {}", t.sql_name, t.scope(false)));
        let mut turn = self.db.group.single_write().await?;
        let done = t.bind_scope(sqlx::query(&sql), None).execute(&mut *turn).await;
        turn.finish(done).await.map(|d| d.rows_affected())
    }
}

fn id_text(id: &Value) -> String {
    match id {
        Value::Text(s) => format!("'{s}'"),
        Value::Number(n) => crate::values::value::number_to_json(*n).to_string(),
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

/// Most rows in one multi-row statement (and at most 30,000 bound values: SQLite's limit).
const ROWS_PER_STATEMENT: usize = 500;

/// A batch's fast path: the valid entries written by multi-row upserts (one statement for up to
/// 500 entries with the same fields), inside a savepoint, with each entry's outcome from the
/// identifiers that existed before. `None` when it cannot serve and the batch goes entry by
/// entry: an identifier given twice (the second entry must see the first), or a statement that
/// failed (its savepoint is rolled back; the entry-by-entry path then says which entry).
async fn upsert_at_once(
    conn: &mut AnyConnection,
    dialect: Dialect,
    t: &TableRef<'_>,
    entries: &[Result<Vec<(usize, Value)>, String>],
) -> StoreResult<Option<Vec<EntryOutcome>>> {
    let mut outcomes: Vec<Option<EntryOutcome>> = Vec::with_capacity(entries.len());
    let mut ids: Vec<(usize, Value)> = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        match entry.as_ref().map(|values| identifier_of(t, values)) {
            Err(message) => outcomes.push(Some(EntryOutcome::Invalid(message.clone()))),
            Ok(Err(e)) => outcomes.push(Some(EntryOutcome::Invalid(e.to_string()))),
            Ok(Ok(id)) => {
                outcomes.push(None);
                ids.push((i, id));
            }
        }
    }
    let mut keys: Vec<String> = ids.iter().map(|(_, id)| id_key(id)).collect();
    keys.sort_unstable();
    if keys.windows(2).any(|w| w[0] == w[1]) {
        return Ok(None);
    }
    let mut sp = sqlx::Connection::begin(&mut *conn).await?;
    let existing = match existing_ids(&mut sp, dialect, t, &ids).await {
        Ok(found) => found,
        Err(e) => return at_once_failed(e),
    };
    // Entries with the same fields, in the order they came, share statements.
    let mut shapes: Vec<(Vec<usize>, Vec<usize>)> = Vec::new();
    for (i, _) in &ids {
        let fields: Vec<usize> = entries[*i].as_ref().expect("valid").iter().map(|(f, _)| *f).collect();
        match shapes.iter_mut().find(|(shape, _)| *shape == fields) {
            Some((_, members)) => members.push(*i),
            None => shapes.push((fields, vec![*i])),
        }
    }
    let per_statement = (30_000 / (t.def.fields.len() + 1)).clamp(1, ROWS_PER_STATEMENT);
    for (fields, members) in &shapes {
        for chunk in members.chunks(per_statement) {
            let rows: Vec<ScopedRow<'_>> = chunk.iter().map(|i| (t.recipient, entries[*i].as_ref().expect("valid").as_slice())).collect();
            if let Err(e) = insert_rows(&mut sp, dialect, t, fields, &rows).await {
                return at_once_failed(e);
            }
        }
    }
    sp.commit().await?;
    for (i, id) in &ids {
        outcomes[*i] = Some(if existing.contains(&id_key(id)) { EntryOutcome::Updated } else { EntryOutcome::Created });
    }
    Ok(Some(outcomes.into_iter().map(|o| o.expect("every entry has an outcome")).collect()))
}

/// The fast path could not serve: the batch goes entry by entry, unless the database is gone.
fn at_once_failed(e: sqlx::Error) -> StoreResult<Option<Vec<EntryOutcome>>> {
    use crate::store::Unavailable;
    if e.is_unavailable() {
        return Err(e.into());
    }
    tracing::debug!(error = %e, "a batch goes entry by entry");
    Ok(None)
}

/// An identifier as a key to compare (numbers by their bits: a NUMBER 1 and a text "1" differ).
fn id_key(id: &Value) -> String {
    match id {
        Value::Number(n) => format!("n{}", n.to_bits()),
        Value::Text(s) => format!("t{s}"),
        other => format!("{other:?}"),
    }
}

/// Which of `ids` the table in scope holds already.
async fn existing_ids(
    conn: &mut AnyConnection,
    dialect: Dialect,
    t: &TableRef<'_>,
    ids: &[(usize, Value)],
) -> Result<std::collections::HashSet<String>, sqlx::Error> {
    let id_field = t.def.identifier();
    let mut found = std::collections::HashSet::new();
    for chunk in ids.chunks(ROWS_PER_STATEMENT) {
        let sql = format!(
            "SELECT {} FROM {} WHERE {} AND {} IN ({})",
            select_list("0", [id_field.name.as_str()].into_iter()),
            t.sql_name,
            t.scope(false),
            column(&id_field.name),
            vec!["?"; chunk.len()].join(", ")
        );
        let sql = sql_for(dialect, &sql);
        let mut q = t.bind_scope(sqlx::query(&sql), None);
        for (_, id) in chunk {
            q = bind_typed(q, id, id_field.ty);
        }
        for row in q.fetch_all(&mut *conn).await? {
            found.insert(id_key(&decode(&row, 1, id_field.ty)?));
        }
    }
    Ok(found)
}

/// One multi-row upsert of `rows`, which all set `fields` (model indexes, in this order): a row
/// whose identifier exists gets the fields sent, others kept.
async fn insert_rows(
    conn: &mut AnyConnection,
    dialect: Dialect,
    t: &TableRef<'_>,
    fields: &[usize],
    rows: &[ScopedRow<'_>],
) -> Result<(), sqlx::Error> {
    let mut names: Vec<String> = fields.iter().map(|i| column(&t.def.fields[*i].name)).collect();
    let mut conflict = vec![column(&t.def.identifier().name)];
    // A One-To-Many table's rows each name their recipient.
    if rows.iter().any(|(recipient, _)| recipient.is_some()) {
        names.insert(0, "_recipient".into());
        conflict.insert(0, "_recipient".into());
    }
    let id_index = t.id_index();
    let sets: Vec<String> =
        fields.iter().filter(|i| **i != id_index).map(|i| format!("{0} = excluded.{0}", column(&t.def.fields[*i].name))).collect();
    let action = if sets.is_empty() { "NOTHING".to_string() } else { format!("UPDATE SET {}", sets.join(", ")) };
    let row_marks = format!("({})", vec!["?"; names.len()].join(", "));
    let sql = format!(
        "INSERT INTO {} ({}) VALUES {} ON CONFLICT ({}) DO {action}",
        t.sql_name,
        names.join(", "),
        vec![row_marks.as_str(); rows.len()].join(", "),
        conflict.join(", ")
    );
    let sql = sql_for(dialect, &sql);
    let mut q = sqlx::query(&sql);
    for (recipient, row) in rows {
        if let Some(r) = recipient {
            q = q.bind(*r);
        }
        for (i, v) in row.iter() {
            q = bind_typed(q, v, t.def.fields[*i].ty);
        }
    }
    q.execute(&mut *conn).await?;
    Ok(())
}
