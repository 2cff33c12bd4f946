//! Regressions of the third hostile-input probe, on the surfaces added after the first
//! (flows, contextual data, secrets, the console, the listeners): each test failed before its
//! fix. The browser side (a hostile webapp against a signed-in console) is
//! `tests/browser/hostile.py`; the authheader's transformed secrets are in `authheaders.rs`, the
//! request ids in `ops.rs`, the chain bounds of flows in `flow_runs.rs`.

use std::time::Duration;

use herald_tests::process::ServerProcess;
use herald_tests::{accept_open, json, open_status, reqwest, upload, with_config, Api, TestServer};

/// Every answer of the public listener tells browsers not to sniff and not to frame it; what an
/// instance uploads runs sandboxed (no `allow-same-origin`), and Herald's own pages keep theirs.
#[tokio::test]
async fn uploaded_content_runs_sandboxed_and_every_answer_says_how_to_frame_it() {
    let s = TestServer::start().await;
    let api = s.staging().await;
    let archive = {
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        zip.start_file("steal/index.html", zip::write::SimpleFileOptions::default()).unwrap();
        std::io::Write::write_all(&mut zip, b"<script>document.title = sessionStorage.length</script>").unwrap();
        zip.finish().unwrap().into_inner()
    };
    let form = reqwest::multipart::Form::new().part("file", reqwest::multipart::Part::bytes(archive).file_name("steal.zip"));
    let r = api.request(reqwest::Method::POST, "/assets/webapps").multipart(form).send().await.unwrap();
    assert_eq!(r.status(), 201);
    let page = s.client.get(format!("{}/webapps/demo-staging/steal/", s.base)).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let policy = page.headers()["content-security-policy"].to_str().unwrap().to_string();
    assert!(policy.starts_with("sandbox allow-scripts") && !policy.contains("allow-same-origin"), "{policy}");
    assert_eq!(page.headers()["x-content-type-options"], "nosniff");
    assert!(page.headers().get("x-frame-options").is_none(), "a webapp may be framed by its customer's sites");

    // The API's own answers, an error and an extension's answer: sandboxed and never framed.
    api.upload_http_extension("echo.wasm", env!("GUEST_ECHO")).await;
    for r in [
        api.request(reqwest::Method::GET, "/recipients?limit=1").send().await.unwrap(),
        s.client.get(format!("{}/nowhere", s.base)).send().await.unwrap(),
        api.request(reqwest::Method::POST, "/extensions/secure/echo").body("<script>1</script>").send().await.unwrap(),
    ] {
        let policies: Vec<_> = r.headers().get_all("content-security-policy").iter().map(|v| v.to_str().unwrap().to_string()).collect();
        assert!(policies.iter().any(|p| p.starts_with("sandbox") && p.contains("frame-ancestors 'none'")), "{} {policies:?}", r.url());
        assert_eq!(r.headers()["x-frame-options"], "DENY", "{}", r.url());
        assert_eq!(r.headers()["x-content-type-options"], "nosniff", "{}", r.url());
    }
    // The console is not sandboxed: it keeps its own policy.
    let console = s.client.get(format!("{}/console/", s.base)).send().await.unwrap();
    let policies: Vec<_> = console.headers().get_all("content-security-policy").iter().collect();
    assert_eq!(policies.len(), 1);
    assert!(policies[0].to_str().unwrap().starts_with("default-src 'self'"));
}

/// A NUL in an identifier of a path or a query is a 400 on both engines (it was a 500 on
/// PostgreSQL, which takes no NUL in text).
#[tokio::test]
async fn a_nul_in_an_identifier_is_a_clear_400() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    for (method, path) in [
        (reqwest::Method::GET, "/flows/WELCOME_MAIL/runs/%00"),
        (reqwest::Method::GET, "/flows/WELCOME_MAIL/runs/a%00b"),
        (reqwest::Method::DELETE, "/flows/A%00"),
        (reqwest::Method::GET, "/extensions/secrets/a%00b"),
        (reqwest::Method::DELETE, "/extensions/secrets/a%00b"),
        (reqwest::Method::GET, "/extensions/secrets/API_KEY%00"),
        (reqwest::Method::GET, "/recipients?objectResponse=true&documentId=a%00b&pageStart=1"),
        (reqwest::Method::GET, "/extensions/logs/a%2500b"),
    ] {
        let r = herald_tests::answer(api.request(method.clone(), path).send().await.unwrap()).await;
        r.expect(400);
        assert!(r.message().contains("NUL character"), "{method} {path}: {}", r.message());
    }
}

