//! A node's heartbeat, and the recovery of executions whose node stopped beating. Every node runs
//! this, so whichever survives a crash queues the dead node's executions again (at least once).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::clock::Clock;
use crate::store::{now_millis, ControlDb};

pub(super) fn spawn(control: ControlDb, clock: Arc<dyn Clock>, node: Arc<str>, timeout: Duration, wake: Arc<Notify>) -> JoinHandle<()> {
    let every = (timeout / 5).max(Duration::from_millis(100));
    let timeout_ms = timeout.as_millis() as i64;
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            if let Err(e) = control.node_heartbeat(&node).await {
                tracing::warn!(error = %e, "this node's heartbeat could not be written");
                continue;
            }
            match control.recover_jobs(clock.now_millis(), now_millis() - timeout_ms, &node).await {
                Ok((0, 0)) => {}
                Ok((requeued, failed)) => {
                    tracing::warn!(requeued, failed, "extension executions of a node that stopped were queued again");
                    wake.notify_one();
                }
                Err(e) => tracing::warn!(error = %e, "executions of stopped nodes could not be recovered"),
            }
            // Slots of calls in flight held by silent nodes go back to their instances.
            match control.release_silent_nodes(now_millis() - timeout_ms, None).await {
                Ok(0) => {}
                Ok(slots) => tracing::warn!(slots, "calls in flight held by a node that stopped were given back"),
                Err(e) => tracing::warn!(error = %e, "the calls in flight of stopped nodes could not be given back"),
            }
            if let Err(e) = control.prune_nodes(now_millis() - 100 * timeout_ms).await {
                tracing::debug!(error = %e, "old nodes could not be pruned");
            }
        }
    })
}
