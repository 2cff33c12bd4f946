//! The `herald` binary itself, without a server: flags it refuses and what it says. (Having an
//! integration test here also makes `cargo test --workspace` build the binary, which the
//! end-to-end suite in tests/ runs.)

use std::path::Path;
use std::process::{Command, Output};

fn herald(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_herald"))
        .args(args)
        .env("HERALD_DATA_DIR", dir)
        .env_remove("HERALD_DATABASE_URL")
        .output()
        .expect("herald runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_database_url_that_is_not_postgres_or_unreachable_is_refused_without_echoing_its_password() {
    let dir = tempfile::tempdir().unwrap();
    let o = herald(dir.path(), &["instance", "list", "--database-url", "mysql://u:secret@h/db"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("must be a postgres://"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("secret"), "the URL's password is not echoed");
    // Nothing listens on port 1.
    let o = herald(dir.path(), &["instance", "list", "--database-url", "postgres://u:secret@127.0.0.1:1/db"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("opening the control database"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("secret"), "the URL's password is not echoed: {}", stderr(&o));
}
