//! The queue of asynchronous extension executions, in the control plane (`extension_jobs`): jobs
//! are inserted and finished in batches (one transaction each, see `queue::writer`), claimed per
//! instance by the dispatcher, read by the status endpoints, and swept after their retention.

use sqlx::sqlite::SqliteRow;
use sqlx::Row;

use super::{ControlDb, StoreResult};

/// A request accepted for later execution, as the extension will receive it.
#[derive(Debug, Clone)]
pub struct NewJob {
    pub id: String,
    pub customer_id: String,
    pub extension: String,
    pub accepted_at: i64,
    pub request: CapturedRequest,
}

/// Method, `/{path}?{query}`, headers and body of a call.
#[derive(Debug, Clone, Default)]
pub struct CapturedRequest {
    pub method: String,
    pub uri: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// A job a worker took.
#[derive(Debug, Clone)]
pub struct ClaimedJob {
    pub id: String,
    pub customer_id: String,
    pub extension: String,
    pub request: CapturedRequest,
}

/// The extension's own response, kept for the status endpoints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// How an execution ended.
#[derive(Debug, Clone)]
pub enum JobOutcome {
    Done(StoredResponse),
    /// It ran past its execution limit and was ended.
    Deadline,
    /// It trapped, panicked, ran out of memory, never answered, or could not start; the reason
    /// is for the operator.
    Failed(String),
}

/// A job as the status endpoints see it.
#[derive(Debug, Clone)]
pub enum JobState {
    Pending { accepted_at: i64 },
    Done(StoredResponse),
    Deadline,
    Failed,
}

#[derive(Debug, Clone)]
pub struct JobView {
    pub customer_id: String,
    pub state: JobState,
    pub finished_at: Option<i64>,
}

const CLAIMED_COLUMNS: &str = "id, customer_id, extension, method, uri, headers, body";

impl ControlDb {
    /// Stores accepted jobs in one transaction: when this returns, they survive a crash.
    pub async fn insert_jobs(&self, jobs: &[NewJob]) -> StoreResult<()> {
        let mut tx = self.pools.write.begin().await?;
        for job in jobs {
            sqlx::query(
                "INSERT INTO extension_jobs (id, customer_id, extension, state, accepted_at, method, uri, headers, body)
                 VALUES (?, ?, ?, 'queued', ?, ?, ?, ?, ?)",
            )
            .bind(&job.id)
            .bind(&job.customer_id)
            .bind(&job.extension)
            .bind(job.accepted_at)
            .bind(&job.request.method)
            .bind(&job.request.uri)
            .bind(encode_headers(&job.request.headers))
            .bind(&job.request.body)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The instances that have queued jobs: one index seek per instance (a skip scan of
    /// `extension_jobs_queued`), so a long queue costs nothing here. Read from a reader: a
    /// slightly old answer only delays a claim to the next round.
    pub async fn queued_instances(&self) -> StoreResult<Vec<String>> {
        let mut instances = Vec::new();
        let mut after = String::new();
        loop {
            let next: Option<String> = sqlx::query_scalar("SELECT MIN(customer_id) FROM extension_jobs WHERE state = 'queued' AND customer_id > ?")
                .bind(&after)
                .fetch_one(&self.pools.read)
                .await?;
            match next {
                Some(id) => {
                    after = id.clone();
                    instances.push(id);
                }
                None => return Ok(instances),
            }
        }
    }

    /// Takes up to `limit` of an instance's oldest queued jobs for execution. The claim is not
    /// flushed to disk on its own (see `relaxed`): lost to a power cut, the job is queued again.
    pub async fn claim_jobs(&self, customer_id: &str, limit: usize, now: i64) -> StoreResult<Vec<ClaimedJob>> {
        let mut conn = self.pools.write.acquire().await?;
        relax(&mut conn).await?;
        let claimed = async {
                sqlx::query(&format!(
                    "UPDATE extension_jobs SET state = 'running', started_at = ?, attempts = attempts + 1
                     WHERE seq IN (SELECT seq FROM extension_jobs WHERE state = 'queued' AND customer_id = ? ORDER BY seq LIMIT ?)
                     RETURNING {CLAIMED_COLUMNS}"
                ))
                .bind(now)
                .bind(customer_id)
                .bind(limit as i64)
                .fetch_all(&mut *conn)
                .await
        }
        .await;
        let claimed = restore(&mut conn, claimed).await?;
        claimed.iter().map(decode_claimed).collect()
    }

    /// Records how executions ended, in one transaction, not flushed on its own (`relaxed`): a
    /// result lost to a power cut leaves its job `running`, and the next start runs it again.
    pub async fn finish_jobs(&self, finished: &[(String, JobOutcome, i64)]) -> StoreResult<()> {
        let mut conn = self.pools.write.acquire().await?;
        relax(&mut conn).await?;
        let written = async {
                let mut tx = sqlx::Connection::begin(&mut *conn).await?;
                for (id, outcome, at) in finished {
                    let (state, status, headers, body, reason) = match outcome {
                        JobOutcome::Done(r) => ("done", Some(r.status as i64), Some(encode_headers(&r.headers)), Some(r.body.as_slice()), None),
                        JobOutcome::Deadline => ("failed", None, None, None, Some("deadline")),
                        JobOutcome::Failed(reason) => ("failed", None, None, None, Some(reason.as_str())),
                    };
                    sqlx::query(
                        "UPDATE extension_jobs SET state = ?, finished_at = ?, response_status = ?, response_headers = ?,
                         response_body = ?, outcome = ?, method = '', uri = '', headers = '[]', body = x''
                         WHERE id = ? AND state = 'running'",
                    )
                    .bind(state)
                    .bind(at)
                    .bind(status)
                    .bind(headers)
                    .bind(body)
                    .bind(reason)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                }
                tx.commit().await
        }
        .await;
        restore(&mut conn, written).await?;
        Ok(())
    }

    /// A job by its queue id.
    pub async fn job(&self, id: &str) -> StoreResult<Option<JobView>> {
        let row = sqlx::query(
            "SELECT customer_id, state, accepted_at, finished_at, response_status, response_headers, response_body, outcome
             FROM extension_jobs WHERE id = ?",
        )
        .bind(id)
        .fetch_optional(&self.pools.read)
        .await?;
        let Some(r) = row else { return Ok(None) };
        let state = match r.get::<&str, _>(1) {
            "queued" | "running" => JobState::Pending { accepted_at: r.get(2) },
            "done" => JobState::Done(StoredResponse {
                status: r.get::<i64, _>(4) as u16,
                headers: decode_headers(r.get::<Option<String>, _>(5).as_deref().unwrap_or("[]"))?,
                body: r.get::<Option<Vec<u8>>, _>(6).unwrap_or_default(),
            }),
            _ if r.get::<Option<&str>, _>(7) == Some("deadline") => JobState::Deadline,
            _ => JobState::Failed,
        };
        Ok(Some(JobView { customer_id: r.get(0), state, finished_at: r.get(3) }))
    }

    /// After a restart of the process that owns the queue: jobs it was running go back to the
    /// queue once (at-least-once execution); a job interrupted twice is failed with the reason.
    /// Returns (requeued, failed).
    pub async fn recover_jobs(&self, now: i64) -> StoreResult<(u64, u64)> {
        let mut tx = self.pools.write.begin().await?;
        let failed = sqlx::query(
            "UPDATE extension_jobs SET state = 'failed', finished_at = ?,
             outcome = 'interrupted by a restart twice; not retried again'
             WHERE state = 'running' AND attempts >= 2",
        )
        .bind(now)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        let requeued = sqlx::query("UPDATE extension_jobs SET state = 'queued', started_at = NULL WHERE state = 'running'")
            .execute(&mut *tx)
            .await?
            .rows_affected();
        tx.commit().await?;
        Ok((requeued, failed))
    }

    /// Removes finished jobs older than `before`; returns how many.
    pub async fn sweep_jobs(&self, before: i64) -> StoreResult<u64> {
        let done = sqlx::query("DELETE FROM extension_jobs WHERE finished_at IS NOT NULL AND finished_at < ?")
            .bind(before)
            .execute(&self.pools.write)
            .await?;
        Ok(done.rows_affected())
    }
}

fn encode_headers(headers: &[(String, String)]) -> String {
    serde_json::to_string(headers).expect("headers serialise")
}

fn decode_headers(text: &str) -> StoreResult<Vec<(String, String)>> {
    serde_json::from_str(text).map_err(|e| super::StoreError::Db(sqlx::Error::Decode(Box::new(e))))
}

fn decode_claimed(r: &SqliteRow) -> StoreResult<ClaimedJob> {
    Ok(ClaimedJob {
        id: r.get(0),
        customer_id: r.get(1),
        extension: r.get(2),
        request: CapturedRequest {
            method: r.get(3),
            uri: r.get(4),
            headers: decode_headers(r.get::<&str, _>(5))?,
            body: r.get(6),
        },
    })
}

type Connection = sqlx::pool::PoolConnection<sqlx::Sqlite>;

/// Sets the writer to `synchronous = NORMAL` for one piece of work: in WAL mode its commit is not
/// flushed by itself, only with the next fully synchronous commit (an insert of accepted jobs) or
/// checkpoint. For claims and results, whose loss only means running a job again. `restore` must
/// follow, whatever the work did.
async fn relax(conn: &mut Connection) -> Result<(), sqlx::Error> {
    sqlx::query("PRAGMA synchronous = NORMAL").execute(&mut **conn).await.map(|_| ())
}

/// Puts the writer back to `synchronous = FULL` and passes on the work's result.
async fn restore<T>(conn: &mut Connection, result: Result<T, sqlx::Error>) -> Result<T, sqlx::Error> {
    if let Err(e) = sqlx::query("PRAGMA synchronous = FULL").execute(&mut **conn).await {
        // Never hand back a writer that no longer flushes: close it; the pool opens a new one.
        conn.close_on_drop();
        return Err(e);
    }
    result
}
