//! The typed tables of an instance, brought in line with its model. `ensure` is idempotent and
//! only ever adds: tables, columns and unique indexes that are missing are created, unique indexes
//! of fields no longer unique are dropped. Refusing changes that lose data is the model's job
//! (`model::evolve`); this module trusts the model it is given.

use std::collections::HashSet;

use sqlx::{AnyConnection, Row};

use super::codec::column_type;
use crate::model::{column, DataModel, FieldType, TableDef};
use crate::rsql::Dialect;
use crate::store::{StoreError, StoreResult};

/// The fixed tables of every instance on SQLite, by schema version (append-only).
const BASE_SCHEMA_SQLITE: &[&str] = &[
    // version 1
    "CREATE TABLE recipients (_id INTEGER PRIMARY KEY AUTOINCREMENT);
     CREATE TABLE _global_data (
         name TEXT PRIMARY KEY, value TEXT, created INTEGER NOT NULL, modified INTEGER NOT NULL);
     CREATE TABLE _events (
         _recipient INTEGER NOT NULL REFERENCES recipients(_id) ON DELETE CASCADE,
         event TEXT NOT NULL, achieved_at TEXT NOT NULL);
     CREATE INDEX _events_by_recipient ON _events(_recipient, achieved_at);
     CREATE TABLE _communications (
         _recipient INTEGER NOT NULL REFERENCES recipients(_id) ON DELETE CASCADE,
         channel TEXT NOT NULL, subject TEXT, sent_at TEXT NOT NULL);
     CREATE INDEX _communications_by_recipient ON _communications(_recipient, sent_at);",
    // version 2: paging documents (frozen selections, see store::tenant::paging)
    "CREATE TABLE _paging_documents (
         id TEXT PRIMARY KEY, size INTEGER NOT NULL,
         created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL);
     CREATE INDEX _paging_documents_by_expiry ON _paging_documents(expires_at);
     CREATE TABLE _paging_chunks (
         document TEXT NOT NULL REFERENCES _paging_documents(id) ON DELETE CASCADE,
         chunk INTEGER NOT NULL, keys BLOB NOT NULL, PRIMARY KEY (document, chunk));",
    // version 3: uploaded extensions (the files live in the instance's extensions/ folder)
    "CREATE TABLE _extensions (
         path TEXT PRIMARY KEY, type TEXT NOT NULL, size INTEGER NOT NULL,
         sha256 TEXT NOT NULL, updated_at INTEGER NOT NULL);",
    // version 4: what extension executions logged (kept per extension, the newest 100)
    "CREATE TABLE _extension_logs (
         id INTEGER PRIMARY KEY AUTOINCREMENT, extension TEXT NOT NULL, at INTEGER NOT NULL,
         duration_ms INTEGER NOT NULL, outcome TEXT NOT NULL, log TEXT NOT NULL,
         stdout TEXT NOT NULL, stderr TEXT NOT NULL);
     CREATE INDEX _extension_logs_by_extension ON _extension_logs(extension, id);",
    // version 5: the components themselves, by content hash, so that any process sharing the
    // database can serve an extension uploaded through another
    "CREATE TABLE _extension_blobs (sha256 TEXT PRIMARY KEY, content BLOB NOT NULL);",
    // version 6: flows the instance's people define through the API (the operator's are in the
    // model), as JSON, with a version that goes up with every change
    "CREATE TABLE _flows (name TEXT PRIMARY KEY, definition TEXT NOT NULL, version INTEGER NOT NULL, updated_at INTEGER NOT NULL);",
    // version 7: flow runs (one per flow and recipient triggered, with the flow as it was when
    // the run started and its trace), and what a flow's `send` wrote to the communication history
    "CREATE TABLE _flow_runs (
         id TEXT PRIMARY KEY, flow TEXT NOT NULL, version INTEGER NOT NULL, definition TEXT NOT NULL,
         _recipient INTEGER NOT NULL REFERENCES recipients(_id) ON DELETE CASCADE,
         trigger TEXT NOT NULL, depth INTEGER NOT NULL, state TEXT NOT NULL, position TEXT NOT NULL,
         started_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, resume_at INTEGER, outcome TEXT,
         trace TEXT NOT NULL);
     CREATE INDEX _flow_runs_by_flow ON _flow_runs(flow, _recipient, started_at);
     CREATE INDEX _flow_runs_by_recipient ON _flow_runs(_recipient);
     ALTER TABLE _communications ADD COLUMN template TEXT;
     ALTER TABLE _communications ADD COLUMN flow TEXT;
     ALTER TABLE _communications ADD COLUMN content TEXT;",
    // version 8: files every node reads the same (Context Parameter Schemas, committed templates)
    "CREATE TABLE _shared_files (area TEXT NOT NULL, path TEXT NOT NULL, content BLOB NOT NULL, updated_at INTEGER NOT NULL,
         PRIMARY KEY (area, path));",
    // version 9: the instance's secrets (sealed, see `secrets::keys`), each extension's
    // configuration section (bound hosts, schedules, read at upload), and monitors' reports
    "CREATE TABLE _secrets (name TEXT PRIMARY KEY, key_id TEXT NOT NULL, sealed BLOB NOT NULL, set_at INTEGER NOT NULL);
     ALTER TABLE _extensions ADD COLUMN config TEXT;
     CREATE TABLE _monitor_runs (
         id INTEGER PRIMARY KEY AUTOINCREMENT, extension TEXT NOT NULL, at INTEGER NOT NULL,
         duration_ms INTEGER NOT NULL, status TEXT NOT NULL, message TEXT NOT NULL);
     CREATE INDEX _monitor_runs_by_extension ON _monitor_runs(extension, id);",
    // version 10: what a failed execution was given, for its author's replays
    "ALTER TABLE _extension_logs ADD COLUMN input TEXT;",
    // version 11: how many runs each chain of events has started (`domain::triggers::Lineage`)
    "CREATE TABLE _flow_chains (id TEXT PRIMARY KEY, runs INTEGER NOT NULL, started_at INTEGER NOT NULL);
     CREATE INDEX _flow_chains_by_start ON _flow_chains(started_at);",
    // version 12: the media area in the store (`media_files.rs`): every file under `media/` and
    // `committed/` by its path in the instance's folder (a folder as `path/`, empty), with its
    // SHA-256, and the generation every change goes up; the shared files of version 8 move in
    "CREATE TABLE _media_files (path TEXT PRIMARY KEY, content BLOB NOT NULL, digest TEXT NOT NULL, size INTEGER NOT NULL,
         updated_at INTEGER NOT NULL);
     INSERT INTO _media_files (path, content, digest, size, updated_at)
         SELECT CASE area WHEN 'contexts' THEN 'media/contexts/' ELSE 'committed/templates/' END || path, content, '', length(content), updated_at
         FROM _shared_files;
     DROP TABLE _shared_files;
     CREATE TABLE _media_state (id INTEGER PRIMARY KEY, generation INTEGER NOT NULL);
     INSERT INTO _media_state (id, generation) VALUES (1, 1);",
    // version 13: bulk imports (`imports.rs`): each import, its body in pieces, its rejected rows
    "CREATE TABLE _imports (
         id TEXT PRIMARY KEY, target TEXT NOT NULL, format TEXT NOT NULL, key_field TEXT NOT NULL, triggers TEXT NOT NULL,
         state TEXT NOT NULL, size INTEGER NOT NULL, columns TEXT NOT NULL, created_at INTEGER NOT NULL,
         started_at INTEGER, finished_at INTEGER, next_offset INTEGER NOT NULL, next_row INTEGER NOT NULL,
         rows_read INTEGER NOT NULL, created INTEGER NOT NULL, updated INTEGER NOT NULL, rejected INTEGER NOT NULL, message TEXT);
     CREATE INDEX _imports_by_creation ON _imports(created_at);
     CREATE TABLE _import_chunks (import_id TEXT NOT NULL, seq INTEGER NOT NULL, content BLOB NOT NULL, PRIMARY KEY (import_id, seq));
     CREATE TABLE _import_errors (
         import_id TEXT NOT NULL, row_number INTEGER NOT NULL, field TEXT, message TEXT NOT NULL, PRIMARY KEY (import_id, row_number));",
    // version 14: a flow's runs by when they started, for its counts over a period (`flow_stats.rs`)
    "CREATE INDEX _flow_runs_by_start ON _flow_runs(flow, started_at);",
    // version 15: what each execution used, its receipt (`extensions.rs`, `Usage` as JSON)
    "ALTER TABLE _extension_logs ADD COLUMN receipt TEXT;",
];

