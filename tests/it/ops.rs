//! The operator's listener: `/healthz`, `/readyz`, `/metrics` (Prometheus text, figures that move
//! with the calls, bounded labels), and what every public call carries: an `X-Request-Id`, on its
//! answer and on its log lines (`--log-format json`).

use std::collections::HashMap;
use std::time::Duration;

use herald_tests::process::herald_binary;
use herald_tests::{eventually, json, TestServer};

/// The sum of the samples of `name` whose labels include every pair of `labels`.
fn value(text: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|line| {
            let (series, value) = line.rsplit_once(' ')?;
            let (metric, rest) = series.split_once('{').unwrap_or((series, "}"));
            if metric != name {
                return None;
            }
            let pairs: HashMap<&str, &str> = rest
                .trim_end_matches('}')
                .split("\",")
                .filter_map(|pair| pair.split_once("=\""))
                .map(|(k, v)| (k.trim_matches(','), v.trim_end_matches('"')))
                .collect();
            labels.iter().all(|(k, v)| pairs.get(k) == Some(v)).then(|| value.parse::<f64>().ok()).flatten()
        })
        .sum()
}

async fn scrape(s: &TestServer) -> String {
    let r = s.client.get(format!("{}/metrics", s.ops)).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers()["content-type"].to_str().unwrap().starts_with("text/plain"));
    r.text().await.unwrap()
}

#[tokio::test]
async fn health_and_readiness_answer_on_the_operator_listener_only() {
    let s = TestServer::start().await;
    for (path, body) in [("/healthz", "ok"), ("/readyz", "ready")] {
        let r = s.client.get(format!("{}{path}", s.ops)).send().await.unwrap();
        assert_eq!((r.status().as_u16(), r.text().await.unwrap()), (200, body.to_string()), "{path}");
        // Not on the public listener.
        let public = s.client.get(format!("{}{path}", s.base)).send().await.unwrap();
        assert_ne!(public.status(), 200, "{path} is served publicly");
    }
    assert_eq!(s.client.get(format!("{}/metrics", s.base)).send().await.unwrap().status(), 401, "metrics are not public");
}

#[tokio::test]
async fn metrics_move_with_the_calls_and_name_routes_not_paths() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    api.upload_http_extension("echo.wasm", env!("GUEST_ECHO")).await;
    let before = scrape(&s).await;
    let created = api.create_recipient(json!({"EMAIL": "metrics@example.com"})).await;
    api.get(&format!("/recipients/{created}")).await.expect(200);
    api.get("/recipients/987654321").await.expect(404);
    api.get("/extensions/secure/echo").await.expect(200);
    // A flow run: WELCOME_MAIL sends to a recipient with an EMAIL.
    api.post_empty(&format!("/recipients/{created}/events/WELCOME/:achieveEvent")).await.expect(200);
    let after = eventually(Duration::from_secs(10), "the flow run counted", || async {
        let text = scrape(&s).await;
        if value(&text, "herald_flow_runs_ended_total", &[("instance", "demo"), ("outcome", "done")])
            > value(&before, "herald_flow_runs_ended_total", &[("instance", "demo"), ("outcome", "done")])
        {
            Ok(text)
        } else {
            Err(text)
        }
    })
    .await;
    let moved = |name: &str, labels: &[(&str, &str)]| value(&after, name, labels) - value(&before, name, labels);
    let one = [("route", "/recipients/{recipient_id}"), ("instance", "demo")];
    assert!(moved("herald_http_requests_total", &[one[0], one[1], ("status", "2xx")]) >= 1.0, "{after}");
    assert!(moved("herald_http_requests_total", &[one[0], one[1], ("status", "4xx")]) >= 1.0);
    assert!(moved("herald_http_requests_total", &[("route", "/recipients"), ("status", "2xx"), ("instance", "demo")]) >= 1.0);
    assert!(moved("herald_http_request_duration_seconds_count", &[one[0]]) >= 2.0);
    // Extension calls are matched outside the router and counted by their route template too.
    let extension = ("route", "/extensions/secure/{extension_id}");
    assert!(moved("herald_http_requests_total", &[extension, ("status", "2xx"), ("instance", "demo")]) >= 1.0, "{after}");
    assert!(moved("herald_http_request_duration_seconds_count", &[extension]) >= 1.0, "{after}");
    assert!(moved("herald_extension_executions_total", &[("kind", "http"), ("outcome", "ok"), ("instance", "demo")]) >= 1.0);
    assert!(moved("herald_extension_execution_duration_seconds_count", &[("kind", "http")]) >= 1.0);
    // Sampled at the scrape.
    assert!(value(&after, "herald_daily_calls", &[("instance", "demo")]) >= 5.0, "{after}");
    assert_eq!(value(&after, "herald_daily_cap", &[("instance", "demo")]), 500_000.0);
    assert!(after.contains("herald_queue_jobs_queued") && after.contains("herald_queue_oldest_job_age_seconds"));
    if s.database().is_some() {
        // On PostgreSQL the instances share the node's pool.
        assert!(after.contains("herald_node_pool_connections{state=\"idle\"}"), "{after}");
        assert!(!after.contains("herald_db_connections{"), "{after}");
    } else {
        assert!(after.contains("herald_db_connections{instance=\"demo\""), "{after}");
    }
    assert!(after.contains("herald_instances{state=\"open\"}") && after.contains("herald_instance_activations_total"), "{after}");
    // Bounded labels: no recipient id, no raw path.
    assert!(!after.contains("987654321") && !after.contains(&format!("/recipients/{created}\"")), "a raw path became a label");
}

