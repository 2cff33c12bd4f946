//! Rarely taken branches of the hottest calls, kept out of their callers' futures.
//!
//! An `async fn`'s future is as large as the largest state it can be in, over every branch, and
//! every caller's future holds it whole; a future is moved (copied byte for byte) when it is
//! boxed, and often when an `.await` sets it into its caller's state. An extension call passed
//! through lookups whose misses run a database statement (an sqlx future of about 2 KB) or load
//! a component (7 KB): the future boxed for each call was 20 KB and was copied several times a
//! call, though those branches almost never run (BENCHMARKS.md, "Futures that fit the hot
//! path"). `boxed` puts such a branch's future on the heap when the branch is taken, so that the
//! callers' futures carry a pointer in its place.

use std::future::Future;
use std::pin::Pin;

/// `future` on the heap: awaited where it was, at the cost of one allocation, and only a
/// pointer in the future of the function that awaits it.
pub fn boxed<F: Future>(future: F) -> Pin<Box<F>> {
    Box::pin(future)
}
