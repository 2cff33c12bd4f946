//! Helpers for the end-to-end tests: a real Herald server on a real socket over a temporary data
//! directory, and a small JSON client.

pub mod cluster;
pub mod database;
pub mod imports;
pub mod process;
pub mod recorder;
pub mod signing;
pub mod waits;

use std::path::PathBuf;
use std::time::Duration;

use std::sync::Arc;

use herald_host::clock::ManualClock;
use herald_host::connections::ConnectionSettings;
use herald_host::limits::RateSettings;
use herald_host::queue::QueueSettings;
use herald_host::runtime::RuntimeSettings;
use herald_host::server::{self, RunningServer, ServerConfig};
use herald_host::store::Backend;

pub use database::TestDatabase;
use reqwest::{Method, StatusCode};
use serde_json::Value;
pub use waits::{eventually, until_not};

pub use reqwest;
pub use serde_json::json;

/// A server over its own data directory, removed when the test ends.
pub struct TestServer {
    pub base: String,
    /// The operator listener (`/metrics`, `/healthz`, `/readyz`).
    pub ops: String,
    pub data_dir: PathBuf,
    _dir: Option<tempfile::TempDir>,
    /// The PostgreSQL database of this server, when the suite runs on PostgreSQL.
    database: Option<Arc<TestDatabase>>,
    running: Option<RunningServer>,
    pub client: reqwest::Client,
    /// The server's clock (paging documents, daily caps): it moves only when a test advances it.
    pub clock: Arc<ManualClock>,
    settings: Settings,
}

/// What a test server is started with.
/// An instance with what the monitor-http example needs: Global Data STATUS_URL, event
/// INTEGRATION_DOWN (`TestServer::apply_definition` creates it).
pub const OPS_INSTANCE: &str = r#"
[[instance]]
customer_id = "ops"
environment = "production"
licensed_uar = 1000

[model]
recipient_id = "ID"
person_data = [{ name = "ID", type = "NUMBER", unique = true }, { name = "EMAIL", type = "STRING" }]

[[model.global_data]]
name = "STATUS_URL"
type = "STRING"

[[model.events]]
name = "INTEGRATION_DOWN"
"#;

#[derive(Clone)]
pub struct Settings {
    pub rate: RateSettings,
    pub runtime: RuntimeSettings,
    pub queue: QueueSettings,
    pub connections: ConnectionSettings,
    pub media_quota: u64,
    pub open_instances: herald_host::tenants::OpenInstances,
    pub pool: herald_host::store::node_pool::PoolSettings,
    /// The largest body of a bulk import.
    pub import_max_bytes: u64,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            rate: RateSettings::default(),
            runtime: test_runtime(),
            queue: test_queue(),
            connections: ConnectionSettings::default(),
            media_quota: herald_host::server::DEFAULT_MEDIA_QUOTA,
            open_instances: Default::default(),
            pool: Default::default(),
            import_max_bytes: herald_host::imports::DEFAULT_MAX_BYTES,
        }
    }
}

fn config(data_dir: PathBuf, database_url: Option<String>, clock: Arc<ManualClock>, settings: Settings) -> ServerConfig {
    let Settings { rate, runtime, queue, connections, media_quota, open_instances, pool, import_max_bytes } = settings;
    ServerConfig {
        data_dir,
        database_url,
        listen: "127.0.0.1:0".into(),
        extensions_listen: None,
        ops_listen: Some("127.0.0.1:0".into()),
        demo: true,
        refresh_interval: Duration::from_millis(200),
        clock,
        rate,
        // Short deadlines keep the tests of hostile extensions quick.
        runtime,
        queue,
        connections,
        media_quota,
        open_instances,
        pool,
        calls_in_flight_scope: Default::default(),
        import_max_bytes,
    }
}

/// The tests' queue: a few workers, a short execution limit, quick polling. The report
/// threshold and the retention are the defaults; tests move the server's clock past them.
pub fn test_queue() -> QueueSettings {
    QueueSettings {
        workers: 4,
        execution_limit: Duration::from_secs(3),
        poll_interval: Duration::from_millis(100),
        ..QueueSettings::default()
    }
}

/// The tests' extension settings: short deadlines keep the tests of hostile extensions quick,
/// and the tests' extensions may call this very server, on the loopback address. Compiled
/// components go where `HERALD_COMPILED_DIR` says when it is set, as for the `herald` processes
/// the tests start (which read it themselves): scripts/test.sh sets it, so that a guest uploaded
/// by many tests, on both backends, is compiled once per run (a JavaScript or Python component
/// takes seconds).
pub fn test_runtime() -> RuntimeSettings {
    RuntimeSettings {
        default_timeout: std::time::Duration::from_millis(1500),
        max_timeout: std::time::Duration::from_secs(10),
        outbound_private: true,
        compiled_dir: shared_compiled_dir(),
        ..Default::default()
    }
}

