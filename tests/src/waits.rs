//! Waiting for what the server does in its own time: one helper, `eventually`, for every wait
//! of the tests, and `until_not` on top of it for status codes.

use std::time::Duration;

/// The one way the tests wait for something the server does in its own time: `probe` is asked
/// every 50 ms until it answers `Ok`, whose value is returned; past `within` the test fails,
/// saying `what` it waited for and what the probe saw last (its `Err`).
pub async fn eventually<T, F, Fut>(within: Duration, what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, String>>,
{
    let started = std::time::Instant::now();
    loop {
        match probe().await {
            Ok(value) => return value,
            Err(seen) if started.elapsed() >= within => panic!("{what}: not within {within:?}; last seen: {seen}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

/// Asks `status` until it answers something else than `while_status`; panics after `within`.
pub async fn until_not<F, Fut>(while_status: u16, within: Duration, mut status: F) -> reqwest::Response
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = reqwest::Response>,
{
    let what = format!("an answer other than {while_status}");
    eventually(within, &what, || {
        let answer = status();
        async move {
            let r = answer.await;
            if r.status() != while_status {
                Ok(r)
            } else {
                Err(format!("{}", r.status()))
            }
        }
    })
    .await
}
