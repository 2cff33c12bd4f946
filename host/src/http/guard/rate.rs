//! Rate smoothing with tower-governor's buckets: per credential behind `authenticate`, per client
//! address on the token endpoint and the open routes. Refusals become the platform's 429 (empty
//! body, `Retry-After`).
//!
//! The layer is Herald's (`SmoothingLayer`), not tower-governor's: that one makes a new clock for
//! every refusal to tell how long to wait (`quanta::Clock::new`, which runs the `cpuid`
//! instruction, trapped by the hypervisor in a virtual machine), so a refused call cost the
//! server three times an answered one (48 us of CPU against 16 on this machine, BENCHMARKS.md):
//! a client flooding a route cost more refused than served. The buckets' own clock tells it here.

use std::future::{ready, Ready};
use std::net::SocketAddr;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::http::Request;
use axum::response::{IntoResponse, Response};
use futures_util::future::Either;
use governor::clock::Clock;
use governor::middleware::NoOpMiddleware;
use tower_governor::governor::{GovernorConfig, GovernorConfigBuilder};
use tower_governor::key_extractor::KeyExtractor;
use tower_governor::GovernorError;

use super::super::error::ApiError;
use super::Caller;
use crate::limits::rate::replenish_period;

/// Keys calls by the credential that `authenticate` found.
#[derive(Clone, Debug)]
pub struct CredentialKey;

impl KeyExtractor for CredentialKey {
    type Key = String;

    fn extract<T>(&self, req: &Request<T>) -> Result<String, GovernorError> {
        req.extensions().get::<Caller>().map(|c| c.principal.client_id.clone()).ok_or(GovernorError::UnableToExtractKey)
    }
}

/// Keys calls by the client's address (the TCP peer; headers such as X-Forwarded-For are not
/// trusted, since any client can send them).
#[derive(Clone, Debug)]
pub struct AddressKey;

impl KeyExtractor for AddressKey {
    type Key = std::net::IpAddr;

    fn extract<T>(&self, req: &Request<T>) -> Result<std::net::IpAddr, GovernorError> {
        req.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip()).ok_or(GovernorError::UnableToExtractKey)
    }
}

fn refusal(e: GovernorError) -> axum::response::Response {
    match e {
        GovernorError::TooManyRequests { wait_time, .. } => ApiError::TooManyRequests { retry_after: wait_time.max(1) }.into_response(),
        GovernorError::UnableToExtractKey => ApiError::Unauthorized.into_response(),
        GovernorError::Other { .. } => ApiError::Internal(anyhow::anyhow!("rate limiter failed")).into_response(),
    }
}

fn config<K: KeyExtractor>(key: K, per_second: u32, burst: u32) -> Arc<GovernorConfig<K, NoOpMiddleware>> {
    let mut builder = GovernorConfigBuilder::default();
    builder.period(replenish_period(per_second)).burst_size(burst.max(1));
    Arc::new(builder.key_extractor(key).finish().expect("period and burst are not zero"))
}

/// One smoothing (its buckets, keyed by `K`), shared by the routes behind its layer and by the
/// extension calls' services (`extension_calls.rs`), which check it themselves: a client has
/// one allowance whichever route it calls.
pub struct Smoothing<K: KeyExtractor> {
    config: Arc<GovernorConfig<K, NoOpMiddleware>>,
    key: K,
}

impl<K: KeyExtractor> Clone for Smoothing<K> {
    fn clone(&self) -> Self {
        Smoothing { config: Arc::clone(&self.config), key: self.key.clone() }
    }
}