/// A secure asynchronous call's result is answered on the secure status path only, and an open
/// call's on the open path only.
#[tokio::test]
async fn a_status_path_answers_only_for_calls_of_its_own_endpoint() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    api.upload_http_extension("secure-job.wasm", env!("GUEST_ASYNC_SECURE")).await;
    api.upload_http_extension("open-job.wasm", env!("GUEST_ASYNC_OPEN")).await;
    let secure = api.request(reqwest::Method::POST, "/extensions/secure/secure-job/x?ms=1").body("secret order").send().await.unwrap();
    assert_eq!(secure.status(), 202);
    let secure_id = secure.json::<serde_json::Value>().await.unwrap()["queueId"].as_str().unwrap().to_string();
    let open_id = accept_open(&s.client, &s.base, "open-job/x?ms=1", "").await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    // Each answers on its own path once done.
    let status = format!("/extensions/status/secure/{secure_id}");
    let own = herald_tests::until_not(202, Duration::from_secs(10), || {
        let request = api.request(reqwest::Method::GET, &status);
        async move { request.send().await.expect("status request") }
    })
    .await;
    assert!(own.status().is_success(), "{}", own.status());
    assert!(herald_tests::settled(&s.client, &s.base, &open_id, Duration::from_secs(10)).await.status().is_success());
    // Never on the other.
    assert_eq!(open_status(&s.client, &s.base, "demo", &secure_id).await.status(), 404, "a secure result without credentials");
    let crossed = api.request(reqwest::Method::GET, &format!("/extensions/status/secure/{open_id}")).send().await.unwrap();
    assert_eq!(crossed.status(), 404);
}

/// Schedules take exactly the five-field form the README documents.
#[tokio::test]
async fn schedules_take_five_fields_and_nothing_else() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    for (schedule, says) in [("* * * * * *", "has 6 fields"), ("0 0 9 * * 1 2030", "has 7 fields"), ("@yearly", "nickname")] {
        let r =
            api.put("/flows/ticking", json!({"trigger": {"schedule": schedule, "targetGroup": "ADULTS"}, "nodes": [{"send": "x"}]})).await;
        r.expect(400);
        assert!(r.message().contains(says), "{schedule}: {}", r.message());
        let monitor = with_config(&std::fs::read(env!("GUEST_MONITOR_BARE")).unwrap(), &format!(r#"{{"schedule": "{schedule}"}}"#));
        let r = upload(&api, "ticking.wasm", monitor, "monitor").await;
        r.expect(400);
        assert!(r.message().contains(says), "monitor {schedule}: {}", r.message());
    }
    api.put("/flows/ticking", json!({"trigger": {"schedule": "0 9 * * 1", "targetGroup": "ADULTS"}, "nodes": [{"send": "x"}]}))
        .await
        .expect(201);
}

/// The same value rules as everywhere else: a flow's description, contextual data, a monitor's
/// alert.
#[tokio::test]
async fn new_surfaces_keep_the_value_rules() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    for (description, says) in [("a\u{0}b".to_string(), "control character"), ("x".repeat(1_000_000), "at most 2000")] {
        let r = api
            .put("/flows/described", json!({"description": description, "trigger": {"event": "WELCOME"}, "nodes": [{"send": "x"}]}))
            .await;
        r.expect(400);
        assert!(r.message().contains(says), "{}", r.message());
    }
    // Contextual data: dates in the years 1000 to 9999, no NUL in text.
    let schema = br#"{"models": [{"name": "signup", "type": "person_data", "fields": [{"name": "City", "data_type": "string"}, {"name": "Day", "data_type": "date"}]}]}"#;
    let form = reqwest::multipart::Form::new().part("file", reqwest::multipart::Part::bytes(schema.to_vec()).file_name("signup.json"));
    assert_eq!(api.request(reqwest::Method::POST, "/assets/contexts").multipart(form).send().await.unwrap().status(), 201);
    api.put("/flows/with-context", json!({"trigger": {"event": "NEWSLETTER_SIGNUP"}, "contextSchema": "signup", "nodes": [{"send": "x"}]}))
        .await
        .expect(201);
    let id = api.create_recipient(json!({"EMAIL": "ctx@example.com"})).await;
    let r = api
        .post(
            &format!("/recipients/{id}/events/NEWSLETTER_SIGNUP/:achieveEvent"),
            json!({"name": "signup", "data": {"signup": {"City": "a\u{0}b", "Day": "0000-01-01"}}}),
        )
        .await;
    r.expect(400);
    // Members named as the schema spells them.
    assert!(r.message().contains("signup.City holds the NUL character"), "{}", r.message());
    assert!(r.message().contains("signup.Day is out of range"), "{}", r.message());
    // A monitor's alert names a Recipient Id the model can hold.
    let monitor = std::fs::read(env!("GUEST_MONITOR_BARE")).unwrap();
    for recipient in [json!("x"), json!(-1), json!(9_007_199_254_740_994_i64)] {
        let config = json!({"schedule": "every 5m", "alert": {"event": "WELCOME", "recipient": recipient}}).to_string();
        let r = upload(&api, "alerting.wasm", with_config(&monitor, &config), "monitor").await;
        r.expect(400);
        assert!(r.message().contains("Recipient Id USER_ID"), "{recipient}: {}", r.message());
    }
}

