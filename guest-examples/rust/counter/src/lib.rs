//! Opts into instance reuse (at most 5 calls per instance, dropped after 2 s idle) and answers
//! how many calls its instance has served, from a global that only a reused instance keeps:
//! `calls=N leaked=M`. A path with `leak` keeps 2 MiB more (its memory is capped at 8 MiB, so a
//! reused instance reaches the cap); one with `panic` fails the call.

use std::io::Write as _;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

use wasip2::http::types::{Fields, IncomingRequest, OutgoingBody, OutgoingResponse, ResponseOutparam};

const CONFIG: &[u8] = br#"{"open": true, "memory_mb": 8, "reuse_calls": 5, "reuse_idle_seconds": 2}"#;

#[used]
#[link_section = "herald:config"]
static HERALD_CONFIG: [u8; CONFIG.len()] = {
    let mut out = [0u8; CONFIG.len()];
    let mut i = 0;
    while i < CONFIG.len() {
        out[i] = CONFIG[i];
        i += 1;
    }
    out
};

static CALLS: AtomicU32 = AtomicU32::new(0);
static HOARD: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

wasip2::http::proxy::export!(Counter);

struct Counter;

impl wasip2::exports::http::incoming_handler::Guest for Counter {
    fn handle(request: IncomingRequest, response_out: ResponseOutparam) {
        let calls = CALLS.fetch_add(1, Ordering::Relaxed) + 1;
        let path = request.path_with_query().unwrap_or_default();
        if path.contains("panic") {
            panic!("asked to fail");
        }
        let mut hoard = HOARD.lock().expect("hoard");
        if path.contains("leak") {
            hoard.push(vec![1u8; 2 << 20]);
        }
        let text = format!("calls={calls} leaked={}", hoard.len() * 2);
        let headers = Fields::from_list(&[("content-type".to_string(), b"text/plain".to_vec())]).expect("headers");
        let response = OutgoingResponse::new(headers);
        let body = response.body().expect("body");
        ResponseOutparam::set(response_out, Ok(response));
        let mut stream = body.write().expect("stream");
        stream.write_all(text.as_bytes()).expect("write");
        stream.flush().expect("flush");
        drop(stream);
        OutgoingBody::finish(body, None).expect("finish");
    }
}
