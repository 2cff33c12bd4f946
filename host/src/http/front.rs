//! What every call on a public listener passes first and last, as one service: a stack of six
//! layers (three `middleware` functions, two `map_response`s and tower-http's request-id pair),
//! each a cloned inner service and a boxed future per call, did the same work.
//!
//! On the way in:
//! - `X-Request-Id`: a client's is kept only when it is short and of letters, digits and `-_.:`
//!   (it goes into every log line of the call and back in the answer: a long or odd one would
//!   fill logs or forge their fields); otherwise a new one is made;
//! - the call's span (`request`, with the method, the path and the request id), around
//!   everything it does, so every log line of the call carries them;
//! - a body whose declared length is over the payload limit is refused before any of it is read
//!   (an import's body has a limit of its own, which its handler keeps; a body without a
//!   declared length is cut off by `DefaultBodyLimit` once it passes the limit).
//!
//! On the way out: JSON answers labelled with their charset (`negotiate::label_json`), the
//! browser policy (`browser_policy`), and the request id.
//!
//! With `RUST_LOG=info,herald::requests=debug` each call also logs a line when it starts and one
//! when it is answered (its status and latency); otherwise no clock is read for it.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::extract::Request;
use axum::http::{header, HeaderName, HeaderValue};
use axum::response::{IntoResponse, Response};
use tracing::instrument::Instrumented;
use tracing::Instrument;

use super::error::ApiError;
use super::{browser_policy, negotiate};

/// A name made at compile time: a `&str` name is parsed and checked at every use.
static REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");
/// The log target of the per-call lines.
const REQUESTS: &str = "herald::requests";
/// The longest `X-Request-Id` a client may choose.
const MAX_REQUEST_ID: usize = 64;

/// The layer of `Front`.
#[derive(Clone, Copy, Default)]
pub struct FrontLayer;

impl<S> tower::Layer<S> for FrontLayer {
    type Service = Front<S>;

    fn layer(&self, inner: S) -> Front<S> {
        Front { inner }
    }
}

#[derive(Clone)]
pub struct Front<S> {
    inner: S,
}

impl<S> tower::Service<Request> for Front<S>
where
    S: tower::Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Answer<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        let id = request_id(&request);
        request.headers_mut().insert(&REQUEST_ID, id.clone());
        // Text fields, not `Display` ones: the log format writes a `&str` as it is, where a
        // `Display` value is first formatted into a buffer (at every call, for the span's fields).
        let span = tracing::info_span!(
            "request",
            method = request.method().as_str(),
            path = request.uri().path(),
            request_id = id.to_str().unwrap_or("-"),
        );
        let started = tracing::enabled!(target: REQUESTS, tracing::Level::DEBUG).then(|| {
            span.in_scope(|| tracing::debug!(target: REQUESTS, "started processing request"));
            Instant::now()
        });
        if oversized(&request) {
            let mut refused = ApiError::PayloadTooLarge.into_response();
            finish(&mut refused, id);
            return Answer { state: State::Refused { response: Some(refused) } };
        }
        // The inner service's future owns what it needs: this one, made ready, answers the call
        // itself (a clone of it at every call was five reference counts written from every core).
        Answer { state: State::Called { future: self.inner.call(request).instrument(span), id: Some(id), started } }
    }
}

pin_project_lite::pin_project! {
    /// The inner service's answer, finished on its way out.
    pub struct Answer<F> {
        #[pin]
        state: State<F>,
    }
}

pin_project_lite::pin_project! {
    #[project = StateProjection]
    enum State<F> {
        Called { #[pin] future: Instrumented<F>, id: Option<HeaderValue>, started: Option<Instant> },
        Refused { response: Option<Response> },
    }
}

impl<F: Future<Output = Result<Response, Infallible>>> Future for Answer<F> {
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().state.project() {
            StateProjection::Called { mut future, id, started } => {
                let Ok(mut response) = std::task::ready!(future.as_mut().poll(cx));
                if let Some(started) = started.take() {
                    let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
                    let status = response.status().as_u16();
                    future.span().in_scope(|| tracing::debug!(target: REQUESTS, status, latency_ms, "finished processing request"));
                }
                if let Some(id) = id.take() {
                    finish(&mut response, id);
                }
                Poll::Ready(Ok(response))
            }
            StateProjection::Refused { response } => Poll::Ready(Ok(response.take().expect("an answer polled after it was ready"))),
        }
    }
}

/// The caller's request id when it is safe to keep, or a new one.
fn request_id(request: &Request) -> HeaderValue {
    let mut ids = request.headers().get_all(&REQUEST_ID).iter();
    match (ids.next(), ids.next()) {
        (Some(id), None) if safe(id.as_bytes()) => id.clone(),
        _ => new_request_id(),
    }
}

fn safe(id: &[u8]) -> bool {
    !id.is_empty() && id.len() <= MAX_REQUEST_ID && id.iter().all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(b))
}

/// A random 64-bit prefix drawn once per process and a counter, in hex: unique across nodes
/// without drawing random bits at every call.
fn new_request_id() -> HeaderValue {
    use std::sync::atomic::{AtomicU64, Ordering};
    static PREFIX: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let prefix = *PREFIX.get_or_init(rand::random);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut id = [0u8; 32];
    for (i, byte) in prefix.to_be_bytes().iter().chain(n.to_be_bytes().iter()).enumerate() {
        id[2 * i] = HEX[usize::from(byte >> 4)];
        id[2 * i + 1] = HEX[usize::from(byte & 15)];
    }
    HeaderValue::from_bytes(&id).expect("hex digits are a header value")
}

/// Whether the body's declared length is over the payload limit (an import's excepted).
fn oversized(request: &Request) -> bool {
    let declared = request.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<u64>().ok());
    declared.is_some_and(|n| n > super::MAX_PAYLOAD_BYTES as u64) && !super::imports::takes_import_body(request.uri().path())
}

/// The answer's headers: its JSON labelled, the browser policy, the request id.
fn finish(response: &mut Response, id: HeaderValue) {
    negotiate::label_json(response);
    browser_policy::apply(response);
    // An extension's own request id in its answer stays.
    response.headers_mut().entry(&REQUEST_ID).or_insert(id);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_short_plain_request_ids_are_kept() {
        assert!(safe(b"abc-123_x.y:z"));
        assert!(!safe(b""));
        assert!(!safe("x".repeat(MAX_REQUEST_ID + 1).as_bytes()));
        assert!(!safe(b"a b"));
        assert!(!safe(b"id\" level=error"));
        let (a, b) = (new_request_id(), new_request_id());
        assert_ne!(a, b);
        assert_eq!(a.len(), 32);
    }
}
