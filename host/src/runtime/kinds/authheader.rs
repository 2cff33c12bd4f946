//! Authheader extensions: make the authorization headers of an outbound call to a host they are
//! bound to.

mod bindings {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "herald:platform/authheader-extension",
        imports: { default: async },
        exports: { default: async },
        with: {
            "herald:platform/types": crate::runtime::platform::bindings::herald::platform::types,
            "herald:platform/global-data": crate::runtime::platform::bindings::herald::platform::global_data,
            "herald:platform/log": crate::runtime::platform::bindings::herald::platform::log,
        },
    });
}

use std::sync::Arc;

use wasmtime::Store;

use crate::runtime::call::{Call, CallFailure, GuestFuture, Invocation};
use crate::runtime::state::CallState;
use crate::runtime::{Prepared, Runtime};

/// What the outbound call is.
#[derive(Debug, Clone)]
pub struct Outbound {
    pub host: String,
    pub method: String,
    pub path_with_query: String,
}

struct Headers(Outbound);

impl Invocation for Headers {
    type Output = Result<Vec<(String, String)>, String>;

    fn invoke<'a>(self, store: &'a mut Store<CallState>, extension: &'a Prepared) -> GuestFuture<'a, Self::Output> {
        Box::pin(async move {
            let guest = bindings::AuthheaderExtensionPre::new(extension.instance.clone())?.instantiate_async(&mut *store).await?;
            let Outbound { host, method, path_with_query } = self.0;
            let headers = guest.herald_platform_authheader().call_headers(&mut *store, &host, &method, &path_with_query).await?;
            Ok(headers.map(|list| list.into_iter().map(|h| (h.name, h.value)).collect()))
        })
    }
}

impl Runtime {
    /// The headers the extension makes for `outbound`; `Ok(Err(reason))` when it declines.
    pub async fn call_authheader(self: &Arc<Self>, call: Call, outbound: Outbound) -> Result<Result<Vec<(String, String)>, String>, CallFailure> {
        self.execution(call, Headers(outbound)).await
    }
}
