//! The operator's commands, run as the real `herald` binary against the store of a running
//! server (its data directory, or its PostgreSQL database): instances are created and evolved without a restart, credentials work at once,
//! seeding fills an instance, and changes that would lose data are refused.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use herald_host::server::{self, ServerConfig};
use herald_tests::process::herald_binary;
use herald_tests::TestDatabase;
use serde_json::{json, Value};

fn herald(dir: &Path, database_url: Option<&str>, args: &[&str]) -> Output {
    let mut command = Command::new(herald_binary());
    command.env_remove("HERALD_DATABASE_URL");
    if let Some(url) = database_url {
        command.env("HERALD_DATABASE_URL", url);
    }
    command.args(args).env("HERALD_DATA_DIR", dir).output().expect("herald runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const ACME_V1: &str = r#"
[[instance]]
customer_id = "acme"
environment = "production"
licensed_uar = 1000

[model]
recipient_id = "ID"
person_data = [
  { name = "ID", type = "NUMBER", unique = true },
  { name = "EMAIL", type = "STRING", unique = true },
  { name = "CITY", type = "STRING" },
]
"#;

fn acme_v2() -> String {
    ACME_V1.replace(
        "  { name = \"CITY\", type = \"STRING\" },\n]",
        "  { name = \"CITY\", type = \"STRING\" },\n  { name = \"NICK\", type = \"STRING\" },\n]\n\n[[model.one_to_many]]\nname = \"ORDERS\"\nfields = [{ name = \"REF\", type = \"STRING\", identifier = true }]\n",
    )
}

async fn token(client: &reqwest::Client, base: &str, id: &str, secret: &str) -> Option<String> {
    let r = client
        .post(format!("{base}/oauth2/token"))
        .form(&[("grant_type", "client_credentials"), ("client_id", id), ("client_secret", secret)])
        .send()
        .await
        .ok()?;
    if !r.status().is_success() {
        return None;
    }
    r.json::<Value>().await.ok()?["access_token"].as_str().map(str::to_string)
}

/// Polls `check` until it holds (the server reloads instances every 200 ms here).
async fn until_true<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    herald_tests::eventually(Duration::from_secs(10), what, || {
        let holds = check();
        async move {
            if holds.await {
                Ok(())
            } else {
                Err("not yet".to_string())
            }
        }
    })
    .await
}

#[tokio::test]
async fn operators_define_instances_and_credentials_while_the_server_runs() {
    let dir = tempfile::tempdir().unwrap();
    let database = TestDatabase::create().await;
    let url = database.as_ref().map(|d| d.url.as_str());
    let running = server::start(ServerConfig {
        data_dir: dir.path().to_path_buf(),
        database_url: url.map(String::from),
        listen: "127.0.0.1:0".into(),
        extensions_listen: None,
        ops_listen: None,
        demo: false,
        refresh_interval: Duration::from_millis(200),
        clock: std::sync::Arc::new(herald_host::clock::SystemClock),
        rate: herald_host::limits::RateSettings::default(),
        runtime: herald_host::runtime::RuntimeSettings::default(),
        queue: herald_host::queue::QueueSettings::default(),
        connections: herald_host::connections::ConnectionSettings::default(),
        media_quota: herald_host::server::DEFAULT_MEDIA_QUOTA,
        open_instances: Default::default(),
        pool: Default::default(),
        calls_in_flight_scope: Default::default(),
        import_max_bytes: herald_host::imports::DEFAULT_MAX_BYTES,
    })
    .await
    .unwrap();
    let base = format!("http://{}", running.addr);
    let client = reqwest::Client::new();
    assert!(token(&client, &base, "demo-public-key", "demo-public-secret").await.is_none(), "no demo outside demo mode");

    let file = dir.path().join("acme.toml");
    std::fs::write(&file, ACME_V1).unwrap();
    let applied = herald(dir.path(), url, &["instance", "apply", file.to_str().unwrap()]);
    assert!(applied.status.success(), "{}", stderr(&applied));
    assert!(stdout(&applied).contains("acme: created"));
    let again = herald(dir.path(), url, &["instance", "apply", file.to_str().unwrap()]);
    assert!(stdout(&again).contains("acme: unchanged"), "idempotent: {}", stdout(&again));

    let created = herald(dir.path(), url, &["credentials", "create", "--instance", "acme", "--scope", "public"]);
    assert!(created.status.success(), "{}", stderr(&created));
    let out = stdout(&created);
    let field = |name: &str| out.lines().find_map(|l| l.strip_prefix(&format!("{name}="))).unwrap().to_string();
    let (id, secret) = (field("client_id"), field("client_secret"));
    // Searched from a child process: opening the database file in this process (where the server
    // runs) and closing it would drop the server's SQLite locks (POSIX fcntl semantics).
    let found = Command::new("grep").arg("-rqF").arg("--").arg(&secret).arg(dir.path()).status().unwrap();
    assert_eq!(found.code(), Some(1), "only a hash of the secret is stored");

    let bearer = herald_tests::eventually(Duration::from_secs(10), "the server loads acme", || async {
        token(&client, &base, &id, &secret).await.ok_or_else(|| "no token yet".to_string())
    })
    .await;
    let auth = format!("Bearer {bearer}");
    let r = client
        .post(format!("{base}/recipients"))
        .header("Authorization", &auth)
        .json(&json!({"personData": {"EMAIL": "first@acme.test", "CITY": "Oslo"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);

    // Adding a field and a table to the live instance keeps its data.
    std::fs::write(&file, acme_v2()).unwrap();
    let evolved = herald(dir.path(), url, &["instance", "apply", file.to_str().unwrap()]);
    assert!(evolved.status.success(), "{}", stderr(&evolved));
    assert!(stdout(&evolved).contains("acme: 2 change(s)"), "{}", stdout(&evolved));
    until_true("the server sees NICK", || {
        let (client, base, auth) = (&client, &base, &auth);
        async move {
            let r = client.get(format!("{base}/discovery/persondata")).header("Authorization", auth).send().await.unwrap();
            r.text().await.unwrap().contains("NICK")
        }
    })
    .await;
    let r = client
        .put(format!("{base}/recipients/EMAIL=first%2540acme.test"))
        .header("Authorization", &auth)
        .json(&json!({"personData": {"NICK": "F"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["personData"], json!({"ID": 1, "EMAIL": "first@acme.test", "CITY": "Oslo", "NICK": "F"}));
    // A point read after the change reads the new field too (its statement is the new model's).
    let r = client.get(format!("{base}/recipients/EMAIL=first%2540acme.test")).header("Authorization", &auth).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["personData"], json!({"ID": 1, "EMAIL": "first@acme.test", "CITY": "Oslo", "NICK": "F"}));

    // Changes that would lose data are refused, and nothing is written.
    std::fs::write(&file, ACME_V1).unwrap();
    let shrink = herald(dir.path(), url, &["instance", "apply", file.to_str().unwrap()]);
    assert!(!shrink.status.success());
    assert!(stderr(&shrink).contains("removing Person Data field NICK would lose its data"), "{}", stderr(&shrink));
    assert!(stderr(&shrink).contains("removing table ORDERS"), "{}", stderr(&shrink));
    std::fs::write(&file, acme_v2().replace("name = \"CITY\", type = \"STRING\"", "name = \"CITY\", type = \"NUMBER\"")).unwrap();
    let retype = herald(dir.path(), url, &["instance", "apply", file.to_str().unwrap()]);
    assert!(stderr(&retype).contains("CITY from STRING to NUMBER"), "{}", stderr(&retype));
    std::fs::write(&file, acme_v2().replace("recipient_id = \"ID\"", "recipient_id = \"CITY\"")).unwrap();
    let invalid = herald(dir.path(), url, &["instance", "apply", file.to_str().unwrap()]);
    assert!(stderr(&invalid).contains("must be unique"), "{}", stderr(&invalid));

    // Seeding shows progress and the server sees the rows.
    let seeded = herald(dir.path(), url, &["seed", "--instance", "acme", "--count", "2500"]);
    assert!(seeded.status.success(), "{}", stderr(&seeded));
    assert!(stdout(&seeded).contains("added 2500 recipients (2501 in all)"), "{}", stdout(&seeded));
    let all: Value = client.get(format!("{base}/recipients")).header("Authorization", &auth).send().await.unwrap().json().await.unwrap();
    assert_eq!(all.as_array().unwrap().len(), 2501);

    // A revoked credential no longer gets tokens.
    let spare = herald(dir.path(), url, &["credentials", "create", "--instance", "acme", "--scope", "app"]);
    let spare_out = stdout(&spare);
    let spare_id = spare_out.lines().find_map(|l| l.strip_prefix("client_id=")).unwrap().to_string();
    let spare_secret = spare_out.lines().find_map(|l| l.strip_prefix("client_secret=")).unwrap().to_string();
    let revoked = herald(dir.path(), url, &["credentials", "revoke", &spare_id]);
    assert!(revoked.status.success(), "{}", stderr(&revoked));
    assert!(token(&client, &base, &spare_id, &spare_secret).await.is_none(), "revoked");
    assert!(!herald(dir.path(), url, &["credentials", "create", "--instance", "nope", "--scope", "app"]).status.success());

    // One call makes a credential in each of several instances (a line each), or none at all
    // when one of them does not exist.
    let several = herald(dir.path(), url, &["credentials", "create", "--instance", "acme", "--instance", "acme", "--scope", "public"]);
    assert!(several.status.success(), "{}", stderr(&several));
    let made: Vec<(String, String)> = stdout(&several)
        .lines()
        .filter_map(|l| l.strip_prefix("instance=acme client_id="))
        .map(|rest| {
            let (id, secret) = rest.split_once(" client_secret=").unwrap();
            (id.to_string(), secret.to_string())
        })
        .collect();
    assert_eq!(made.len(), 2, "{}", stdout(&several));
    for (id, secret) in &made {
        assert!(token(&client, &base, id, secret).await.is_some(), "{id} works");
    }
    let half = herald(dir.path(), url, &["credentials", "create", "--instance", "acme", "--instance", "nope", "--scope", "app"]);
    assert!(!half.status.success());
    assert!(stderr(&half).contains("no instance 'nope'"), "{}", stderr(&half));
    assert!(!stdout(&half).contains("client_id"), "nothing was made: {}", stdout(&half));

    running.stop().await.unwrap();
}