impl<K> Smoothing<K>
where
    K: KeyExtractor + Send + Sync + 'static,
    K::Key: Send + Sync + 'static,
{
    /// The buckets and a task that forgets idle keys every minute (the key map would grow
    /// with every address ever seen otherwise).
    pub fn new(key: K, per_second: u32, burst: u32) -> Smoothing<K> {
        let config = config(key.clone(), per_second, burst);
        let limiter = config.limiter().clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(60));
            loop {
                tick.tick().await;
                if Arc::strong_count(&limiter) == 1 {
                    return; // the server is gone
                }
                limiter.retain_recent();
            }
        });
        Smoothing { config, key }
    }

    /// The layer for a router's routes.
    pub fn layer(&self) -> SmoothingLayer<K> {
        SmoothingLayer { smoothing: self.clone() }
    }

    /// Counts one call of `key`; the refusal when over, with the wait the buckets' clock tells.
    pub fn refusal(&self, key: &K::Key) -> Option<Response> {
        let limiter = self.config.limiter();
        let negative = limiter.check_key(key).err()?;
        let wait_time = negative.wait_time_from(limiter.clock().now()).as_secs();
        Some(refusal(GovernorError::TooManyRequests { wait_time, headers: None }))
    }

    /// Counts `request`'s call; its refusal when over, or when its key cannot be found (no
    /// credential where the smoothing is keyed on one).
    fn check<T>(&self, request: &Request<T>) -> Option<Response> {
        match self.key.extract(request) {
            Ok(key) => self.refusal(&key),
            Err(e) => Some(refusal(e)),
        }
    }
}

/// A layer of its own (buckets that no other route shares).
pub fn layer<K>(key: K, per_second: u32, burst: u32) -> SmoothingLayer<K>
where
    K: KeyExtractor + Send + Sync + 'static,
    K::Key: Send + Sync + 'static,
{
    Smoothing::new(key, per_second, burst).layer()
}

/// Smooths the calls of the routes it wraps with one `Smoothing`.
#[derive(Clone)]
pub struct SmoothingLayer<K: KeyExtractor> {
    smoothing: Smoothing<K>,
}

impl<K: KeyExtractor, S> tower::Layer<S> for SmoothingLayer<K> {
    type Service = Smoothed<K, S>;

    fn layer(&self, inner: S) -> Smoothed<K, S> {
        Smoothed { smoothing: self.smoothing.clone(), inner }
    }
}

#[derive(Clone)]
pub struct Smoothed<K: KeyExtractor, S> {
    smoothing: Smoothing<K>,
    inner: S,
}

impl<K, S, B> tower::Service<Request<B>> for Smoothed<K, S>
where
    K: KeyExtractor + Send + Sync + 'static,
    K::Key: Send + Sync + 'static,
    S: tower::Service<Request<B>, Response = Response>,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Either<Ready<Result<Response, S::Error>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        match self.smoothing.check(&request) {
            // The inner service stays ready for the next call.
            Some(refused) => Either::Left(ready(Ok(refused))),
            None => Either::Right(self.inner.call(request)),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::net::SocketAddr;

    use axum::extract::ConnectInfo;
    use axum::http::Request;
    use axum::response::Response;
    use tower::{Layer, Service};

    use super::{layer, AddressKey};

    async fn status_of<S: Service<Request<()>, Response = Response, Error = Infallible>>(
        service: &mut S,
        from: Option<[u8; 4]>,
    ) -> (u16, Option<String>) {
        let mut request = Request::new(());
        if let Some(ip) = from {
            request.extensions_mut().insert(ConnectInfo(SocketAddr::from((ip, 4000))));
        }
        std::future::poll_fn(|cx| service.poll_ready(cx)).await.unwrap();
        let response = service.call(request).await.unwrap();
        let retry_after = response.headers().get("retry-after").map(|v| v.to_str().unwrap().to_string());
        (response.status().as_u16(), retry_after)
    }

    /// One call a second with a burst of two, per address: the third call at once is refused
    /// with the wait the buckets' clock tells; another address has its own allowance; a call
    /// whose key cannot be found is refused as unauthenticated.
    #[tokio::test]
    async fn the_layer_refuses_past_the_burst_and_says_how_long_to_wait() {
        let answer = tower::service_fn(|_: Request<()>| async { Ok::<_, Infallible>(Response::new(axum::body::Body::empty())) });
        let mut service = layer(AddressKey, 1, 2).layer(answer);
        assert_eq!(status_of(&mut service, Some([10, 0, 0, 1])).await, (200, None));
        assert_eq!(status_of(&mut service, Some([10, 0, 0, 1])).await, (200, None));
        assert_eq!(status_of(&mut service, Some([10, 0, 0, 1])).await, (429, Some("1".into())));
        assert_eq!(status_of(&mut service, Some([10, 0, 0, 2])).await, (200, None));
        assert_eq!(status_of(&mut service, None).await.0, 401);
    }
}
