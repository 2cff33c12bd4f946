//! http extensions: the request handed to the guest's `wasi:http/incoming-handler`, and its
//! response returned as it made it.
//!
//! The execution runs on the guest threads (`fair/`), never on the caller's: the caller waits for
//! the answer, which comes back as soon as the guest sets it. What remains of a guest still
//! running (a long body, its log) goes on there, and so does the whole execution if the caller
//! goes away first: an execution never stops halfway because its client left.

use std::sync::{Arc, OnceLock};

use tokio::sync::oneshot;
use wasmtime::Store;
use wasmtime_wasi_http::p2::bindings::http::types::{ErrorCode, Scheme};
use wasmtime_wasi_http::p2::body::HyperOutgoingBody;
use wasmtime_wasi_http::WasiHttpView;

use crate::runtime::call::{Call, CallFailure, GuestFuture, Invocation, Recorder};
use crate::runtime::input::{recorded_headers, BodyCopy, RecordedInput};
use crate::runtime::state::CallState;
use crate::runtime::{Prepared, Runtime};

pub type HttpResponse = hyper::Response<HyperOutgoingBody>;

type Answer = Result<HttpResponse, ErrorCode>;

/// One request to one guest; the answer comes back through `answer` as soon as the guest sets
/// its response, before the execution ends.
struct HttpInvocation {
    request: hyper::Request<axum::body::Body>,
    answer: oneshot::Sender<Answer>,
    /// Set when the guest answers 5xx: its execution is then recorded as an error, with its input.
    server_error: Arc<OnceLock<String>>,
}

impl Invocation for HttpInvocation {
    type Output = ();
    const KIND: &'static str = "http";
    const REUSES_INSTANCE: bool = true;
    const CHECKS_SIGNATURES: bool = true;

    /// The request's head, and its body's first bytes as the guest reads them (copied only up to
    /// the bound; a request whose execution succeeds drops the copy).
    fn recorder(&mut self) -> Option<Recorder> {
        // Cheap clones (shared buffers): made into text only if the execution fails.
        let (method, uri, headers) = (self.request.method().clone(), self.request.uri().clone(), self.request.headers().clone());
        // A body already at its end (most GETs) has nothing to copy: neither a copy nor a tee.
        let copy = (!hyper::body::Body::is_end_stream(self.request.body())).then(|| {
            let copy = BodyCopy::default();
            let body = std::mem::take(self.request.body_mut());
            let tee = copy.clone();
            *self.request.body_mut() = axum::body::Body::new(http_body_util::BodyExt::map_frame(body, move |frame| {
                if let Some(data) = frame.data_ref() {
                    tee.keep(data);
                }
                frame
            }));
            copy
        });
        Some(Box::new(move || {
            let (body, body_base64, truncated) = copy.map_or((None, None, false), |copy| copy.taken());
            let uri = uri.path_and_query().map_or_else(|| uri.path().to_string(), ToString::to_string);
            RecordedInput::Http { method: method.to_string(), uri, headers: recorded_headers(&headers), body, body_base64, truncated }
        }))
    }

    fn answered_error(&self) -> Option<Arc<OnceLock<String>>> {
        Some(Arc::clone(&self.server_error))
    }

    fn invoke<'a>(self, store: &'a mut Store<CallState>, extension: &'a Prepared) -> GuestFuture<'a, ()> {
        Box::pin(async move {
            let pre = extension.http.as_ref().ok_or_else(|| wasmtime::Error::msg("the extension is not an http extension"))?;
            let (parts, body) = self.request.into_parts();
            let body = http_body_util::BodyExt::map_err(body, |e| wasmtime_wasi_http::Error::InternalError(Some(e.to_string())));
            let req = store.data_mut().http().new_incoming_request(Scheme::Http, hyper::Request::from_parts(parts, body))?;
            // The answer passes through here on its way to the caller, for its status.
            let (set, answered) = oneshot::channel();
            let out = store.data_mut().http().new_response_outparam(set)?;
            // A reused store (`warm.rs`) has its instance already.
            let kept = store.data().proxy.clone();
            let proxy = match kept {
                Some(proxy) => proxy,
                None => {
                    let proxy = Arc::new(pre.instantiate_async(&mut *store).await?);
                    store.data_mut().proxy = Some(Arc::clone(&proxy));
                    proxy
                }
            };
            let handle = proxy.wasi_http_incoming_handler().call_handle(&mut *store, req, out);
            tokio::pin!(handle);
            let server_error = self.server_error;
            let forward = |answer: Answer, caller: oneshot::Sender<Answer>| {
                if let Ok(response) = &answer {
                    if response.status().is_server_error() {
                        let _ = server_error.set(format!("answered {}", response.status().as_u16()));
                    }
                }
                let _ = caller.send(answer);
            };
            let (mut answered, mut caller) = (Some(answered), Some(self.answer));
            let outcome = loop {
                tokio::select! {
                    biased;
                    answer = async { answered.as_mut().expect("checked").await }, if answered.is_some() => {
                        answered = None;
                        // Otherwise the guest dropped its response unset: so does this, and the
                        // caller learns why from the execution's end.
                        if let (Ok(answer), Some(caller)) = (answer, caller.take()) {
                            forward(answer, caller);
                        }
                    }
                    // A caller that went away closes the response at once, as if the guest had
                    // answered it directly: the guest finds out when it writes its body.
                    () = async { caller.as_mut().expect("checked").closed().await }, if caller.is_some() => {
                        caller = None;
                        answered = None;
                    }
                    outcome = &mut handle => break outcome,
                }
            };
            if let (Some(caller), Some(Ok(answer))) = (caller, answered.map(|mut a| a.try_recv())) {
                forward(answer, caller);
            }
            outcome
        })
    }
}

impl Runtime {
    /// Calls an http extension: the execution runs on the guest threads (`fair/`), and its answer
    /// comes back here as soon as the guest sets it; the rest of the execution (a long body, its
    /// log) goes on there, and so does all of it if this caller goes away.
    pub async fn call_http(self: &Arc<Self>, call: Call, request: hyper::Request<axum::body::Body>) -> Result<HttpResponse, CallFailure> {
        let (answer, mut receiver) = oneshot::channel();
        let invocation = HttpInvocation { request, answer, server_error: Arc::default() };
        let mut execution = self.spawn_execution(call, invocation);
        let first = tokio::select! {
            biased;
            answer = &mut receiver => First::Answer(answer),
            finished = &mut execution => First::Finished(finished),
        };
        let finished = match first {
            First::Answer(Ok(answer)) => return answered(answer),
            // The response outparam went away unanswered: how the execution ended says why.
            First::Answer(Err(_)) => execution.await,
            First::Finished(finished) => match receiver.try_recv() {
                // It answered, then finished before this task looked.
                Ok(answer) => return answered(answer),
                Err(_) => finished,
            },
        };
        match finished {
            Ok((Ok(()), _)) => Err(CallFailure::Trap("the extension never answered".into())),
            Ok((Err(failure), _)) => Err(failure),
            Err(e) => Err(CallFailure::Fault(format!("the execution did not end normally: {e}"))),
        }
    }
}

/// Which came first: the guest's answer, or the end of its execution.
enum First<A, F> {
    Answer(A),
    Finished(F),
}

fn answered(answer: Answer) -> Result<HttpResponse, CallFailure> {
    answer.map_err(|code| CallFailure::Trap(format!("the extension answered with an error: {code:?}")))
}
