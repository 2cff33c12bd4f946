//! How much an instance's store takes: its usage books' `storage_bytes` (`ops::usage`).

use sqlx::Row;

use super::TenantDb;
use crate::rsql::Dialect;
use crate::store::StoreResult;

impl TenantDb {
    /// The bytes of the instance's database: SQLite's pages in use, or on PostgreSQL the tables
    /// of its schema with their indexes and out-of-line values. The media area is in it.
    pub async fn storage_bytes(&self) -> StoreResult<u64> {
        let sql = match self.db.dialect {
            Dialect::Sqlite => "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()",
            Dialect::Postgres => {
                "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::BIGINT FROM pg_class c
                 JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'"
            }
        };
        let row = sqlx::query(sql).fetch_one(&mut *self.db.reader().await?).await?;
        Ok(row.get::<i64, _>(0).max(0) as u64)
    }
}
