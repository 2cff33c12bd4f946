//! Accepting and serving connections, with the bounds that keep a slow or hostile client from
//! holding the server's sockets:
//!
//! - a connection that has not sent a complete request head within `header_timeout` is closed:
//!   a client that sends half its headers (slowloris), one that sends nothing, and an idle
//!   keep-alive connection between requests (the deadline runs from the moment the server waits
//!   for a head and is not extended by trickled bytes);
//! - a request body that makes no progress for `body_timeout` fails the request (400) and closes
//!   the connection;
//! - at most `max_connections` connections are open at once per listener; past that the server
//!   stops accepting until one closes (the kernel's backlog holds the newcomers), so file
//!   descriptors never run out;
//! - an answer given before its request body was read to the end (an extension that ignored a
//!   large body, a refusal before the upload was read) says `Connection: close`, and the
//!   connection is closed after it rather than left with unread bytes that a client reusing it
//!   would trip over.
//!
//! Connections speak HTTP/1.1. Stopping stops accepting and lets the requests under way finish
//! (graceful shutdown).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{header, HeaderValue, Request, Response, Version};
use hyper::body::{Body as HttpBody, Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};
use tower::ServiceExt;
use tower_http::timeout::TimeoutBody;

mod in_flight;

pub use in_flight::{Answering, InFlight};

/// The bounds of every listener.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionSettings {
    pub header_timeout: Duration,
    pub body_timeout: Duration,
    pub max_connections: usize,
}

impl Default for ConnectionSettings {
    fn default() -> ConnectionSettings {
        ConnectionSettings { header_timeout: Duration::from_secs(30), body_timeout: Duration::from_secs(30), max_connections: 4096 }
    }
}

/// Serves `app` on `listener` until `stop` turns true, then waits for the connections' requests
/// under way. Each request is counted in `in_flight`, when given, until its answer's head is ready.
pub async fn serve<S: App>(
    listener: TcpListener,
    app: S,
    settings: ConnectionSettings,
    in_flight: Option<Arc<InFlight>>,
    mut stop: watch::Receiver<bool>,
) -> std::io::Result<()> {
    let slots = Arc::new(Semaphore::new(settings.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    // HTTP/1.1 only: detecting HTTP/2's preface reads the connection's first bytes before any
    // deadline runs, so a silent client would be kept forever. Clients of a plain-HTTP API speak
    // HTTP/1.1 (HTTP/2 without TLS needs prior knowledge, which no browser uses).
    let mut builder = Builder::new(TokioExecutor::new()).http1_only();
    builder.http1().timer(TokioTimer::new()).header_read_timeout(settings.header_timeout);
    loop {
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => slot.expect("the semaphore is never closed"),
            _ = stopped(&mut stop) => break,
        };
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stopped(&mut stop) => break,
        };
        let (stream, addr) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                // Per-connection failures (reset before accept) and a full descriptor table
                // (EMFILE) both pass; the pause keeps the latter from spinning.
                tracing::debug!(error = %e, "accepting a connection failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        // Without TCP_NODELAY, an answer whose body is written after its head (an extension's
        // streamed body) waits for the client's delayed ACK: about 40 ms (Nagle's algorithm).
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "TCP_NODELAY could not be set on a connection");
        }
        let service = PerRequest { app: app.clone(), addr, body_timeout: settings.body_timeout, in_flight: in_flight.clone() };
        let connection = builder.serve_connection(TokioIo::new(stream), service).into_owned();
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "a connection ended with an error");
            }
            drop(slot);
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// What a listener serves: a router, or a public listener's router inside `http::front` (a
/// service of any type, so that what wraps every call wraps it once rather than every route).
pub trait App:
    tower::Service<Request<Body>, Response = Response<Body>, Error = Infallible, Future: Send> + Clone + Send + Sync + 'static
{
}

impl<S> App for S where
    S: tower::Service<Request<Body>, Response = Response<Body>, Error = Infallible, Future: Send> + Clone + Send + Sync + 'static
{
}

/// Resolves once `stop` is true (or its sender is gone).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    while !*stop.borrow_and_update() {
        if stop.changed().await.is_err() {
            return;
        }
    }
}