/// The folder of compiled components the test run shares (`HERALD_COMPILED_DIR`), if any.
pub fn shared_compiled_dir() -> Option<PathBuf> {
    std::env::var_os("HERALD_COMPILED_DIR").filter(|dir| !dir.is_empty()).map(PathBuf::from)
}

impl Drop for TestServer {
    fn drop(&mut self) {
        // The server goes before its database.
        self.running.take();
    }
}

impl TestServer {
    /// A server on the embedded default (demo instances) in a fresh data directory.
    pub async fn start() -> TestServer {
        TestServer::start_with_rate(RateSettings::default()).await
    }

    /// A server with its own rate smoothing settings.
    pub async fn start_with_rate(rate: RateSettings) -> TestServer {
        TestServer::start_with(Settings { rate, ..Settings::default() }).await
    }

    /// A server with its own extension settings.
    pub async fn start_with_runtime(runtime: RuntimeSettings) -> TestServer {
        TestServer::start_with(Settings { runtime, ..Settings::default() }).await
    }

    /// A server with its own settings.
    pub async fn start_with(settings: Settings) -> TestServer {
        let dir = tempfile::tempdir().expect("temp dir");
        let database = TestDatabase::create().await.map(Arc::new);
        let mut s = TestServer::start_in(dir.path().to_path_buf(), database, settings).await;
        s._dir = Some(dir);
        s
    }

    /// A server over `data_dir` and, when the suite runs on PostgreSQL, `database`.
    pub async fn start_in(data_dir: PathBuf, database: Option<Arc<TestDatabase>>, settings: Settings) -> TestServer {
        let clock = Arc::new(ManualClock::new(chrono_now_millis()));
        let url = database.as_ref().map(|d| d.url.clone());
        let running = server::start(config(data_dir.clone(), url, clock.clone(), settings.clone())).await.expect("server starts");
        TestServer {
            base: format!("http://{}", running.addr),
            ops: format!("http://{}", running.ops_addr.expect("the tests' servers have an operator listener")),
            data_dir,
            _dir: None,
            database,
            running: Some(running),
            client: reqwest::Client::new(),
            clock,
            settings,
        }
    }

    /// Stops the server (draining requests) and starts a new one on the same data directory.
    pub async fn restart(mut self) -> TestServer {
        self.running.take().expect("running").stop().await.expect("clean stop");
        let mut next = TestServer::start_in(self.data_dir.clone(), self.database.clone(), self.settings.clone()).await;
        next._dir = self._dir.take();
        next
    }

    /// Where this server keeps its data (to open its control plane from a test).
    pub fn backend(&self) -> Backend {
        Backend::new(&self.data_dir, self.database.as_ref().map(|d| d.url.as_str())).expect("valid backend")
    }

    /// This server's PostgreSQL database, when the suite runs on PostgreSQL (for a second node).
    pub fn database(&self) -> Option<Arc<TestDatabase>> {
        self.database.clone()
    }

    /// The PostgreSQL URL of this server's database, when the suite runs on PostgreSQL.
    pub fn database_url(&self) -> Option<&str> {
        self.database.as_ref().map(|d| d.url.as_str())
    }

    /// How many components the running server compiled.
    pub fn compilations(&self) -> u64 {
        self.running.as_ref().expect("running").compilations()
    }

    /// A token for a client id and secret; panics unless the token endpoint says 200.
    pub async fn token(&self, client_id: &str, secret: &str) -> String {
        fetch_token(&self.client, &self.base, client_id, secret).await
    }

