//! The queue of asynchronous extension executions, in the control plane (`extension_jobs`): jobs
//! are inserted and finished in batches (one transaction each, see `queue::writer`), claimed per
//! instance by the dispatcher, read by the status endpoints, and swept after their retention.

use sqlx::any::AnyRow;
use sqlx::Row;

use super::db::Dialect;
use super::{ControlDb, StoreResult};

/// Work accepted for later execution.
#[derive(Debug, Clone)]
pub struct NewJob {
    pub id: String,
    pub customer_id: String,
    pub extension: String,
    pub accepted_at: i64,
    pub payload: JobPayload,
}

/// What a job asks for. The store keeps a kind's name and its bytes and knows no kind but the
/// asynchronous http call, whose request it keeps in columns of its own; the queue learns the
/// others from the modules that register them (`queue::kinds`). The store's policies name two
/// kinds by their stored names: an interrupted `import` goes back however often (it resumes where
/// it was), and `flow` jobs carry contextual data that their instance's removal forgets.
#[derive(Debug, Clone)]
pub enum JobPayload {
    /// A call of an asynchronous http extension, as the extension will receive it.
    Http(CapturedRequest),
    /// Work of another kind (`flow`, `monitor`, `import`...): JSON that the kind writes and
    /// reads.
    Work { kind: String, json: String },
}

impl JobPayload {
    /// Work of `kind`, described by `json`.
    pub fn work(kind: &str, json: String) -> JobPayload {
        JobPayload::Work { kind: kind.to_string(), json }
    }

    pub(super) fn kind(&self) -> &str {
        match self {
            JobPayload::Http(_) => "http",
            JobPayload::Work { kind, .. } => kind,
        }
    }

    /// What a kind other than http keeps in the `payload` column.
    pub(super) fn json(&self) -> Option<&str> {
        match self {
            JobPayload::Work { json, .. } => Some(json),
            JobPayload::Http(_) => None,
        }
    }

    /// The bytes it stores (for the backlog's bound).
    pub fn body_len(&self) -> usize {
        match self {
            JobPayload::Http(request) => request.body.len(),
            JobPayload::Work { json, .. } => json.len(),
        }
    }
}

/// Method, `/{path}?{query}`, headers and body of a call, and the endpoint it came through.
#[derive(Debug, Clone, Default)]
pub struct CapturedRequest {
    pub method: String,
    pub uri: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub door: Door,
}

/// The endpoint an asynchronous call came through: its status is answered on that endpoint's
/// status path only.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Door {
    #[default]
    Secure,
    Open,
}

impl Door {
    fn as_str(self) -> &'static str {
        match self {
            Door::Secure => "secure",
            Door::Open => "open",
        }
    }

    fn parse(text: Option<&str>) -> Option<Door> {
        match text {
            Some("secure") => Some(Door::Secure),
            Some("open") => Some(Door::Open),
            _ => None,
        }
    }
}

/// A job a worker took.
#[derive(Debug, Clone)]
pub struct ClaimedJob {
    pub id: String,
    pub customer_id: String,
    pub extension: String,
    pub payload: JobPayload,
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
    /// Work that leaves no response (a flow run's stretch) is over; what it did is recorded
    /// where it belongs (the run's trace).
    Ended,
    /// Over for now: each of `then` runs once the server's clock reaches its `due_at` (a flow's
    /// `wait`, the next batch of a sweep). The job ends and its continuations are stored in one
    /// transaction.
    Continue(Vec<Later>),
}

/// A job to run once the server's clock reaches `due_at`.
#[derive(Debug, Clone)]
pub struct Later {
    pub job: NewJob,
    pub due_at: i64,
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
    /// The endpoint the call came through (None: a row written before doors were kept).
    pub door: Option<Door>,
    pub state: JobState,
    pub finished_at: Option<i64>,
}

