//! Flows defined through the API, kept as JSON with a version (one more at every change) so that a
//! run can say which version it follows.

use sqlx::Row;

use super::TenantDb;
use crate::store::{now_millis, StoreResult};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredFlow {
    pub name: String,
    pub definition: String,
    pub version: i64,
    pub updated_at: i64,
}

fn decode(r: &sqlx::any::AnyRow) -> Result<StoredFlow, sqlx::Error> {
    Ok(StoredFlow { name: r.try_get(0)?, definition: r.try_get(1)?, version: r.try_get(2)?, updated_at: r.try_get(3)? })
}

impl TenantDb {
    pub async fn flows(&self) -> StoreResult<Vec<StoredFlow>> {
        let rows = sqlx::query("SELECT name, definition, version, updated_at FROM _flows ORDER BY name").fetch_all(&self.db.read).await?;
        Ok(rows.iter().map(decode).collect::<Result<_, _>>()?)
    }

    pub async fn flow(&self, name: &str) -> StoreResult<Option<StoredFlow>> {
        let sql = self.db.sql("SELECT name, definition, version, updated_at FROM _flows WHERE name = ?");
        let row = sqlx::query(&sql).bind(name).fetch_optional(&self.db.read).await?;
        Ok(row.as_ref().map(decode).transpose()?)
    }

    /// Creates or replaces flow `name`; returns it as stored and whether it was created.
    pub async fn put_flow(&self, name: &str, definition: &str) -> StoreResult<(StoredFlow, bool)> {
        let now = now_millis();
        let mut tx = self.db.write.begin().await?;
        let inserted = sqlx::query(&self.db.sql(
            "INSERT INTO _flows (name, definition, version, updated_at) VALUES (?, ?, 1, ?) ON CONFLICT (name) DO NOTHING",
        ))
        .bind(name)
        .bind(definition)
        .bind(now)
        .execute(&mut *tx)
        .await?
        .rows_affected()
            == 1;
        if !inserted {
            sqlx::query(&self.db.sql("UPDATE _flows SET definition = ?, version = version + 1, updated_at = ? WHERE name = ?"))
                .bind(definition)
                .bind(now)
                .bind(name)
                .execute(&mut *tx)
                .await?;
        }
        let sql = self.db.sql("SELECT name, definition, version, updated_at FROM _flows WHERE name = ?");
        let stored = decode(&sqlx::query(&sql).bind(name).fetch_one(&mut *tx).await?)?;
        tx.commit().await?;
        Ok((stored, inserted))
    }

    pub async fn delete_flow(&self, name: &str) -> StoreResult<bool> {
        let done = sqlx::query(&self.db.sql("DELETE FROM _flows WHERE name = ?")).bind(name).execute(&self.db.write).await?;
        Ok(done.rows_affected() > 0)
    }
}