    /// Runs the `herald` binary (the operator's commands) on this server's store without blocking
    /// the runtime the server runs on; its standard output, once it succeeded.
    pub async fn herald(&self, args: &[&str]) -> String {
        let mut command = tokio::process::Command::new(process::herald_binary());
        command.env_remove("HERALD_DATABASE_URL").env("HERALD_DATA_DIR", &self.data_dir);
        if let Some(url) = self.database_url() {
            command.env("HERALD_DATABASE_URL", url);
        }
        let out = command.args(args).output().await.expect("herald runs");
        assert!(out.status.success(), "herald {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `herald instance apply` of the instance definition `toml`.
    pub async fn apply_definition(&self, toml: &str) {
        let file = self.data_dir.join("applied.toml");
        std::fs::write(&file, toml).unwrap();
        self.herald(&["instance", "apply", file.to_str().unwrap()]).await;
    }

    /// A new Public Api credential of instance `customer_id` (`herald credentials create`), and a
    /// client with it once the server has loaded the instance (within its refresh interval).
    pub async fn new_client(&self, customer_id: &str) -> Api {
        let created = self.herald(&["credentials", "create", "--instance", customer_id, "--scope", "public"]).await;
        let field = |name: &str| created.lines().find_map(|l| l.strip_prefix(&format!("{name}="))).unwrap().to_string();
        let (id, secret) = (field("client_id"), field("client_secret"));
        let token = eventually(Duration::from_secs(10), &format!("the server loads {customer_id}"), || async {
            let r = token_response(&self.client, &self.base, &id, &secret).await;
            if r.status() == StatusCode::OK {
                Ok(access_token(r).await)
            } else {
                Err(r.status().to_string())
            }
        })
        .await;
        self.bearer(token)
    }

    /// A client of the `demo` instance with its Public Api credential.
    pub async fn demo(&self) -> Api {
        self.api("demo-public-key", "demo-public-secret").await
    }

    /// A client of the `demo-staging` instance.
    pub async fn staging(&self) -> Api {
        self.api("demo-staging-public-key", "demo-staging-public-secret").await
    }

    pub async fn api(&self, client_id: &str, secret: &str) -> Api {
        self.bearer(self.token(client_id, secret).await)
    }

    /// A client of this server that sends `token`.
    fn bearer(&self, token: String) -> Api {
        Api { base: self.base.clone(), auth: format!("Bearer {token}"), client: self.client.clone() }
    }
}

/// A token for a client id and secret; panics unless the token endpoint says 200.
async fn fetch_token(client: &reqwest::Client, base: &str, client_id: &str, secret: &str) -> String {
    let r = token_response(client, base, client_id, secret).await;
    assert_eq!(r.status(), StatusCode::OK, "token for {client_id}");
    access_token(r).await
}

/// The token endpoint's answer to a client-credentials grant.
async fn token_response(client: &reqwest::Client, base: &str, client_id: &str, secret: &str) -> reqwest::Response {
    client
        .post(format!("{base}/oauth2/token"))
        .form(&[("grant_type", "client_credentials"), ("client_id", client_id), ("client_secret", secret)])
        .send()
        .await
        .expect("token request")
}

/// The `access_token` of a token endpoint's 200.
async fn access_token(r: reqwest::Response) -> String {
    let body: Value = r.json().await.expect("token json");
    body["access_token"].as_str().expect("access_token").to_string()
}

/// An answer: status, raw body, and the body as JSON when it is JSON.
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub content_type: Option<String>,
    pub text: String,
}

impl Answer {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.text))
    }

    /// The `message` of a 400/409 body.
    pub fn message(&self) -> String {
        self.json()["message"].as_str().unwrap_or_else(|| panic!("no message in {:?}", self.text)).to_string()
    }

    #[track_caller]
    pub fn expect(&self, status: u16) -> &Answer {
        assert_eq!(self.status.as_u16(), status, "body: {}", self.text);
        self
    }
}

/// An authenticated JSON client.
#[derive(Clone)]
pub struct Api {
    pub base: String,
    pub auth: String,
    pub client: reqwest::Client,
}

impl Api {
    /// A client of the server at `base` with a token for this credential.
    pub async fn login(base: &str, client_id: &str, secret: &str) -> Api {
        Api::login_with(reqwest::Client::new(), base, client_id, secret).await
    }

    /// Like `login`, on `client` (whose connections several `Api`s then share).
    pub async fn login_with(client: reqwest::Client, base: &str, client_id: &str, secret: &str) -> Api {
        let token = fetch_token(&client, base, client_id, secret).await;
        Api { base: base.to_string(), auth: format!("Bearer {token}"), client }
    }

    /// An authenticated request to build further (headers, raw bodies) and send.
    pub fn request(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.client.request(method, format!("{}{}", self.base, path)).header("Authorization", &self.auth)
    }

    pub async fn call(&self, method: Method, path: &str, body: Option<Value>) -> Answer {
        let mut req = self.request(method, path);
        if let Some(b) = body {
            req = req.header("Content-Type", "application/json; charset=utf-8").body(b.to_string());
        }
        answer(req.send().await.expect("request")).await
    }

