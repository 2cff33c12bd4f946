//! The typed tables of an instance, brought in line with its model. `ensure` is idempotent and
//! only ever adds: tables, columns and unique indexes that are missing are created, unique indexes
//! of fields no longer unique are dropped. Refusing changes that lose data is the model's job
//! (`model::evolve`); this module trusts the model it is given.

use std::collections::HashSet;

use sqlx::{Row, SqliteConnection};

use super::codec::column_type;
use crate::model::{column, DataModel, FieldType, TableDef};
use crate::store::{StoreError, StoreResult};

/// The fixed tables of every instance, by schema version (append-only).
const BASE_SCHEMA: &[&str] = &[
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
];

/// The SQL name of a One-To-Many table.
pub fn otm_table(name: &str) -> String {
    column(&format!("otm_{name}"))
}

/// The SQL name of a Global Data Table.
pub fn gdt_table(name: &str) -> String {
    column(&format!("gdt_{name}"))
}

pub async fn ensure(conn: &mut SqliteConnection, model: &DataModel) -> StoreResult<()> {
    let version: i64 = sqlx::query("PRAGMA user_version").fetch_one(&mut *conn).await?.get(0);
    for (i, ddl) in BASE_SCHEMA.iter().enumerate().skip(version as usize) {
        sqlx::raw_sql(ddl).execute(&mut *conn).await?;
        sqlx::query(&format!("PRAGMA user_version = {}", i + 1)).execute(&mut *conn).await?;
    }

    let existing = columns(conn, "recipients").await?;
    for f in model.person_data.iter().filter(|f| !existing.contains(&f.name.to_ascii_lowercase())) {
        let sql = format!("ALTER TABLE recipients ADD COLUMN {} {}", column(&f.name), column_type(f.ty));
        sqlx::query(&sql).execute(&mut *conn).await?;
    }
    for f in &model.person_data {
        let index = column(&format!("recipients_unique_{}", f.name));
        if f.unique {
            let sql = format!("CREATE UNIQUE INDEX IF NOT EXISTS {index} ON recipients({})", column(&f.name));
            sqlx::query(&sql).execute(&mut *conn).await.map_err(|e| match e {
                sqlx::Error::Database(d) if d.is_unique_violation() => StoreError::Invalid(format!(
                    "cannot make {} unique: some recipients share a value",
                    f.name
                )),
                e => e.into(),
            })?;
        } else {
            sqlx::query(&format!("DROP INDEX IF EXISTS {index}")).execute(&mut *conn).await?;
        }
    }
    // Range filters and sorting on typed columns use these.
    for f in model.person_data.iter().filter(|f| !f.unique && f.ty != FieldType::Boolean) {
        let sql = format!(
            "CREATE INDEX IF NOT EXISTS {} ON recipients({})",
            column(&format!("recipients_by_{}", f.name)),
            column(&f.name)
        );
        sqlx::query(&sql).execute(&mut *conn).await?;
    }
    for t in &model.one_to_many {
        ensure_table(conn, &otm_table(&t.name), t, true).await?;
    }
    for t in &model.global_data_tables {
        ensure_table(conn, &gdt_table(&t.name), t, false).await?;
    }
    Ok(())
}

async fn ensure_table(conn: &mut SqliteConnection, sql_name: &str, t: &TableDef, per_recipient: bool) -> StoreResult<()> {
    let id = t.identifier();
    let key = if per_recipient {
        format!("_recipient INTEGER NOT NULL REFERENCES recipients(_id) ON DELETE CASCADE, {} {} NOT NULL, PRIMARY KEY (_recipient, {})",
            column(&id.name), column_type(id.ty), column(&id.name))
    } else {
        format!("{} {} NOT NULL PRIMARY KEY", column(&id.name), column_type(id.ty))
    };
    sqlx::query(&format!("CREATE TABLE IF NOT EXISTS {sql_name} ({key})")).execute(&mut *conn).await?;
    let unquoted = sql_name.trim_matches('"');
    let existing = columns(conn, unquoted).await?;
    for f in t.fields.iter().filter(|f| !existing.contains(&f.name.to_ascii_lowercase())) {
        let sql = format!("ALTER TABLE {sql_name} ADD COLUMN {} {}", column(&f.name), column_type(f.ty));
        sqlx::query(&sql).execute(&mut *conn).await?;
    }
    Ok(())
}

async fn columns(conn: &mut SqliteConnection, table: &str) -> StoreResult<HashSet<String>> {
    let rows = sqlx::query("SELECT name FROM pragma_table_info(?)").bind(table).fetch_all(&mut *conn).await?;
    Ok(rows.iter().map(|r| r.get::<String, _>(0).to_ascii_lowercase()).collect())
}
