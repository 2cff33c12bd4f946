//! Flow runs: one row per run (a flow started for one recipient), holding the flow as it was when
//! the run started (a run finishes on that version whatever changes meanwhile), where it is, and
//! its trace. The run's contextual data is not here: it travels with the run's queue job in the
//! control plane and goes when the run ends (`crate::flows`).

use sqlx::any::AnyRow;
use sqlx::Row;

use super::TenantDb;
use crate::store::StoreResult;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunState {
    /// Queued or running.
    Running,
    /// At a `wait`, until `resume_at`.
    Waiting,
    /// Over: every node it reached ran (a false condition without `else` ends a run this way).
    Done,
    /// Ended by a failure (a step that trapped, a template that is missing...): see `outcome`.
    Failed,
}

impl RunState {
    pub fn name(self) -> &'static str {
        match self {
            RunState::Running => "running",
            RunState::Waiting => "waiting",
            RunState::Done => "done",
            RunState::Failed => "failed",
        }
    }

    pub(super) fn parse(text: &str) -> RunState {
        match text {
            "waiting" => RunState::Waiting,
            "done" => RunState::Done,
            "failed" => RunState::Failed,
            _ => RunState::Running,
        }
    }

    pub fn is_over(self) -> bool {
        matches!(self, RunState::Done | RunState::Failed)
    }
}

/// A run about to start.
#[derive(Debug, Clone)]
pub struct NewFlowRun {
    pub id: String,
    pub flow: String,
    pub version: i64,
    /// The flow's definition (JSON) as the run follows it.
    pub definition: String,
    pub recipient: i64,
    /// What started it, for people (`event WELCOME`, `recipient created`, `schedule`).
    pub trigger: String,
    /// How many chained events led to it (0: an API call, a schedule or a creation).
    pub depth: i64,
    pub started_at: i64,
}

/// Where a run is, as saved after each node.
#[derive(Debug, Clone)]
pub struct RunProgress {
    pub state: RunState,
    /// The next node to run: indexes into the nodes, then into `else` branches (JSON array).
    pub position: String,
    pub resume_at: Option<i64>,
    pub outcome: Option<String>,
    /// The trace (JSON array of entries).
    pub trace: String,
    pub updated_at: i64,
}

impl RunProgress {
    /// A run that has not run a node yet.
    pub fn start(now: i64) -> RunProgress {
        RunProgress {
            state: RunState::Running,
            position: "[0]".into(),
            resume_at: None,
            outcome: None,
            trace: "[]".into(),
            updated_at: now,
        }
    }
}

#[derive(Debug, Clone)]
pub struct FlowRun {
    pub id: String,
    pub flow: String,
    pub version: i64,
    pub definition: String,
    pub recipient: i64,
    pub trigger: String,
    pub depth: i64,
    pub started_at: i64,
    pub progress: RunProgress,
}

const COLUMNS: &str =
    "id, flow, version, definition, _recipient, trigger, depth, started_at, state, position, resume_at, outcome, trace, updated_at";

/// Runs stored by one INSERT (14 parameters each: 700, well under SQLite's and PostgreSQL's
/// limits of 32,766 and 65,535).
const ROWS_PER_INSERT: usize = 50;

fn decode(r: &AnyRow) -> Result<FlowRun, sqlx::Error> {
    Ok(FlowRun {
        id: r.try_get(0)?,
        flow: r.try_get(1)?,
        version: r.try_get(2)?,
        definition: r.try_get(3)?,
        recipient: r.try_get(4)?,
        trigger: r.try_get(5)?,
        depth: r.try_get(6)?,
        started_at: r.try_get(7)?,
        progress: RunProgress {
            state: RunState::parse(r.try_get(8)?),
            position: r.try_get(9)?,
            resume_at: r.try_get(10)?,
            outcome: r.try_get(11)?,
            trace: r.try_get(12)?,
            updated_at: r.try_get(13)?,
        },
    })
}

/// How long a chain's count of runs is kept after its first chained run: a week.
pub const CHAIN_KEPT_MS: i64 = 7 * 24 * 3600 * 1000;

impl TenantDb {
    /// Stores new runs, each where it is (just started, or already run by a sweep), in one
    /// transaction, [`ROWS_PER_INSERT`] to a statement: a sweep's batch of 500 runs was 500
    /// statements, each a round trip to the database while every other write of the instance
    /// (its steps', the API's) waited for the turn.
    pub async fn insert_flow_runs(&self, runs: &[(NewFlowRun, RunProgress)]) -> StoreResult<()> {
        let mut turn = self.db.group.turn().await?;
        let done = self.insert_runs(&mut turn, runs).await;
        turn.finish(done).await
    }