    pub async fn get(&self, path: &str) -> Answer {
        self.call(Method::GET, path, None).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Answer {
        self.call(Method::POST, path, Some(body)).await
    }

    /// POST without a body (custom methods such as `:truncateTable`).
    pub async fn post_empty(&self, path: &str) -> Answer {
        self.call(Method::POST, path, None).await
    }

    pub async fn put(&self, path: &str, body: Value) -> Answer {
        self.call(Method::PUT, path, Some(body)).await
    }

    pub async fn delete(&self, path: &str) -> Answer {
        self.call(Method::DELETE, path, None).await
    }

    /// Uploads the component at `path` as the http extension `name` (expects 201).
    pub async fn upload_http_extension(&self, name: &str, path: &str) {
        self.upload_extension(name, path, "http").await;
    }

    /// Uploads the component at `path` as extension `name` of `kind` (step, condition...).
    pub async fn upload_extension(&self, name: &str, path: &str, kind: &str) {
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let form = reqwest::multipart::Form::new()
            .part("file", reqwest::multipart::Part::bytes(bytes).file_name(name.to_string()))
            .text("type", kind.to_string());
        answer(self.request(Method::POST, "/assets/extensions").multipart(form).send().await.expect("upload")).await.expect(201);
    }

    /// Uploads template `name` with `text` (replacing one there) and commits it.
    pub async fn commit_template(&self, name: &str, text: &str) {
        let form = reqwest::multipart::Form::new()
            .part("file", reqwest::multipart::Part::bytes(text.as_bytes().to_vec()).file_name(name.to_string()));
        let put = answer(self.request(Method::PUT, "/assets/templates").multipart(form).send().await.expect("upload")).await;
        assert!(put.status == 200 || put.status == 201, "template upload: {}", put.status);
        let form = reqwest::multipart::Form::new().text("file", name.to_string());
        answer(self.request(Method::POST, "/assets/templates/:commit").multipart(form).send().await.expect("commit")).await.expect(200);
    }

    /// Creates a recipient and returns its USER_ID.
    pub async fn create_recipient(&self, person_data: Value) -> i64 {
        let a = self.post("/recipients", serde_json::json!({ "personData": person_data })).await;
        a.expect(201);
        a.json()["personData"]["USER_ID"].as_i64().expect("USER_ID")
    }
}

/// Calls the demo instance's open extension endpoint at `path` (an asynchronous extension) and
/// returns the queue id of its 202.
pub async fn accept_open(client: &reqwest::Client, base: &str, path: &str, body: &str) -> String {
    let r = answer(client.post(format!("{base}/extensions/open/demo/{path}")).body(body.to_string()).send().await.expect("call")).await;
    r.expect(202);
    let id = r.json()["queueId"].as_str().expect("queueId").to_string();
    assert_eq!(r.json(), serde_json::json!({ "queueId": id }));
    id
}

/// The open status endpoint's answer for execution `id` of instance `customer`.
pub async fn open_status(client: &reqwest::Client, base: &str, customer: &str, id: &str) -> reqwest::Response {
    client.get(format!("{base}/extensions/status/open/{customer}/{id}")).send().await.expect("status request")
}

/// Polls the open status of a demo execution until it is no longer 202.
pub async fn settled(client: &reqwest::Client, base: &str, id: &str, within: Duration) -> reqwest::Response {
    until_not(202, within, || open_status(client, base, "demo", id)).await
}

pub async fn answer(r: reqwest::Response) -> Answer {
    let status = r.status();
    let content_type = r.headers().get("content-type").and_then(|v| v.to_str().ok()).map(str::to_string);
    let text = r.text().await.expect("body");
    Answer { status, content_type, text }
}

fn chrono_now_millis() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("after 1970").as_millis() as i64
}

/// Uploads `bytes` as extension `name` of type `kind` (POST: fails if it exists).
pub async fn upload(api: &Api, name: &str, bytes: Vec<u8>, kind: &str) -> Answer {
    let form = reqwest::multipart::Form::new()
        .part("file", reqwest::multipart::Part::bytes(bytes).file_name(name.to_string()))
        .text("type", kind.to_string());
    answer(api.request(reqwest::Method::POST, "/assets/extensions").multipart(form).send().await.unwrap()).await
}

/// `component` with a `herald:config` custom section holding `json` at its top level (the host's
/// one writer of custom sections).
pub fn with_config(component: &[u8], json: &str) -> Vec<u8> {
    herald_host::runtime::custom_section::set_custom_section(component, herald_host::runtime::config::SECTION, json.as_bytes())
        .expect("a component")
}
