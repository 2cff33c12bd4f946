//! Monitor extensions: check something and report whether it is healthy.

mod bindings {
    crate::runtime::kinds::world!("herald:platform/monitor-extension");
}

use std::sync::Arc;

use wasmtime::Store;

use crate::runtime::call::{Call, CallFailure, GuestFuture, Invocation, Recorder};
use crate::runtime::input::RecordedInput;
use crate::runtime::state::CallState;
use crate::runtime::{Prepared, Runtime};

/// What a monitor reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub healthy: bool,
    pub message: String,
}

struct Check;

impl Invocation for Check {
    type Output = Report;
    const KIND: &'static str = "monitor";

    fn recorder(&mut self) -> Option<Recorder> {
        Some(Box::new(|| RecordedInput::Monitor {}))
    }

    fn invoke<'a>(self, store: &'a mut Store<CallState>, extension: &'a Prepared) -> GuestFuture<'a, Report> {
        Box::pin(async move {
            let guest = extension.typed(bindings::MonitorExtensionPre::new)?.instantiate_async(&mut *store).await?;
            let report = guest.herald_platform_monitor().call_check(&mut *store).await?;
            Ok(Report { healthy: report.healthy, message: report.message })
        })
    }
}

impl Runtime {
    pub async fn call_monitor(self: &Arc<Self>, call: Call) -> Result<Report, CallFailure> {
        self.execution(call, Check).await
    }
}
