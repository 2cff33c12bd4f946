//! The control plane: instances, credentials and server settings.

use sqlx::any::AnyRow;
use sqlx::Row;

use std::sync::Arc;

use super::db::Db;
use super::node_pool::NodePool;
use super::{now_millis, tenant_schema, Backend, StoreResult, TenantDb};
use crate::model::{DataModel, InstanceSettings};

/// An instance as stored.
#[derive(Debug, Clone)]
pub struct InstanceRecord {
    pub settings: InstanceSettings,
    pub model: DataModel,
    pub revision: i64,
}

/// A credential as stored (the secret only as its hash).
#[derive(Debug, Clone)]
pub struct CredentialRecord {
    pub client_id: String,
    pub customer_id: String,
    pub secret_hash: String,
    pub scope: String,
    pub revoked: bool,
}

/// A credential to store (`ControlDb::insert_credentials`).
pub struct NewCredential<'a> {
    pub client_id: &'a str,
    pub customer_id: &'a str,
    pub secret_hash: &'a str,
    pub scope: &'a str,
    pub description: &'a str,
}

#[derive(Debug, Clone)]
pub struct ControlDb {
    pub(super) db: Db,
    backend: Backend,
    /// The node's pool for the instances' schemas (PostgreSQL).
    instances: Option<Arc<NodePool>>,
}

impl ControlDb {
    /// Opens the control plane of `backend`, bringing its tables up to date.
    pub async fn open(backend: &Backend) -> anyhow::Result<ControlDb> {
        let db = backend.open_control().await?;
        match backend {
            Backend::Sqlite { .. } => sqlx::migrate!("./migrations/control").run(&mut *db.writer().await?).await?,
            Backend::Postgres { .. } => sqlx::migrate!("./migrations/control-postgres").run(&mut *db.writer().await?).await?,
        }
        let instances = match backend {
            Backend::Sqlite { .. } => None,
            Backend::Postgres { url, pool } => Some(NodePool::new(url, pool)?),
        };
        Ok(ControlDb { db, backend: backend.clone(), instances })
    }

    /// Whether the database answers (the operator's readiness check).
    pub async fn ping(&self) -> StoreResult<()> {
        sqlx::query("SELECT 1").fetch_one(&mut *self.db.reader().await?).await?;
        Ok(())
    }

    /// Where this control plane and its instances' data live.
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// Opens the store of instance `customer_id` on the same backend, which must exist: on
    /// SQLite its file, on PostgreSQL its schema (over the node's pool). Readers connect when
    /// first needed; nothing is created.
    pub async fn open_tenant(&self, customer_id: &str) -> Result<TenantDb, sqlx::Error> {
        let db = match (&self.backend, &self.instances) {
            (Backend::Sqlite { data_dir }, _) => {
                let file = Backend::tenant_file(data_dir, customer_id);
                if !file.exists() {
                    return Err(sqlx::Error::Configuration(format!("the instance's database file {} is missing", file.display()).into()));
                }
                Db::open_sqlite(&file).await?
            }
            (Backend::Postgres { .. }, Some(pool)) => {
                Db::open_shared(pool.schema(&crate::model::column(&tenant_schema(customer_id))), false).await?
            }
            (Backend::Postgres { .. }, None) => unreachable!("a PostgreSQL control plane has the node's pool"),
        };
        Ok(TenantDb::new(db))
    }

    /// Opens the store of instance `customer_id`, creating its file or schema if missing
    /// (`herald instance apply`).
    pub async fn create_tenant(&self, customer_id: &str) -> Result<TenantDb, sqlx::Error> {
        match (&self.backend, &self.instances) {
            (Backend::Postgres { .. }, Some(pool)) => {
                Ok(TenantDb::new(Db::open_shared(pool.schema(&crate::model::column(&tenant_schema(customer_id))), true).await?))
            }
            _ => self.backend.open_tenant(customer_id).await,
        }
    }

    /// The node's pool for the instances (PostgreSQL), for the operator's metrics.
    pub fn node_pool(&self) -> Option<&Arc<NodePool>> {
        self.instances.as_ref()
    }

    pub async fn instance(&self, customer_id: &str) -> StoreResult<Option<InstanceRecord>> {
        let row = sqlx::query(&self.db.sql("SELECT settings, model, revision FROM instances WHERE customer_id = ?"))
            .bind(customer_id)
            .fetch_optional(&mut *self.db.reader().await?)
            .await?;
        row.map(|r| decode_instance(&r)).transpose()
    }

