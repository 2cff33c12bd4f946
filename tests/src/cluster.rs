//! Several `herald serve` processes on one PostgreSQL database behind a real load balancer:
//! HAProxy (Debian's package, which `scripts/test.sh` installs), round robin with no affinity.
//!
//! Where the machine allows it (root, `ip netns`), each node runs in a network namespace of its
//! own, joined to the test's host by a veth pair on a bridge: the node listens on its own address
//! and reaches the database through the balancer's host, as a node on another machine would.
//! Elsewhere the nodes listen on loopback ports, and `Cluster::start` says so.
//!
//! Every node reaches PostgreSQL through a TCP front of its own in the same HAProxy, so a test
//! can cut one node off the database (its sessions killed, new ones refused) and bring it back,
//! through HAProxy's admin socket.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::process::herald_binary;
use crate::TestDatabase;

/// One node: its own address and data directory.
pub struct Node {
    pub name: String,
    /// Its address, asked directly (not through the balancer).
    pub base: String,
    listen: String,
    namespace: Option<String>,
    data_dir: tempfile::TempDir,
    database_url: String,
    args: Vec<String>,
    process: Option<Child>,
}

impl Node {
    fn spawn(&mut self) {
        let mut command = match &self.namespace {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns]).arg(herald_binary());
                c
            }
            None => Command::new(herald_binary()),
        };
        let child = command
            .arg("serve")
            .arg("--listen")
            .arg(&self.listen)
            .args(&self.args)
            .env("HERALD_DATABASE_URL", &self.database_url)
            .env("HERALD_DATA_DIR", self.data_dir.path())
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(self.log_path()).expect("a node's log"))
            .spawn()
            .expect("herald starts");
        self.process = Some(child);
    }

    async fn wait_listening(&self) {
        let what = format!("node {} listens on {}", self.name, self.listen);
        crate::eventually(Duration::from_secs(30), &what, || async {
            match tokio::net::TcpStream::connect(self.listen.as_str()).await {
                Ok(_) => Ok(()),
                Err(e) => Err(format!("{e}; its log:\n{}", std::fs::read_to_string(self.log_path()).unwrap_or_default())),
            }
        })
        .await;
    }

    /// Ends the node at once (SIGKILL), as a crash would.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.process.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// What the node wrote to stderr (its log), kept beside its data directory.
    pub fn log_path(&self) -> PathBuf {
        self.data_dir.path().with_extension("log")
    }

    pub fn data_dir(&self) -> &Path {
        self.data_dir.path()
    }
}

/// The test's own network: a bridge and a namespace per node, removed when dropped.
struct Network {
    bridge: String,
    namespaces: Vec<String>,
}

