//! A Herald server as its own process (the `herald` binary the workspace builds), for the tests
//! that must kill a server the hard way.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The `herald` binary next to the test executable (`target/<profile>/herald`); `cargo test
/// --workspace` builds it with the host crate's own tests.
pub fn herald_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable");
    let dir = exe.parent().and_then(Path::parent).expect("target directory");
    let binary = dir.join(format!("herald{}", std::env::consts::EXE_SUFFIX));
    assert!(binary.exists(), "{} is missing: run the tests with `cargo test --workspace`", binary.display());
    binary
}

/// Rate smoothing out of the way of tests that call fast (`herald serve` flags).
pub const UNLIMITED_RATE: [&str; 8] = [
    "--rate-per-address",
    "100000",
    "--burst-per-address",
    "100000",
    "--rate-per-credential",
    "100000",
    "--burst-per-credential",
    "100000",
];

/// A running `herald serve`, killed (SIGKILL) when dropped.
pub struct ServerProcess {
    pub base: String,
    child: Child,
}

impl ServerProcess {
    /// Starts `herald serve` on a free loopback port over `data_dir` (and the PostgreSQL
    /// database at `database_url`, if any), with `args` added, and waits until it answers.
    pub async fn start(data_dir: &Path, database_url: Option<&str>, args: &[&str]) -> ServerProcess {
        ServerProcess::start_logging(data_dir, database_url, args, "warn", None).await
    }

    /// `start`, with the server's log at `level` written to `log` (for the tests that read what
    /// it logs) instead of the test's own standard error.
    pub async fn start_logging(
        data_dir: &Path,
        database_url: Option<&str>,
        args: &[&str],
        level: &str,
        log: Option<&Path>,
    ) -> ServerProcess {
        let port = std::net::TcpListener::bind("127.0.0.1:0").expect("free port").local_addr().expect("addr").port();
        let mut command = Command::new(herald_binary());
        command.env_remove("HERALD_DATABASE_URL");
        if let Some(url) = database_url {
            command.env("HERALD_DATABASE_URL", url);
        }
        let child = command
            .arg("serve")
            .arg("--listen")
            .arg(format!("127.0.0.1:{port}"))
            .args(args)
            .env("HERALD_DATA_DIR", data_dir)
            .env("RUST_LOG", level)
            .stdout(Stdio::null())
            .stderr(match log {
                Some(path) => Stdio::from(std::fs::File::create(path).expect("log file")),
                None => Stdio::inherit(),
            })
            .spawn()
            .expect("herald starts");
        let server = ServerProcess { base: format!("http://127.0.0.1:{port}"), child };
        crate::eventually(Duration::from_secs(30), &format!("herald listens on {port}"), || async {
            tokio::net::TcpStream::connect(("127.0.0.1", port)).await.map(drop).map_err(|e| e.to_string())
        })
        .await;
        server
    }

    /// The process's id (for its threads and descriptors in `/proc`).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Stops the process as an operator does (SIGTERM) and waits for it to end: it drains its
    /// calls and exits 0, or the test fails.
    pub async fn stop(mut self) {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status().expect("kill runs");
        assert!(sent.success(), "SIGTERM to {pid}");
        let status = crate::eventually(Duration::from_secs(30), &format!("herald {pid} stops"), || {
            let ended = self.child.try_wait().map_err(|e| e.to_string()).and_then(|s| s.ok_or_else(|| "still running".to_string()));
            async move { ended }
        })
        .await;
        assert!(status.success(), "a graceful stop exits 0: {status}");
    }

    /// Ends the process at once, as a crash would.
    pub fn kill(mut self) {
        self.child.kill().expect("kill");
        self.child.wait().expect("wait");
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
