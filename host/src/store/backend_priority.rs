//! The PostgreSQL backends behind Herald's connections, scheduled like Herald's own threads for
//! the work they do, when PostgreSQL runs on this machine and Herald may change another user's
//! scheduling (`CAP_SYS_NICE`): short turns for every backend of the node's pool, which answers
//! the API's calls, and of the control plane's, which admits each of them (its calls in flight);
//! while an import's batch runs its statements, its backend at the priority of
//! queued work (`--background-nice`) and on the kernel's own turn, and back to its own before the
//! commit. Not on long turns, as Herald's own bulk threads are: the batch's backend shares a
//! scheduling group with the API's backends (PostgreSQL's processes), and on long turns a call's
//! thread that woke on its core waited for the next tick (4 ms here) in most slow calls; on the
//! kernel's own turn the p99 of a GET during a million-row import was 1.5 to 1.7 times idle in four
//! runs of four, against 1.3 to 4.3 times (BENCHMARKS.md, "An import's backend on the kernel's
//! own turn").
//!
//! Why: Herald's own threads of queued work already run below the API's priority, and the API's
//! threads ask for short turns (`scheduling.rs`), but an import's statements and a call's read run
//! in PostgreSQL's backends, processes at one priority. On a machine whose cores PostgreSQL shares
//! with Herald, a batch's statement holds a core for milliseconds, and a call's backend that woke
//! meanwhile waited behind it, or on the other core behind whatever ran there for its turn
//! (BENCHMARKS.md, "What a PostgreSQL call waits for during an import"). A backend below the
//! others' priority is preempted by a woken one at once, and a woken backend with a short turn is
//! due before any thread with the default turn, as Herald's API threads are. The share of the
//! processor each backend gets is its nice value's; a turn changes only who waits less.
//!
//! The backend's process id comes from PostgreSQL (`pg_backend_pid()`), which on another machine,
//! or in another container, names an unrelated process here. So a process is only changed once
//! it is proven to be the other end of the very connection: the TCP socket whose ports are the
//! connection's, seen from the server's side in this machine's socket table, must be one of that
//! process's open files. Anything short of that proof (a database elsewhere, a Unix socket, no
//! permission to read the process's files or to change its scheduling) leaves the backend as it
//! is: scheduling is a preference, never a condition for running.
//!
//! The batch's priority and turn are given back when its statements are done, before its commit,
//! so the connection goes back to the pool (and the API's writes of the same group) as it was.
//! That needs the same capability (raising a priority back is privileged), which is checked first.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use sqlx::{AnyConnection, Row};

use crate::scheduling::{set_turn_of, turn_of, KERNEL_TURN_NS, PROMPT_TURN_NS};

/// Gives the backend behind `conn`, a new connection of a pool that answers calls (the node's,
/// the control plane's), short turns when it is proven to be a process of this machine and
/// Herald may.
pub async fn prompt_turns(conn: &mut AnyConnection) {
    if !may_renice() {
        return;
    }
    let Some(pid) = local_backend(conn).await else { return };
    if let Err(e) = set_turn_of(pid, PROMPT_TURN_NS) {
        tracing::debug!(error = %e, pid, "a PostgreSQL backend keeps the kernel's default turn");
    }
}

/// A backend running at a lower priority on the kernel's own turn; the old ones are given back when
/// this is dropped.
pub struct Lowered {
    pid: i32,
    nice_before: i32,
    turn_before: Option<u64>,
}

impl Lowered {
    /// Lowers the priority of the PostgreSQL backend behind `conn` by `nice` steps (to at most
    /// 19), and gives it the kernel's own turn, for as long as the result lives, when it is proven
    /// to be a process of this machine and Herald may; `None` otherwise, or when `nice` is 0.
    pub async fn backend_of(conn: &mut AnyConnection, nice: u8) -> Option<Lowered> {
        if nice == 0 || !may_renice() {
            return None;
        }
        let pid = local_backend(conn).await?;
        let nice_before = os::nice_of(pid)?;
        let lowered = (nice_before + i32::from(nice)).min(19);
        if lowered <= nice_before {
            return None;
        }
        if let Err(e) = os::set_nice(pid, lowered) {
            tracing::debug!(error = %e, pid, "the import's backend keeps its priority");
            return None;
        }
        let turn_before = turn_of(pid);
        if let Err(e) = set_turn_of(pid, KERNEL_TURN_NS) {
            tracing::debug!(error = %e, pid, "the import's backend keeps its turn");
        }
        Some(Lowered { pid, nice_before, turn_before })
    }
}

impl Drop for Lowered {
    fn drop(&mut self) {
        if let Err(e) = os::set_nice(self.pid, self.nice_before) {
            tracing::warn!(error = %e, pid = self.pid, "a PostgreSQL backend kept the lower priority of an import's batch");
        }
        if let Some(turn) = self.turn_before {
            if let Err(e) = set_turn_of(self.pid, turn) {
                tracing::warn!(error = %e, pid = self.pid, "a PostgreSQL backend kept the turn of an import's batch");
            }
        }
    }
}

