//! Hostile: allocates until the host's memory cap stops it.

use wasip2::http::types::{IncomingRequest, ResponseOutparam};

wasip2::http::proxy::export!(Hostile);

struct Hostile;

impl wasip2::exports::http::incoming_handler::Guest for Hostile {
    fn handle(_request: IncomingRequest, _response_out: ResponseOutparam) {
        let mut hoard: Vec<Vec<u8>> = Vec::new();
        loop {
            hoard.push(vec![1u8; 1 << 20]);
            std::hint::black_box(&hoard);
        }
    }
}