/// What each request of a connection goes through before the router: the peer's address (for the
/// per-address limits), the body's inactivity deadline, the count of calls in flight, and the
/// `Connection: close` of an answer given before its body was read.
///
/// hyper's own service (called by reference), not a tower service behind `TowerToHyperService`:
/// that adapter cloned this whole service (and the app in it) at every request before this
/// cloned the app again, and the answer was boxed here, where hyper keeps one box per connection
/// for it (`bench/instructions.sh`).
struct PerRequest<S> {
    app: S,
    addr: SocketAddr,
    body_timeout: Duration,
    in_flight: Option<Arc<InFlight>>,
}

impl<S: App> hyper::service::Service<Request<Incoming>> for PerRequest<S> {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Answer<tower::util::Oneshot<S, Request<Body>>>;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        let (mut parts, body) = request.into_parts();
        parts.extensions.insert(ConnectInfo(self.addr));
        let http1 = parts.version <= Version::HTTP_11;
        // Most calls have no body: they need neither a deadline (a timer each) nor tracking.
        let unread = (!body.is_end_stream()).then(|| Arc::new(AtomicBool::new(true)));
        let body = match &unread {
            Some(flag) => Body::new(ReadToEnd { inner: TimeoutBody::new(self.body_timeout, body), unread: flag.clone() }),
            None => Body::new(body),
        };
        let answering = self.in_flight.as_ref().map(InFlight::enter);
        let answer = self.app.clone().oneshot(Request::from_parts(parts, body));
        Answer { answer, answering, unread: unread.filter(|_| http1) }
    }
}

pin_project_lite::pin_project! {
    /// The app's answer to one request, counted in flight until it is ready.
    struct Answer<F> {
        #[pin]
        answer: F,
        answering: Option<Answering>,
        // An HTTP/1 request's body not read to its end yet.
        unread: Option<Arc<AtomicBool>>,
    }
}

impl<F: std::future::Future<Output = Result<Response<Body>, Infallible>>> std::future::Future for Answer<F> {
    type Output = Result<Response<Body>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let Ok(mut response) = std::task::ready!(this.answer.poll(cx));
        this.answering.take();
        if this.unread.take().is_some_and(|flag| flag.load(Ordering::Acquire)) {
            response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        Poll::Ready(Ok(response))
    }
}

pin_project_lite::pin_project! {
    /// A request body that notes when it has been read to its end.
    struct ReadToEnd<B> {
        #[pin]
        inner: B,
        unread: Arc<AtomicBool>,
    }
}

impl<B: HttpBody> HttpBody for ReadToEnd<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        let mut this = self.project();
        let frame = this.inner.as_mut().poll_frame(cx);
        // Some readers stop when the body says it is at its end, without asking for the `None`.
        if matches!(frame, Poll::Ready(None)) || this.inner.is_end_stream() {
            this.unread.store(false, Ordering::Release);
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use axum::Router;

    use super::*;

    #[tokio::test]
    async fn a_listener_counts_the_calls_it_is_answering_until_their_answers_are_ready() {
        let release = Arc::new(tokio::sync::Notify::new());
        let app = Router::new().route(
            "/slow",
            axum::routing::get({
                let release = release.clone();
                move || async move {
                    release.notified().await;
                    "done"
                }
            }),
        );
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let calls = Arc::new(InFlight::new(1));
        let (_stop, signal) = watch::channel(false);
        tokio::spawn(serve(listener, app, ConnectionSettings::default(), Some(calls.clone()), signal));

        let mut client = tokio::net::TcpStream::connect(addr).await.unwrap();
        client.write_all(b"GET /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await.unwrap();
        let counted = tokio::time::timeout(Duration::from_secs(10), async {
            while calls.count() == 0 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        });
        counted.await.expect("the call is counted while it is answered");
        assert_eq!(calls.count(), 1);
        release.notify_one();
        let mut answer = String::new();
        client.read_to_string(&mut answer).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 200") && answer.ends_with("done"), "{answer}");
        assert_eq!(calls.count(), 0, "an answered call is no longer counted");
    }
}
