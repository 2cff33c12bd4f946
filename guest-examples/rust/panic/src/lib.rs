//! Hostile: panics while handling the call.

use wasip2::http::types::{IncomingRequest, ResponseOutparam};

wasip2::http::proxy::export!(Hostile);

struct Hostile;

impl wasip2::exports::http::incoming_handler::Guest for Hostile {
    fn handle(_request: IncomingRequest, _response_out: ResponseOutparam) {
        panic!("this extension always fails");
    }
}
