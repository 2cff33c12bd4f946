//! Step extensions: act for one recipient of a flow. An error the guest returns ends the flow for
//! that recipient, with the guest's message as the reason.

mod bindings {
    crate::runtime::kinds::world!("herald:platform/step-extension");
}

use std::sync::Arc;

use wasmtime::Store;

use crate::runtime::call::{Call, GuestFuture, Invocation, Logged, Recorder};
use crate::runtime::host::bindings::herald::platform::types::Field;
use crate::runtime::input::{fields_to_json, RecordedInput};
use crate::runtime::state::CallState;
use crate::runtime::{Prepared, Runtime};

struct Step {
    recipient: Vec<Field>,
    context: Option<String>,
}

impl Invocation for Step {
    type Output = Result<(), String>;
    const KIND: &'static str = "step";

    fn recorder(&mut self) -> Option<Recorder> {
        let (recipient, context) = (fields_to_json(&self.recipient), self.context.clone());
        Some(Box::new(move || RecordedInput::Step { recipient, context: context.and_then(|c| serde_json::from_str(&c).ok()) }))
    }

    fn declined(output: &Self::Output) -> Option<&str> {
        output.as_ref().err().map(String::as_str)
    }

    fn invoke<'a>(self, store: &'a mut Store<CallState>, extension: &'a Prepared) -> GuestFuture<'a, Self::Output> {
        Box::pin(async move {
            let guest = extension.typed(bindings::StepExtensionPre::new)?.instantiate_async(&mut *store).await?;
            guest.herald_platform_step().call_run(&mut *store, &self.recipient, self.context.as_deref()).await
        })
    }
}

impl Runtime {
    /// Runs a step for `recipient` (its Person Data); `Answered::Error` when the guest declines.
    /// With the lines the guest logged.
    pub async fn call_step(self: &Arc<Self>, call: Call, recipient: Vec<Field>) -> Logged<()> {
        let context = call.context.clone();
        let (result, log) = self.logged_execution(call, Step { recipient, context }).await;
        Logged { answer: result.into(), log }
    }
}