/// The same tables on PostgreSQL, version for version. Milliseconds and keys are BIGINT; events
/// and communications keep their insertion order in `_seq` (SQLite's rowid).
const BASE_SCHEMA_POSTGRES: &[&str] = &[
    "CREATE TABLE recipients (_id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY);
     CREATE TABLE _global_data (
         name TEXT COLLATE \"C\" PRIMARY KEY, value TEXT COLLATE \"C\", created BIGINT NOT NULL, modified BIGINT NOT NULL);
     CREATE TABLE _events (
         _seq BIGINT GENERATED ALWAYS AS IDENTITY,
         _recipient BIGINT NOT NULL REFERENCES recipients(_id) ON DELETE CASCADE,
         event TEXT COLLATE \"C\" NOT NULL, achieved_at TEXT COLLATE \"C\" NOT NULL);
     CREATE INDEX _events_by_recipient ON _events(_recipient, achieved_at);
     CREATE TABLE _communications (
         _seq BIGINT GENERATED ALWAYS AS IDENTITY,
         _recipient BIGINT NOT NULL REFERENCES recipients(_id) ON DELETE CASCADE,
         channel TEXT COLLATE \"C\" NOT NULL, subject TEXT COLLATE \"C\", sent_at TEXT COLLATE \"C\" NOT NULL);
     CREATE INDEX _communications_by_recipient ON _communications(_recipient, sent_at);",
    "CREATE TABLE _paging_documents (
         id TEXT COLLATE \"C\" PRIMARY KEY, size BIGINT NOT NULL,
         created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL);
     CREATE INDEX _paging_documents_by_expiry ON _paging_documents(expires_at);
     CREATE TABLE _paging_chunks (
         document TEXT COLLATE \"C\" NOT NULL REFERENCES _paging_documents(id) ON DELETE CASCADE,
         chunk BIGINT NOT NULL, keys BYTEA NOT NULL, PRIMARY KEY (document, chunk));",
    "CREATE TABLE _extensions (
         path TEXT COLLATE \"C\" PRIMARY KEY, type TEXT COLLATE \"C\" NOT NULL, size BIGINT NOT NULL,
         sha256 TEXT COLLATE \"C\" NOT NULL, updated_at BIGINT NOT NULL);",
    "CREATE TABLE _extension_logs (
         id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, extension TEXT COLLATE \"C\" NOT NULL, at BIGINT NOT NULL,
         duration_ms BIGINT NOT NULL, outcome TEXT COLLATE \"C\" NOT NULL, log TEXT COLLATE \"C\" NOT NULL,
         stdout TEXT COLLATE \"C\" NOT NULL, stderr TEXT COLLATE \"C\" NOT NULL);
     CREATE INDEX _extension_logs_by_extension ON _extension_logs(extension, id);",
    "CREATE TABLE _extension_blobs (sha256 TEXT COLLATE \"C\" PRIMARY KEY, content BYTEA NOT NULL);",
    "CREATE TABLE _flows (name TEXT COLLATE \"C\" PRIMARY KEY, definition TEXT COLLATE \"C\" NOT NULL, version BIGINT NOT NULL, updated_at BIGINT NOT NULL);",
    "CREATE TABLE _flow_runs (
         id TEXT COLLATE \"C\" PRIMARY KEY, flow TEXT COLLATE \"C\" NOT NULL, version BIGINT NOT NULL, definition TEXT NOT NULL,
         _recipient BIGINT NOT NULL REFERENCES recipients(_id) ON DELETE CASCADE,
         trigger TEXT NOT NULL, depth BIGINT NOT NULL, state TEXT COLLATE \"C\" NOT NULL, position TEXT NOT NULL,
         started_at BIGINT NOT NULL, updated_at BIGINT NOT NULL, resume_at BIGINT, outcome TEXT,
         trace TEXT NOT NULL);
     CREATE INDEX _flow_runs_by_flow ON _flow_runs(flow, _recipient, started_at);
     CREATE INDEX _flow_runs_by_recipient ON _flow_runs(_recipient);
     ALTER TABLE _communications ADD COLUMN template TEXT COLLATE \"C\";
     ALTER TABLE _communications ADD COLUMN flow TEXT COLLATE \"C\";
     ALTER TABLE _communications ADD COLUMN content TEXT;",
    "CREATE TABLE _shared_files (area TEXT COLLATE \"C\" NOT NULL, path TEXT COLLATE \"C\" NOT NULL, content BYTEA NOT NULL,
         updated_at BIGINT NOT NULL, PRIMARY KEY (area, path));",
    "CREATE TABLE _secrets (name TEXT COLLATE \"C\" PRIMARY KEY, key_id TEXT NOT NULL, sealed BYTEA NOT NULL, set_at BIGINT NOT NULL);
     ALTER TABLE _extensions ADD COLUMN config TEXT;
     CREATE TABLE _monitor_runs (
         id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, extension TEXT COLLATE \"C\" NOT NULL, at BIGINT NOT NULL,
         duration_ms BIGINT NOT NULL, status TEXT NOT NULL, message TEXT NOT NULL);
     CREATE INDEX _monitor_runs_by_extension ON _monitor_runs(extension, id);",
    "ALTER TABLE _extension_logs ADD COLUMN input TEXT;",
    "CREATE TABLE _flow_chains (id TEXT COLLATE \"C\" PRIMARY KEY, runs BIGINT NOT NULL, started_at BIGINT NOT NULL);
     CREATE INDEX _flow_chains_by_start ON _flow_chains(started_at);",
    "CREATE TABLE _media_files (path TEXT COLLATE \"C\" PRIMARY KEY, content BYTEA NOT NULL, digest TEXT COLLATE \"C\" NOT NULL,
         size BIGINT NOT NULL, updated_at BIGINT NOT NULL);
     INSERT INTO _media_files (path, content, digest, size, updated_at)
         SELECT CASE area WHEN 'contexts' THEN 'media/contexts/' ELSE 'committed/templates/' END || path, content, '', octet_length(content), updated_at
         FROM _shared_files;
     DROP TABLE _shared_files;
     CREATE TABLE _media_state (id BIGINT PRIMARY KEY, generation BIGINT NOT NULL);
     INSERT INTO _media_state (id, generation) VALUES (1, 1);",
    "CREATE TABLE _imports (
         id TEXT COLLATE \"C\" PRIMARY KEY, target TEXT NOT NULL, format TEXT NOT NULL, key_field TEXT NOT NULL, triggers TEXT NOT NULL,
         state TEXT COLLATE \"C\" NOT NULL, size BIGINT NOT NULL, columns TEXT NOT NULL, created_at BIGINT NOT NULL,
         started_at BIGINT, finished_at BIGINT, next_offset BIGINT NOT NULL, next_row BIGINT NOT NULL,
         rows_read BIGINT NOT NULL, created BIGINT NOT NULL, updated BIGINT NOT NULL, rejected BIGINT NOT NULL, message TEXT);
     CREATE INDEX _imports_by_creation ON _imports(created_at);
     CREATE TABLE _import_chunks (import_id TEXT COLLATE \"C\" NOT NULL, seq BIGINT NOT NULL, content BYTEA NOT NULL,
         PRIMARY KEY (import_id, seq));
     CREATE TABLE _import_errors (
         import_id TEXT COLLATE \"C\" NOT NULL, row_number BIGINT NOT NULL, field TEXT, message TEXT NOT NULL,
         PRIMARY KEY (import_id, row_number));",
    "CREATE INDEX _flow_runs_by_start ON _flow_runs(flow, started_at);",
    "ALTER TABLE _extension_logs ADD COLUMN receipt TEXT;",
];