/// Messages speak the customer's terms, not a library's; every kind's list answers 404 for an
/// unknown folder.
#[tokio::test]
async fn messages_are_in_the_customers_terms_and_unknown_folders_are_404() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let library = ["Failed to deserialize", "invalid type", "EOF while parsing", "expected a boolean", "u32"];
    api.upload_http_extension("echo.wasm", env!("GUEST_ECHO")).await;
    let query = api.get("/extensions/logs/echo?limit=-1").await;
    query.expect(400);
    assert!(query.message().contains("'limit'") && query.message().contains("whole number (digits only)"), "{}", query.message());
    let flow = herald_tests::answer(
        api.request(reqwest::Method::PUT, "/flows/broken")
            .header("content-type", "application/json")
            .body("{\"trigger\": ")
            .send()
            .await
            .unwrap(),
    )
    .await;
    flow.expect(400);
    assert!(flow.message().contains("ends before its value does"), "{}", flow.message());
    let typed = api.put("/flows/typed", json!({"trigger": {"recipientCreated": "yes"}, "nodes": []})).await;
    typed.expect(400);
    assert!(typed.message().contains("'trigger.recipientCreated'"), "{}", typed.message());
    for message in [query.message(), flow.message(), typed.message()] {
        for word in library {
            assert!(!message.contains(word), "{word} in {message}");
        }
    }
    for kind in ["resources", "templates", "contexts", "webapps", "extensions"] {
        api.get(&format!("/assets/{kind}/list?folder=nowhere")).await.expect(404);
        api.get(&format!("/assets/{kind}/list")).await.expect(200);
    }
}

/// The extensions listener keeps the payload limit of the public one: a declared length over it
/// is refused before anything is read, and a body streamed past it is cut off with 413, before
/// or whatever the guest makes of it.
#[tokio::test]
async fn the_extensions_listener_keeps_the_payload_limit() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let extensions = format!("127.0.0.1:{port}");
    let server = ServerProcess::start(dir.path(), None, &["--extensions-listen", &extensions]).await;
    let api = Api::login(&server.base, "demo-public-key", "demo-public-secret").await;
    api.upload_http_extension("hook.wasm", env!("GUEST_OPEN_WEBHOOK")).await;
    // A declared 1 GB, on a raw socket: refused at once.
    let mut socket = tokio::net::TcpStream::connect(&extensions).await.unwrap();
    tokio::io::AsyncWriteExt::write_all(
        &mut socket,
        b"POST /extensions/open/demo/hook HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n{}",
    )
    .await
    .unwrap();
    let mut head = vec![0u8; 64];
    let n = tokio::time::timeout(Duration::from_secs(10), tokio::io::AsyncReadExt::read(&mut socket, &mut head)).await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&head[..n]).starts_with("HTTP/1.1 413"), "{}", String::from_utf8_lossy(&head[..n]));
    // 21 MB streamed without a declared length, chunk by chunk on a raw socket. The server may
    // answer and close while the client is still writing, so the answer is read beside the
    // writing (a client that writes first and reads after can see only the reset).
    let socket = tokio::net::TcpStream::connect(&extensions).await.unwrap();
    let (mut read, mut write) = socket.into_split();
    let writer = tokio::spawn(async move {
        use tokio::io::AsyncWriteExt;
        let head = b"POST /extensions/open/demo/hook HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
        if write.write_all(head).await.is_err() {
            return;
        }
        let chunk = [format!("{:x}\r\n", 1024 * 1024).into_bytes(), vec![b' '; 1024 * 1024], b"\r\n".to_vec()].concat();
        for _ in 0..21 {
            if write.write_all(&chunk).await.is_err() {
                return;
            }
        }
        let _ = write.write_all(b"0\r\n\r\n").await;
    });
    let mut head = vec![0u8; 64];
    let n = tokio::time::timeout(Duration::from_secs(30), tokio::io::AsyncReadExt::read(&mut read, &mut head)).await.unwrap().unwrap();
    writer.abort();
    assert!(String::from_utf8_lossy(&head[..n]).starts_with("HTTP/1.1 413"), "{}", String::from_utf8_lossy(&head[..n]));
}
