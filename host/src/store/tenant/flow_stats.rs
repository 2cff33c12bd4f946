//! A flow's counts over a period, read from its runs (by the index on flow and start): per node of
//! one version, how many runs reached it and which way each went on from it (the `took` of its
//! trace entries, `flows::runner`); per state, how many runs started; when the newest started.
//! The database adds them up (SQLite's `json_each`, PostgreSQL's `jsonb_array_elements`): no
//! trace crosses to Herald.

use sqlx::Row;

use super::{RunState, TenantDb};
use crate::rsql::Dialect;
use crate::store::StoreResult;

/// How many trace entries of `node` went on by `took` (`next`, `else`, `end`, `failed`, `wait`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeCount {
    pub node: String,
    pub took: String,
    pub count: i64,
}

/// Which way an entry went on. Traces written before entries had `took` are read from their
/// result: the last entry of a run that is over is its end, failed or not as the run is.
const TOOK_SQLITE: &str = "COALESCE(json_extract(e.value, '$.took'),
     CASE WHEN json_extract(e.value, '$.result') = 'ok' THEN 'next'
          WHEN json_extract(e.value, '$.result') = 'false: else' THEN 'else'
          WHEN json_extract(e.value, '$.result') LIKE 'waiting %' THEN 'wait'
          WHEN r.state = 'failed' THEN 'failed' ELSE 'end' END)";

const TOOK_POSTGRES: &str = "COALESCE(e.value->>'took',
     CASE WHEN e.value->>'result' = 'ok' THEN 'next'
          WHEN e.value->>'result' = 'false: else' THEN 'else'
          WHEN e.value->>'result' LIKE 'waiting %' THEN 'wait'
          WHEN r.state = 'failed' THEN 'failed' ELSE 'end' END)";

impl TenantDb {
    /// The counts of the nodes of `flow` at `version`, over the runs started in `since..until`
    /// (milliseconds).
    pub async fn flow_node_counts(&self, flow: &str, version: i64, since: i64, until: i64) -> StoreResult<Vec<NodeCount>> {
        let sql = match self.dialect() {
            Dialect::Sqlite => format!(
                "SELECT json_extract(e.value, '$.node') AS node, {TOOK_SQLITE} AS took, COUNT(*)
                 FROM _flow_runs r, json_each(r.trace) e
                 WHERE r.flow = ? AND r.version = ? AND r.started_at >= ? AND r.started_at < ?
                   AND json_extract(e.value, '$.node') IS NOT NULL
                 GROUP BY 1, 2"
            ),
            Dialect::Postgres => format!(
                "SELECT e.value->>'node' AS node, {TOOK_POSTGRES} AS took, COUNT(*)
                 FROM _flow_runs r CROSS JOIN LATERAL jsonb_array_elements(r.trace::jsonb) AS e(value)
                 WHERE r.flow = ? AND r.version = ? AND r.started_at >= ? AND r.started_at < ?
                   AND e.value->>'node' IS NOT NULL
                 GROUP BY 1, 2"
            ),
        };
        let sql = self.db.sql_string(sql);
        let rows = sqlx::query(&sql).bind(flow).bind(version).bind(since).bind(until).fetch_all(&mut *self.db.reader().await?).await?;
        rows.iter()
            .map(|r| Ok(NodeCount { node: r.try_get(0)?, took: r.try_get(1)?, count: r.try_get(2)? }))
            .collect::<Result<_, sqlx::Error>>()
            .map_err(Into::into)
    }

    /// How many runs of `flow` (any version) started in `since..until`, by their state now.
    pub async fn flow_run_counts(&self, flow: &str, since: i64, until: i64) -> StoreResult<Vec<(RunState, i64)>> {
        let sql =
            self.db.sql("SELECT state, COUNT(*) FROM _flow_runs WHERE flow = ? AND started_at >= ? AND started_at < ? GROUP BY state");
        let rows = sqlx::query(&sql).bind(flow).bind(since).bind(until).fetch_all(&mut *self.db.reader().await?).await?;
        rows.iter()
            .map(|r| Ok((RunState::parse(&r.try_get::<String, _>(0)?), r.try_get(1)?)))
            .collect::<Result<_, sqlx::Error>>()
            .map_err(Into::into)
    }

    /// When the newest run of `flow` started (milliseconds), if it has run.
    pub async fn flow_last_run(&self, flow: &str) -> StoreResult<Option<i64>> {
        let sql = self.db.sql("SELECT MAX(started_at) FROM _flow_runs WHERE flow = ?");
        let row = sqlx::query(&sql).bind(flow).fetch_one(&mut *self.db.reader().await?).await?;
        Ok(row.try_get::<Option<i64>, _>(0)?)
    }
}
