//! Exports with One-To-Many records: the recipients a filter selects, page by page, each page's
//! recipients read with their records, all inside one read-only transaction, so the export is one
//! snapshot (rows and records written meanwhile are in it whole or not at all) although it is
//! many statements. SQLite's WAL gives a read transaction its snapshot from its first read;
//! PostgreSQL's is asked for (`REPEATABLE READ`).

use std::collections::HashMap;

use sqlx::{Any, AnyConnection, Row, Transaction};

use super::codec::{bind_all, decode};
use super::recipients::decode_recipient;
use super::{otm_table, select_list, Conn, Recipient, Record, TenantDb};
use crate::model::{column, Model};
use crate::rsql::{Condition, Dialect};
use crate::store::StoreResult;

/// A recipient and its records of each table an export asked for (in the order asked).
pub type RecipientWithRecords = (Recipient, Vec<Vec<Record>>);

impl TenantDb {
    /// Starts the read transaction of a paged export on `reader`.
    pub async fn begin_snapshot<'c>(&self, reader: &'c mut Conn) -> StoreResult<Transaction<'c, Any>> {
        let mut tx = sqlx::Connection::begin(&mut **reader).await?;
        if self.db.dialect == Dialect::Postgres {
            sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY").execute(&mut *tx).await?;
        }
        Ok(tx)
    }

    /// Up to `limit` recipients after key `after` that `condition` selects, in key order, each
    /// with its records of One-To-Many `tables` (indexes into the model's), by identifier.
    pub async fn export_page(
        &self,
        conn: &mut AnyConnection,
        model: &Model,
        condition: Option<&Condition>,
        after: i64,
        limit: i64,
        tables: &[usize],
    ) -> StoreResult<Vec<RecipientWithRecords>> {
        let columns = select_list("_id", model.def.person_data.iter().map(|f| f.name.as_str()));
        let filter = condition.map_or(String::new(), |c| format!("({}) AND ", c.sql));
        let sql = self.db.sql_string(format!("SELECT {columns} FROM recipients WHERE {filter}_id > ? ORDER BY _id LIMIT ?"));
        let binds = condition.map(|c| c.binds.as_slice()).unwrap_or_default();
        let rows = bind_all(sqlx::query(&sql), binds).bind(after).bind(limit).fetch_all(&mut *conn).await?;
        let recipients: Vec<Recipient> = rows.iter().map(|r| decode_recipient(model, r)).collect::<Result<_, _>>()?;
        let mut records: Vec<HashMap<i64, Vec<Record>>> = Vec::with_capacity(tables.len());
        for table in tables {
            records.push(self.records_of(conn, model, *table, &recipients).await?);
        }
        Ok(recipients
            .into_iter()
            .map(|r| {
                let own = records.iter_mut().map(|by_recipient| by_recipient.remove(&r.key).unwrap_or_default()).collect();
                (r, own)
            })
            .collect())
    }

    /// The records of One-To-Many table `table` of `recipients`, by recipient key.
    async fn records_of(
        &self,
        conn: &mut AnyConnection,
        model: &Model,
        table: usize,
        recipients: &[Recipient],
    ) -> StoreResult<HashMap<i64, Vec<Record>>> {
        let def = &model.def.one_to_many[table];
        let mut found: HashMap<i64, Vec<Record>> = HashMap::new();
        for chunk in recipients.chunks(500) {
            let sql = self.db.sql_string(format!(
                "SELECT {} FROM {} WHERE _recipient IN ({}) ORDER BY _recipient, {}",
                select_list("_recipient", def.fields.iter().map(|f| f.name.as_str())),
                otm_table(&def.name),
                vec!["?"; chunk.len()].join(", "),
                column(&def.identifier().name)
            ));
            let mut query = sqlx::query(&sql);
            for r in chunk {
                query = query.bind(r.key);
            }
            for row in query.fetch_all(&mut *conn).await? {
                let values = def.fields.iter().enumerate().map(|(i, f)| decode(&row, i + 1, f.ty)).collect::<Result<Vec<_>, _>>()?;
                found.entry(row.try_get::<i64, _>(0)?).or_default().push(values);
            }
        }
        Ok(found)
    }
}