/// The column that keeps insertion order where no other column does.
pub fn insertion_order(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Sqlite => "rowid",
        Dialect::Postgres => "_seq",
    }
}

/// The SQL name of a One-To-Many table.
pub fn otm_table(name: &str) -> String {
    column(&format!("otm_{name}"))
}

/// The SQL name of a Global Data Table.
pub fn gdt_table(name: &str) -> String {
    column(&format!("gdt_{name}"))
}

pub async fn ensure(conn: &mut AnyConnection, dialect: Dialect, model: &DataModel) -> StoreResult<()> {
    let base = match dialect {
        Dialect::Sqlite => BASE_SCHEMA_SQLITE,
        Dialect::Postgres => {
            // Nodes starting at once would race on the DDL: one at a time per instance.
            sqlx::query("SELECT pg_advisory_xact_lock(hashtext(current_schema()))").execute(&mut *conn).await?;
            sqlx::query("CREATE TABLE IF NOT EXISTS _schema_version (version BIGINT NOT NULL)").execute(&mut *conn).await?;
            BASE_SCHEMA_POSTGRES
        }
    };
    let version = schema_version(conn, dialect).await?;
    for (i, ddl) in base.iter().enumerate().skip(version as usize) {
        sqlx::raw_sql(ddl).execute(&mut *conn).await?;
        set_schema_version(conn, dialect, i as i64 + 1).await?;
    }

    let existing = columns(conn, dialect, "recipients").await?;
    for f in model.person_data.iter().filter(|f| !existing.contains(&f.name.to_ascii_lowercase())) {
        let sql = format!("ALTER TABLE recipients ADD COLUMN {} {}", column(&f.name), column_type(f.ty, dialect));
        sqlx::query(&sql).execute(&mut *conn).await?;
    }
    for f in &model.person_data {
        let index = column(&format!("recipients_unique_{}", f.name));
        if f.unique {
            let sql = format!("CREATE UNIQUE INDEX IF NOT EXISTS {index} ON recipients({})", column(&f.name));
            sqlx::query(&sql).execute(&mut *conn).await.map_err(|e| match e {
                sqlx::Error::Database(d) if d.is_unique_violation() => {
                    StoreError::Invalid(format!("cannot make {} unique: some recipients share a value", f.name))
                }
                e => e.into(),
            })?;
        } else {
            sqlx::query(&format!("DROP INDEX IF EXISTS {index}")).execute(&mut *conn).await?;
        }
    }
    // Range filters and sorting on typed columns use these.
    for f in model.person_data.iter().filter(|f| !f.unique && f.ty != FieldType::Boolean) {
        let sql = format!("CREATE INDEX IF NOT EXISTS {} ON recipients({})", column(&format!("recipients_by_{}", f.name)), column(&f.name));
        sqlx::query(&sql).execute(&mut *conn).await?;
    }
    for t in &model.one_to_many {
        ensure_table(conn, dialect, &otm_table(&t.name), t, true).await?;
    }
    for t in &model.global_data_tables {
        ensure_table(conn, dialect, &gdt_table(&t.name), t, false).await?;
    }
    Ok(())
}

