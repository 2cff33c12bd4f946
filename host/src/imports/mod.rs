//! Bulk imports of recipients (`POST /recipients/:import`, `herald import`) and of Global Data
//! Table records (`POST /globaldata/tables/{t}/:import`): a CSV or NDJSON file of any size up to
//! the operator's limit, written as upserts by a key field with the REST API's rules, while the
//! caller watches `GET /imports/{id}`.
//!
//! - `receive`: the body goes into the instance's store in pieces as it arrives; what its start
//!   says (text, header) is checked before anything is stored. The import is then queued.
//! - `run_stretch`: a job of the queue reads the body from where the import stands
//!   (`reader`), turns records into rows (`rows`) and writes them in batches of `BATCH_ROWS`, each
//!   one turn of the group commit with the import's new position
//!   (`store::tenant::import_rows`): a crash or a restart resumes at the row it had reached, on
//!   any node over the same database, and no row is applied twice. A stretch lasts a second or
//!   two and gives way to the API's calls before every batch, then queues its continuation, so
//!   an import takes a worker's place only as long as any job does and other instances' work is
//!   dispatched between its stretches.
//! - An instance runs `RUNNING_AT_ONCE` imports at a time; the others wait queued, up to
//!   `UNFINISHED_AT_MOST` in all (the API answers 429 beyond).

pub mod reader;
pub mod receive;
pub mod rows;

use std::sync::Arc;
use std::time::{Duration, Instant};

use reader::{Cursor, ReadError, Record};

use crate::connections::InFlight;
use crate::domain::triggers::{Happening, Lineage, Triggers};
use crate::model::Model;
use crate::store::tenant::{gdt_table, BatchOutcome, ImportBatch, ImportRecord, ImportStart, ImportState, NewImport, TableRef};
use crate::tenants::{Activation, Tenant, Tenants};

/// Rows written in one transaction.
pub const BATCH_ROWS: usize = 2000;

/// Imports of one instance running at once; the others wait their turn.
pub const RUNNING_AT_ONCE: i64 = 2;

/// Imports of one instance not yet over (running and queued): past it a new one is refused.
pub const UNFINISHED_AT_MOST: i64 = RUNNING_AT_ONCE + 10;

/// The default largest body of an import (`--import-max-mb`): 1 GiB.
pub const DEFAULT_MAX_BYTES: u64 = 1024 * 1024 * 1024;

/// The longest a stretch writes before it queues its continuation.
const STRETCH: Duration = Duration::from_secs(2);

/// How long a queued import waits before it looks again for its turn, and a stretch that met a
/// store failure before it tries again.
const WAIT_TURN: Duration = Duration::from_millis(500);
const AFTER_FAILURE: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Csv,
    Ndjson,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Ndjson => "ndjson",
        }
    }

    pub fn parse(name: &str) -> Option<Format> {
        match name {
            "csv" => Some(Format::Csv),
            "ndjson" => Some(Format::Ndjson),
            _ => None,
        }
    }
}

/// What an import writes: recipients, or the records of a Global Data Table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Recipients,
    GlobalTable(String),
}

impl Target {
    /// As stored and shown: `recipients` or `globaldata/<table>`.
    pub fn name(&self) -> String {
        match self {
            Target::Recipients => "recipients".into(),
            Target::GlobalTable(table) => format!("globaldata/{table}"),
        }
    }

    fn parse(name: &str) -> Option<Target> {
        match name.strip_prefix("globaldata/") {
            Some(table) => Some(Target::GlobalTable(table.to_string())),
            None => (name == "recipients").then_some(Target::Recipients),
        }
    }
}

/// What an import does, read against the instance's model.
#[derive(Debug, Clone)]
pub struct ImportPlan {
    pub format: Format,
    pub target: Target,
    /// The field that names each row's record: a unique Person Data field, or a table's
    /// identifier.
    pub key_field: usize,
    /// Whether a recipient the import creates starts the flows its creation triggers.
    pub trigger_created: bool,
}

