//! An instance's secrets: set, listed and deleted through the API and `herald secrets`, never shown
//! back, sealed at rest with a key outside the database, read only by authheader extensions, and
//! sealed again by `herald secrets rotate`.

use std::process::Stdio;

use herald_tests::process::herald_binary;
use herald_tests::{json, TestServer};

const VALUE: &str = "tok-4f9d2c81-value";

/// Whether `needle` is in any file under the server's data directory or, on PostgreSQL, in any
/// stored secret. Searched from a child process: opening the SQLite file here, where the server
/// runs, would drop its locks.
async fn stored_in_clear(s: &TestServer, needle: &str) -> bool {
    let grep = tokio::process::Command::new("grep").arg("-rqaF").arg("--").arg(needle).arg(&s.data_dir).status().await.unwrap();
    if grep.code() == Some(0) {
        return true;
    }
    if let Some(url) = s.database_url() {
        let pool = sqlx::postgres::PgPool::connect(url).await.unwrap();
        let rows: Vec<(Vec<u8>,)> = sqlx::query_as("SELECT sealed FROM instance_demo._secrets").fetch_all(&pool).await.unwrap();
        assert!(!rows.is_empty(), "the secret is stored in the instance's schema");
        return rows.iter().any(|(bytes,)| bytes.windows(needle.len()).any(|w| w == needle.as_bytes()));
    }
    false
}

#[tokio::test]
async fn secrets_are_set_listed_and_deleted_but_never_shown() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let created = api.put("/extensions/secrets/CRM_TOKEN", json!({"value": VALUE})).await;
    created.expect(201);
    assert_eq!(created.json()["name"], "CRM_TOKEN");
    assert!(created.json()["setAt"].is_string());
    assert!(!created.text.contains(VALUE));
    api.put("/extensions/secrets/CRM_TOKEN", json!({"value": format!("{VALUE}-2")})).await.expect(200);
    api.put("/extensions/secrets/OTHER", json!({"value": "x"})).await.expect(201);
    let list = api.get("/extensions/secrets").await;
    list.expect(200);
    let listed = list.json();
    let names: Vec<&str> = listed.as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["CRM_TOKEN", "OTHER"]);
    assert!(!list.text.contains(VALUE), "{}", list.text);
    let one = api.get("/extensions/secrets/CRM_TOKEN").await;
    one.expect(200);
    assert_eq!(one.json().as_object().unwrap().keys().collect::<Vec<_>>(), ["name", "setAt"]);
    api.get("/extensions/secrets/NOPE").await.expect(404);

    // Bad input: a clear 400 that never repeats the value.
    for (path, body, says) in [
        ("/extensions/secrets/1BAD", json!({"value": "v"}), "must start with a letter"),
        ("/extensions/secrets/OK", json!({"value": 5}), "'value' must be text"),
        ("/extensions/secrets/OK", json!({"value": ""}), "empty"),
        ("/extensions/secrets/OK", json!({"value": "v", "note": "x"}), "unknown member 'note'"),
        ("/extensions/secrets/OK", json!(["v"]), "the body must be"),
        ("/extensions/secrets/OK", json!({"value": "s".repeat(9000)}), "at most 8192"),
    ] {
        let refused = api.put(path, body).await;
        refused.expect(400);
        assert!(refused.message().contains(says), "{path}: {}", refused.message());
        assert!(!refused.message().contains("sss"), "the value is not repeated");
    }

    // Another instance has secrets of its own.
    let staging = s.staging().await;
    assert_eq!(staging.get("/extensions/secrets").await.json(), json!([]));
    staging.delete("/extensions/secrets/CRM_TOKEN").await.expect(404);

    // Sealed at rest: the value is in no file and no stored column.
    assert!(!stored_in_clear(&s, VALUE).await, "a copy of the data reveals the secret");

    api.delete("/extensions/secrets/OTHER").await.expect(204);
    api.delete("/extensions/secrets/OTHER").await.expect(404);
    assert_eq!(api.get("/extensions/secrets").await.json().as_array().unwrap().len(), 1);
}

