//! Global Data values. Values are stored as the text the API exchanges (`VALUE` is a string on
//! the wire); CREATED and MODIFIED are milliseconds since the Unix epoch.

use sqlx::{AnyConnection, Row};

use super::TenantDb;
use crate::model::Model;
use crate::rsql::Dialect;
use crate::store::db::sql_for;
use crate::store::{now_millis, StoreResult};

#[derive(Debug, Clone)]
pub struct GlobalValue {
    pub value: Option<String>,
    pub created: i64,
    pub modified: i64,
}

pub(super) async fn seed(conn: &mut AnyConnection, dialect: Dialect, model: &Model) -> StoreResult<()> {
    let now = now_millis();
    let sql =
        sql_for(dialect, "INSERT INTO _global_data (name, value, created, modified) VALUES (?, ?, ?, ?) ON CONFLICT (name) DO NOTHING");
    for g in &model.def.global_data {
        sqlx::query(&sql).bind(&g.name).bind(g.value.as_deref()).bind(now).bind(now).execute(&mut *conn).await?;
    }
    Ok(())
}

impl TenantDb {
    pub async fn global_value(&self, name: &str) -> StoreResult<Option<GlobalValue>> {
        let row = sqlx::query(&self.db.sql("SELECT value, created, modified FROM _global_data WHERE name = ?"))
            .bind(name)
            .fetch_optional(&mut *self.db.reader().await?)
            .await?;
        Ok(row.map(|r| GlobalValue { value: r.get(0), created: r.get(1), modified: r.get(2) }))
    }

    /// Sets a value (already validated against its type); creates the row if the item was added
    /// to the model after the instance's creation without a value.
    pub async fn set_global_value(&self, name: &str, value: Option<&str>) -> StoreResult<GlobalValue> {
        let now = now_millis();
        let sql = self.db.sql(
            "INSERT INTO _global_data (name, value, created, modified) VALUES (?, ?, ?, ?)
             ON CONFLICT (name) DO UPDATE SET value = excluded.value, modified = excluded.modified
             RETURNING value, created, modified",
        );
        let mut turn = self.db.group.single_write().await?;
        let row = sqlx::query(&sql).bind(name).bind(value).bind(now).bind(now).fetch_one(&mut *turn).await;
        let row = turn.finish(row).await?;
        Ok(GlobalValue { value: row.get(0), created: row.get(1), modified: row.get(2) })
    }
}