    /// Stores runs started by an event achieved inside chain `chain` (see
    /// `domain::triggers::Lineage`), counted against the chain's bound of `max` runs in the same
    /// transaction: false, and nothing stored, when they would take the chain past it. A chain's
    /// count is kept for `CHAIN_KEPT_MS` after its first chained run (then forgotten, so a chain
    /// that waits longer than that starts counting again).
    pub async fn insert_chained_flow_runs(&self, chain: &str, max: i64, now: i64, runs: &[(NewFlowRun, RunProgress)]) -> StoreResult<bool> {
        let n = runs.len() as i64;
        if n > max {
            return Ok(false);
        }
        let count = self.db.sql(
            "INSERT INTO _flow_chains (id, runs, started_at) VALUES (?, ?, ?)
             ON CONFLICT (id) DO UPDATE SET runs = _flow_chains.runs + excluded.runs WHERE _flow_chains.runs + excluded.runs <= ?",
        );
        let forget = self.db.sql("DELETE FROM _flow_chains WHERE started_at < ?");
        let mut turn = self.db.group.turn().await?;
        let done = async {
            sqlx::query(&forget).bind(now - CHAIN_KEPT_MS).execute(&mut *turn).await?;
            let counted = sqlx::query(&count).bind(chain).bind(n).bind(now).bind(max).execute(&mut *turn).await?.rows_affected() > 0;
            if counted {
                self.insert_runs(&mut turn, runs).await?;
            }
            Ok::<_, sqlx::Error>(counted)
        }
        .await;
        turn.finish(done).await
    }

    async fn insert_runs(&self, turn: &mut crate::store::group::Turn, runs: &[(NewFlowRun, RunProgress)]) -> Result<(), sqlx::Error> {
        let row = format!("({})", vec!["?"; 14].join(", "));
        {
            for chunk in runs.chunks(ROWS_PER_INSERT) {
                let rows = vec![row.as_str(); chunk.len()].join(", ");
                let sql = self.db.sql_string(format!("INSERT INTO _flow_runs ({COLUMNS}) VALUES {rows}"));
                let mut query = sqlx::query(&sql);
                for (run, p) in chunk {
                    query = query
                        .bind(&run.id)
                        .bind(&run.flow)
                        .bind(run.version)
                        .bind(&run.definition)
                        .bind(run.recipient)
                        .bind(&run.trigger)
                        .bind(run.depth)
                        .bind(run.started_at)
                        .bind(p.state.name())
                        .bind(&p.position)
                        .bind(p.resume_at)
                        .bind(&p.outcome)
                        .bind(&p.trace)
                        .bind(p.updated_at);
                }
                query.execute(&mut **turn).await?;
            }
            Ok(())
        }
    }

    pub async fn flow_run(&self, id: &str) -> StoreResult<Option<FlowRun>> {
        let sql = self.db.sql_string(format!("SELECT {COLUMNS} FROM _flow_runs WHERE id = ?"));
        let row = sqlx::query(&sql).bind(id).fetch_optional(&mut *self.db.reader().await?).await?;
        Ok(row.as_ref().map(decode).transpose()?)
    }

    /// Saves where run `id` is; false when the run is gone (its recipient was deleted).
    pub async fn save_flow_run(&self, id: &str, p: &RunProgress) -> StoreResult<bool> {
        let sql = self
            .db
            .sql("UPDATE _flow_runs SET state = ?, position = ?, resume_at = ?, outcome = ?, trace = ?, updated_at = ? WHERE id = ?");
        let mut turn = self.db.group.single_write().await?;
        let done = sqlx::query(&sql)
            .bind(p.state.name())
            .bind(&p.position)
            .bind(p.resume_at)
            .bind(&p.outcome)
            .bind(&p.trace)
            .bind(p.updated_at)
            .bind(id)
            .execute(&mut *turn)
            .await;
        turn.finish(done).await.map(|d| d.rows_affected() > 0)
    }

    /// The newest runs of `flow` (of one recipient, when given), newest first, at most `limit`,
    /// started before `before` (for paging).
    pub async fn flow_runs(&self, flow: &str, recipient: Option<i64>, before: Option<i64>, limit: i64) -> StoreResult<Vec<FlowRun>> {
        let mut sql = format!("SELECT {COLUMNS} FROM _flow_runs WHERE flow = ?");
        if recipient.is_some() {
            sql.push_str(" AND _recipient = ?");
        }
        if before.is_some() {
            sql.push_str(" AND started_at < ?");
        }
        sql.push_str(" ORDER BY started_at DESC, id LIMIT ?");
        let sql = self.db.sql_string(sql);
        let mut query = sqlx::query(&sql).bind(flow);
        if let Some(key) = recipient {
            query = query.bind(key);
        }
        if let Some(before) = before {
            query = query.bind(before);
        }
        let rows = query.bind(limit).fetch_all(&mut *self.db.reader().await?).await?;
        Ok(rows.iter().map(decode).collect::<Result<_, _>>()?)
    }
}