impl ImportPlan {
    /// The plan of `key` (a unique Person Data field; the Recipient Id when `None`) and
    /// `triggers` (`none` or `created`); the error says what is wrong.
    pub fn new(model: &Model, format: Format, key: Option<&str>, triggers: Option<&str>) -> Result<ImportPlan, String> {
        let fields = &model.def.person_data;
        let key_field = match key {
            None => model.def.recipient_id_index(),
            Some(name) => {
                let index =
                    fields.iter().position(|f| f.name == name).ok_or_else(|| format!("'key' names no Person Data field: {name}"))?;
                if !fields[index].unique {
                    return Err(format!("'key' must name a unique Person Data field; {name} is not unique"));
                }
                index
            }
        };
        let trigger_created = match triggers.unwrap_or("none") {
            "none" => false,
            "created" => true,
            other => return Err(format!("'triggers' is 'none' or 'created', not '{other}'")),
        };
        Ok(ImportPlan { format, target: Target::Recipients, key_field, trigger_created })
    }

    /// The plan of an import of Global Data Table `table`'s records: upserts by its identifier.
    pub fn for_table(model: &Model, format: Format, table: &str) -> Result<ImportPlan, String> {
        let def = model.def.global_data_table(table).ok_or_else(|| format!("the instance has no Global Data Table {table}"))?;
        let key_field = rows::Shape { model, table: Some(def) }.identifier();
        Ok(ImportPlan { format, target: Target::GlobalTable(def.name.clone()), key_field, trigger_created: false })
    }

    /// The fields the rows set.
    pub fn shape<'m>(&self, model: &'m Model) -> rows::Shape<'m> {
        let table = match &self.target {
            Target::Recipients => None,
            Target::GlobalTable(name) => model.def.global_data_table(name),
        };
        rows::Shape { model, table }
    }

    /// The record of a new import of `model`'s recipients with this plan, created now.
    pub fn new_import(&self, model: &Model, id: String) -> NewImport {
        NewImport {
            id,
            target: self.target.name(),
            format: self.format.name().into(),
            key_field: self.shape(model).name(self.key_field).to_string(),
            triggers: if self.trigger_created { "created" } else { "none" }.into(),
            created_at: crate::store::now_millis(),
        }
    }

    /// The plan a stored import was given; an error when the model has changed under it.
    fn of(model: &Model, record: &ImportRecord) -> Result<ImportPlan, String> {
        let format = Format::parse(&record.format).ok_or_else(|| format!("unknown stored format '{}'", record.format))?;
        let plan = match Target::parse(&record.target) {
            Some(Target::Recipients) => ImportPlan::new(model, format, Some(&record.key_field), Some(&record.triggers)),
            Some(Target::GlobalTable(table)) => ImportPlan::for_table(model, format, &table),
            None => return Err(format!("unknown stored target '{}'", record.target)),
        };
        plan.map_err(|e| format!("the data model changed since the import was queued: {e}"))
    }
}

/// What a stretch leaves to do.
#[derive(Debug, PartialEq, Eq)]
pub enum Stretch {
    /// The import is over (or gone): no continuation.
    Over,
    /// Go on in another stretch after this long.
    Again(Duration),
}

/// What a stretch runs with.
pub struct ImportWork<'a> {
    pub triggers: Option<&'a Arc<dyn Triggers>>,
    /// The API's calls in flight, which each batch gives way to.
    pub api_calls: &'a InFlight,
    /// How long a stretch may run (within the queue's execution limit).
    pub budget: Duration,
    /// How many steps below the API's priority the database's backend applies each batch, where
    /// that can be done (`store::backend_priority`; 0: at its own).
    pub backend_nice: u8,
}

/// The name of the queue's jobs that run imports (`queue::import_stretch`), as the store keeps it.
pub const JOB_KIND: &str = "import";

/// The job's payload for import `id`.
pub fn job_payload(id: &str) -> String {
    serde_json::json!({ "import": id }).to_string()
}

/// Runs one stretch of the import a job's `payload` names, for instance `customer_id`.
pub async fn run_stretch(work: &ImportWork<'_>, tenants: &Tenants, customer_id: &str, payload: &str) -> Stretch {
    let Some(id) = serde_json::from_str::<serde_json::Value>(payload).ok().and_then(|v| v["import"].as_str().map(str::to_string)) else {
        tracing::error!(payload, "an import job without an import id");
        return Stretch::Over;
    };
    let tenant = match tenants.activate(customer_id).await {
        Ok(tenant) => tenant,
        Err(Activation::Missing) => return Stretch::Over,
        Err(Activation::Unavailable(_)) => return Stretch::Again(AFTER_FAILURE),
    };
    match run_import(work, &tenant, &id).await {
        Ok(next) => next,
        Err(e) => {
            tracing::warn!(instance = customer_id, import = %id, error = %e, "an import stretch stopped; it goes on from its last batch");
            Stretch::Again(AFTER_FAILURE)
        }
    }
}