async fn ensure_table(conn: &mut AnyConnection, dialect: Dialect, sql_name: &str, t: &TableDef, per_recipient: bool) -> StoreResult<()> {
    let id = t.identifier();
    let key = if per_recipient {
        let key_type = if dialect == Dialect::Postgres { "BIGINT" } else { "INTEGER" };
        format!(
            "_recipient {key_type} NOT NULL REFERENCES recipients(_id) ON DELETE CASCADE, {} {} NOT NULL, PRIMARY KEY (_recipient, {})",
            column(&id.name),
            column_type(id.ty, dialect),
            column(&id.name)
        )
    } else {
        format!("{} {} NOT NULL PRIMARY KEY", column(&id.name), column_type(id.ty, dialect))
    };
    sqlx::query(&format!("CREATE TABLE IF NOT EXISTS {sql_name} ({key})")).execute(&mut *conn).await?;
    let unquoted = sql_name.trim_matches('"');
    let existing = columns(conn, dialect, unquoted).await?;
    for f in t.fields.iter().filter(|f| !existing.contains(&f.name.to_ascii_lowercase())) {
        let sql = format!("ALTER TABLE {sql_name} ADD COLUMN {} {}", column(&f.name), column_type(f.ty, dialect));
        sqlx::query(&sql).execute(&mut *conn).await?;
    }
    Ok(())
}

