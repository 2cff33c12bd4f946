//! Three `herald serve` processes on one PostgreSQL database behind HAProxy (round robin, no
//! affinity), each in a network namespace of its own where the machine allows it
//! (`herald_tests::cluster`): what any node was given, every node serves; the limit of calls in
//! flight is the instance's across the nodes; a node killed with SIGKILL loses nothing
//! acknowledged; a node cut off the database answers 503 and recovers by itself.
//!
//! PostgreSQL only: this runs in the PostgreSQL pass of `scripts/test.sh`.

use std::collections::HashMap;
use std::time::Duration;

use herald_tests::cluster::Cluster;
use herald_tests::process::UNLIMITED_RATE;
use herald_tests::{answer, eventually, json, reqwest, settled, until_not, Api};
use reqwest::multipart::{Form, Part};
use reqwest::Method;
use serde_json::Value;
use sqlx::Connection;

/// Unlimited rates, and a node silent for 2 s taken for dead.
fn args() -> Vec<&'static str> {
    let mut args = UNLIMITED_RATE.to_vec();
    args.extend(["--node-timeout", "2"]);
    args
}

fn zip(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, bytes) in entries {
        out.start_file(*name, zip::write::SimpleFileOptions::default()).unwrap();
        std::io::Write::write_all(&mut out, bytes).unwrap();
    }
    out.finish().unwrap().into_inner()
}

async fn send_form(api: &Api, method: Method, path: &str, form: Form) -> herald_tests::Answer {
    answer(api.request(method, path).multipart(form).send().await.unwrap()).await
}

fn file(name: &str, bytes: &[u8]) -> Form {
    Form::new().part("file", Part::bytes(bytes.to_vec()).file_name(name.to_string()))
}

/// The names a list answer holds.
fn names(list: &Value) -> Vec<String> {
    list.as_array().map(|items| items.iter().filter_map(|i| i["name"].as_str().map(String::from)).collect()).unwrap_or_default()
}