impl Drop for Network {
    fn drop(&mut self) {
        for ns in &self.namespaces {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
        let _ = Command::new("ip").args(["link", "del", &self.bridge]).status();
    }
}

fn ip(args: &[&str]) -> bool {
    Command::new("ip").args(args).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

/// A bridge with address `.1` and `count` namespaces `.11`, `.12`...: the namespaces' names and
/// addresses, or `None` where namespaces cannot be made here.
fn make_network(count: usize) -> Option<(Network, String, Vec<String>)> {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let id = (std::process::id() % 40) * 6 + NEXT.fetch_add(1, Ordering::Relaxed) % 6 + 1;
    let bridge = format!("hxb{id}");
    let _ = Command::new("ip").args(["link", "del", &bridge]).stderr(Stdio::null()).status();
    let host = format!("10.250.{id}.1");
    let mut network = Network { bridge: bridge.clone(), namespaces: Vec::new() };
    if !(ip(&["link", "add", &bridge, "type", "bridge"])
        && ip(&["addr", "add", &format!("{host}/24"), "dev", &bridge])
        && ip(&["link", "set", &bridge, "up"]))
    {
        return None;
    }
    let mut addresses = Vec::new();
    for i in 1..=count {
        let (ns, outer, inner) = (format!("hx{id}n{i}"), format!("hx{id}n{i}"), format!("hx{id}n{i}p"));
        let _ = Command::new("ip").args(["netns", "del", &ns]).stderr(Stdio::null()).status();
        let address = format!("10.250.{id}.{}", 10 + i);
        let made = ip(&["netns", "add", &ns]) && {
            network.namespaces.push(ns.clone());
            ip(&["link", "add", &outer, "type", "veth", "peer", "name", &inner])
                && ip(&["link", "set", &inner, "netns", &ns])
                && ip(&["link", "set", &outer, "master", &bridge])
                && ip(&["link", "set", &outer, "up"])
                && ip(&["-n", &ns, "addr", "add", &format!("{address}/24"), "dev", &inner])
                && ip(&["-n", &ns, "link", "set", &inner, "up"])
                && ip(&["-n", &ns, "link", "set", "lo", "up"])
        };
        if !made {
            return None;
        }
        addresses.push(address);
    }
    Some((network, host, addresses))
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("free port").local_addr().expect("addr").port()
}

/// `host:port` of the PostgreSQL server in `url` (`postgres://user@host:port/db`).
fn database_address(url: &str) -> (String, String) {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let (authority, database) = rest.split_once('/').unwrap_or((rest, ""));
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host_port = if host_port.contains(':') { host_port.to_string() } else { format!("{host_port}:5432") };
    (host_port, database.to_string())
}

/// Three (or `count`) nodes, the balancer in front, and the database behind.
pub struct Cluster {
    /// The balancer's address: what clients call.
    pub balancer: String,
    pub nodes: Vec<Node>,
    pub database: TestDatabase,
    haproxy: Child,
    admin_socket: PathBuf,
    _network: Option<Network>,
    _dir: tempfile::TempDir,
}

impl Cluster {
    /// `None` without PostgreSQL (`HERALD_TEST_POSTGRES`) or HAProxy; `args` go to every node.
    pub async fn start(count: usize, args: &[&str]) -> Option<Cluster> {
        let Some(database) = TestDatabase::create().await else {
            eprintln!("several nodes need PostgreSQL: this test runs in the PostgreSQL pass of scripts/test.sh");
            return None;
        };
        if Command::new("haproxy").arg("-v").stdout(Stdio::null()).status().is_err() {
            eprintln!("HAProxy is missing (scripts/test.sh installs Debian's package): the cluster tests need it");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let network = make_network(count);
        if network.is_none() {
            eprintln!("no network namespaces here (they need root and `ip netns`): the nodes listen on loopback ports");
        }
        let (host, addresses) = match &network {
            Some((_, host, addresses)) => (host.clone(), addresses.clone()),
            None => ("127.0.0.1".to_string(), vec!["127.0.0.1".to_string(); count]),
        };
        let (database_server, database_name) = database_address(&database.url);
        let balancer_port = free_port();
        let admin_socket = dir.path().join("admin.sock");
        let mut config = format!(
            "global\n  stats socket {admin} mode 600 level admin\n  maxconn 4000\n\
             defaults\n  timeout connect 2s\n  timeout client 300s\n  timeout server 300s\n  timeout queue 2s\n  retries 2\n\
             frontend api\n  mode http\n  bind 127.0.0.1:{balancer_port}\n  default_backend nodes\n\
             backend nodes\n  mode http\n  balance roundrobin\n  option redispatch\n  retry-on conn-failure\n",
            admin = admin_socket.display()
        );
        let mut nodes = Vec::new();
        for (i, address) in addresses.iter().enumerate() {
            let name = format!("n{}", i + 1);
            let port = if network.is_some() { 8080 } else { free_port() };
            let listen = format!("{address}:{port}");
            config.push_str(&format!("  server {name} {listen} check inter 300 fall 2 rise 1\n"));
            let database_port = free_port();
            let database_front = format!("{host}:{database_port}");
            nodes.push((name, listen, database_front));
        }
        for (name, _, front) in &nodes {
            config.push_str(&format!(
                "frontend db_{name}\n  mode tcp\n  bind {front}\n  default_backend db_{name}\n\
                 backend db_{name}\n  mode tcp\n  server pg {database_server}\n"
            ));
        }
        let config_path = dir.path().join("haproxy.cfg");
        std::fs::write(&config_path, config).unwrap();
        let haproxy_log = dir.path().join("haproxy.log");
        let mut haproxy = Command::new("haproxy")
            .arg("-db")
            .arg("-f")
            .arg(&config_path)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&haproxy_log).unwrap())
            .spawn()
            .expect("haproxy starts");
        // The nodes' fronts to the database listen before any node starts.
        for (_, _, front) in &nodes {
            let haproxy = &mut haproxy;
            let log = || std::fs::read_to_string(&haproxy_log).unwrap_or_default();
            crate::eventually(Duration::from_secs(10), &format!("HAProxy listens on {front}"), || {
                let ended = haproxy.try_wait().is_ok_and(|s| s.is_some());
                async move {
                    assert!(!ended, "HAProxy ended:\n{}", log());
                    tokio::net::TcpStream::connect(front.as_str()).await.map(drop).map_err(|e| format!("{e}; its log:\n{}", log()))
                }
            })
            .await;
        }
        let mut cluster_nodes = Vec::new();
        for (i, (name, listen, front)) in nodes.into_iter().enumerate() {
            let namespace = network.as_ref().map(|(n, _, _)| n.namespaces[i].clone());
            let mut node = Node {
                base: format!("http://{listen}"),
                name,
                listen,
                namespace,
                data_dir: tempfile::tempdir().unwrap(),
                database_url: format!("postgres://postgres@{front}/{database_name}"),
                args: args.iter().map(|a| a.to_string()).collect(),
                process: None,
            };
            node.spawn();
            cluster_nodes.push(node);
        }
        let cluster = Cluster {
            balancer: format!("http://127.0.0.1:{balancer_port}"),
            nodes: cluster_nodes,
            database,
            haproxy,
            admin_socket,
            _network: network.map(|(n, _, _)| n),
            _dir: dir,
        };
        for node in &cluster.nodes {
            node.wait_listening().await;
        }
        cluster.wait_balanced(cluster.nodes.len()).await;
        Some(cluster)
    }

    /// A command on HAProxy's admin socket; its answer.
    pub async fn admin(&self, command: &str) -> String {
        let mut stream = crate::eventually(Duration::from_secs(10), "HAProxy's admin socket", || async {
            tokio::net::UnixStream::connect(&self.admin_socket).await.map_err(|e| e.to_string())
        })
        .await;
        stream.write_all(format!("{command}\n").as_bytes()).await.unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        answer
    }

    /// Waits until the balancer sends to `up` nodes.
    pub async fn wait_balanced(&self, up: usize) {
        crate::eventually(Duration::from_secs(30), &format!("the balancer sees {up} nodes up"), || async {
            let stat = self.admin("show stat").await;
            let count = stat.lines().filter(|l| l.starts_with("nodes,n") && l.split(',').nth(17) == Some("UP")).count();
            if count == up {
                Ok(())
            } else {
                Err(stat)
            }
        })
        .await;
    }

    /// Cuts node `i` off the database: its sessions are killed and new ones refused.
    pub async fn cut_from_database(&self, i: usize) {
        let backend = format!("db_{}/pg", self.nodes[i].name);
        self.admin(&format!("set server {backend} state maint")).await;
        self.admin(&format!("shutdown sessions server {backend}")).await;
    }

    /// Lets node `i` reach the database again.
    pub async fn reconnect_to_database(&self, i: usize) {
        self.admin(&format!("set server db_{}/pg state ready", self.nodes[i].name)).await;
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            node.kill();
        }
        let _ = self.haproxy.kill();
        let _ = self.haproxy.wait();
    }
}
