//! Moves continuations that fell due (`store::delayed`) into the queue, every poll interval, on
//! the server's clock (tests move it past a flow's `wait`). Every node runs it; a continuation is
//! moved once.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::clock::Clock;
use crate::store::ControlDb;

pub(super) fn spawn(control: ControlDb, clock: Arc<dyn Clock>, every: Duration, wake: Arc<Notify>) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            // A full batch means more may be due: go on at once.
            loop {
                match control.promote_due_jobs(clock.now_millis()).await {
                    Ok(0) => break,
                    Ok(n) => {
                        wake.notify_one();
                        if n < 500 {
                            break;
                        }
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "continuations due could not be queued");
                        break;
                    }
                }
            }
        }
    })
}