async fn columns(conn: &mut AnyConnection, dialect: Dialect, table: &str) -> StoreResult<HashSet<String>> {
    let sql = match dialect {
        Dialect::Sqlite => "SELECT name FROM pragma_table_info(?)",
        Dialect::Postgres => {
            "SELECT column_name::TEXT FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1"
        }
    };
    let rows = sqlx::query(sql).bind(table).fetch_all(&mut *conn).await?;
    Ok(rows.iter().map(|r| r.get::<String, _>(0).to_ascii_lowercase()).collect())
}

async fn schema_version(conn: &mut AnyConnection, dialect: Dialect) -> StoreResult<i64> {
    let sql = match dialect {
        Dialect::Sqlite => "PRAGMA user_version",
        Dialect::Postgres => "SELECT COALESCE(MAX(version), 0) FROM _schema_version",
    };
    Ok(sqlx::query(sql).fetch_one(&mut *conn).await?.get(0))
}

async fn set_schema_version(conn: &mut AnyConnection, dialect: Dialect, version: i64) -> StoreResult<()> {
    match dialect {
        Dialect::Sqlite => sqlx::query(&format!("PRAGMA user_version = {version}")).execute(&mut *conn).await?,
        Dialect::Postgres => {
            sqlx::query("DELETE FROM _schema_version").execute(&mut *conn).await?;
            sqlx::query("INSERT INTO _schema_version (version) VALUES ($1)").bind(version).execute(&mut *conn).await?
        }
    };
    Ok(())
}