/// Runs one stretch of import `id` of `tenant` (the operator's `herald import` calls it in a loop).
pub async fn run_import(work: &ImportWork<'_>, tenant: &Arc<Tenant>, id: &str) -> crate::store::StoreResult<Stretch> {
    let started = Instant::now();
    let db = &tenant.db;
    match db.start_import(id, crate::store::now_millis(), RUNNING_AT_ONCE).await? {
        ImportStart::Running => {}
        ImportStart::Wait => return Ok(Stretch::Again(WAIT_TURN)),
        ImportStart::Over => return Ok(Stretch::Over),
    }
    let Some(record) = db.import(id).await? else { return Ok(Stretch::Over) };
    let model = &tenant.model;
    let (plan, columns) = match ImportPlan::of(model, &record).and_then(|plan| {
        let columns = if plan.format == Format::Csv { rows::columns(plan.shape(model), &record.columns)? } else { Vec::new() };
        Ok((plan, columns))
    }) {
        Ok(ready) => ready,
        Err(message) => return fail(tenant, id, &message).await,
    };
    let shape = plan.shape(model);
    let table = shape.table.map(|def| TableRef { sql_name: gdt_table(&def.name), def, recipient: None });
    let mut cursor = Cursor::open(db, id, record.next_offset).await?;
    let (mut next_row, mut rejected) = (record.next_row, record.counts.rejected);
    loop {
        work.api_calls.give_way(Duration::from_millis(1)).await;
        let from_offset = cursor.offset();
        let mut rows = Vec::with_capacity(BATCH_ROWS);
        let mut ended = false;
        while rows.len() < BATCH_ROWS {
            let record = match plan.format {
                Format::Csv => cursor.next_csv().await,
                Format::Ndjson => cursor.next_line().await,
            };
            match record {
                Ok(Record::Cells(cells)) => {
                    rows.extend(rows::csv_row(shape, &columns, next_row, cells));
                    next_row += 1;
                }
                Ok(Record::Line(line, lines)) => {
                    rows.push(rows::json_row(shape, next_row + lines - 1, &line));
                    next_row += lines;
                }
                Ok(Record::End) => {
                    ended = true;
                    break;
                }
                Err(ReadError::TooLong) => {
                    let limit = reader::MAX_RECORD_BYTES / (1024 * 1024);
                    return fail(
                        tenant,
                        id,
                        &format!("row {next_row} is longer than {limit} MiB: is the file CSV (or NDJSON) as it says?"),
                    )
                    .await;
                }
                Err(ReadError::Store(e)) => return Err(e),
            }
        }
        if !rows.is_empty() {
            let batch = ImportBatch {
                import_id: id,
                key_field: plan.key_field,
                table: table.as_ref(),
                rows,
                from_offset,
                next_offset: cursor.offset(),
                next_row,
                rejected_before: rejected,
            };
            match db.apply_import_batch(model, &batch, work.backend_nice).await? {
                BatchOutcome::Stale => return Ok(Stretch::Over),
                BatchOutcome::Applied { counts, created } => {
                    rejected += counts.rejected;
                    if let (true, Some(triggers)) = (plan.trigger_created, work.triggers) {
                        for key in created.into_iter().flatten() {
                            triggers.happened(tenant, key, Happening::Created, Lineage::outside()).await;
                        }
                    }
                }
            }
        }
        if ended {
            db.finish_import(id, ImportState::Completed, None, crate::store::now_millis()).await?;
            return Ok(Stretch::Over);
        }
        if started.elapsed() >= work.budget.min(STRETCH) {
            return Ok(Stretch::Again(Duration::ZERO));
        }
    }
}

async fn fail(tenant: &Tenant, id: &str, message: &str) -> crate::store::StoreResult<Stretch> {
    tenant.db.finish_import(id, ImportState::Failed, Some(message), crate::store::now_millis()).await?;
    Ok(Stretch::Over)
}
