//! Jobs due later (`delayed_jobs`): a flow run's `wait` ends its job and stores the continuation
//! here, in the transaction that finishes the job; once the server's clock reaches `due_at`, the
//! queue's promoter moves it into `extension_jobs`, where the dispatcher claims it like any other.
//! Kept apart so that a million waiting runs cost the dispatcher nothing.

use sqlx::Row;

use super::jobs::Later;
use super::{ControlDb, StoreResult};

/// Most continuations moved in one transaction.
const PROMOTE_BATCH: i64 = 500;

impl ControlDb {
    /// Whether job `id` is still running on `node` (it was not queued again meanwhile).
    pub(super) async fn job_running_on(&self, tx: &mut sqlx::AnyConnection, id: &str, node: &str) -> Result<bool, sqlx::Error> {
        let sql = self.db.sql("SELECT COUNT(*) FROM extension_jobs WHERE id = ? AND state = 'running' AND node = ?");
        let n: i64 = sqlx::query_scalar(&sql).bind(id).bind(node).fetch_one(&mut *tx).await?;
        Ok(n > 0)
    }

    /// Stores `later`: in the queue at once when it is already due at `now`, else apart.
    pub(super) async fn insert_continuation(&self, tx: &mut sqlx::AnyConnection, later: &Later, now: i64) -> Result<(), sqlx::Error> {
        let job = &later.job;
        let payload = job.payload.json();
        let due = later.due_at <= now;
        let sql = if due {
            self.db.sql(
                "INSERT INTO extension_jobs (id, customer_id, extension, kind, payload, accepted_at, state, method, uri, headers, body)
                 VALUES (?, ?, ?, ?, ?, ?, 'queued', '', '', '[]', ?)",
            )
        } else {
            self.db.sql("INSERT INTO delayed_jobs (id, customer_id, extension, kind, payload, due_at) VALUES (?, ?, ?, ?, ?, ?)")
        };
        let mut query = sqlx::query(&sql)
            .bind(&job.id)
            .bind(&job.customer_id)
            .bind(&job.extension)
            .bind(job.payload.kind())
            .bind(payload)
            .bind(if due { now } else { later.due_at });
        if due {
            query = query.bind(Vec::<u8>::new());
        }
        query.execute(&mut *tx).await?;
        Ok(())
    }

    /// Moves the continuations due at `now` into the queue; returns how many. Nodes sharing a
    /// PostgreSQL database may promote at once: a row is moved by whoever deletes it.
    pub async fn promote_due_jobs(&self, now: i64) -> StoreResult<u64> {
        let select =
            self.db.sql("SELECT id, customer_id, extension, kind, payload FROM delayed_jobs WHERE due_at <= ? ORDER BY due_at LIMIT ?");
        let due = sqlx::query(&select).bind(now).bind(PROMOTE_BATCH).fetch_all(&mut *self.db.reader().await?).await?;
        if due.is_empty() {
            return Ok(0);
        }
        let delete = self.db.sql("DELETE FROM delayed_jobs WHERE id = ?");
        let insert = self.db.sql(
            "INSERT INTO extension_jobs (id, customer_id, extension, state, accepted_at, kind, payload, method, uri, headers, body)
             VALUES (?, ?, ?, 'queued', ?, ?, ?, '', '', '[]', ?)",
        );
        let mut moved = 0;
        let mut tx = self.db.begin().await?;
        for row in &due {
            let id: String = row.get(0);
            if sqlx::query(&delete).bind(&id).execute(&mut *tx).await?.rows_affected() == 0 {
                continue;
            }
            sqlx::query(&insert)
                .bind(&id)
                .bind(row.get::<String, _>(1))
                .bind(row.get::<String, _>(2))
                .bind(now)
                .bind(row.get::<String, _>(3))
                .bind(row.get::<Option<String>, _>(4))
                .bind(Vec::<u8>::new())
                .execute(&mut *tx)
                .await?;
            moved += 1;
        }
        tx.commit().await?;
        Ok(moved)
    }

    /// The payloads the control plane holds for an instance's flow runs, queued, running or due
    /// later (a finished job keeps none): what its runs' contextual data is stored in.
    pub async fn flow_payloads(&self, customer_id: &str) -> StoreResult<Vec<String>> {
        let sql = self.db.sql(
            "SELECT payload FROM extension_jobs WHERE customer_id = ? AND kind = 'flow' AND payload IS NOT NULL
             UNION ALL SELECT payload FROM delayed_jobs WHERE customer_id = ? AND kind = 'flow' AND payload IS NOT NULL",
        );
        Ok(sqlx::query_scalar(&sql).bind(customer_id).bind(customer_id).fetch_all(&mut *self.db.reader().await?).await?)
    }
}