#[tokio::test]
async fn every_call_has_a_request_id_on_its_answer_and_its_log_lines() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let fresh = api.request(herald_tests::reqwest::Method::GET, "/recipients?limit=1").send().await.unwrap();
    let id = fresh.headers()["x-request-id"].to_str().unwrap().to_string();
    assert!(id.len() == 32 && id.chars().all(|c| c.is_ascii_hexdigit()), "{id}");
    let given = api
        .request(herald_tests::reqwest::Method::GET, "/recipients?limit=1")
        .header("X-Request-Id", "from-the-caller-7")
        .send()
        .await
        .unwrap();
    assert_eq!(given.headers()["x-request-id"], "from-the-caller-7");

    // JSON logs carry it: a server process with --log-format json and request logging on.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("herald.log");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut command = tokio::process::Command::new(herald_binary());
    // A store of its own (SQLite in a fresh data directory) on either backend's run.
    command.env_remove("HERALD_DATABASE_URL");
    let mut child = command
        .args(["serve", "--listen", &format!("127.0.0.1:{port}"), "--log-format", "json"])
        .env("HERALD_DATA_DIR", dir.path().join("data"))
        .env("RUST_LOG", "info,herald::requests=debug")
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let base = format!("http://127.0.0.1:{port}");
    eventually(Duration::from_secs(30), "herald listens", || async {
        s.client.get(format!("{base}/recipients")).send().await.map(drop).map_err(|e| e.to_string())
    })
    .await;
    let r = s.client.get(format!("{base}/recipients")).header("X-Request-Id", "json-log-line-42").send().await.unwrap();
    assert_eq!(r.status(), 401);
    tokio::time::sleep(Duration::from_millis(300)).await;
    child.kill().await.unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    let line = text.lines().find(|l| l.contains("json-log-line-42")).unwrap_or_else(|| panic!("no log line of the call:\n{text}"));
    let parsed: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
    assert_eq!(parsed["span"]["request_id"], "json-log-line-42", "{parsed}");
    // herald::requests=debug: a line when the call starts and one when it is answered.
    let answered = text
        .lines()
        .filter(|l| l.contains("json-log-line-42"))
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|l| l["fields"]["message"] == "finished processing request")
        .unwrap_or_else(|| panic!("no answer line:\n{text}"));
    assert_eq!(answered["fields"]["status"], 401, "{answered}");
    assert!(answered["fields"]["latency_ms"].as_f64().is_some(), "{answered}");
    assert!(text.lines().all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()), "every line is JSON:\n{text}");
}

#[tokio::test]
async fn a_request_id_is_kept_only_when_short_and_plain() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let answered_id = |id: String| {
        let request = api.request(herald_tests::reqwest::Method::GET, "/recipients?limit=1").header("X-Request-Id", id);
        async move { request.send().await.unwrap().headers()["x-request-id"].to_str().unwrap().to_string() }
    };
    let fresh = |id: &str| id.len() == 32 && id.chars().all(|c| c.is_ascii_hexdigit());
    // Forged log fields, a 60 KB id, an empty one: each replaced by one of the server's.
    for sent in ["q\" level=ERROR fake=\"1".to_string(), "x".repeat(60_000), "a b".into(), "".into()] {
        let got = answered_id(sent.clone()).await;
        assert!(fresh(&got), "{:.40} came back as {got:.80}", sent);
    }
    // 64 characters of letters, digits and -_.: are the caller's to choose.
    let longest = format!("trace-{}:1.2_3", "a".repeat(52));
    assert_eq!(longest.len(), 64);
    assert_eq!(answered_id(longest.clone()).await, longest);
    assert!(fresh(&answered_id(format!("{longest}b")).await));
}
