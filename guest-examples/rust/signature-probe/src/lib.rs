//! A secure http extension written with herald-sdk that checks its call's Standard Webhooks
//! signature with the instance's secret named by `?secret=` (`SIGNING` when absent), `?times=`
//! times (1 when absent), and answers each outcome: `{"checks": [true, false, "limit-exceeded"...]}`.
//! The tests use it to see the checks' answers and their limit per call.

use herald_sdk::http::{Handler, Request, Response};
use herald_sdk::{signatures, Error};

herald_sdk::config!(timeout_ms: 5000);

struct Probe;

impl Handler for Probe {
    fn handle(request: Request) -> Response {
        let secret = request.query("secret").unwrap_or_else(|| "SIGNING".into());
        let times: usize = request.query("times").and_then(|t| t.parse().ok()).unwrap_or(1);
        let checks: Vec<serde_json::Value> = (0..times)
            .map(|_| match signatures::verify_standard_webhook(&secret, &request, 300) {
                Ok(valid) => serde_json::Value::Bool(valid),
                Err(Error::NotFound) => "not-found".into(),
                Err(Error::LimitExceeded) => "limit-exceeded".into(),
                Err(other) => format!("{other:?}").into(),
            })
            .collect();
        Response::json(200, &serde_json::json!({ "checks": checks }))
    }
}

herald_sdk::http_extension!(Probe);