    pub async fn instances(&self) -> StoreResult<Vec<InstanceRecord>> {
        let rows = sqlx::query("SELECT settings, model, revision FROM instances ORDER BY customer_id")
            .fetch_all(&mut *self.db.reader().await?)
            .await?;
        rows.iter().map(decode_instance).collect()
    }

    /// Every instance's settings and revision, by id (without their models).
    pub async fn instance_settings(&self) -> StoreResult<Vec<(InstanceSettings, i64)>> {
        let rows =
            sqlx::query("SELECT settings, revision FROM instances ORDER BY customer_id").fetch_all(&mut *self.db.reader().await?).await?;
        rows.iter()
            .map(|r| {
                let settings: String = r.get(0);
                let settings = serde_json::from_str(&settings).map_err(|e| super::StoreError::Db(sqlx::Error::Decode(Box::new(e))))?;
                Ok((settings, r.get(1)))
            })
            .collect()
    }

    /// Every instance's id, revision and time of its last change.
    pub async fn revisions(&self) -> StoreResult<Vec<(String, i64, i64)>> {
        let rows = sqlx::query("SELECT customer_id, revision, updated_at FROM instances").fetch_all(&mut *self.db.reader().await?).await?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1), r.get(2))).collect())
    }

    /// The instances changed at or after `since` (milliseconds): what a node polls for, in time
    /// proportional to the changes (`instances_updated_at` index).
    pub async fn changed_since(&self, since: i64) -> StoreResult<Vec<(String, i64, i64)>> {
        let rows = sqlx::query(&self.db.sql("SELECT customer_id, revision, updated_at FROM instances WHERE updated_at >= ?"))
            .bind(since)
            .fetch_all(&mut *self.db.reader().await?)
            .await?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1), r.get(2))).collect())
    }

    /// The instances whose model defines a flow with a schedule (a cheap text filter first: the
    /// scheduler checks each), read at start without opening any instance.
    pub async fn instances_with_scheduled_flows(&self) -> StoreResult<Vec<String>> {
        let rows = sqlx::query("SELECT customer_id FROM instances WHERE model LIKE '%\"schedule\"%'")
            .fetch_all(&mut *self.db.reader().await?)
            .await?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    /// Creates or replaces an instance's settings and model; bumps its revision when they changed.
    pub async fn put_instance(&self, settings: &InstanceSettings, model: &DataModel) -> StoreResult<i64> {
        let settings_json = serde_json::to_string(settings).expect("settings serialise");
        let model_json = serde_json::to_string(model).expect("model serialises");
        let now = now_millis();
        let sql = self.db.sql(
            "INSERT INTO instances (customer_id, settings, model, revision, created_at, updated_at)
             VALUES (?, ?, ?, 1, ?, ?)
             ON CONFLICT (customer_id) DO UPDATE SET
               settings = excluded.settings, model = excluded.model,
               revision = instances.revision + 1, updated_at = excluded.updated_at
             WHERE instances.settings <> excluded.settings OR instances.model <> excluded.model
             RETURNING revision",
        );
        let row = sqlx::query(&sql)
            .bind(&settings.customer_id)
            .bind(settings_json)
            .bind(model_json)
            .bind(now)
            .bind(now)
            .fetch_optional(&mut *self.db.writer().await?)
            .await?;
        match row {
            Some(r) => Ok(r.get(0)),
            None => Ok(self.instance(&settings.customer_id).await?.map(|i| i.revision).unwrap_or(0)),
        }
    }

    pub async fn insert_credential(
        &self,
        client_id: &str,
        customer_id: &str,
        secret_hash: &str,
        scope: &str,
        description: &str,
    ) -> StoreResult<()> {
        self.insert_credentials(&[NewCredential { client_id, customer_id, secret_hash, scope, description }]).await
    }

    /// Stores several credentials in one transaction: all or none.
    pub async fn insert_credentials(&self, credentials: &[NewCredential<'_>]) -> StoreResult<()> {
        let sql = self.db.sql(
            "INSERT INTO credentials (client_id, customer_id, secret_hash, scope, description, created_at)
             VALUES (?, ?, ?, ?, ?, ?)",
        );
        let mut tx = self.db.begin().await?;
        let now = now_millis();
        for c in credentials {
            sqlx::query(&sql)
                .bind(c.client_id)
                .bind(c.customer_id)
                .bind(c.secret_hash)
                .bind(c.scope)
                .bind(c.description)
                .bind(now)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    pub async fn credential(&self, client_id: &str) -> StoreResult<Option<CredentialRecord>> {
        let row =
            sqlx::query(&self.db.sql("SELECT client_id, customer_id, secret_hash, scope, revoked_at FROM credentials WHERE client_id = ?"))
                .bind(client_id)
                .fetch_optional(&mut *self.db.reader().await?)
                .await?;
        Ok(row.map(|r| CredentialRecord {
            client_id: r.get(0),
            customer_id: r.get(1),
            secret_hash: r.get(2),
            scope: r.get(3),
            revoked: r.get::<Option<i64>, _>(4).is_some(),
        }))
    }

    pub async fn revoke_credential(&self, client_id: &str) -> StoreResult<bool> {
        let done = sqlx::query(&self.db.sql("UPDATE credentials SET revoked_at = ? WHERE client_id = ? AND revoked_at IS NULL"))
            .bind(now_millis())
            .bind(client_id)
            .execute(&mut *self.db.writer().await?)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Calls counted for an instance on a UTC day.
    pub async fn daily_usage(&self, customer_id: &str, day: &str) -> StoreResult<u64> {
        let row = sqlx::query(&self.db.sql("SELECT calls FROM daily_usage WHERE customer_id = ? AND day = ?"))
            .bind(customer_id)
            .bind(day)
            .fetch_optional(&mut *self.db.reader().await?)
            .await?;
        Ok(row.map(|r| r.get::<i64, _>(0) as u64).unwrap_or(0))
    }

    /// Adds `calls` to an instance's count for a UTC day; returns the new total (all nodes').
    pub async fn add_daily_usage(&self, customer_id: &str, day: &str, calls: u64) -> StoreResult<u64> {
        let row = sqlx::query(&self.db.sql(
            "INSERT INTO daily_usage (customer_id, day, calls) VALUES (?, ?, ?)
             ON CONFLICT (customer_id, day) DO UPDATE SET calls = daily_usage.calls + excluded.calls
             RETURNING calls",
        ))
        .bind(customer_id)
        .bind(day)
        .bind(calls as i64)
        .fetch_one(&mut *self.db.writer().await?)
        .await?;
        Ok(row.get::<i64, _>(0) as u64)
    }

    /// Forgets counts of days before `day` (kept a week for the operator's curiosity).
    pub async fn prune_daily_usage(&self, before_day: &str) -> StoreResult<()> {
        sqlx::query(&self.db.sql("DELETE FROM daily_usage WHERE day < ?")).bind(before_day).execute(&mut *self.db.writer().await?).await?;
        Ok(())
    }

    pub async fn setting(&self, key: &str) -> StoreResult<Option<String>> {
        let row = sqlx::query(&self.db.sql("SELECT value FROM settings WHERE key = ?"))
            .bind(key)
            .fetch_optional(&mut *self.db.reader().await?)
            .await?;
        Ok(row.map(|r| r.get(0)))
    }

    /// Stores `value` under `key` unless a value is there already; returns the value that holds.
    /// Several nodes starting at once thus agree on one value (the token signing key).
    pub async fn setting_or_insert(&self, key: &str, value: &str) -> StoreResult<String> {
        sqlx::query(&self.db.sql("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING"))
            .bind(key)
            .bind(value)
            .execute(&mut *self.db.writer().await?)
            .await?;
        let row = sqlx::query(&self.db.sql("SELECT value FROM settings WHERE key = ?"))
            .bind(key)
            .fetch_one(&mut *self.db.writer().await?)
            .await?;
        Ok(row.get(0))
    }
}

fn decode_instance(row: &AnyRow) -> StoreResult<InstanceRecord> {
    let settings: String = row.get(0);
    let model: String = row.get(1);
    let corrupt = |e: serde_json::Error| super::StoreError::Db(sqlx::Error::Decode(Box::new(e)));
    Ok(InstanceRecord {
        settings: serde_json::from_str(&settings).map_err(corrupt)?,
        model: serde_json::from_str(&model).map_err(corrupt)?,
        revision: row.get(2),
    })
}
