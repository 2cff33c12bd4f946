//! CPU-bound work of a known length: `?ms=N` keeps the processor busy for N milliseconds of the
//! monotonic clock (a loop that does nothing else), then answers 200 `busy N`; without `ms` it
//! answers at once. Alone on a core, N ms of the clock are N ms of processor time: the tests of
//! CPU budgets and receipts, and `bench/neighbours.sh`'s busy and quiet instances, use it. No
//! configuration section: secure and synchronous (the tests set `cpu_ms` with
//! `herald extension config`).

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
        let until = Instant::now() + Duration::from_millis(ms);
        let mut n: u64 = 0;
        while Instant::now() < until {
            for _ in 0..1000 {
                n = std::hint::black_box(n.wrapping_add(1));
            }
        }
        let response = OutgoingResponse::new(Fields::new());
        let out = response.body().expect("body");
        ResponseOutparam::set(response_out, Ok(response));
        let mut stream = out.write().expect("stream");
        stream.write_all(format!("busy {ms}").as_bytes()).expect("write");
        stream.flush().expect("flush");
        drop(stream);
        OutgoingBody::finish(out, None).expect("finish");
    }
}
