//! The backend the end-to-end suite runs on. Without `HERALD_TEST_POSTGRES`, servers use SQLite
//! in their data directory; with it (a URL of a PostgreSQL server's maintenance database, such as
//! `postgres://postgres@127.0.0.1:5432/postgres`), every test server gets a database of its own,
//! created for it and dropped when the test ends. `scripts/test.sh` runs the suite both ways.

use std::sync::atomic::{AtomicU64, Ordering};

use sqlx::Connection;

/// The variable naming the PostgreSQL server to test against.
pub const POSTGRES_VARIABLE: &str = "HERALD_TEST_POSTGRES";

/// A database created for one test, dropped (with its connections) when this is dropped.
pub struct TestDatabase {
    admin_url: String,
    name: String,
    pub url: String,
}

impl TestDatabase {
    /// A fresh database when the suite runs on PostgreSQL; `None` on SQLite.
    pub async fn create() -> Option<TestDatabase> {
        let admin_url = std::env::var(POSTGRES_VARIABLE).ok().filter(|u| !u.is_empty())?;
        Some(TestDatabase::create_on(&admin_url).await)
    }

    /// A fresh database on the PostgreSQL server at `admin_url` (a URL ending in a database to
    /// connect to for creating it).
    pub async fn create_on(admin_url: &str) -> TestDatabase {
        let admin_url = admin_url.to_string();
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!("herald_test_{}_{}_{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed), rand_suffix());
        let mut admin = sqlx::PgConnection::connect(&admin_url).await.expect("the test PostgreSQL server answers");
        sqlx::query(&format!("CREATE DATABASE {name}")).execute(&mut admin).await.expect("a test database is created");
        admin.close().await.ok();
        let url = match admin_url.rsplit_once('/') {
            Some((server, _maintenance)) if !server.ends_with('/') => format!("{server}/{name}"),
            _ => panic!("{POSTGRES_VARIABLE} must end with /<database>"),
        };
        TestDatabase { admin_url, name, url }
    }
}

fn rand_suffix() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos());
    h.finish() as u32
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        // Drop runs inside the test's runtime: the database is dropped from a thread of its own.
        let (admin_url, name) = (self.admin_url.clone(), self.name.clone());
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
            runtime.block_on(async {
                let mut admin = sqlx::PgConnection::connect(&admin_url).await?;
                sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).execute(&mut admin).await?;
                admin.close().await
            })
        })
        .join();
        if !matches!(dropped, Ok(Ok(()))) {
            eprintln!("test database {} could not be dropped", self.name);
        }
    }
}
