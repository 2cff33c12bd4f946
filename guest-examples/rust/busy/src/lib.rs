//! CPU-bound work of a known length: `?ms=N` keeps the processor busy for N milliseconds of the
//! monotonic clock (a loop that does nothing else), then answers 200 `busy N`; `?spins=K` does K
//! thousand rounds of a loop instead, a fixed amount of work however long it takes (what
//! `bench/neighbours.sh` counts: its busy instances' throughput in work done); without either it
//! answers at once. Alone on a core, N ms of the clock are N ms of processor time: the tests of
//! CPU budgets and receipts use it. No configuration section: secure and synchronous (the tests
//! set `cpu_ms` with `herald extension config`).

use std::io::Write as _;
use std::time::{Duration, Instant};

use wasip2::http::types::{Fields, IncomingRequest, OutgoingBody, OutgoingResponse, ResponseOutparam};

include!("../../query.rs");

wasip2::http::proxy::export!(Busy);

struct Busy;

impl wasip2::exports::http::incoming_handler::Guest for Busy {
    fn handle(request: IncomingRequest, response_out: ResponseOutparam) {
        let query = request.path_with_query().unwrap_or_default();
        let ms: u64 = query_param(&query, "ms").and_then(|v| v.parse().ok()).unwrap_or(0);
        let spins: u64 = query_param(&query, "spins").and_then(|v| v.parse().ok()).unwrap_or(0);
        let until = Instant::now() + Duration::from_millis(ms);
        let mut n: u64 = 0;
        while Instant::now() < until {
            for _ in 0..1000 {
                n = std::hint::black_box(n.wrapping_add(1));
            }
        }
        for _ in 0..spins.saturating_mul(1000) {
            n = std::hint::black_box(n.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        let response = OutgoingResponse::new(Fields::new());
        let out = response.body().expect("body");
        ResponseOutparam::set(response_out, Ok(response));
        let mut stream = out.write().expect("stream");
        let done = if spins > 0 { format!("busy {spins}k spins") } else { format!("busy {ms}") };
        stream.write_all(done.as_bytes()).expect("write");
        stream.flush().expect("flush");
        drop(stream);
        OutgoingBody::finish(out, None).expect("finish");
    }
}
