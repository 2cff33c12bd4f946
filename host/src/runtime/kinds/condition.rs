//! Condition extensions: answer whether a flow goes on for one recipient.

mod bindings {
    crate::runtime::kinds::world!("herald:platform/condition-extension");
}

use std::sync::Arc;

use wasmtime::Store;

use crate::runtime::call::{Call, GuestFuture, Invocation, Logged, Recorder};
use crate::runtime::host::bindings::herald::platform::types::Field;
use crate::runtime::input::{fields_to_json, RecordedInput};
use crate::runtime::state::CallState;
use crate::runtime::{Prepared, Runtime};

struct Condition {
    recipient: Vec<Field>,
    context: Option<String>,
}

impl Invocation for Condition {
    type Output = Result<bool, String>;
    const KIND: &'static str = "condition";

    fn recorder(&mut self) -> Option<Recorder> {
        let (recipient, context) = (fields_to_json(&self.recipient), self.context.clone());
        Some(Box::new(move || RecordedInput::Condition { recipient, context: context.and_then(|c| serde_json::from_str(&c).ok()) }))
    }

    fn declined(output: &Self::Output) -> Option<&str> {
        output.as_ref().err().map(String::as_str)
    }

    fn invoke<'a>(self, store: &'a mut Store<CallState>, extension: &'a Prepared) -> GuestFuture<'a, Self::Output> {
        Box::pin(async move {
            let guest = extension.typed(bindings::ConditionExtensionPre::new)?.instantiate_async(&mut *store).await?;
            guest.herald_platform_condition().call_evaluate(&mut *store, &self.recipient, self.context.as_deref()).await
        })
    }
}

impl Runtime {
    /// Evaluates a condition for `recipient`; `Answered::Error` when the guest cannot decide.
    /// With the lines the guest logged.
    pub async fn call_condition(self: &Arc<Self>, call: Call, recipient: Vec<Field>) -> Logged<bool> {
        let context = call.context.clone();
        let (result, log) = self.logged_execution(call, Condition { recipient, context }).await;
        Logged { answer: result.into(), log }
    }
}