/// Media given to the balancer is served by every node, asked directly; so is a delete. Then 25
/// slow calls through the balancer: 20 run, 5 are refused, whatever node they reach. Then a node
/// cut off the database answers 503 while the others serve, and recovers by itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_nodes_behind_a_balancer_serve_one_media_area_one_limit_and_survive_a_cut() {
    let Some(cluster) = Cluster::start(3, &args()).await else { return };
    let api = Api::login(&cluster.balancer, "demo-public-key", "demo-public-secret").await;
    let direct: Vec<Api> = cluster.nodes.iter().map(|n| Api { base: n.base.clone(), ..api.clone() }).collect();

    // A resource, a committed template, a context schema and a webapp, through the balancer.
    send_form(&api, Method::POST, "/assets/resources", file("logo.txt", b"a logo").text("folder", "img")).await.expect(201);
    api.commit_template("hello.html", "<p>Hello</p> <img src=\"resources/img/logo.txt\">").await;
    let schema = br#"{"models": [{"name": "VISIT", "type": "person_data", "fields": [{"name": "CITY", "data_type": "string"}]}]}"#;
    send_form(&api, Method::POST, "/assets/contexts", file("visit.json", schema)).await.expect(201);
    let app = zip(&[("shop/index.html", b"<h1>shop</h1>"), ("shop/js/app.js", b"console.log(1)")]);
    send_form(&api, Method::POST, "/assets/webapps", file("shop.zip", &app)).await.expect(201);
    let client = reqwest::Client::new();
    for (node, on) in cluster.nodes.iter().zip(&direct) {
        let at = &node.name;
        assert_eq!(names(&on.get("/assets/resources/list?folder=img").await.json()), vec!["logo.txt"], "{at}");
        let logo = on.request(Method::GET, "/dav/resources/img/logo.txt").send().await.unwrap();
        assert_eq!((logo.status().as_u16(), logo.text().await.unwrap()), (200, "a logo".to_string()), "{at}");
        assert!(names(&on.get("/assets/templates/list").await.json()).contains(&"hello.html".to_string()), "{at}");
        // The committed version too: the working copy's reference keeps the resource from going.
        let listed = on.get("/assets/resources/list?folder=img").await.json();
        assert_eq!(listed[0]["referenced"], true, "{at}: {listed}");
        assert!(names(&on.get("/assets/contexts/list").await.json()).contains(&"visit.json".to_string()), "{at}");
        let page = client.get(format!("{}/webapps/demo/shop/", node.base)).send().await.unwrap();
        assert_eq!((page.status().as_u16(), page.text().await.unwrap()), (200, "<h1>shop</h1>".to_string()), "{at}");
        let script = client.get(format!("{}/webapps/demo/shop/js/app.js", node.base)).send().await.unwrap();
        assert_eq!(script.status(), 200, "{at}");
    }
    // A second creation of the schema is refused on every node; a replace is seen by all.
    for on in &direct {
        send_form(on, Method::POST, "/assets/contexts", file("visit.json", schema)).await.expect(409);
    }
    let new_app = zip(&[("shop/index.html", b"<h1>shop 2</h1>")]);
    send_form(&api, Method::PUT, "/assets/webapps", file("shop.zip", &new_app)).await.expect(200);
    for node in &cluster.nodes {
        let page = client.get(format!("{}/webapps/demo/shop/", node.base)).send().await.unwrap();
        assert_eq!(page.text().await.unwrap(), "<h1>shop 2</h1>", "{}", node.name);
        let script = client.get(format!("{}/webapps/demo/shop/js/app.js", node.base)).send().await.unwrap();
        assert_eq!(script.status(), 404, "{}: the old version's files are gone", node.name);
    }
    // Deletes: the template's reference goes first (a new version without it), then the resource
    // (API) and the webapp (WebDAV), each through the balancer.
    api.commit_template("hello.html", "<p>Hello</p>").await;
    let form = Form::new().text("file", "logo.txt").text("folder", "img");
    send_form(&api, Method::DELETE, "/assets/resources", form).await.expect(204);
    let deleted = api.request(Method::from_bytes(b"DELETE").unwrap(), "/dav/webapps/shop").send().await.unwrap();
    assert_eq!(deleted.status(), 204);
    for (node, on) in cluster.nodes.iter().zip(&direct) {
        let at = &node.name;
        assert_eq!(names(&on.get("/assets/resources/list?folder=img").await.json()), Vec::<String>::new(), "{at}");
        let logo = on.request(Method::GET, "/dav/resources/img/logo.txt").send().await.unwrap();
        assert_eq!(logo.status(), 404, "{at}");
        let page = client.get(format!("{}/webapps/demo/shop/", node.base)).send().await.unwrap();
        assert_eq!(page.status(), 404, "{at}");
        assert!(!names(&on.get("/assets/webapps/list").await.json()).contains(&"shop".to_string()), "{at}");
    }

    // 25 slow calls of one instance at once, through the balancer: 20 run, 5 are refused.
    let calls: Vec<_> = (0..25)
        .map(|_| {
            let api = api.clone();
            tokio::spawn(async move { api.request(Method::GET, "/testing/sleep?ms=2000").send().await.unwrap().status().as_u16() })
        })
        .collect();
    let mut statuses = Vec::new();
    for call in calls {
        statuses.push(call.await.unwrap());
    }
    let count = |status: u16| statuses.iter().filter(|s| **s == status).count();
    assert_eq!((count(200), count(429)), (20, 5), "{statuses:?}");

    // Node 3 cut off the database: 503 for what needs it, while nodes 1 and 2 serve.
    cluster.cut_from_database(2).await;
    let recipients = || async { direct[2].request(Method::GET, "/recipients").send().await.unwrap() };
    let noticed = until_not(200, Duration::from_secs(20), recipients).await;
    assert_eq!(noticed.status(), 503, "a cut-off node answers 200 until it notices, then 503");
    for on in &direct[..2] {
        on.get("/recipients").await.expect(200);
    }
    cluster.reconnect_to_database(2).await;
    let recovered = until_not(503, Duration::from_secs(30), recipients).await;
    assert_eq!(recovered.status(), 200, "while it reconnects, a node answers 503");
}

/// An answer of `status`, else an error (a transport error included).
trait FilterStatus {
    fn filter_status(self, status: u16) -> Result<reqwest::Response, ()>;
}

impl FilterStatus for Result<reqwest::Response, reqwest::Error> {
    fn filter_status(self, status: u16) -> Result<reqwest::Response, ()> {
        match self {
            Ok(r) if r.status().as_u16() == status => Ok(r),
            _ => Err(()),
        }
    }
}

async fn scalar(url: &str, sql: &str) -> i64 {
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    let n: i64 = sqlx::query_scalar(sql).fetch_one(&mut conn).await.unwrap();
    conn.close().await.ok();
    n
}

