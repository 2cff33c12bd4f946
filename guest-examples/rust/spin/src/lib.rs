//! Hostile: never returns. The host's deadline must end it without hurting other calls.

use wasip2::http::types::{IncomingRequest, ResponseOutparam};

wasip2::http::proxy::export!(Hostile);

struct Hostile;

impl wasip2::exports::http::incoming_handler::Guest for Hostile {
    fn handle(_request: IncomingRequest, _response_out: ResponseOutparam) {
        let mut n: u64 = 0;
        loop {
            n = std::hint::black_box(n.wrapping_add(1));
        }
    }
}
