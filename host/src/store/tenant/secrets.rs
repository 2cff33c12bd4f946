//! The instance's secrets as stored: sealed (`secrets::keys`), with the id of the key that sealed
//! them and when they were set. This module never sees a value in clear.

use sqlx::Row;

use super::TenantDb;
use crate::store::{now_millis, StoreResult};

/// A sealed secret as it is stored: the id of the key that sealed it and the nonce followed by
/// the ciphertext.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sealed {
    pub key_id: String,
    pub bytes: Vec<u8>,
}

/// A secret's name and when it was set (milliseconds since the Unix epoch): all that is ever
/// listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretInfo {
    pub name: String,
    pub set_at: i64,
}

impl TenantDb {
    /// Stores `sealed` under `name`; true when it was new.
    pub async fn put_secret(&self, name: &str, sealed: &Sealed) -> StoreResult<(SecretInfo, bool)> {
        let mut tx = self.db.begin().await?;
        let existed =
            sqlx::query(&self.db.sql("SELECT 1 FROM _secrets WHERE name = ?")).bind(name).fetch_optional(&mut *tx).await?.is_some();
        let set_at = now_millis();
        let sql = self.db.sql(
            "INSERT INTO _secrets (name, key_id, sealed, set_at) VALUES (?, ?, ?, ?)
             ON CONFLICT (name) DO UPDATE SET key_id = excluded.key_id, sealed = excluded.sealed, set_at = excluded.set_at",
        );
        sqlx::query(&sql).bind(name).bind(&sealed.key_id).bind(&sealed.bytes).bind(set_at).execute(&mut *tx).await?;
        tx.commit().await?;
        Ok((SecretInfo { name: name.to_string(), set_at }, !existed))
    }

    pub async fn delete_secret(&self, name: &str) -> StoreResult<bool> {
        let done =
            sqlx::query(&self.db.sql("DELETE FROM _secrets WHERE name = ?")).bind(name).execute(&mut *self.db.writer().await?).await?;
        Ok(done.rows_affected() > 0)
    }

    /// Every secret's name and time, by name.
    pub async fn secrets(&self) -> StoreResult<Vec<SecretInfo>> {
        let rows = sqlx::query("SELECT name, set_at FROM _secrets ORDER BY name").fetch_all(&mut *self.db.reader().await?).await?;
        Ok(rows.iter().map(|r| SecretInfo { name: r.get(0), set_at: r.get(1) }).collect())
    }

    pub async fn secret_info(&self, name: &str) -> StoreResult<Option<SecretInfo>> {
        let row = sqlx::query(&self.db.sql("SELECT name, set_at FROM _secrets WHERE name = ?"))
            .bind(name)
            .fetch_optional(&mut *self.db.reader().await?)
            .await?;
        Ok(row.map(|r| SecretInfo { name: r.get(0), set_at: r.get(1) }))
    }

    /// The sealed form of secret `name`.
    pub async fn sealed_secret(&self, name: &str) -> StoreResult<Option<Sealed>> {
        let row = sqlx::query(&self.db.sql("SELECT key_id, sealed FROM _secrets WHERE name = ?"))
            .bind(name)
            .fetch_optional(&mut *self.db.reader().await?)
            .await?;
        Ok(row.map(|r| Sealed { key_id: r.get(0), bytes: r.get(1) }))
    }

    /// Every secret not sealed with key `key_id`, for rotation.
    pub async fn secrets_sealed_otherwise(&self, key_id: &str) -> StoreResult<Vec<(String, Sealed)>> {
        let rows = sqlx::query(&self.db.sql("SELECT name, key_id, sealed FROM _secrets WHERE key_id <> ? ORDER BY name"))
            .bind(key_id)
            .fetch_all(&mut *self.db.reader().await?)
            .await?;
        Ok(rows.iter().map(|r| (r.get(0), Sealed { key_id: r.get(1), bytes: r.get(2) })).collect())
    }

    /// Replaces the sealed form of `name` if it is still `was` (a value set meanwhile stays);
    /// true when replaced. The time it was set does not change: the value did not.
    pub async fn reseal_secret(&self, name: &str, was: &Sealed, now: &Sealed) -> StoreResult<bool> {
        let sql = self.db.sql("UPDATE _secrets SET key_id = ?, sealed = ? WHERE name = ? AND key_id = ? AND sealed = ?");
        let done = sqlx::query(&sql)
            .bind(&now.key_id)
            .bind(&now.bytes)
            .bind(name)
            .bind(&was.key_id)
            .bind(&was.bytes)
            .execute(&mut *self.db.writer().await?)
            .await?;
        Ok(done.rows_affected() == 1)
    }
}