/// The process id of the backend behind `conn` when it is proven to be a process of this machine.
async fn local_backend(conn: &mut AnyConnection) -> Option<i32> {
    let row = sqlx::query("SELECT pg_backend_pid(), inet_server_port(), inet_client_port()").fetch_one(conn).await;
    let (pid, server_port, client_port) = match row {
        Ok(row) => (row.try_get::<i32, _>(0).ok()?, row.try_get::<Option<i32>, _>(1).ok()??, row.try_get::<Option<i32>, _>(2).ok()??),
        Err(e) => {
            tracing::debug!(error = %e, "a PostgreSQL backend keeps its scheduling: its process id is unknown");
            return None;
        }
    };
    let connection = Connection { pid, server_port: u16::try_from(server_port).ok()?, client_port: u16::try_from(client_port).ok()? };
    proven(connection).then_some(pid)
}

/// Whether this process may lower and raise another user's priority (`CAP_SYS_NICE`, Linux).
pub fn may_renice() -> bool {
    os::may_renice()
}

/// Whether process `pid` of this machine holds the server's end of the TCP connection between
/// `server_port` and `client_port`: the proof asked of a backend before its scheduling changes.
pub fn serves_connection(pid: i32, server_port: u16, client_port: u16) -> bool {
    os::holds_server_socket(pid, server_port, client_port)
}

/// A connection as PostgreSQL tells it: its backend's process id and the two ports.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Connection {
    pid: i32,
    server_port: u16,
    client_port: u16,
}

/// Whether `connection`'s backend is a process of this machine, remembered per connection (a
/// process id and a client port stay together for the connection's life; the search reads the
/// machine's socket table, too costly for every batch).
fn proven(connection: Connection) -> bool {
    /// Connections remembered at most; past it the memory starts again.
    const REMEMBERED: usize = 4096;
    static KNOWN: OnceLock<Mutex<HashMap<Connection, bool>>> = OnceLock::new();
    let known = KNOWN.get_or_init(Mutex::default);
    if let Some(proven) = known.lock().unwrap_or_else(|e| e.into_inner()).get(&connection) {
        return *proven;
    }
    let proven = serves_connection(connection.pid, connection.server_port, connection.client_port);
    if !proven {
        tracing::debug!(
            pid = connection.pid,
            "a PostgreSQL backend keeps its scheduling: not a process of this machine, as far as Herald can tell"
        );
    }
    let mut known = known.lock().unwrap_or_else(|e| e.into_inner());
    if known.len() >= REMEMBERED {
        known.clear();
    }
    known.insert(connection, proven);
    proven
}

#[cfg(target_os = "linux")]
mod os {
    use std::io;
    use std::sync::OnceLock;

    /// `CAP_SYS_NICE` (include/uapi/linux/capability.h).
    const CAP_SYS_NICE: u32 = 23;

    /// Whether this process may lower and raise another user's priority (checked once).
    pub fn may_renice() -> bool {
        static MAY: OnceLock<bool> = OnceLock::new();
        *MAY.get_or_init(|| {
            let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
            let effective = status.lines().find_map(|l| l.strip_prefix("CapEff:")).and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok());
            effective.is_some_and(|caps| caps & (1 << CAP_SYS_NICE) != 0)
        })
    }

    /// The nice value of process `pid` (never this process's: `None` for a pid that is none).
    pub fn nice_of(pid: i32) -> Option<i32> {
        rustix::process::Pid::from_raw(pid).and_then(|pid| rustix::process::getpriority_process(Some(pid)).ok())
    }

    pub fn set_nice(pid: i32, nice: i32) -> io::Result<()> {
        let pid = rustix::process::Pid::from_raw(pid).ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
        rustix::process::setpriority_process(Some(pid), nice).map_err(io::Error::from)
    }

    /// Whether process `pid` has open the server's end of the TCP connection between
    /// `server_port` and `client_port` (in this machine's, or this network namespace's, table).
    pub fn holds_server_socket(pid: i32, server_port: u16, client_port: u16) -> bool {
        let Some(inode) = server_socket_inode(server_port, client_port) else { return false };
        let socket = format!("socket:[{inode}]");
        let Ok(files) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return false };
        files.flatten().any(|file| std::fs::read_link(file.path()).is_ok_and(|target| target.as_os_str() == socket.as_str()))
    }

    /// The inode of the socket whose local port is `server_port` and remote port `client_port`
    /// (`/proc/net/tcp` and `tcp6`: "sl local_address rem_address st ... uid timeout inode").
    fn server_socket_inode(server_port: u16, client_port: u16) -> Option<u64> {
        let port = |address: &str| address.rsplit_once(':').and_then(|(_, hex)| u16::from_str_radix(hex, 16).ok());
        ["/proc/net/tcp", "/proc/net/tcp6"].into_iter().find_map(|table| {
            let text = std::fs::read_to_string(table).ok()?;
            text.lines().skip(1).find_map(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                let (local, remote, inode) = (fields.get(1)?, fields.get(2)?, fields.get(9)?);
                (port(local) == Some(server_port) && port(remote) == Some(client_port)).then(|| inode.parse().ok()).flatten()
            })
        })
    }
}

#[cfg(not(target_os = "linux"))]
mod os {
    pub fn may_renice() -> bool {
        false
    }

    pub fn nice_of(_pid: i32) -> Option<i32> {
        None
    }

    pub fn set_nice(_pid: i32, _nice: i32) -> std::io::Result<()> {
        Ok(())
    }

    pub fn holds_server_socket(_pid: i32, _server_port: u16, _client_port: u16) -> bool {
        false
    }
}