/// A node killed with SIGKILL during a write load, a scheduled sweep of 10,000 recipients and a
/// stream of asynchronous calls: every acknowledged write reads back, the sweep ends with every
/// recipient's run done (at least once: a batch the dead node held is run again), and every
/// asynchronous call reaches a result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_killed_during_writes_a_sweep_and_async_calls_loses_nothing_acknowledged() {
    let Some(mut cluster) = Cluster::start(3, &args()).await else { return };
    let api = Api::login(&cluster.balancer, "demo-public-key", "demo-public-secret").await;
    let seeded = std::process::Command::new(herald_tests::process::herald_binary())
        .args(["seed", "--instance", "demo", "--count", "10000"])
        .env("HERALD_DATABASE_URL", &cluster.database.url)
        .env("HERALD_DATA_DIR", cluster.nodes[0].data_dir())
        .output()
        .unwrap();
    assert!(seeded.status.success(), "{}", String::from_utf8_lossy(&seeded.stderr));
    api.upload_extension("tagger.wasm", env!("GUEST_STEP_TAGGER"), "step").await;
    api.upload_http_extension("job.wasm", env!("GUEST_ASYNC_OPEN")).await;
    // Every seeded recipient has an AGE; the write load's have none.
    api.put("/flows/sweep", json!({"trigger": {"schedule": "* * * * *", "filter": "AGE>=0"}, "nodes": [{"step": "tagger"}]}))
        .await
        .expect(201);

    // The write load and the stream of asynchronous calls, through the balancer until stopped.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writes = tokio::spawn({
        let (api, stop) = (api.clone(), stop.clone());
        async move {
            let mut acknowledged = HashMap::new();
            let mut i = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let email = format!("w{i}@load.test");
                // A call the killed node held may end without an answer: not acknowledged.
                let sent = api.request(Method::POST, "/recipients").json(&json!({"personData": {"EMAIL": email}})).send().await;
                if let Ok(r) = sent.filter_status(201) {
                    let body: Value = r.json().await.unwrap();
                    acknowledged.insert(body["personData"]["USER_ID"].as_i64().unwrap(), email);
                }
                i += 1;
            }
            acknowledged
        }
    });
    let calls = tokio::spawn({
        let (base, stop) = (cluster.balancer.clone(), stop.clone());
        async move {
            let client = reqwest::Client::new();
            let mut accepted = Vec::new();
            let mut i = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let sent = client.post(format!("{base}/extensions/open/demo/job/a{i}?ms=200")).body(format!("body {i}")).send().await;
                if let Ok(r) = sent.filter_status(202) {
                    let id: Value = r.json().await.unwrap();
                    accepted.push((id["queueId"].as_str().unwrap().to_string(), format!("body {i}")));
                }
                i += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            accepted
        }
    });

    // Node 2 is killed once the sweep has started.
    let runs = "SELECT COUNT(*) FROM \"instance_demo\"._flow_runs WHERE flow = 'sweep'";
    eventually(Duration::from_secs(120), "the sweep starts (500 runs)", || async {
        match scalar(&cluster.database.url, runs).await {
            n if n >= 500 => Ok(()),
            n => Err(format!("{n} runs")),
        }
    })
    .await;
    cluster.nodes[1].kill();
    tokio::time::sleep(Duration::from_secs(3)).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let acknowledged = writes.await.unwrap();
    let accepted = calls.await.unwrap();
    assert!(acknowledged.len() > 10 && accepted.len() > 10, "{} writes, {} calls", acknowledged.len(), accepted.len());

    // Every acknowledged write reads back.
    for (id, email) in &acknowledged {
        let r = api.get(&format!("/recipients/{id}")).await;
        r.expect(200);
        assert_eq!(r.json()["personData"]["EMAIL"], email.as_str());
    }
    // Every asynchronous call reaches its result.
    let client = reqwest::Client::new();
    for (id, body) in &accepted {
        let r = settled(&client, &cluster.balancer, id, Duration::from_secs(90)).await;
        assert_eq!(r.status(), 201, "execution {id}");
        let result: Value = r.json().await.unwrap();
        assert_eq!(result["body"], body.as_str());
    }
    // The sweep ends, every seeded recipient's run done at least once.
    let flow = eventually(Duration::from_secs(180), "the sweep ends", || async {
        let flow = api.get("/flows/sweep").await.json();
        if flow["scheduled"]["lastFiring"]["done"] == true {
            Ok(flow)
        } else {
            Err(flow.to_string())
        }
    })
    .await;
    assert_eq!(flow["scheduled"]["lastFiring"]["recipients"], 10_000, "{flow}");
    let distinct = "SELECT COUNT(DISTINCT _recipient) FROM \"instance_demo\"._flow_runs WHERE flow = 'sweep' AND outcome = 'completed'";
    eventually(Duration::from_secs(120), "every seeded recipient's run is done after the sweep ended", || async {
        match scalar(&cluster.database.url, distinct).await {
            n if n >= 10_000 => Ok(()),
            n => Err(format!("{n} distinct recipients")),
        }
    })
    .await;
    let total = scalar(&cluster.database.url, runs).await;
    eprintln!("sweep of 10,000 with a node killed: {total} runs ({} run again)", total - 10_000);
}