/// Runs `herald secrets ...` as a child process without blocking this runtime (the server runs on
/// it: blocked, it could be holding its write transaction open while the command waits).
async fn herald_secrets(s: &TestServer, args: &[&str], stdin: Option<&str>) -> std::process::Output {
    let mut command = tokio::process::Command::new(herald_binary());
    command.env_remove("HERALD_DATABASE_URL").env_remove("HERALD_SECRETS_KEY").env("HERALD_DATA_DIR", &s.data_dir);
    if let Some(url) = s.database_url() {
        command.env("HERALD_DATABASE_URL", url);
    }
    command.arg("secrets").args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = command.spawn().expect("herald runs");
    {
        use tokio::io::AsyncWriteExt as _;
        let mut input = child.stdin.take().unwrap();
        input.write_all(stdin.unwrap_or_default().as_bytes()).await.unwrap();
    }
    child.wait_with_output().await.unwrap()
}

/// What the authheader extension `key` makes (it reads the secret CRM_TOKEN), through the test
/// harness.
async fn made_by_key(api: &herald_tests::Api) -> serde_json::Value {
    api.post("/testing/extensions/key/:run", json!({"host": "api.example.com", "method": "GET", "path": "/"})).await.json()
}

#[tokio::test]
async fn operators_set_list_and_rotate_secrets_with_the_cli() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    api.upload_extension("key.wasm", env!("GUEST_AUTHHEADER_KEY"), "authheader").await;

    let set = herald_secrets(&s, &["set", "--instance", "demo", "CRM_TOKEN"], Some(&format!("{VALUE}\n"))).await;
    assert!(set.status.success(), "{}", String::from_utf8_lossy(&set.stderr));
    assert!(String::from_utf8_lossy(&set.stdout).contains("secret CRM_TOKEN created"));
    // The API sees it, and the authheader reads it (without the line break of `echo`).
    assert_eq!(api.get("/extensions/secrets").await.json()[0]["name"], "CRM_TOKEN");
    assert_eq!(made_by_key(&api).await["value"]["headers"][0][1], format!("Bearer {VALUE}"));
    let list = herald_secrets(&s, &["list", "--instance", "demo"], None).await;
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(listed.starts_with("CRM_TOKEN\tset "), "{listed}");
    assert!(!listed.contains(VALUE));
    let unknown = herald_secrets(&s, &["set", "--instance", "nope", "X"], Some("v")).await;
    assert!(!unknown.status.success() && String::from_utf8_lossy(&unknown.stderr).contains("no instance 'nope'"));

    // Rotation: a new key first in the ring, the old one below; `rotate` seals again with it.
    let key_file = s.data_dir.join("secrets.key");
    let old = std::fs::read_to_string(&key_file).unwrap();
    let new_key = herald_host::secrets::KeyRing::new_key();
    std::fs::write(&key_file, format!("{new_key}\n{old}")).unwrap();
    let rotated = herald_secrets(&s, &["rotate"], None).await;
    assert!(rotated.status.success(), "{}", String::from_utf8_lossy(&rotated.stderr));
    assert!(
        String::from_utf8_lossy(&rotated.stdout).contains("demo: 1 secret(s) sealed with key"),
        "{}",
        String::from_utf8_lossy(&rotated.stdout)
    );
    // The old key can go once every node has the new one: after a restart, the value opens with
    // the new key alone.
    std::fs::write(&key_file, format!("{new_key}\n")).unwrap();
    let s = s.restart().await;
    let api = s.demo().await;
    assert_eq!(made_by_key(&api).await["value"]["headers"][0][1], format!("Bearer {VALUE}"));
    // A ring without the key a value was sealed with says so, and never shows the value.
    std::fs::write(&key_file, format!("{}\n", herald_host::secrets::KeyRing::new_key())).unwrap();
    let s = s.restart().await;
    let api = s.demo().await;
    let failed = made_by_key(&api).await;
    assert_eq!(failed["outcome"], "error", "{failed}");
    // The authheader's reason is its own text, which is withheld; the operator's log says which
    // secret cannot be opened on this node.
    assert!(failed["reason"].as_str().unwrap().contains("its own text is not kept"), "{failed}");
    assert!(!failed.to_string().contains(VALUE));
    let deleted = herald_secrets(&s, &["delete", "--instance", "demo", "CRM_TOKEN"], None).await;
    assert!(deleted.status.success(), "{}", String::from_utf8_lossy(&deleted.stderr));
    assert_eq!(api.get("/extensions/secrets").await.json(), json!([]));
}
