//! Authheader extensions: make the authorization headers of an outbound call to a host they are
//! bound to (`authorize.rs` decides when, and caches).

mod bindings {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "herald:platform/authheader-extension",
        imports: { "herald:platform/secrets": async | trappable | tracing, default: async },
        trappable_error_type: { "herald:platform/types.error" => crate::runtime::host::HostError },
        exports: { default: async },
        with: {
            "herald:platform/types": crate::runtime::host::bindings::herald::platform::types,
            "herald:platform/global-data": crate::runtime::host::bindings::herald::platform::global_data,
            "herald:platform/log": crate::runtime::host::bindings::herald::platform::log,
        },
    });
}

pub(crate) use bindings::herald::platform::secrets as secrets_interface;

use std::sync::Arc;

use wasmtime::Store;

use crate::runtime::call::{Answered, Call, GuestFuture, Invocation, Recorder};
use crate::runtime::input::RecordedInput;
use crate::runtime::state::CallState;
use crate::runtime::{Prepared, Runtime};

/// What the outbound call is.
#[derive(Debug, Clone)]
pub struct Outbound {
    pub host: String,
    pub method: String,
    pub path_with_query: String,
}

/// What the extension made: headers, and how long they may be reused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Made {
    pub headers: Vec<(String, String)>,
    pub max_age_seconds: Option<u32>,
}

struct Headers(Outbound);

impl Invocation for Headers {
    type Output = Result<Made, String>;
    const KIND: &'static str = "authheader";
    const READS_SECRETS: bool = true;
    const HEADERS_FOR_OUTBOUND: bool = false;

    fn recorder(&mut self) -> Option<Recorder> {
        let Outbound { host, method, path_with_query } = self.0.clone();
        Some(Box::new(move || RecordedInput::Authheader { host, method, path: path_with_query }))
    }

    fn declined(output: &Self::Output) -> Option<&str> {
        output.as_ref().err().map(String::as_str)
    }

    fn without_guest_text(output: Self::Output) -> Self::Output {
        output.map_err(|_| format!("it declined; {}", crate::runtime::call::WITHHELD))
    }

    fn invoke<'a>(self, store: &'a mut Store<CallState>, extension: &'a Prepared) -> GuestFuture<'a, Self::Output> {
        Box::pin(async move {
            let guest = extension.typed(bindings::AuthheaderExtensionPre::new)?.instantiate_async(&mut *store).await?;
            let Outbound { host, method, path_with_query } = self.0;
            let grant = guest.herald_platform_authheader().call_headers(&mut *store, &host, &method, &path_with_query).await?;
            let state = store.data_mut();
            Ok(match grant {
                Ok(grant) => {
                    let headers: Vec<(String, String)> = grant.headers.into_iter().map(|h| (h.name, h.value)).collect();
                    // The credentials it made are kept out of its own log and output, like the
                    // secrets it read.
                    state.revealed.extend(headers.iter().map(|(_, value)| value.clone()));
                    Ok(Made { headers, max_age_seconds: grant.max_age_seconds })
                }
                // Its reason is written by code that holds the secrets, in whatever form it likes:
                // outside a local run it is neither kept nor passed on (`without_guest_text`).
                Err(reason) => Err(crate::secrets::redact(&reason, &state.revealed)),
            })
        })
    }
}

impl Runtime {
    /// The headers the extension makes for `outbound`; `Answered::Error` when it declines.
    pub async fn call_authheader(self: &Arc<Self>, call: Call, outbound: Outbound) -> Answered<Made> {
        self.execution(call, Headers(outbound)).await.into()
    }
}