const CLAIMED_COLUMNS: &str = "id, customer_id, extension, method, uri, headers, body, kind, payload, door";

impl ControlDb {
    /// Stores accepted jobs in one transaction: when this returns, they survive a crash.
    pub async fn insert_jobs(&self, jobs: &[NewJob]) -> StoreResult<()> {
        let sql = self.db.sql(
            "INSERT INTO extension_jobs (id, customer_id, extension, state, accepted_at, kind, payload, method, uri, headers, body, door)
             VALUES (?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?)",
        );
        let mut tx = self.db.begin().await?;
        let no_request = CapturedRequest::default();
        for job in jobs {
            // The request columns hold an http job's request (and are empty for other kinds).
            let (request, door) = match &job.payload {
                JobPayload::Http(request) => (request, Some(request.door.as_str())),
                JobPayload::Work { .. } => (&no_request, None),
            };
            let payload = job.payload.json();
            sqlx::query(&sql)
                .bind(&job.id)
                .bind(&job.customer_id)
                .bind(&job.extension)
                .bind(job.accepted_at)
                .bind(job.payload.kind())
                .bind(payload)
                .bind(&request.method)
                .bind(&request.uri)
                .bind(encode_headers(&request.headers))
                .bind(&request.body)
                .bind(door)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The bytes of request bodies an instance has waiting (queued or running jobs).
    pub async fn pending_bytes(&self, customer_id: &str) -> StoreResult<u64> {
        let sql = self.db.sql(
            "SELECT CAST(COALESCE(SUM(LENGTH(body)), 0) AS BIGINT) FROM extension_jobs WHERE state IN ('queued', 'running') AND customer_id = ?",
        );
        let bytes: i64 = sqlx::query_scalar(&sql).bind(customer_id).fetch_one(&mut *self.db.reader().await?).await?;
        Ok(bytes.max(0) as u64)
    }

    /// The instances that have queued jobs: one index seek per instance (a skip scan of
    /// `extension_jobs_queued`), so a long queue costs nothing here. Read from a reader: a
    /// slightly old answer only delays a claim to the next round.
    /// How many jobs wait to run, and when the oldest was accepted (for the operator's metrics).
    pub async fn queue_depth(&self) -> StoreResult<(i64, Option<i64>)> {
        let row = sqlx::query("SELECT COUNT(*), MIN(accepted_at) FROM extension_jobs WHERE state = 'queued'")
            .fetch_one(&mut *self.db.reader().await?)
            .await?;
        Ok((row.get(0), row.get(1)))
    }

    pub async fn queued_instances(&self) -> StoreResult<Vec<String>> {
        let mut instances = Vec::new();
        let mut after = String::new();
        let sql = self.db.sql("SELECT MIN(customer_id) FROM extension_jobs WHERE state = 'queued' AND customer_id > ?");
        loop {
            let next: Option<String> = sqlx::query_scalar(&sql).bind(&after).fetch_one(&mut *self.db.reader().await?).await?;
            match next {
                Some(id) => {
                    after = id.clone();
                    instances.push(id);
                }
                None => return Ok(instances),
            }
        }
    }

    /// Takes up to `limit` of an instance's oldest queued jobs for execution on node `node`. The
    /// claim is not flushed to disk on its own (see `relax`): lost to a power cut, the job is
    /// queued again. Nodes sharing a PostgreSQL database skip the rows another node is claiming.
    pub async fn claim_jobs(&self, customer_id: &str, limit: usize, now: i64, node: &str) -> StoreResult<Vec<ClaimedJob>> {
        // PostgreSQL may run a `seq IN (SELECT ... LIMIT n FOR UPDATE SKIP LOCKED)` subquery more
        // than once within the UPDATE, each time skipping what it locked before, and so claim
        // more than `limit` jobs (an instance then took every worker: the fairness test caught
        // it about one run in four). The jobs are picked once, in a materialised CTE.
        let sql = match self.db.dialect {
            Dialect::Postgres => format!(
                "WITH picked AS MATERIALIZED (
                   SELECT seq FROM extension_jobs WHERE state = 'queued' AND customer_id = $3 ORDER BY seq LIMIT $4 FOR UPDATE SKIP LOCKED)
                 UPDATE extension_jobs SET state = 'running', started_at = $1, attempts = attempts + 1, node = $2
                 FROM picked WHERE extension_jobs.seq = picked.seq
                 RETURNING {CLAIMED_COLUMNS}"
            ),
            Dialect::Sqlite => format!(
                "UPDATE extension_jobs SET state = 'running', started_at = ?, attempts = attempts + 1, node = ?
                 WHERE state = 'queued' AND seq IN (
                   SELECT seq FROM extension_jobs WHERE state = 'queued' AND customer_id = ? ORDER BY seq LIMIT ?)
                 RETURNING {CLAIMED_COLUMNS}"
            ),
        };
        let mut conn = self.db.writer().await?;
        relax(&mut conn, self.db.dialect).await?;
        let claimed =
            async { sqlx::query(&sql).bind(now).bind(node).bind(customer_id).bind(limit as i64).fetch_all(&mut *conn).await }.await;
        let claimed = restore(&mut conn, self.db.dialect, claimed).await?;
        claimed.iter().map(decode_claimed).collect()
    }

    /// Records how executions ended, in one transaction, not flushed on its own (`relaxed`): a
    /// result lost to a power cut leaves its job `running`, and the next start runs it again.
    /// Only jobs still running on `node` are finished: a job queued again meanwhile (its node
    /// was taken for gone) belongs to its new run.
    pub async fn finish_jobs(&self, finished: &[(String, JobOutcome, i64)], node: &str) -> StoreResult<()> {
        let sql = self.db.sql(
            "UPDATE extension_jobs SET state = ?, finished_at = ?, response_status = ?, response_headers = ?,
             response_body = ?, outcome = ?, method = '', uri = '', headers = '[]', body = ?, payload = NULL
             WHERE id = ? AND state = 'running' AND node = ?",
        );
        let mut conn = self.db.writer().await?;
        relax(&mut conn, self.db.dialect).await?;
        let written = async {
            let mut tx = sqlx::Connection::begin(&mut *conn).await?;
            for (id, outcome, at) in finished {
                let (state, status, headers, body, reason) = match outcome {
                    JobOutcome::Done(r) => ("done", Some(r.status as i64), Some(encode_headers(&r.headers)), Some(r.body.as_slice()), None),
                    JobOutcome::Deadline => ("failed", None, None, None, Some("deadline")),
                    JobOutcome::Failed(reason) => ("failed", None, None, None, Some(reason.as_str())),
                    JobOutcome::Ended => ("done", None, None, None, None),
                    JobOutcome::Continue(then) => {
                        // Only the execution that still holds the job continues it (see below).
                        if self.job_running_on(&mut tx, id, node).await? {
                            for later in then {
                                self.insert_continuation(&mut tx, later, *at).await?;
                            }
                        }
                        ("done", None, None, None, None)
                    }
                };
                sqlx::query(&sql)
                    .bind(state)
                    .bind(at)
                    .bind(status)
                    .bind(headers)
                    .bind(body)
                    .bind(reason)
                    .bind(Vec::<u8>::new())
                    .bind(id)
                    .bind(node)
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await
        }
        .await;
        restore(&mut conn, self.db.dialect, written).await?;
        Ok(())
    }

    /// A job by its queue id.
    pub async fn job(&self, id: &str) -> StoreResult<Option<JobView>> {
        let row = sqlx::query(&self.db.sql(
            "SELECT customer_id, state, accepted_at, finished_at, response_status, response_headers, response_body, outcome, door
             FROM extension_jobs WHERE id = ? AND kind = 'http'",
        ))
        .bind(id)
        .fetch_optional(&mut *self.db.reader().await?)
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
        Ok(Some(JobView { customer_id: r.get(0), door: Door::parse(r.get::<Option<&str>, _>(8)), state, finished_at: r.get(3) }))
    }

    /// Jobs whose node is gone (no heartbeat since `alive_since`, wall-clock milliseconds; or
    /// none recorded) go back to the queue once (at-least-once execution); a job interrupted
    /// twice is failed with the reason. An import's stretch goes back however often it is
    /// interrupted: it writes nothing twice (its batches compare-and-set the import's position),
    /// and failing its job would leave the import running with nothing to run it, holding one of
    /// the instance's two places for running imports. `own` is the calling node, never taken for gone. With
    /// `alive_since` = `i64::MAX`, every other node counts as gone: the restart of the one
    /// process that owns an SQLite queue. Returns (requeued, failed).
    pub async fn recover_jobs(&self, now: i64, alive_since: i64, own: &str) -> StoreResult<(u64, u64)> {
        const ORPHANED: &str =
            "state = 'running' AND (node IS NULL OR (node <> ? AND node NOT IN (SELECT id FROM nodes WHERE heartbeat_at >= ?)))";
        let fail = self.db.sql_string(format!(
            "UPDATE extension_jobs SET state = 'failed', finished_at = ?,
             outcome = 'interrupted by a restart twice; not retried again'
             WHERE attempts >= 2 AND kind <> 'import' AND {ORPHANED}"
        ));
        let requeue =
            self.db.sql_string(format!("UPDATE extension_jobs SET state = 'queued', started_at = NULL, node = NULL WHERE {ORPHANED}"));
        let mut tx = self.db.begin().await?;
        let failed = sqlx::query(&fail).bind(now).bind(own).bind(alive_since).execute(&mut *tx).await?.rows_affected();
        let requeued = sqlx::query(&requeue).bind(own).bind(alive_since).execute(&mut *tx).await?.rows_affected();
        tx.commit().await?;
        Ok((requeued, failed))
    }

    /// Removes finished jobs older than `before`; returns how many.
    pub async fn sweep_jobs(&self, before: i64) -> StoreResult<u64> {
        let done = sqlx::query(&self.db.sql("DELETE FROM extension_jobs WHERE finished_at IS NOT NULL AND finished_at < ?"))
            .bind(before)
            .execute(&mut *self.db.writer().await?)
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

fn decode_claimed(r: &AnyRow) -> StoreResult<ClaimedJob> {
    let payload = match r.try_get::<&str, _>(7)? {
        "http" => JobPayload::Http(CapturedRequest {
            method: r.get(3),
            uri: r.get(4),
            headers: decode_headers(r.get::<&str, _>(5))?,
            body: r.get(6),
            door: Door::parse(r.get::<Option<&str>, _>(9)).unwrap_or_default(),
        }),
        other => JobPayload::Work { kind: other.to_string(), json: r.get::<Option<String>, _>(8).unwrap_or_default() },
    };
    Ok(ClaimedJob { id: r.get(0), customer_id: r.get(1), extension: r.get(2), payload })
}

type Connection = super::db::Conn;

/// Lets the writer's commits skip the flush for one piece of work. On SQLite (WAL), with
/// `synchronous = NORMAL`, a commit is flushed only with the next fully synchronous commit (an
/// insert of accepted jobs) or checkpoint; on PostgreSQL, `synchronous_commit = off` acknowledges
/// a commit before its WAL reaches the disk. For claims and results, whose loss only means
/// running a job again. `restore` must follow, whatever the work did.
async fn relax(conn: &mut Connection, dialect: Dialect) -> Result<(), sqlx::Error> {
    let sql = match dialect {
        Dialect::Sqlite => "PRAGMA synchronous = NORMAL",
        Dialect::Postgres => "SET synchronous_commit = off",
    };
    sqlx::query(sql).execute(&mut **conn).await.map(|_| ())
}

/// Puts the writer back to fully synchronous commits and passes on the work's result.
async fn restore<T>(conn: &mut Connection, dialect: Dialect, result: Result<T, sqlx::Error>) -> Result<T, sqlx::Error> {
    let sql = match dialect {
        Dialect::Sqlite => "PRAGMA synchronous = FULL",
        Dialect::Postgres => "SET synchronous_commit = on",
    };
    if let Err(e) = sqlx::query(sql).execute(&mut **conn).await {
        // Never hand back a writer that no longer flushes: close it; the pool opens a new one.
        conn.close_on_drop();
        return Err(e);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Backend;

    #[tokio::test]
    async fn payloads_keep_their_kind_and_an_unknown_kind_is_claimed_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let control = ControlDb::open(&Backend::Sqlite { data_dir: dir.path().into() }).await.unwrap();
        let request = CapturedRequest {
            method: "POST".into(),
            uri: "/x".into(),
            headers: vec![("a".into(), "b".into())],
            body: b"hi".to_vec(),
            door: Door::Open,
        };
        let job = NewJob {
            id: "1".repeat(32),
            customer_id: "demo".into(),
            extension: "e".into(),
            accepted_at: 1,
            payload: JobPayload::Http(request),
        };
        control.insert_jobs(&[job]).await.unwrap();
        // A row of a kind a newer node wrote.
        sqlx::query("INSERT INTO extension_jobs (id, customer_id, extension, state, accepted_at, kind, payload, method, uri, headers, body) VALUES (?, 'demo', 'e', 'queued', 2, 'flow-step', '{}', '', '', '[]', x'')")
            .bind("2".repeat(32))
            .execute(&mut *control.db.writer().await.unwrap())
            .await
            .unwrap();
        let claimed = control.claim_jobs("demo", 10, 3, "node").await.unwrap();
        assert_eq!(claimed.len(), 2);
        match &claimed[0].payload {
            JobPayload::Http(r) => {
                assert_eq!((r.method.as_str(), r.body.as_slice(), r.headers.len(), r.door), ("POST", &b"hi"[..], 1, Door::Open))
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(&claimed[1].payload, JobPayload::Work { kind, .. } if kind == "flow-step"));
        assert_eq!(control.job(&"1".repeat(32)).await.unwrap().unwrap().door, Some(Door::Open));
    }

    #[tokio::test]
    async fn an_interrupted_import_goes_back_however_often_and_other_jobs_fail_the_second_time() {
        let dir = tempfile::tempdir().unwrap();
        let control = ControlDb::open(&Backend::Sqlite { data_dir: dir.path().into() }).await.unwrap();
        let job =
            |id: &str, payload| NewJob { id: id.repeat(32), customer_id: "demo".into(), extension: String::new(), accepted_at: 1, payload };
        let jobs = [job("1", JobPayload::work("import", r#"{"import": "i"}"#.into())), job("2", JobPayload::work("flow", "{}".into()))];
        control.insert_jobs(&jobs).await.unwrap();
        // Each round: claimed by a node that then stops, recovered by the next start.
        let mut rounds = Vec::new();
        for _ in 0..3 {
            let claimed = control.claim_jobs("demo", 10, 2, "gone").await.unwrap().len();
            rounds.push((claimed, control.recover_jobs(3, i64::MAX, "own").await.unwrap()));
        }
        assert_eq!(rounds, vec![(2, (2, 0)), (2, (1, 1)), (1, (1, 0))]);
        let states: Vec<(String, String)> = sqlx::query_as("SELECT kind, state FROM extension_jobs ORDER BY id")
            .fetch_all(&mut *control.db.writer().await.unwrap())
            .await
            .unwrap();
        assert_eq!(states, [("import".to_string(), "queued".to_string()), ("flow".to_string(), "failed".to_string())]);
    }
}
